// Copyright (c) Aspen contributors.
// Pass 3b (after exchange): room for each tile's copy of its codelets' data.
#pragma once

#include "passes/PassData.hpp"

namespace aspen::compiler {

/// Each tile that runs a vertex of a codelet library with writable data (globals,
/// statics: codelets/CodeletData.hpp) gets a copy of that data, as on an IPU each
/// tile's image holds its own: one always-live memory object of category
/// CodeletData per (library, tile), recorded in `plan.codeletData`. A library
/// without such data gets nothing. Throws graph_object_load_error naming the
/// library and a vertex type of it when its data cannot be handled.
void planCodeletData(const ir::GraphData &graph, ExchangePlan &plan);

} // namespace aspen::compiler
