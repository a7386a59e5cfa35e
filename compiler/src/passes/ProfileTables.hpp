// Copyright (c) Aspen contributors.
// The parts of the compile-time profile that the analyser page and libpva need
// beyond the totals: every variable with its bytes per tile and live range, the
// tiles each vertex type runs on, the program entry steps and block names
// (docs/profile-format.md, "Tables").
#pragma once

#include "passes/PassData.hpp"

#include <nlohmann/json.hpp>

namespace aspen::compiler {

/// Adds `variables`, `programs` and per vertex type `tiles` to `profile`, and
/// names BlockBegin steps after their block. `profile` already holds the keys
/// Emit writes (`steps`, `vertexTypes`).
void addProfileTables(nlohmann::json &profile, const ir::GraphData &graph, const LoweredProgram &lowered,
                      const ExchangePlan &plan, const LivenessResult &liveness,
                      const exe::ExecutableData &executable);

} // namespace aspen::compiler
