// Copyright (c) Aspen contributors.
// What the executor records while programs run: estimated cycles by category,
// by step and by vertex type, an execution trace, and measured host time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aspen::rt {

/// Where a step's estimated cycles are counted.
enum class CycleCategory : std::uint8_t { Compute, Exchange, HostExchange, StreamingMemory, Sync, Control };

/// One executed step of the execution trace. Blocks appear as their BlockBegin/BlockEnd steps.
struct TraceEntry {
  std::uint32_t step;
  std::uint32_t run;        // index of the run() call since the last reset
  std::uint64_t startCycle; // device cycle counter when the step began
  std::uint64_t cycles;     // estimated cycles of the step
};

/// The execution trace, kept compact for a user's loop of Engine::run calls: a run whose
/// entries repeat the previous run's (the same steps and cycles, its start times and run index
/// shifted by the same amounts as the last time) adds one to a count instead of its entries.
/// A run's entries are written to a buffer reused from run to run and compared with the
/// previous run's when the next run begins (closeRun), so the trace no longer grows into fresh
/// memory on every run. Read back (forEach, entries), it is entry for entry the trace as it was
/// recorded.
class ExecutionTrace {
public:
  void add(const TraceEntry &e) {
    open_.push_back(e);
    ++size_;
  }
  /// Entries recorded (repeated runs counted in full).
  std::size_t size() const { return size_; }
  /// Folds the entries of the run that ended into the trace (Executor::begin).
  void closeRun() {
    if (open_.empty())
      return;
    if (!blocks_.empty() && isRepeatOf(blocks_.back()))
      ++blocks_.back().repeats;
    else
      startBlock();
    open_.clear();
  }
  /// Calls f(const TraceEntry &) for each entry in the order recorded.
  template <class F> void forEach(F &&f) const {
    for (const Block &b : blocks_)
      for (std::uint64_t r = 0; r < b.repeats; ++r)
        for (std::size_t i = b.begin; i < b.end; ++i) {
          const TraceEntry &e = first_[i];
          f(TraceEntry{e.step, static_cast<std::uint32_t>(e.run + r * b.runStride),
                       e.startCycle + r * b.cycleStride, e.cycles});
        }
    for (const TraceEntry &e : open_)
      f(e);
  }
  std::vector<TraceEntry> entries() const {
    std::vector<TraceEntry> out;
    out.reserve(size_);
    forEach([&](const TraceEntry &e) { out.push_back(e); });
    return out;
  }

private:
  /// Runs of equal entries: first_[begin, end) is the first run's; run r (from 0) of the block
  /// is it with runStride * r added to each run index and cycleStride * r to each start cycle.
  struct Block {
    std::size_t begin, end;
    std::uint64_t repeats;
    std::uint64_t runStride, cycleStride; // set when the second run joins
  };
  /// Whether the open run is the next repeat of block `b`.
  bool isRepeatOf(Block &b) const {
    const std::size_t n = b.end - b.begin;
    if (open_.size() != n)
      return false;
    const TraceEntry *p = first_.data() + b.begin;
    const std::uint64_t runStride = std::uint64_t(open_[0].run) - p[0].run;
    const std::uint64_t cycleStride = open_[0].startCycle - p[0].startCycle;
    if (b.repeats > 1 ? runStride != b.runStride * b.repeats || cycleStride != b.cycleStride * b.repeats
                      : open_[0].run < p[0].run || open_[0].startCycle < p[0].startCycle)
      return false;
    for (std::size_t i = 0; i < n; ++i)
      if (open_[i].step != p[i].step || open_[i].cycles != p[i].cycles ||
          std::uint64_t(open_[i].run) - p[i].run != runStride ||
          open_[i].startCycle - p[i].startCycle != cycleStride)
        return false;
    if (b.repeats == 1) {
      b.runStride = runStride;
      b.cycleStride = cycleStride;
    }
    return true;
  }
  void startBlock() {
    const std::size_t begin = first_.size();
    first_.insert(first_.end(), open_.begin(), open_.end());
    blocks_.push_back({begin, first_.size(), 1, 0, 0});
  }

  std::vector<TraceEntry> first_;
  std::vector<Block> blocks_;
  std::vector<TraceEntry> open_; // the running (or last) run's entries
  std::size_t size_ = 0;
};

/// The engine's lightweight-profiling options (docs/lightweight-profiling.md), written into the
/// report's execution part for libpva's Execution::blocks, which reads the blocks from the trace.
struct BlockProfiling {
  std::string filter;         // profiler.blocks.filter: pattern over Block program names
  std::string programsFilter; // profiler.programs.filter: pattern over other programs' names
  unsigned tile = 0;          // profiler.blocks.tile: the tile of each IPU that records them
  bool streamCopies = false;  // debug.instrumentExternalExchange: stream copies too
};

struct ExecutionProfile {
  using TraceEntry = aspen::rt::TraceEntry;
  static constexpr std::size_t maxTraceEntries = 1u << 20;

  bool enabled = true;
  // aspen.profileHostComputeTime: hostComputeTicks measured (two clock reads per compute step).
  bool hostComputeTimes = false;
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
  ExecutionTrace trace;
  std::uint64_t traceDropped = 0;
  // Host wall time in hostclock ticks (HostClock.hpp: hostclock::seconds converts them).
  std::uint64_t hostTicks = 0;        // spent in run()
  std::uint64_t hostComputeTicks = 0; // of Execute steps (measured while enabled and hostComputeTimes)

  BlockProfiling blocks; // from the engine's options: kept by reset()

  void reset(std::size_t numPrograms, std::size_t numSteps, std::size_t numVertexTypes) {
    const bool keepEnabled = enabled, keepHostComputeTimes = hostComputeTimes;
    BlockProfiling keepBlocks = std::move(blocks);
    *this = ExecutionProfile();
    enabled = keepEnabled;
    hostComputeTimes = keepHostComputeTimes;
    blocks = std::move(keepBlocks);
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
