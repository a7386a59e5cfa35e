// Copyright (c) Aspen contributors.
#include "util/QuarterConvert.hpp"

#include <cmath>
#include <limits>

namespace aspen::util {

namespace {

struct FormatBits {
  int exponentBits;
  int mantissaBits;
  int bias;
};

FormatBits bitsOf(poplar::QuarterMetadata::Format f) {
  return f == poplar::QuarterMetadata::Format::F143 ? FormatBits{4, 3, 8} : FormatBits{5, 2, 16};
}

} // namespace

std::uint8_t encodeQuarter(double x, const poplar::QuarterMetadata &md, bool nanOnOverflow) {
  constexpr std::uint8_t kNaN = 0x80;
  if (std::isnan(x))
    return kNaN;
  const FormatBits fb = bitsOf(md.getFormat());
  const int maxField = (1 << fb.exponentBits) - 1;
  const int minNormalExp = 1 - fb.bias;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const std::uint8_t maxBits =
      static_cast<std::uint8_t>((maxField << fb.mantissaBits) | ((1 << fb.mantissaBits) - 1));
  const double maxValue = std::ldexp(2.0 - std::ldexp(1.0, -fb.mantissaBits), maxField - fb.bias);
  const double a = std::ldexp(std::fabs(x), -md.getScale()); // exact: a power-of-two scaling
  if (std::isinf(a))
    return nanOnOverflow ? kNaN : static_cast<std::uint8_t>(sign | maxBits);
  if (a == 0)
    return 0x00;
  int k;
  (void)std::frexp(a, &k); // a = f * 2^k, f in [0.5, 1)
  const int exponent = std::max(k - 1, minNormalExp);
  // Units of the last mantissa place at this exponent; nearbyint rounds half to even.
  const double units = std::nearbyint(std::ldexp(a, fb.mantissaBits - exponent));
  const double rounded = std::ldexp(units, exponent - fb.mantissaBits);
  if (rounded > maxValue)
    return nanOnOverflow ? kNaN : static_cast<std::uint8_t>(sign | maxBits);
  if (rounded == 0)
    return 0x00; // 0x80 is NaN: a zero result is +0 whatever its sign
  (void)std::frexp(rounded, &k);
  const int e = k - 1;
  unsigned field, mantissa;
  if (e < minNormalExp) {
    field = 0;
    mantissa = static_cast<unsigned>(std::ldexp(rounded, fb.mantissaBits - minNormalExp));
  } else {
    field = static_cast<unsigned>(e + fb.bias);
    mantissa = static_cast<unsigned>(std::ldexp(rounded, fb.mantissaBits - e)) - (1u << fb.mantissaBits);
  }
  return static_cast<std::uint8_t>(sign | (field << fb.mantissaBits) | mantissa);
}

double decodeQuarter(std::uint8_t bits, const poplar::QuarterMetadata &md) {
  if (bits == 0x80)
    return std::numeric_limits<double>::quiet_NaN();
  const FormatBits fb = bitsOf(md.getFormat());
  const unsigned mantissaMask = (1u << fb.mantissaBits) - 1;
  const unsigned field = (bits & 0x7fu) >> fb.mantissaBits;
  const unsigned mantissa = bits & mantissaMask;
  double magnitude;
  if (field == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - fb.bias - fb.mantissaBits);
  else
    magnitude = std::ldexp(static_cast<double>(mantissa + (1u << fb.mantissaBits)),
                           static_cast<int>(field) - fb.bias - fb.mantissaBits);
  magnitude = std::ldexp(magnitude, md.getScale());
  return (bits & 0x80) ? -magnitude : magnitude;
}

} // namespace aspen::util
