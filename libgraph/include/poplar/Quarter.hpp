// Copyright (c) Aspen contributors. Poplar-compatible public API.
// fp8 (`poplar::QUARTER`): the metadata that gives a quarter tensor its format
// and scale. See docs/fp8.md for the formats and the binary layout.
#ifndef POPLAR_QUARTER_HPP
#define POPLAR_QUARTER_HPP

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

namespace poplar {

/// The format and scale shared by every element of a QUARTER tensor.
///
/// An element with bit pattern `b` has the value `decode(format, b) * 2^scale`;
/// converting a value `x` to quarter encodes `x * 2^-scale`.
///  - F143: 1 sign bit, 4 exponent bits (bias 8), 3 mantissa bits; largest 240,
///    smallest subnormal 2^-10.
///  - F152: 1 sign bit, 5 exponent bits (bias 16), 2 mantissa bits; largest 57344,
///    smallest subnormal 2^-17.
/// Neither format has infinities; the pattern 0x80 ("negative zero") is NaN.
///
/// Example:
/// \code
///   poplar::QuarterMetadata md(poplar::QuarterMetadata::Format::F143, -2);
///   std::uint8_t byte = md.getBinary(); // what a QUARTER_METADATA element holds
/// \endcode
class QuarterMetadata {
public:
  enum class Format { F143, F152 };

  /// F143 with scale 0 (binary 0x80).
  QuarterMetadata() : format_(Format::F143), scale_(0) {}
  /// Throws poplar_error when `scale` is outside -32..31 (a 6-bit field).
  QuarterMetadata(Format format, std::int8_t scale);
  /// Decodes a QUARTER_METADATA element (getBinary() of some metadata). Throws
  /// poplar_error when the format bits are not a valid format.
  explicit QuarterMetadata(std::uint8_t binary);

  Format getFormat() const { return format_; }
  std::int8_t getScale() const { return scale_; }
  /// The device representation: bits 0-5 the scale (two's complement), bit 7
  /// the format (1 F143, 0 F152, as PopLibs' codelets read it), bit 6 zero.
  std::uint8_t getBinary() const;
  /// "F143 scale -2".
  std::string toString() const;

  bool operator==(const QuarterMetadata &o) const { return format_ == o.format_ && scale_ == o.scale_; }
  bool operator!=(const QuarterMetadata &o) const { return !(*this == o); }

private:
  Format format_;
  std::int8_t scale_;
};

std::ostream &operator<<(std::ostream &os, const QuarterMetadata &md);
// No stream operators for QuarterMetadata::Format, as in Poplar: programs define their
// own (PopLibs' tests define `operator<<`/`operator>>` for it in namespace std, for
// program_options), and one here would make every `os << format` there ambiguous.

} // namespace poplar

#endif
