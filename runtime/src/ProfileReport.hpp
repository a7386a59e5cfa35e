// Copyright (c) Aspen contributors.
// The profile an engine reports: Engine::printProfileSummary's text and the
// profile.json written by autoReport (docs/profile-format.md).
#pragma once

#include "EngineOptions.hpp"
#include "ExecutionProfile.hpp"
#include "exe/ExecutableData.hpp"
#include "poplar/ProfileValue.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace aspen::rt {

/// The compile-time profile of `exe` (its profileJson), or an empty object if it has none.
nlohmann::json compileProfile(const exe::ExecutableData &exe);

/// Writes Poplar's summary sections: Target, Graph, Memory Usage and, when any
/// program ran, Execution (with each executed step if `options.showExecutionSteps`).
void printProfileSummary(std::ostream &os, const exe::ExecutableData &exe, const ExecutionProfile &profile,
                         const SummaryOptions &options);

/// The whole profile as JSON: the compile-time part plus, when
/// `includeExecution`, an "execution" object with cycles by category, step,
/// vertex type and tile, and the execution trace.
nlohmann::json profileJson(const exe::ExecutableData &exe, const ExecutionProfile &profile, bool includeGraph,
                           bool includeExecution);

/// Poplar 1.x's graph profile of `report` (a profileJson): "target", "graph",
/// "memory" ("byTile": "total", "totalIncludingGaps"; "liveness"), "computeSets",
/// "vertexTypes" (docs/profiling.md).
poplar::ProfileValue legacyGraphProfile(const nlohmann::json &report);
/// Poplar 1.x's execution profile of `report`: "simulation" ("cycles", "steps":
/// each executed step's "type" (OnTileExecute, DoExchange, StreamCopy, ...),
/// "name", "cycles"), "runs", "cycles" by category.
poplar::ProfileValue legacyExecutionProfile(const nlohmann::json &report);

/// Writes `profileJson(...)` to `<directory>/profile.json` and, in CBOR, to
/// `<directory>/profile.pop` (creating the directory), and the analyser page
/// `<directory>/report.html` when `html`; throws poplar_error naming the file if
/// one cannot be written.
/// With `debugInfo`, also `<directory>/debug.cbor`: the report's DebugInfo records as
/// DebugInfo::initializeStreamer writes them (`{"contexts": [...]}`, in CBOR).
void writeProfile(const std::string &directory, const exe::ExecutableData &exe,
                  const ExecutionProfile &profile, bool includeGraph, bool includeExecution, bool html,
                  bool debugInfo = false);

} // namespace aspen::rt
