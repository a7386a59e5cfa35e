// Copyright (c) Aspen contributors.
#include "util/Half.hpp"

#include <bit>

namespace aspen::util {

namespace {
constexpr unsigned halfMantissaBits = 10;
constexpr unsigned doubleMantissaBits = 52;
constexpr int halfExponentBias = 15;
constexpr int doubleExponentBias = 1023;
constexpr std::uint16_t halfInfinity = 0x7c00;
constexpr std::uint16_t halfQuietBit = 0x0200;

/// Shifts `significand` right by `shift` (1..63) rounding to nearest, ties to even.
std::uint64_t shiftRoundNearestEven(std::uint64_t significand, unsigned shift) {
  const std::uint64_t kept = significand >> shift;
  const std::uint64_t remainder = significand & ((std::uint64_t(1) << shift) - 1);
  const std::uint64_t halfway = std::uint64_t(1) << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (kept & 1)))
    return kept + 1;
  return kept;
}
} // namespace

std::uint16_t doubleToHalf(double value) {
  const auto bits = std::bit_cast<std::uint64_t>(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000);
  const int biasedExponent = static_cast<int>((bits >> doubleMantissaBits) & 0x7ff);
  const std::uint64_t mantissa = bits & ((std::uint64_t(1) << doubleMantissaBits) - 1);

  if (biasedExponent == 0x7ff) {
    if (mantissa == 0)
      return sign | halfInfinity;
    // Keep the top payload bits and make the NaN quiet.
    const auto payload = static_cast<std::uint16_t>(mantissa >> (doubleMantissaBits - halfMantissaBits));
    return sign | halfInfinity | halfQuietBit | payload;
  }
  // Double subnormals (and zero) are far below half's smallest subnormal.
  if (biasedExponent == 0)
    return sign;

  const int exponent = biasedExponent - doubleExponentBias;
  const std::uint64_t significand = mantissa | (std::uint64_t(1) << doubleMantissaBits);
  if (exponent > halfExponentBias)
    return sign | halfInfinity;
  if (exponent >= 1 - halfExponentBias) {
    // Normal half. Adding the rounded significand (which carries the implicit
    // bit) to (exponent + bias - 1) << 10 lets a rounding carry bump the exponent.
    const std::uint64_t rounded = shiftRoundNearestEven(significand, doubleMantissaBits - halfMantissaBits);
    const std::uint64_t result =
        (static_cast<std::uint64_t>(exponent + halfExponentBias - 1) << halfMantissaBits) + rounded;
    return result >= halfInfinity ? (sign | halfInfinity) : static_cast<std::uint16_t>(sign | result);
  }
  // Subnormal half: value = m * 2^-24. Values below 2^-25 round to zero.
  const int shift = static_cast<int>(doubleMantissaBits) - 24 - exponent; // 43 .. 53 in range
  if (shift > 53)
    return sign;
  return static_cast<std::uint16_t>(sign | shiftRoundNearestEven(significand, static_cast<unsigned>(shift)));
}

std::uint16_t floatToHalf(float value) {
  // float -> double is exact, so rounding once from the double is correct.
  return doubleToHalf(static_cast<double>(value));
}

float halfToFloat(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000) << 16;
  const std::uint32_t exponent = (bits >> halfMantissaBits) & 0x1f;
  std::uint32_t mantissa = bits & 0x3ff;
  std::uint32_t result;
  if (exponent == 0x1f) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    result = sign | ((exponent - halfExponentBias + 127) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    result = sign;
  } else {
    // Subnormal half: normalise into a float (always normal in float).
    int e = 1 - halfExponentBias;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --e;
    }
    mantissa &= 0x3ff;
    result = sign | (static_cast<std::uint32_t>(e + 127) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(result);
}

double halfToDouble(std::uint16_t bits) {
  return static_cast<double>(halfToFloat(bits));
}

void floatsToHalves(const float *src, std::uint16_t *dst, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    dst[i] = floatToHalf(src[i]);
}
void doublesToHalves(const double *src, std::uint16_t *dst, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    dst[i] = doubleToHalf(src[i]);
}
void halvesToFloats(const std::uint16_t *src, float *dst, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    dst[i] = halfToFloat(src[i]);
}
void halvesToDoubles(const std::uint16_t *src, double *dst, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    dst[i] = halfToDouble(src[i]);
}

} // namespace aspen::util
