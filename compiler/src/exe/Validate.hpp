// Copyright (c) Aspen contributors.
// The structural check of an executable: every count, offset, size, index, type
// id, jump target and relocation is bounded before anything uses it, in one
// linear pass with overflow-safe arithmetic. See docs/executable-format.md,
// "Validation".
#pragma once

#include "exe/ExecutableData.hpp"

#include <cstdint>
#include <string>

namespace aspen::exe {

/// Largest host buffer (stream chunk, remote buffer) an executable may ask for:
/// 2^47 bytes, the user half of a 48-bit address space.
inline constexpr std::uint64_t kMaxHostBufferBytes = std::uint64_t(1) << 47;
/// Largest tile memory an executable may describe (addresses are 32-bit).
inline constexpr std::uint64_t kMaxBytesPerTile = std::uint64_t(1) << 32;
/// Largest number of tiles (numIPUs * tilesPerIPU) an executable may describe.
inline constexpr std::uint64_t kMaxTiles = std::uint64_t(1) << 20;
/// Largest simulated device (numTiles * bytesPerTile): 2^40 bytes of address space.
inline constexpr std::uint64_t kMaxDeviceBytes = std::uint64_t(1) << 40;
/// Largest number of worker contexts per tile.
inline constexpr unsigned kMaxWorkerContexts = 64;

/// Largest rank of a printed tensor.
inline constexpr std::size_t kMaxPrintRank = 64;
/// Largest number of rows of a printed tensor with no elements (a zero dimension).
inline constexpr std::uint64_t kMaxEmptyPrintRows = std::uint64_t(1) << 16;

/// Whether `id` is a Type::Id this Aspen knows, other than Invalid.
bool isValidTypeId(std::uint64_t id);

/// Checks the whole structure of `x` (docs/executable-format.md, "Validation").
/// Throws `poplar::graph_object_load_error` "<what> is corrupt: <field> ..." naming
/// the first field at fault, e.g. "computeSteps[2].vertices[17].type".
/// Linear in the size of the executable; allocates nothing on success.
void validateStructure(const ExecutableData &x, const std::string &what);

} // namespace aspen::exe
