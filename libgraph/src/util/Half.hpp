// Copyright (c) Aspen contributors.
// IEEE 754 binary16 ("half") conversions used for HALF constants, initial
// values and the copy*DeviceHalf helpers. Rounding is to nearest, ties to
// even; subnormals, infinities and NaNs are handled (NaNs stay quiet NaNs).
#pragma once

#include <cstddef>
#include <cstdint>

namespace aspen::util {

/// The half nearest to `value` (ties to even); out-of-range values become infinity.
std::uint16_t doubleToHalf(double value);
/// The half nearest to `value`; the same result as converting `double(value)`.
std::uint16_t floatToHalf(float value);
/// The exact value of the half with bit pattern `bits`.
float halfToFloat(std::uint16_t bits);
double halfToDouble(std::uint16_t bits);

void floatsToHalves(const float *src, std::uint16_t *dst, std::size_t count);
void doublesToHalves(const double *src, std::uint16_t *dst, std::size_t count);
void halvesToFloats(const std::uint16_t *src, float *dst, std::size_t count);
void halvesToDoubles(const std::uint16_t *src, double *dst, std::size_t count);

} // namespace aspen::util
