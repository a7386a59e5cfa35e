// Copyright (c) Aspen contributors.
// popfloat's host half conversions, on poplar's IEEE conversion (round to nearest, ties to
// even) with popfloat's one difference: finite overflow saturates to the largest half.
#include <popfloat/experimental/CastToHalf.hpp>

#include <poplar/Type.hpp>
#include <poplar/TypeConversion.hpp>

#include <cmath>

namespace popfloat {
namespace experimental {

std::uint16_t singleToHalf(float value, bool enNanoo) {
  (void)enNanoo; // PopLibs clips finite overflow whether or not NaN-on-overflow is set
  std::uint16_t bits = 0;
  poplar::convertToDeviceType(poplar::HALF, poplar::ArrayRef<float>(&value, 1), &bits);
  constexpr std::uint16_t kExponentMask = 0x7C00, kMantissaMask = 0x03FF, kSign = 0x8000;
  const bool isInfinity = (bits & kExponentMask) == kExponentMask && (bits & kMantissaMask) == 0;
  if (isInfinity && std::isfinite(value))
    return static_cast<std::uint16_t>((bits & kSign) | 0x7BFF);
  return bits;
}

float halfToSingle(std::uint16_t ihalf) {
  float value = 0;
  poplar::convertFromDeviceType(poplar::HALF, &ihalf, poplar::ArrayRef<float>(&value, 1));
  return value;
}

} // namespace experimental
} // namespace popfloat
