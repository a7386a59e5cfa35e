// Copyright (c) Aspen contributors.
// Host conversion between numbers and quarter (fp8) bit patterns, exactly as
// docs/fp8.md specifies: one rounding to nearest even, no infinities, 0x80 is
// NaN, zero is always 0x00. Used by poplar/TypeConversion.hpp, constants and
// Engine reads/writes of QUARTER tensors.
#pragma once

#include "poplar/Quarter.hpp"

#include <cstdint>

namespace aspen::util {

/// `x * 2^-scale` rounded to the nearest value of the format (ties to even).
/// NaN gives 0x80. A magnitude beyond the largest finite value (infinity
/// included) gives 0x80 when `nanOnOverflow`, else the largest value of x's sign.
std::uint8_t encodeQuarter(double x, const poplar::QuarterMetadata &md, bool nanOnOverflow = true);

/// The value of quarter bits `bits` times `2^scale` (exact in double and float).
double decodeQuarter(std::uint8_t bits, const poplar::QuarterMetadata &md);

} // namespace aspen::util
