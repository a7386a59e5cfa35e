// Copyright (c) Aspen contributors.
// The pass pipeline, for compileGraph and for tests.
#pragma once

#include "CompileOptions.hpp"
#include "exe/ExecutableData.hpp"
#include "ir/GraphData.hpp"
#include "poplar/Executable.hpp"

#include <memory>
#include <vector>

namespace aspen::compiler {

/// Runs every pass on `graph` and `programs` (program i = roots[i]; null =
/// empty program). Reports `progress(step, total)` after each pass.
std::unique_ptr<exe::ExecutableData> compile(const ir::GraphData &graph,
                                             const std::vector<const ir::ProgramNode *> &programs,
                                             const CompileOptions &options,
                                             const poplar::ProgressFunc &progress = {});

} // namespace aspen::compiler
