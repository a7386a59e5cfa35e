// Copyright (c) Aspen contributors.
// Engine options: the keys Poplar programs pass, merged with POPLAR_ENGINE_OPTIONS.
#pragma once

#include "poplar/OptionFlags.hpp"

#include <cstdint>
#include <string>

namespace aspen::rt {

/// The engine options Aspen acts on, parsed from OptionFlags.
struct EngineOptions {
  poplar::OptionFlags all; // every key as given (after merging), passed on to the compiler
  bool allowOutOfMemory = false;
  bool autoReportGraph = false;     // write the memory/graph part of profile.json
  bool autoReportExecution = false; // write the execution part of profile.json
  bool autoReportHtml = false;      // write report.html (the analyser page) beside profile.json
  bool autoReportDebugInfo = false; // write debug.cbor (the DebugInfo records) beside profile.json
  std::string autoReportDirectory = ".";
  bool instrument = false;
  bool poisonUninitialisedMemory = false; // aspen.poisonUninitialisedMemory
  bool checkTileWrites = false;           // aspen.checkTileWrites
  std::uint64_t maxRunCycles = 0;         // aspen.maxRunCycles: 0 = no bound
  double maxRunSeconds = 0;               // aspen.maxRunSeconds: 0 = no bound
};

/// Validates `options` merged with the JSON object in POPLAR_ENGINE_OPTIONS
/// (the environment wins). Throws invalid_option naming an unknown key or a
/// bad value, parse_error for malformed JSON.
EngineOptions parseEngineOptions(const poplar::OptionFlags &options);

/// Validates the options of `Engine::printProfileSummary`.
struct SummaryOptions {
  bool showExecutionSteps = false;
  bool showVarStorage = false;
};
SummaryOptions parseSummaryOptions(const poplar::OptionFlags &options);

} // namespace aspen::rt
