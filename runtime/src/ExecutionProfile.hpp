// Copyright (c) Aspen contributors.
// What the executor records while programs run: estimated cycles by category,
// by step and by vertex type, an execution trace, and measured host time.
#pragma once

#include <cstdint>
#include <vector>

namespace aspen::rt {

/// Where a step's estimated cycles are counted.
enum class CycleCategory : std::uint8_t { Compute, Exchange, HostExchange, StreamingMemory, Sync, Control };

struct ExecutionProfile {
  /// One executed step. Blocks appear as their BlockBegin/BlockEnd steps.
  struct TraceEntry {
    std::uint32_t step;
    std::uint32_t run;        // index of the run() call since the last reset
    std::uint64_t startCycle; // device cycle counter when the step began
    std::uint64_t cycles;     // estimated cycles of the step
  };
  static constexpr std::size_t maxTraceEntries = 1u << 20;

  bool enabled = true;
  std::uint64_t runs = 0;
  std::vector<std::uint64_t> runsPerProgram;
  std::uint64_t totalCycles = 0;
  std::uint64_t computeCycles = 0;
  std::uint64_t exchangeCycles = 0;
  std::uint64_t hostExchangeCycles = 0;
  std::uint64_t streamingMemoryCycles = 0; // remote-buffer copies (docs/streaming-memory.md)
  std::uint64_t syncCycles = 0;
  std::uint64_t controlCycles = 0;
  // Engine::run launches (docs/cost-model.md, "Launch"): per run the host link's round trip and a
  // host sync. Host time around the program's, so not part of totalCycles (which, as on the IPU,
  // counts the program's own cycles).
  std::uint64_t launchCycles = 0;
  std::vector<std::uint64_t> stepExecutions;      // per step of the executable
  std::vector<std::uint64_t> stepCycles;          // per step: total over its executions
  std::vector<std::uint64_t> vertexTypeInstances; // per vertex type: vertices executed
  std::vector<std::uint64_t> vertexTypeCycles;    // per vertex type: sum of their cycles
  // Per vertex type: vertices executed whose cycles their code counted (docs/cost-model.md,
  // "Cycles from the code"), and those without an estimate whose code could not count them
  // (priced by the static default instead).
  std::vector<std::uint64_t> vertexTypeCounted;
  std::vector<std::uint64_t> vertexTypeNotCounted;
  // Per step: for an Execute step with counted vertices, each of its tiles' compute cycles
  // summed over the step's executions (tiles as ComputeStep::tiles); empty for other steps.
  std::vector<std::vector<std::uint64_t>> stepTileCycles;
  std::vector<TraceEntry> trace;
  std::uint64_t traceDropped = 0;
  // Host wall time in hostclock ticks (HostClock.hpp: hostclock::seconds converts them).
  std::uint64_t hostTicks = 0;        // spent in run()
  std::uint64_t hostComputeTicks = 0; // of Execute steps (only measured while enabled)

  void reset(std::size_t numPrograms, std::size_t numSteps, std::size_t numVertexTypes) {
    bool keepEnabled = enabled;
    *this = ExecutionProfile();
    enabled = keepEnabled;
    runsPerProgram.assign(numPrograms, 0);
    stepExecutions.assign(numSteps, 0);
    stepCycles.assign(numSteps, 0);
    stepTileCycles.assign(numSteps, {});
    vertexTypeInstances.assign(numVertexTypes, 0);
    vertexTypeCycles.assign(numVertexTypes, 0);
    vertexTypeCounted.assign(numVertexTypes, 0);
    vertexTypeNotCounted.assign(numVertexTypes, 0);
  }
};

} // namespace aspen::rt
