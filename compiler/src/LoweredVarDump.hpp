// Copyright (c) Aspen contributors.
// The file of the "debug.loweredVarDumpFile" option: where every variable lives.
#pragma once

#include "passes/PassData.hpp"
#include "poplar/Graph.hpp"

#include <string>

namespace aspen::compiler {

/// Writes `path` as JSON: for every variable its name, type, shape, whether it
/// is a constant and always live, and each tile piece with its tile, address
/// (byte offset in the tile's memory), size in bytes and offset in the
/// variable (format in docs/graph-serialization.md). Throws
/// `poplar::poplar_error` naming a file that cannot be written. With
/// `makeDirectory`, the file's directory is made first (autoReport.directory).
void writeLoweredVarDump(const std::string &path, bool makeDirectory, const ir::GraphData &graph,
                         const ExchangePlan &plan, const LivenessResult &liveness,
                         const AllocationResult &allocation);

/// Writes `graph.serialize(programs, JSON)` to `path` (autoReport.outputSerializedGraph),
/// making its directory; throws `poplar::poplar_error` naming a file that cannot be written.
void writeSerializedGraph(const std::string &path, const poplar::Graph &graph,
                          poplar::ArrayRef<poplar::program::Program> programs);

} // namespace aspen::compiler
