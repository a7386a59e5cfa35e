// Copyright (c) Aspen contributors. Poplar-compatible public API.
// Host-side conversion between host arrays and the device representation of
// an element type, as poplar/TypeConversion.hpp offers it. QUARTER needs the
// tensor's metadata (format and scale); see docs/fp8.md for the rounding rules.
#ifndef POPLAR_TYPECONVERSION_HPP
#define POPLAR_TYPECONVERSION_HPP

#include <poplar/ArrayRef.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/Type.hpp>

namespace poplar {

/// Converts host values `src` to device elements of `dstType` at `dst`
/// (`src.size() * dstType.size()` bytes). FLOAT, HALF and the integer types;
/// QUARTER needs the overload with metadata (type_error otherwise).
/// Example: `std::vector<char> raw(2 * n); convertToDeviceType(HALF, floats, raw.data());`
void convertToDeviceType(Type dstType, ArrayRef<float> src, void *dst);
void convertToDeviceType(Type dstType, ArrayRef<double> src, void *dst);

/// Converts host values to QUARTER elements with `metadata`: each value x is
/// stored as `x * 2^-scale`, rounded to nearest even. A NaN becomes NaN (0x80);
/// a magnitude beyond the format's range (infinity included) becomes NaN when
/// `nanOnOverflow`, else the largest value of its sign. `dstType` must be QUARTER.
void convertToDeviceType(Type dstType, const QuarterMetadata &metadata, ArrayRef<float> src, void *dst,
                         bool nanOnOverflow = true);
void convertToDeviceType(Type dstType, const QuarterMetadata &metadata, ArrayRef<double> src, void *dst,
                         bool nanOnOverflow = true);

/// Converts device elements of `srcType` at `src` into `dst` (which is written:
/// it must view writable memory, such as a std::vector).
void convertFromDeviceType(Type srcType, const void *src, ArrayRef<float> dst);
void convertFromDeviceType(Type srcType, const void *src, ArrayRef<double> dst);

/// Converts QUARTER elements with `metadata` into `dst`: element bits b give
/// `decode(b) * 2^scale` (exact); 0x80 gives NaN.
void convertFromDeviceType(Type srcType, const QuarterMetadata &metadata, const void *src,
                           ArrayRef<float> dst);
void convertFromDeviceType(Type srcType, const QuarterMetadata &metadata, const void *src,
                           ArrayRef<double> dst);

} // namespace poplar

#endif
