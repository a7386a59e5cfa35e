// Copyright (c) Aspen contributors. PopLibs-compatible public API (popfloat, PopLibs 3.x).
#ifndef POPFLOAT_EXPERIMENTAL_CASTTOHALF_HPP
#define POPFLOAT_EXPERIMENTAL_CASTTOHALF_HPP

#include <cstdint>

namespace popfloat {
namespace experimental {

/// The IEEE half nearest `value` (ties to even), as its 16 bits. A finite value beyond half's
/// range gives the largest half of its sign (0x7BFF, 65504) rather than infinity; infinities stay
/// infinities, NaNs stay NaNs (quiet or signalling), values below half the smallest denormal
/// become zero of their sign. `enNanoo` is accepted for PopLibs' signature; the result is the
/// same either way (PopLibs clips finite overflow in both cases too).
std::uint16_t singleToHalf(float value, bool enNanoo = false);

/// The float value of the half whose bits are `ihalf` (exact: every half is a float).
float halfToSingle(std::uint16_t ihalf);

} // namespace experimental
} // namespace popfloat

#endif
