// Copyright (c) Aspen contributors.
// Which QUARTER_METADATA the quarter elements in a host buffer were written or read
// with, for poplar_test::copy(target, type, QuarterMetadata &, src, dst) (docs/fp8.md,
// "Host buffers of quarter data"). Defined in libpoplar (HostQuarterMetadata.cpp);
// libpoplar_test uses it. A process-wide table keyed by a buffer's first byte.
#pragma once

#include "poplar/Tensor.hpp"

#include <cstdint>
#include <memory>
#include <optional>

namespace aspen::rt {

/// One QUARTER_METADATA byte. A stream connected to a cell keeps it current; a cell is
/// never freed while a stream may still write it (poplar_test keeps its cells).
using MetadataCell = std::shared_ptr<std::uint8_t>;

/// Records that [begin, end) holds quarter elements with metadata `binary`: updates
/// the cell of an entry that starts at `begin` and covers the range, else replaces
/// every entry overlapping the range by a new one.
void noteHostMetadata(const void *begin, const void *end, std::uint8_t binary);
/// As noteHostMetadata, with `cell` as the entry's cell.
void attachHostMetadataCell(const void *begin, const void *end, MetadataCell cell);
/// Drops every entry overlapping [begin, end) (the range now holds other data).
void forgetHostMetadata(const void *begin, const void *end);
/// The metadata of the buffer starting at `begin`, if one was noted.
std::optional<std::uint8_t> hostMetadata(const void *begin);

/// The value of a one-element QUARTER_METADATA tensor when it is known while the graph
/// is built (a constant, or a variable with an initial value); nullopt otherwise.
std::optional<std::uint8_t> knownMetadataValue(const poplar::Tensor &metadata);

} // namespace aspen::rt
