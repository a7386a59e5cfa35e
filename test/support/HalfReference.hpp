// Copyright (c) Aspen contributors.
// An independent reference for IEEE binary16 ("half") conversions, for tests that check
// Aspen's own conversions (util/Half) against it. Where the compiler has _Float16 arithmetic
// (GCC 12+ on x86-64; clang from 15), the compiler's conversions are the reference; elsewhere
// (clang 14) an exact-arithmetic software conversion written differently from Aspen's (scaling
// by powers of two, std::nearbyint for round-to-nearest-even). softwareHalfBits is always
// available, so that a test can check it against _Float16 where both exist.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace aspen::test {

/// The binary16 bits nearest to `d` (ties to even; overflow to infinity; NaN to a quiet NaN).
inline std::uint16_t softwareHalfBits(double d) {
  const std::uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d))
    return static_cast<std::uint16_t>(sign | 0x7e00);
  const double a = std::fabs(d);
  if (a >= 65520.0) // halfway between the largest half (65504) and 2^16 rounds up to infinity
    return static_cast<std::uint16_t>(sign | 0x7c00);
  if (a == 0.0)
    return sign;
  int e2;
  std::frexp(a, &e2); // a = m * 2^e2, m in [0.5, 1): the unbiased exponent is e2 - 1
  const int exponent = e2 - 1 < -14 ? -14 : e2 - 1;
  // a in units of the last place of a half with this exponent: exact (a power-of-two scaling),
  // then rounded to an integer in [0, 2048] in the default mode, to nearest even.
  const double q = std::nearbyint(std::ldexp(a, 10 - exponent));
  // Normal halves: ((exponent + 15) << 10) + (q - 1024); q == 2048 carries into the exponent,
  // and for exponent -14 the same sum is q itself (the subnormals and the smallest normal).
  const int bits = ((exponent + 15) << 10) + static_cast<int>(q) - 1024;
  return static_cast<std::uint16_t>(sign | bits);
}

/// The value of binary16 `bits`, exactly, as a double.
inline double softwareHalfValue(std::uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double v;
  if (exponent == 0x1f)
    v = mantissa ? std::nan("") : INFINITY;
  else if (exponent == 0)
    v = std::ldexp(mantissa, -24);
  else
    v = std::ldexp(mantissa + 1024, exponent - 25);
  return (bits & 0x8000) ? -v : v;
}

#if defined(__FLT16_MANT_DIG__)
inline constexpr bool kHaveFloat16 = true;
inline std::uint16_t referenceHalfBits(double d) {
  return std::bit_cast<std::uint16_t>(static_cast<_Float16>(d));
}
inline double referenceHalfValue(std::uint16_t bits) {
  return static_cast<double>(std::bit_cast<_Float16>(bits));
}
#else
inline constexpr bool kHaveFloat16 = false;
inline std::uint16_t referenceHalfBits(double d) {
  return softwareHalfBits(d);
}
inline double referenceHalfValue(std::uint16_t bits) {
  return softwareHalfValue(bits);
}
#endif

} // namespace aspen::test
