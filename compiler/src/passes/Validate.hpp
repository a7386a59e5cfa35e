// Copyright (c) Aspen contributors.
// Pass 1: reject graphs and programs that cannot be compiled, reporting every
// problem at once.
#pragma once

#include "ir/GraphData.hpp"

#include <vector>

namespace aspen::compiler {

/// Checks that every vertex field is connected with the right size and type,
/// every variable and vertex is completely mapped to existing tiles, no two
/// vertices of one compute set write one element, no output writes a constant
/// or an element twice, handles and streams are unique, and program nodes are
/// well formed (scalar predicates, matching copies, known compute sets, streams
/// and functions, tensors of this graph, control values on one tile).
///
/// Throws, with every problem listed (vertex id and type, field, tensor and
/// compute set named): `invalid_tile_mapping` when all problems are about
/// mapping, `control_program_error` when all are about programs, otherwise
/// `graph_connection_error`.
void validateGraph(const ir::GraphData &graph, const std::vector<const ir::ProgramNode *> &programs);

/// The deepest nesting of program nodes in `programs` and the graph's functions
/// (a Call does not nest: each function is a tree of its own), found without
/// recursion. Throws `graph_cycle_error` when a program contains itself. Runs
/// before anything that walks the trees recursively (cache key, validation,
/// lowering), so that those meet only finite trees of known depth.
std::size_t programNestingDepth(const ir::GraphData &graph,
                                const std::vector<const ir::ProgramNode *> &programs);

} // namespace aspen::compiler
