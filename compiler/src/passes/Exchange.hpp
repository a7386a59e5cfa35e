// Copyright (c) Aspen contributors.
// Pass 3: plan every data movement and make every memory object.
#pragma once

#include "passes/PassData.hpp"

namespace aspen::compiler {

/// Plans data movement for the lowered program and makes the memory objects
/// the allocator will place:
///  - variables split into tile pieces (one object per piece);
///  - per executed compute set, per vertex: a vertex object laid out by the
///    vertex ABI (docs/internals.md). An edge whose view is one run of bytes in
///    one piece on the vertex's tile, suitably aligned, points straight at it;
///    an edge that is one contiguous range of one variable otherwise points
///    into its tile's shared edge buffer for the compute set, which holds the
///    union of such ranges once (filled by exchange-in with the union of the
///    ranges read, drained by exchange-out with the union of those written);
///    any other edge (a gather) gets an edge buffer of its own, filled by
///    exchange-in runs (Input, InOut) and drained by exchange-out runs (Output,
///    InOut). Edge buffers record their compute set (live only while it runs).
///    2-D edge fields get descriptor arrays, state arrays get objects.
///  - Copy programs become copy runs; stream copies, remote buffer copies,
///    host handles and prints become host transfers; control scalars are located.
/// Returns its own copy of the steps (`ExchangePlan::steps`) in which
/// Execute/Copy/Print/stream steps index the executable's tables (see
/// ExecutableData.hpp); `lowered` is not changed. Records which variables each
/// step reads and writes.
ExchangePlan planExchange(const ir::GraphData &graph, const LoweredProgram &lowered);

/// The variables' tile pieces as memory objects [0, numPieces()) (exposed for tests): owner is
/// the variable, aligned to its element, category Variable or Constant.
MemoryObjects buildVariablePieces(const ir::GraphData &graph);

} // namespace aspen::compiler
