// Copyright (c) Aspen contributors.
#include "OptionTable.hpp"

#include "poplar/exceptions.hpp"

namespace aspen::compiler {

namespace {
constexpr const char *kIgnored = "accepted; no effect on the simulator";
} // namespace

const std::vector<OptionRow> &optionTable() {
  using K = OptionKind;
  static const std::vector<OptionRow> table = {
      // --- autoReport ---------------------------------------------------------------------
      {"autoReport.all", K::Bool, {}, "write profile.json (graph and execution parts)"},
      {"autoReport.directory", K::Text, {}, "directory of profile.json (default .)"},
      {"autoReport.outputGraphProfile", K::Bool, {}, "write the graph/memory part of profile.json"},
      {"autoReport.outputExecutionProfile", K::Bool, {}, "write the execution part of profile.json"},
      {"autoReport.outputLoweredVars",
       K::Bool,
       {},
       "write <autoReport.directory>/vars.json (as debug.loweredVarDumpFile)"},
      {"autoReport.outputHtml",
       K::Bool,
       {},
       "write report.html, the analyser page, beside profile.json (default true)"},
      {"autoReport.outputArchive", K::Bool, {}, kIgnored},
      {"autoReport.outputDebugInfo",
       K::Bool,
       {},
       "write <autoReport.directory>/debug.cbor (the DebugInfo records)"},
      {"autoReport.outputSerializedGraph",
       K::Bool,
       {},
       "write <autoReport.directory>/serialized_graph.json (Graph::serialize, JSON)"},
      {"autoReport.streamAtEachRun", K::Bool, {}, kIgnored},
      {"autoReport.executionProfileProgramRunCount", K::Unsigned, {}, kIgnored},
      // --- debug --------------------------------------------------------------------------
      {"debug.allowOutOfMemory", K::Bool, {}, "compile a graph that does not fit; running it is refused"},
      {"debug.loweredVarDumpFile",
       K::Text,
       {},
       "write every variable's tile pieces with address and size to this file (JSON)"},
      {"debug.computeInstrumentationLevel", K::Choice, {"vertex", "tile", "ipu", "device"}, kIgnored},
      {"debug.instrumentExternalExchange",
       K::Bool,
       {},
       "each execution of a stream copy is a lightweight-profiling block on every tile it writes or reads "
       "(docs/lightweight-profiling.md)"},
      {"debug.instrument*", K::Bool, {}, "accepted; cycles are always counted"},
      {"debug.retainDebugInformation", K::Bool, {}, kIgnored},
      {"debug.outputAllSymbols", K::Bool, {}, kIgnored},
      {"debug.verify", K::Bool, {}, "accepted; the compiler always validates the graph"},
      {"debug.runtimeVerify", K::Bool, {}, "accepted; the loader always checks the executable"},
      {"debug.floatPointOpException", K::Bool, {}, kIgnored},
      {"debug.nanOverflowException", K::Bool, {}, kIgnored},
      {"debug.supervisorStackSizeInBytes", K::Unsigned, {}, kIgnored},
      {"debug.workerStackSizeInBytes", K::Unsigned, {}, kIgnored},
      {"debug.branchRecordTile", K::Unsigned, {}, kIgnored},
      {"debug.profilingTile", K::Unsigned, {}, kIgnored},
      {"debug.cpuMultiThreadExecution", K::Bool, {}, kIgnored},
      {"debug.trace", K::Bool, {}, kIgnored},
      {"debug.traceFile", K::Text, {}, kIgnored},
      {"debug.loweredVarDumpNumOOMTiles", K::Unsigned, {}, kIgnored},
      // --- exchange -----------------------------------------------------------------------
      {"exchange.streamBufferOverlap", K::Choice, {"none", "hostRearrangeOnly", "any"}, kIgnored},
      {"exchange.enablePrefetch", K::Bool, {}, kIgnored},
      {"exchange.*", K::Text, {}, kIgnored},
      // --- target -------------------------------------------------------------------------
      {"target.saveArchive",
       K::Text,
       {},
       "write the executable's code (its .gp vertex libraries) to this file as an ar archive"},
      {"target.deterministicWorkers", K::Choice, {"true", "false", "portable"}, kIgnored},
      {"target.hostSyncTimeout", K::Unsigned, {}, kIgnored},
      {"target.workerStackSizeInBytes",
       K::Unsigned,
       {},
       "bytes of stack per worker context: sizes the host stack vertex code runs on and the stack in "
       "the memory report (docs/tile-model.md)"},
      {"target.supervisorStackSizeInBytes",
       K::Unsigned,
       {},
       "bytes of the supervisor's stack: as target.workerStackSizeInBytes"},
      {"target.*", K::Text, {}, kIgnored},
      // --- profiler (lightweight profiling, docs/lightweight-profiling.md) -----------------
      {"profiler.blocks.filter",
       K::Text,
       {},
       "a regular expression (ECMAScript, whole name): each execution of a program::Block whose name "
       "matches is a block of Execution::blocks (docs/lightweight-profiling.md)"},
      {"profiler.programs.filter",
       K::Text,
       {},
       "a regular expression over the names of other programs (Execute, Copy, remote-buffer copies): each "
       "execution of one that matches is a block, as if wrapped in a Block (docs/lightweight-profiling.md)"},
      {"profiler.blocks.tile",
       K::Unsigned,
       {},
       "the tile of each IPU that records blocks (default 0); must be below the tiles per IPU "
       "(docs/lightweight-profiling.md)"},
      // --- families with no effect on the simulator ---------------------------------------
      {"opt.*", K::Text, {}, kIgnored},
      {"profiler.*",
       K::Text,
       {},
       kIgnored}, // after the profiler rows Aspen implements (lightweight profiling)
      {"streamCallbacks.*", K::Text, {}, kIgnored},
      // --- Aspen's own (compileGraph checks aspen.compile*) -------------------------------
      {"aspen.poisonUninitialisedMemory",
       K::Bool,
       {},
       "fill tile memory with all-ones bytes at load: reads before writes show "
       "(docs/uninitialised-memory.md)"},
      {"aspen.exchangeInPlace",
       K::Bool,
       {},
       "read edge data in place instead of copying it into edge buffers where no correct program can tell "
       "(default true; false: copy every byte the exchange moves; docs/exchange.md)"},
      {"aspen.checkTileWrites",
       K::Bool,
       {},
       "run compute sets on one thread with every tile's memory read-only but the running tile's: a vertex "
       "writing into another tile is stopped with an error naming it (slow; docs/tile-model.md)"},
      {"aspen.profileHostComputeTime",
       K::Bool,
       {},
       "also time every compute set on the host clock for the execution profile's hostComputeSeconds "
       "(two clock reads per compute set); false (the default): only each run's host time "
       "(docs/profiling.md)"},
      {"aspen.maxRunCycles",
       K::Unsigned,
       {},
       "stop a run (Engine::run) with an error before it passes this many simulated cycles; 0 (the default): "
       "no bound (docs/tile-model.md)"},
      {"aspen.maxRunSeconds",
       K::Text,
       {},
       "stop a run with an error after this many seconds of host time, also inside a compute() that never "
       "returns; 0 (the default): no bound (docs/tile-model.md)"},
      {"aspen.streamingMemory",
       K::Choice,
       {"off", "auto"},
       "auto: when tile memory would overflow, the compiler keeps variables in Streaming Memory and stages "
       "them in before use (docs/streaming-memory.md); off (the default): it does not"},
      {"aspen.streamingMemoryPinned",
       K::Text,
       {},
       "comma-separated names of variables aspen.streamingMemory=auto never moves "
       "(docs/streaming-memory.md)"},
      {"aspen.*", K::Text, {}, "Aspen's compiler options (docs/compiler.md)"},
  };
  return table;
}

namespace {

bool matches(const char *pattern, const std::string &key) {
  const std::string p(pattern);
  if (!p.empty() && p.back() == '*')
    return key.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0;
  return key == p;
}

} // namespace

void checkOption(const std::string &key, const std::string &value) {
  const OptionRow *row = nullptr;
  for (const OptionRow &r : optionTable())
    if (matches(r.key, key)) {
      row = &r;
      break;
    }
  if (!row)
    throw poplar::invalid_option("Unrecognised engine option '" + key + "'");
  switch (row->kind) {
  case OptionKind::Bool:
    if (value != "true" && value != "false")
      throw poplar::invalid_option("Engine option '" + key + "' must be \"true\" or \"false\", not \"" +
                                   value + "\"");
    return;
  case OptionKind::Text:
    return;
  case OptionKind::Unsigned:
    // Decimal, or hexadecimal with 0x (as Poplar's own examples write stack sizes).
    if (value.size() > 2 && (value.compare(0, 2, "0x") == 0 || value.compare(0, 2, "0X") == 0)
            ? value.find_first_not_of("0123456789abcdefABCDEF", 2) != std::string::npos
            : value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
      throw poplar::invalid_option("Engine option '" + key + "' must be an unsigned integer, not \"" + value +
                                   "\"");
    return;
  case OptionKind::Choice: {
    std::string allowed;
    for (const char *choice : row->choices) {
      if (value == choice)
        return;
      allowed += allowed.empty() ? "" : ", ";
      allowed += choice;
    }
    throw poplar::invalid_option("Engine option '" + key + "' must be one of " + allowed + ", not \"" +
                                 value + "\"");
  }
  }
}

} // namespace aspen::compiler
