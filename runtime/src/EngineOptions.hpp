// Copyright (c) Aspen contributors.
// Engine options: the keys Poplar programs pass, merged with POPLAR_ENGINE_OPTIONS.
#pragma once

#include "CompileOptions.hpp"
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
  bool exchangeInPlace = true;            // aspen.exchangeInPlace (docs/exchange.md)
  bool profileHostComputeTime = false;    // aspen.profileHostComputeTime (docs/profiling.md)
  // target.workerStackSizeInBytes / target.supervisorStackSizeInBytes (IPU bytes)
  std::uint64_t workerStackBytes = compiler::kDefaultWorkerStackBytes;
  std::uint64_t supervisorStackBytes = compiler::kDefaultSupervisorStackBytes;
  /// Host bytes per IPU byte of stack: x86-64 frames, the C library.
  static constexpr std::uint64_t kHostStackScale = 512;
  static constexpr std::uint64_t kMinHostStackBytes = 256 * 1024;
  /// The host stack vertex code runs on: kHostStackScale times the larger of
  /// the two, at least kMinHostStackBytes.
  std::uint64_t hostStackBytes() const;
  /// "target.workerStackSizeInBytes = 512 and target.supervisorStackSizeInBytes = 96"
  std::string stackOptionsText() const;
  std::uint64_t maxRunCycles = 0; // aspen.maxRunCycles: 0 = no bound
  double maxRunSeconds = 0;       // aspen.maxRunSeconds: 0 = no bound
  // Lightweight profiling (docs/lightweight-profiling.md): the patterns are checked here, the
  // tile against the target when the engine is created.
  std::string blocksFilter;                // profiler.blocks.filter
  std::string programsFilter;              // profiler.programs.filter
  unsigned blocksTile = 0;                 // profiler.blocks.tile
  bool instrumentExternalExchange = false; // debug.instrumentExternalExchange
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
