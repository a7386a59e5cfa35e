// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// fp8 on the vertex side (docs/fp8.md): `quarter` (one 8-bit float, stored as
// its bit pattern), `poplar::MetadataType` (one QUARTER_METADATA element, what
// a quarter edge's getMetadata() returns), `quarter_metadata` (its unpacked
// form, as Graphcore's ipudef.h spells it), `unpackMetadata`, and conversions
// `toQuarter` / `toFloat` / `toHalf` that round exactly as Aspen's host
// conversion does (to nearest even, NaN on overflow, 0x80 is NaN).
// The host class poplar::QuarterMetadata (poplar/Quarter.hpp) is not defined
// here: codelets and host code each have their own header.
#ifndef POPLAR_QUARTERFLOAT_HPP
#define POPLAR_QUARTERFLOAT_HPP

#include <poplar/HalfFloat.hpp>

#include <cmath>
#include <cstdint>

/// The unpacked metadata of a quarter tensor: its format and scale. A quarter
/// with bits b stands for decode(fmt, b) * 2^scale.
struct quarter_metadata {
  enum format { f152, f143 } fmt;
  signed char scale;
};

/// One 8-bit float, stored as its bit pattern. Global, as `half` is, so vertex
/// names spell it `quarter` (Poplar's Type::toString()), e.g. `popops::Cast1D<quarter,float>`.
struct quarter {
  union {
    std::uint8_t value;
    std::uint8_t bits;
  };
};

namespace poplar {

using ::quarter;

/// One QUARTER_METADATA element as a tensor holds it: bits 0-5 the scale (two's
/// complement), bits 6-7 the format (00 F143, 10 F152).
struct MetadataType {
  std::uint8_t value;
};

/// The format and scale packed in `md`. An invalid format field reads as F152.
inline quarter_metadata unpackMetadata(MetadataType md) {
  quarter_metadata out;
  out.fmt = (md.value & 0x80) ? quarter_metadata::f152 : quarter_metadata::f143;
  const int scale = md.value & 0x3f;
  out.scale = static_cast<signed char>(scale >= 32 ? scale - 64 : scale);
  return out;
}
inline quarter_metadata unpackMetadata(std::uint8_t binary) {
  MetadataType md;
  md.value = binary;
  return unpackMetadata(md);
}
/// The packed form of `md` (the inverse of unpackMetadata).
inline MetadataType packMetadata(quarter_metadata md) {
  MetadataType out;
  out.value = static_cast<std::uint8_t>((md.fmt == quarter_metadata::f152 ? 0x80 : 0x00) |
                                        (static_cast<unsigned>(md.scale) & 0x3f));
  return out;
}

namespace aspen_detail {
inline void quarterFormatBits(const quarter_metadata &md, int &mantissaBits, int &bias, int &exponentBits) {
  const bool f143 = md.fmt == quarter_metadata::f143;
  mantissaBits = f143 ? 3 : 2;
  bias = f143 ? 8 : 16;
  exponentBits = f143 ? 4 : 5;
}
} // namespace aspen_detail

/// `x * 2^-scale` rounded to the nearest quarter (ties to even). NaN, infinities and
/// magnitudes beyond the format's largest value give NaN (0x80); zero gives 0x00.
inline quarter toQuarter(float x, quarter_metadata md) {
  quarter q;
  q.value = 0x80;
  if (std::isnan(x))
    return q;
  int m, bias, e;
  aspen_detail::quarterFormatBits(md, m, bias, e);
  const int maxField = (1 << e) - 1;
  const int minNormalExp = 1 - bias;
  const double maxValue = std::ldexp(2.0 - std::ldexp(1.0, -m), maxField - bias);
  const double a = std::ldexp(std::fabs(static_cast<double>(x)), -md.scale);
  if (std::isinf(a))
    return q;
  if (a == 0) {
    q.value = 0x00;
    return q;
  }
  int k;
  (void)std::frexp(a, &k);
  const int exponent = k - 1 > minNormalExp ? k - 1 : minNormalExp;
  const double units = std::nearbyint(std::ldexp(a, m - exponent));
  const double rounded = std::ldexp(units, exponent - m);
  if (rounded > maxValue)
    return q;
  if (rounded == 0) {
    q.value = 0x00;
    return q;
  }
  (void)std::frexp(rounded, &k);
  unsigned field, mantissa;
  if (k - 1 < minNormalExp) {
    field = 0;
    mantissa = static_cast<unsigned>(std::ldexp(rounded, m - minNormalExp));
  } else {
    field = static_cast<unsigned>(k - 1 + bias);
    mantissa = static_cast<unsigned>(std::ldexp(rounded, m - (k - 1))) - (1u << m);
  }
  q.value = static_cast<std::uint8_t>((std::signbit(x) ? 0x80 : 0x00) | (field << m) | mantissa);
  return q;
}
inline quarter toQuarter(half x, quarter_metadata md) {
  return toQuarter(static_cast<float>(x), md);
}

/// The value of `q`: decode(bits) * 2^scale, exact in float; 0x80 gives NaN.
inline float toFloat(quarter q, quarter_metadata md) {
  if (q.value == 0x80)
    return std::nanf("");
  int m, bias, e;
  aspen_detail::quarterFormatBits(md, m, bias, e);
  const unsigned field = (q.value & 0x7fu) >> m;
  const unsigned mantissa = q.value & ((1u << m) - 1);
  const double magnitude = field == 0 ? std::ldexp(static_cast<double>(mantissa), 1 - bias - m + md.scale)
                                      : std::ldexp(static_cast<double>(mantissa + (1u << m)),
                                                   static_cast<int>(field) - bias - m + md.scale);
  return static_cast<float>((q.value & 0x80) ? -magnitude : magnitude);
}
/// The value of `q` rounded to half (to nearest even; beyond half's range: infinity).
inline half toHalf(quarter q, quarter_metadata md) {
  return half(toFloat(q, md));
}

} // namespace poplar

#endif
