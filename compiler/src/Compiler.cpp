// Copyright (c) Aspen contributors.
// The compiler: the passes in the order they run. Each pass is a free function
// in passes/<Pass>.{hpp,cpp}; this file only sequences them, times them
// (POPLAR_LOG_LEVEL=INFO) and reports progress.
#include "Compiler.hpp"

#include "LoweredVarDump.hpp"
#include "SaveArchive.hpp"
#include "cache/CompileCache.hpp"
#include "passes/Allocate.hpp"
#include "passes/CodeletData.hpp"
#include "passes/DumpIR.hpp"
#include "passes/Emit.hpp"
#include "passes/EstimateCycles.hpp"
#include "passes/Exchange.hpp"
#include "passes/Liveness.hpp"
#include "passes/Lower.hpp"
#include "passes/Streaming.hpp"
#include "passes/Validate.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"
#include "util/OnlyPoplarErrors.hpp"
#include "util/TerminalProgress.hpp"
#include "util/Trace.hpp"

#include <chrono>
#include <exception>
#include <functional>
#include <optional>
#include <pthread.h>

namespace aspen::compiler {
namespace {

/// Runs one pass: logs its name and time and reports progress after it.
class PassRunner {
public:
  PassRunner(int total, const poplar::ProgressFunc &progress)
      : total_(total), progress_(progress), terminal_("compile", static_cast<unsigned>(total)) {
    if (progress_)
      progress_(0, total_);
  }
  template <class F> auto operator()(const char *name, F &&pass) {
    const auto start = std::chrono::steady_clock::now();
    ASPEN_LOG(Debug, "compile: starting pass " << name);
    pvti::Tracepoint trace(traceChannel(), name);
    terminal_.begin(name);
    auto finish = [&] {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      ASPEN_LOG(Info, "compile: pass " << name << " took " << ms << " ms");
      terminal_.advance();
      if (progress_)
        progress_(++done_, total_);
    };
    if constexpr (std::is_void_v<decltype(pass())>) {
      pass();
      finish();
    } else {
      auto result = pass();
      finish();
      return result;
    }
  }

private:
  int total_;
  int done_ = 0;
  const poplar::ProgressFunc &progress_;
  TerminalProgress terminal_; // a bar on a terminal's stderr when the compile takes over a second
};

/// aspen.streamingMemory=auto, when the program does not fit: offload variables to Streaming
/// Memory, more each round, until it fits or no eligible variable is left (docs/streaming-memory.md).
/// Leaves `lowered`, `plan`, `liveness` and `allocation` describing the program as it will run.
void offloadToStreamingMemory(const ir::GraphData &graph, const CompileOptions &options,
                              LoweredProgram &lowered, ExchangePlan &plan, LivenessResult &liveness,
                              AllocationResult &allocation, std::uint64_t overhead) {
  const LoweredProgram baseLowered = lowered;
  const ExchangePlan basePlan = plan;
  const OffloadCandidates candidates =
      findOffloadCandidates(graph, baseLowered, basePlan, liveness, options.streamingMemoryPinned);
  std::vector<std::uint8_t> chosen(graph.variables.size(), 0);
  std::vector<std::uint32_t> vars;
  while (allocation.outOfMemory) {
    const std::vector<std::uint32_t> more =
        chooseMoreOffloads(graph, basePlan, candidates, allocation, chosen);
    if (more.empty())
      break;
    for (std::uint32_t v : more) {
      chosen[v] = 1;
      vars.push_back(v);
    }
    lowered = baseLowered;
    plan = basePlan;
    applyOffload(graph, lowered, plan, vars);
    liveness = analyseLiveness(graph, lowered, plan);
    allocation = allocateMemory(graph, lowered, plan, liveness, true, overhead);
    ASPEN_LOG(Info, "compile: offloaded " << vars.size() << " variables to Streaming Memory"
                                          << (allocation.outOfMemory ? "; still out of memory" : "; fits"));
  }
  if (allocation.outOfMemory)
    allocation.outOfMemoryMessage += describeOffload(graph, plan, candidates, allocation);
}

/// The stack bytes per tile from target.workerStackSizeInBytes and
/// target.supervisorStackSizeInBytes, or kTargetOverhead (the target's own) when neither is given.
std::uint64_t stackOverheadBytes(const ir::GraphData &graph, const CompileOptions &options) {
  if (!options.workerStackBytes && !options.supervisorStackBytes)
    return kTargetOverhead;
  return graph.target.numWorkerContexts *
             (options.workerStackBytes ? options.workerStackBytes : kDefaultWorkerStackBytes) +
         (options.supervisorStackBytes ? options.supervisorStackBytes : kDefaultSupervisorStackBytes);
}

} // namespace

std::unique_ptr<exe::ExecutableData> compile(const ir::GraphData &graph,
                                             const std::vector<const ir::ProgramNode *> &programs,
                                             const CompileOptions &options,
                                             const poplar::ProgressFunc &progress) {
  const auto start = std::chrono::steady_clock::now();
  ASPEN_LOG(Info, "compile: " << graph.vertices.size() << " vertices, " << graph.variables.size()
                              << " variables, " << graph.computeSets.size() << " compute sets, "
                              << programs.size() << " programs, " << graph.target.numTiles() << " tiles");
  PassRunner pass(7, progress);
  IRDumper dump(options.dumpIRDir); // aspen.dumpIR: a text file after each pass

  pass("validate", [&] { validateGraph(graph, programs); });
  dump.graph(graph);
  LoweredProgram lowered = pass("lower", [&] { return lowerPrograms(graph, programs); });
  dump.lowered(lowered);
  ExchangePlan plan = pass("exchange", [&] {
    ExchangePlan p = planExchange(graph, lowered);
    planCodeletData(graph, p); // each tile's copy of its codelets' globals and statics
    return p;
  });
  dump.exchange(graph, plan);
  LivenessResult liveness = pass("liveness", [&] { return analyseLiveness(graph, lowered, plan); });
  dump.liveness(graph, liveness);
  AllocationResult allocation = pass("allocate", [&] {
    const std::uint64_t overhead = stackOverheadBytes(graph, options);
    auto result = allocateMemory(graph, lowered, plan, liveness, true, overhead);
    if (result.outOfMemory && options.streamingMemoryAuto)
      offloadToStreamingMemory(graph, options, lowered, plan, liveness, result, overhead);
    dump.allocation(plan, result); // before an out-of-memory verdict throws
    if (result.outOfMemory && !options.allowOutOfMemory)
      throw poplar::graph_memory_allocation_error(result.outOfMemoryMessage);
    return result;
  });
  checkStreamingMemoryCapacity(graph, [&] {
    std::uint64_t bytes = 0;
    for (const exe::StreamingVariable &v : plan.streaming)
      bytes += v.bytes;
    return bytes;
  }());
  if (!options.loweredVarDumpFile.empty())
    writeLoweredVarDump(options.loweredVarDumpFile, options.makeReportDirectory, graph, plan, liveness,
                        allocation);
  CycleEstimates cycles = pass("estimateCycles", [&] { return estimateCycles(graph, lowered, plan); });
  dump.cycles(plan, cycles);
  auto exe = pass("emit", [&] { return emitExecutable(graph, lowered, plan, liveness, allocation, cycles); });
  dump.executable(*exe);
  // The passes guarantee the structure exe::validateStructure checks: the runtime may skip it.
  exe->provenance = exe::Provenance::Compiled;

  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASPEN_LOG(Info, "compile: done in " << ms << " ms (" << exe->steps.size() << " steps, "
                                      << exe->computeSteps.size() << " compute steps"
                                      << (exe->outOfMemory ? ", OUT OF MEMORY" : "") << ")");
  return exe;
}

} // namespace aspen::compiler

namespace poplar {

namespace {

std::vector<const aspen::ir::ProgramNode *> roots(ArrayRef<program::Program> programs) {
  std::vector<const aspen::ir::ProgramNode *> out;
  for (const program::Program &p : programs)
    out.push_back(p.getImpl().get());
  return out;
}

using aspen::compiler::kDeepProgramLevels;
using aspen::compiler::kDeepProgramStackBase;
using aspen::compiler::kStackBytesPerLevel;

/// Runs `work` on a new thread whose stack holds `stackBytes` (reserved, and
/// touched only as deep as it is used), passing its result or exception back.
Executable runOnLargeStack(std::size_t stackBytes, std::size_t depth,
                           const std::function<Executable()> &work) {
  struct Call {
    const std::function<Executable()> *work;
    std::optional<Executable> result;
    std::exception_ptr error;
  } call{&work, std::nullopt, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stackBytes);
  pthread_t thread;
  const int failed = pthread_create(
      &thread, &attr,
      [](void *arg) -> void * {
        auto *c = static_cast<Call *>(arg);
        try {
          c->result.emplace((*c->work)());
        } catch (...) {
          c->error = std::current_exception();
        }
        return nullptr;
      },
      &call);
  pthread_attr_destroy(&attr);
  if (failed)
    throw control_program_error("The programs nest " + std::to_string(depth) +
                                " levels deep, and no thread with a stack of " + std::to_string(stackBytes) +
                                " bytes could be made to compile them");
  pthread_join(thread, nullptr);
  if (call.error)
    std::rethrow_exception(call.error);
  return std::move(*call.result);
}

Executable compileChecked(const Graph &graph, const std::vector<const aspen::ir::ProgramNode *> &programRoots,
                          const OptionFlags &options, const ProgressFunc &progress);

} // namespace

Executable compileGraph(const Graph &graph, ArrayRef<program::Program> programs, const OptionFlags &options,
                        ProgressFunc progress, const DebugContext &) {
  if (!graph.getImplPtr())
    throw poplar_error("compileGraph: the graph is empty (default-constructed or moved from)");
  const auto programRoots = roots(programs);
  if (const std::string file = aspen::compiler::parseCompileOptions(options).serializedGraphFile;
      !file.empty())
    aspen::compiler::writeSerializedGraph(file, graph, programs);
  const std::size_t depth = aspen::compiler::programNestingDepth(graph.getImpl(), programRoots);
  return aspen::onlyPoplarErrors("compileGraph", [&] {
    if (depth <= kDeepProgramLevels)
      return compileChecked(graph, programRoots, options, progress);
    return runOnLargeStack(kDeepProgramStackBase + depth * kStackBytesPerLevel, depth,
                           [&] { return compileChecked(graph, programRoots, options, progress); });
  });
}

namespace {

/// compileGraph once the program trees are known to be finite.
Executable compileChecked(const Graph &graph, const std::vector<const aspen::ir::ProgramNode *> &programRoots,
                          const OptionFlags &options, const ProgressFunc &progress) {
  using namespace aspen;
  const compiler::CompileOptions opts = compiler::parseCompileOptions(options);
  const ir::GraphData &data = graph.getImpl();
  auto withArchive = [&](std::unique_ptr<exe::ExecutableData> exe) {
    if (!opts.saveArchive.empty())
      compiler::writeCodeArchive(opts.saveArchive, *exe);
    return Executable(std::move(exe));
  };
  if (!opts.useCache || !opts.loweredVarDumpFile.empty()) // a cached executable has no allocation to dump
    return withArchive(compiler::compile(data, programRoots, opts, progress));

  const auto start = std::chrono::steady_clock::now();
  const cache::CacheConfig config = cache::CacheConfig::fromEnvironment();
  const std::string key = cache::computeCacheKey(data, programRoots, opts);
  const double keyMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (auto hit = cache::lookup(config, key)) {
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    ASPEN_LOG(Info, "compile cache: hit " << key << " (" << ms << " ms, of which " << keyMs
                                          << " ms hashing the graph)");
    if (progress)
      progress(1, 1);
    return withArchive(std::move(hit));
  }
  ASPEN_LOG(Info, "compile cache: miss " << key);
  auto exe = compiler::compile(data, programRoots, opts, progress);
  cache::store(config, key, *exe);
  return withArchive(std::move(exe));
}

} // namespace

Executable compileGraph(Graph &&graph, ArrayRef<program::Program> programs, const OptionFlags &options,
                        ProgressFunc progress, const DebugContext &debugContext) {
  Graph owned(std::move(graph));
  return compileGraph(static_cast<const Graph &>(owned), programs, options, std::move(progress),
                      debugContext);
}

} // namespace poplar
