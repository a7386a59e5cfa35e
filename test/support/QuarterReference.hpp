// Copyright (c) Aspen contributors.
// An independent reference for quarter (fp8) conversion, for tests only: values
// from the format definition (docs/fp8.md), encoding by searching all 255
// finite bit patterns for the nearest value (ties to the even pattern). It
// shares no code with Aspen's converters.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace aspen::test {

struct QuarterFormat {
  int exponentBits, mantissaBits, bias;
};
inline QuarterFormat f143() {
  return {4, 3, 8};
}
inline QuarterFormat f152() {
  return {5, 2, 16};
}

/// The value of bit pattern `bits` times 2^scale; NaN for 0x80.
inline double quarterValue(std::uint8_t bits, QuarterFormat f, int scale) {
  if (bits == 0x80)
    return std::numeric_limits<double>::quiet_NaN();
  const int sign = bits >> 7;
  const int e = (bits >> f.mantissaBits) & ((1 << f.exponentBits) - 1);
  const int m = bits & ((1 << f.mantissaBits) - 1);
  const double frac = static_cast<double>(m) / static_cast<double>(1 << f.mantissaBits);
  const double v = e == 0 ? frac * std::pow(2.0, 1 - f.bias) : (1.0 + frac) * std::pow(2.0, e - f.bias);
  return (sign ? -v : v) * std::pow(2.0, scale);
}

/// The bit pattern nearest `x` (ties to an even pattern); 0x80 (NaN) for NaN and
/// for values that round beyond the largest finite value when `nanOnOverflow`
/// (else the largest value of x's sign). A zero result is 0x00.
inline std::uint8_t quarterNearest(double x, QuarterFormat f, int scale, bool nanOnOverflow = true) {
  if (std::isnan(x))
    return 0x80;
  const double a = std::fabs(x);
  const std::uint8_t maxBits = 0x7f;
  const double maxValue = quarterValue(maxBits, f, scale);
  // The value one step beyond the largest: the next binade's first value.
  const double beyond = std::pow(2.0, (1 << f.exponentBits) - 1 - f.bias + 1) * std::pow(2.0, scale);
  int best = 0;
  double bestDist = std::numeric_limits<double>::infinity();
  for (int b = 0; b <= 0x7f; ++b) {
    const double d = std::fabs(quarterValue(static_cast<std::uint8_t>(b), f, scale) - a);
    if (d < bestDist || (d == bestDist && (b & 1) == 0)) {
      best = b;
      bestDist = d;
    }
  }
  const double dBeyond = std::fabs(beyond - a);
  // `beyond` has an even (zero) mantissa; the largest finite value an odd one.
  if (std::isinf(a) || dBeyond < bestDist || (dBeyond == bestDist && best == maxBits))
    return nanOnOverflow ? 0x80 : static_cast<std::uint8_t>((x < 0 ? 0x80 : 0) | maxBits);
  (void)maxValue;
  if (best == 0)
    return 0x00;
  return static_cast<std::uint8_t>((x < 0 ? 0x80 : 0) | best);
}

} // namespace aspen::test
