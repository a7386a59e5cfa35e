// Copyright (c) Aspen contributors.
// Element conversion between host arrays and device bytes (constants, initial
// values, vertex state, tensor reads and writes).
#pragma once

#include "poplar/Type.hpp"

#include <cstddef>

namespace aspen::util {

/// Converts `count` host values of `hostType` at `src` into device elements of
/// `deviceType` at `dst` (device size each). A `hostType` of HALF means the host
/// values are binary16 bit patterns (uint16_t). Floating-point to integer
/// conversion truncates and saturates (NaN gives 0); to HALF rounds to nearest
/// even. Throws type_error when either type cannot be converted (QUARTER).
/// Neither buffer needs to be aligned.
void convertHostToDevice(const poplar::Type &hostType, const void *src, const poplar::Type &deviceType,
                         void *dst, std::size_t count);

/// The reverse of convertHostToDevice: device elements to host values.
void convertDeviceToHost(const poplar::Type &deviceType, const void *src, const poplar::Type &hostType,
                         void *dst, std::size_t count);

} // namespace aspen::util
