// Copyright (c) Aspen contributors.
// Reading and writing single device values of any element type: predicates,
// switch controls, remote-buffer offsets and printed elements.
#pragma once

#include "poplar/Type.hpp"

#include <cstddef>
#include <cstdint>

namespace aspen::rt {

std::size_t deviceTypeSize(poplar::Type::Id type);
bool isFloatingPointType(poplar::Type::Id type);
bool isSignedType(poplar::Type::Id type);

/// The value at `p` converted to an integer (floating point truncates toward zero).
std::int64_t readScalarAsInt(const std::uint8_t *p, poplar::Type::Id type);
/// The value at `p` converted to double.
double readScalarAsDouble(const std::uint8_t *p, poplar::Type::Id type);
/// Whether the value at `p` is nonzero (the truth of a predicate; -0.0 is false).
bool scalarIsNonZero(const std::uint8_t *p, poplar::Type::Id type);
/// Stores `value` at `p` as `type`.
void writeScalarInt(std::uint8_t *p, poplar::Type::Id type, std::int64_t value);

} // namespace aspen::rt
