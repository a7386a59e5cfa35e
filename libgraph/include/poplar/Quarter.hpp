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
  QuarterMetadata() : binary_(0x80) {}
  /// Throws poplar_error when `scale` is outside -32..31 (a 6-bit field).
  QuarterMetadata(Format format, std::int8_t scale);
  /// Decodes a QUARTER_METADATA element (getBinary() of some metadata). Throws
  /// poplar_error when the format bits are not a valid format.
  explicit QuarterMetadata(std::uint8_t binary);

  Format getFormat() const { return (binary_ & 0x80) ? Format::F143 : Format::F152; }
  /// Bits 0-5 of the binary, sign-extended.
  std::int8_t getScale() const {
    return static_cast<std::int8_t>((binary_ & 0x20) ? static_cast<int>(binary_ & 0x3f) - 64
                                                     : (binary_ & 0x3f));
  }
  /// The device representation: bits 0-5 the scale (two's complement), bit 7
  /// the format (1 F143, 0 F152, as PopLibs' codelets read it), bit 6 zero.
  std::uint8_t getBinary() const { return binary_; }
  /// "F143 scale -2".
  std::string toString() const;

  bool operator==(const QuarterMetadata &o) const { return binary_ == o.binary_; }
  bool operator!=(const QuarterMetadata &o) const { return !(*this == o); }

private:
  // One byte, the QUARTER_METADATA element itself: a host array of QuarterMetadata
  // has the device layout of a QUARTER_METADATA tensor, so
  // Engine::readTensor(handle, &md[0], &md[n]) of n metadata elements fills it (as
  // PopLibs' DynamicSliceTest reads metadata tensors). docs/fp8.md.
  std::uint8_t binary_;
};

static_assert(sizeof(QuarterMetadata) == 1, "QuarterMetadata has the layout of one QUARTER_METADATA element");

std::ostream &operator<<(std::ostream &os, const QuarterMetadata &md);
// No operator<< or operator>> for QuarterMetadata::Format, as in Poplar: programs declare
// their own (PopLibs' poplibs_test/Util.hpp does, in namespace std, for program_options), and
// one here would make every `os << format` in them ambiguous.

} // namespace poplar

#endif
