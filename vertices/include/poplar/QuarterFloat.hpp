// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// fp8 on the vertex side (docs/fp8.md): `quarter` (one 8-bit float, stored as
// its bit pattern), `MetadataType` (one QUARTER_METADATA element; a quarter
// edge's getMetadata() points at it), `quarter_metadata` (its unpacked
// form, as Graphcore's ipudef.h spells it), `unpackMetadata`, and conversions
// `toQuarter` / `toFloat` / `toHalf` that round exactly as Aspen's host
// conversion does (to nearest even, NaN on overflow, 0x80 is NaN).
// The host class poplar::QuarterMetadata (poplar/Quarter.hpp) is not defined
// here: codelets and host code each have their own header.
#ifndef POPLAR_QUARTERFLOAT_HPP
#define POPLAR_QUARTERFLOAT_HPP

#include <poplar/HalfFloat.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>

/// One QUARTER_METADATA element as a tensor holds it: bits 0-5 the scale (two's
/// complement), bit 7 the format (1 F143, 0 F152). What a quarter edge's
/// getMetadata() points at.
typedef unsigned char MetadataType;

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

/// The format and scale packed in `md`.
inline quarter_metadata unpackMetadata(MetadataType md) {
  quarter_metadata out;
  out.fmt = (md & 0x80) ? quarter_metadata::f143 : quarter_metadata::f152;
  const int scale = md & 0x3f;
  out.scale = static_cast<signed char>(scale >= 32 ? scale - 64 : scale);
  return out;
}
/// The same of the metadata an edge's getMetadata() points at, as PopLibs' codelets
/// call it (`unpackMetadata(in.getMetadata())`).
/// (A template, so that a codelet's own `unpackMetadata(const MetadataType *)` is
/// preferred over it, not ambiguous with it.)
template <typename M, typename = typename std::enable_if<std::is_same<M, MetadataType>::value>::type>
inline quarter_metadata unpackMetadata(const M *md) {
  return unpackMetadata(*md);
}
/// The packed form of `md` (the inverse of unpackMetadata).
inline MetadataType packMetadata(quarter_metadata md) {
  return static_cast<MetadataType>((md.fmt == quarter_metadata::f143 ? 0x80 : 0x00) |
                                   (static_cast<unsigned>(md.scale) & 0x3f));
}

namespace aspen_detail {
struct QuarterFormatBits {
  int mantissaBits, bias, maxField;
};
inline QuarterFormatBits quarterFormatBits(const quarter_metadata &md) {
  QuarterFormatBits f;
  const bool f143 = md.fmt == quarter_metadata::f143;
  f.mantissaBits = f143 ? 3 : 2;
  f.bias = f143 ? 8 : 16;
  f.maxField = f143 ? 15 : 31;
  return f;
}
inline int highestBit(std::uint64_t v) {
  int p = -1;
  while (v) {
    v >>= 1;
    ++p;
  }
  return p;
}
} // namespace aspen_detail

// The conversions work on the bit patterns with integers only (no <cmath>), so
// they are exact and the same on every host.

/// `x * 2^-scale` rounded to the nearest quarter (ties to even). NaN, infinities and
/// magnitudes beyond the format's largest value give NaN (0x80); zero gives 0x00.
inline quarter toQuarter(float x, quarter_metadata md) {
  quarter q;
  q.value = 0x80;
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const std::uint32_t sign = bits >> 31;
  const int exp = static_cast<int>((bits >> 23) & 0xff);
  const std::uint32_t man = bits & 0x7fffffu;
  if (exp == 0xff) // NaN or infinity
    return q;
  if (exp == 0 && man == 0) {
    q.value = 0x00;
    return q;
  }
  // x = sig * 2^e2 exactly; the stored value is x * 2^-scale.
  const std::uint64_t sig = exp == 0 ? man : (man | 0x800000u);
  const int e2 = (exp == 0 ? -149 : exp - 150) - md.scale;
  const aspen_detail::QuarterFormatBits f = aspen_detail::quarterFormatBits(md);
  const int m = f.mantissaBits;
  const int maxExp = f.maxField - f.bias, minNormalExp = 1 - f.bias;
  int expo = aspen_detail::highestBit(sig) + e2; // floor(log2 |value|)
  if (expo > maxExp + 1)
    return q; // overflow
  if (expo < minNormalExp)
    expo = minNormalExp;
  const int shift = expo - m - e2; // value / 2^(expo - m) = sig / 2^shift
  std::uint64_t units;
  if (shift <= 0) {
    units = sig << -shift;
  } else if (shift > 40) {
    units = 0;
  } else {
    units = sig >> shift;
    const std::uint64_t rem = sig & ((std::uint64_t(1) << shift) - 1);
    const std::uint64_t halfUnit = std::uint64_t(1) << (shift - 1);
    if (rem > halfUnit || (rem == halfUnit && (units & 1)))
      ++units;
  }
  if (units == (std::uint64_t(2) << m)) { // rounded up into the next binade
    units >>= 1;
    ++expo;
  }
  if (expo > maxExp)
    return q; // overflow (NaN on overflow)
  if (units == 0) {
    q.value = 0x00; // 0x80 is NaN: a zero result is +0
    return q;
  }
  unsigned field, mantissa;
  if (units >= (std::uint64_t(1) << m)) {
    field = static_cast<unsigned>(expo + f.bias);
    mantissa = static_cast<unsigned>(units - (std::uint64_t(1) << m));
  } else { // subnormal (expo == minNormalExp)
    field = 0;
    mantissa = static_cast<unsigned>(units);
  }
  q.value = static_cast<std::uint8_t>((sign << 7) | (field << m) | mantissa);
  return q;
}
inline quarter toQuarter(half x, quarter_metadata md) {
  return toQuarter(static_cast<float>(x), md);
}
/// The same, with the IPU's NaN-on-overflow choice (the `nanoo` bit of FP_CTL, as
/// PopLibs' cast codelets pass it): true gives NaN on overflow, as above; false
/// saturates an overflow (infinities included) to the largest value of x's sign
/// (0x7f, 0xff). NaN stays NaN either way.
inline quarter toQuarter(float x, quarter_metadata md, bool nanOnOverflow) {
  quarter q = toQuarter(x, md);
  if (nanOnOverflow || q.value != 0x80 || x != x)
    return q;
  const aspen_detail::QuarterFormatBits f = aspen_detail::quarterFormatBits(md);
  const unsigned largest =
      (static_cast<unsigned>(f.maxField) << f.mantissaBits) | ((1u << f.mantissaBits) - 1);
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  q.value = static_cast<std::uint8_t>(((bits >> 31) << 7) | largest);
  return q;
}
inline quarter toQuarter(half x, quarter_metadata md, bool nanOnOverflow) {
  return toQuarter(static_cast<float>(x), md, nanOnOverflow);
}

/// The value of `q`: decode(bits) * 2^scale, exact in float; 0x80 gives NaN.
inline float toFloat(quarter q, quarter_metadata md) {
  std::uint32_t bits;
  if (q.value == 0x80) {
    bits = 0x7fc00000u;
  } else {
    const aspen_detail::QuarterFormatBits f = aspen_detail::quarterFormatBits(md);
    const int m = f.mantissaBits;
    const unsigned field = (q.value & 0x7fu) >> m;
    unsigned mant = q.value & ((1u << m) - 1);
    int expo; // value = 1.mant * 2^expo (normalised), times 2^scale
    if (field != 0) {
      expo = static_cast<int>(field) - f.bias;
    } else if (mant == 0) {
      expo = 0;
    } else {
      const int p = aspen_detail::highestBit(mant);
      expo = 1 - f.bias - m + p;
      mant = (mant - (1u << p)) << (m - p);
    }
    bits = static_cast<std::uint32_t>(q.value & 0x80) << 24;
    if (field != 0 || mant != 0 || (q.value & 0x7f) != 0)
      bits |= (static_cast<std::uint32_t>(expo + md.scale + 127) << 23) | (mant << (23 - m));
  }
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}
/// The value of `q` rounded to half (to nearest even; beyond half's range: infinity).
inline half toHalf(quarter q, quarter_metadata md) {
  return half(toFloat(q, md));
}

} // namespace poplar

#endif
