// Copyright (c) Aspen contributors.
// Runs the steps of a loaded executable on the simulated tiles: compute sets as
// one parallel loop over tiles, exchange as precomputed memcpy runs, control
// flow, host streams, remote buffers, prints and cycle accounting.
#pragma once

#include "ExecutionProfile.hpp"
#include "HostStreams.hpp"
#include "TileData.hpp"
#include "TileMemory.hpp"
#include "VertexFaults.hpp"
#include "exe/ExecutableData.hpp"
#include "util/Trace.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

namespace aspen::rt {

struct BuiltinStep;

/// A vertex type's entry point: returns 0 when the vertex's compute() returned false.
using ComputeFn = int (*)(void *vertex, unsigned workerId);

/// A vertex type as the executor calls it.
struct VertexCode {
  ComputeFn compute = nullptr;
  bool isMultiVertex = false;
  std::uint32_t dataImage = ~0u; // its library's per-tile data: index into HostContext::codeletData
  bool countsCycles = false;     // its code counts the cycles it runs (codelets::cycleCounter)
  bool isSupervisor = false;     // priced in machine cycles, alone on its tile (as a MultiVertex)
  bool checksWrites = true;      // its code reads the thread's tile write range (docs/tile-model.md)
  bool usesBuiltins = true;      // its code may call the IPU builtins (TileBuiltins.hpp)
};

/// Host-side state the executor uses but does not own (it outlives a load).
struct HostContext {
  HostStreams *streams = nullptr;
  RemoteBuffers *remoteBuffers = nullptr;
  std::ostream *printStream = nullptr;
  ExecutionProfile *profile = nullptr;
  std::mutex *printMutex = nullptr;                       // replicas print to one stream
  const std::vector<CodeletImage> *codeletData = nullptr; // libraries' per-tile data (TileData.hpp)
  // aspen.exchangeInPlace: read edge data in place (docs/exchange.md); the caller then calls
  // Executor::bindInPlace once the memory image is loaded.
  bool exchangeInPlace = false;
};

/// Tile-index boundaries of the chunks a phase runs as parallel tasks, cut so
/// that chunks carry similar work. A single chunk runs inline.
struct TileChunks {
  std::vector<std::uint32_t> bounds; // chunk c = tiles [bounds[c], bounds[c+1])
  bool parallel() const { return bounds.size() > 2; }
};

/// Executes programs of one executable loaded into `memory`. Results do not
/// depend on the number of host threads: tiles never share written bytes
/// within a phase, and each tile runs its vertices in order.
class Executor {
public:
  /// `vertexCode[i]` runs `exe.vertexTypes[i]`.
  Executor(const exe::ExecutableData &exe, TileMemory &memory, std::vector<VertexCode> vertexCode,
           HostContext host);

  /// Runs program `program` to its end. Throws application_runtime_error for
  /// Abort/AbortOnCondition and failing vertices, stream_connection_error for an
  /// unconnected stream. A program with collectives runs through begin/resume.
  void run(unsigned program);

  /// Why resume() returned: the program ended, or it reached a Collective
  /// step (pausedStep()) that the replica set runs before resuming after it.
  enum class Pause : std::uint8_t { Finished, Collective };
  /// Starts program `program`; resume() runs it.
  void begin(unsigned program);
  Pause resume();
  std::uint32_t pausedStep() const { return paused_; }
  TileMemory &memory() { return memory_; }

  /// Bounds on a run (aspen.maxRunCycles, aspen.maxRunSeconds): a run stops
  /// with application_runtime_error before a step that would take it past
  /// `maxCycles` simulated cycles (0: no bound), and when `*stop` becomes true
  /// (set by the engine's watchdog after `maxSeconds`; null: no bound).
  void setRunBounds(std::uint64_t maxCycles, const std::atomic<bool> *stop, double maxSeconds) {
    maxRunCycles_ = maxCycles;
    stop_ = stop;
    maxRunSeconds_ = maxSeconds;
  }
  /// aspen.checkTileWrites: compute steps run on one thread with every tile
  /// but the running one read-only, so that a vertex writing into another
  /// tile's memory is stopped before the write (VertexFaults.hpp).
  void setCheckTileWrites(bool check) { checkTileWrites_ = check; }
  /// Vertex code runs on a host stack of this many bytes per thread (0: the
  /// thread's own), sized from the target's worker and supervisor stack options;
  /// `what` names them in the overflow error.
  void setWorkerStack(std::size_t hostBytes, std::string what) {
    workerStackBytes_ = hostBytes;
    workerStackWhat_ = std::move(what);
  }
  /// Whether a vertex faulted (or was stopped inside compute()): then the
  /// executor runs nothing more, and the engine must be loaded again.
  bool faulted() const { return !faultMessage_.empty(); }
  const std::string &faultMessage() const { return faultMessage_; }

  /// Where Print steps write.
  void setPrintStream(std::ostream *stream) { host_.printStream = stream; }

  /// Reading in place (docs/exchange.md): points the fields that read edge data in place at
  /// that data, once the memory image is loaded (it writes them as the relocations say).
  void bindInPlace();
  /// Bytes compute steps' exchanges copied since load: exchange-in, exchange-out and the
  /// staging of in-place reads (for tests; deterministic).
  std::uint64_t exchangeBytesCopied() const { return bytesCopied_; }
  /// Of those, the bytes copied into the running thread's scratch memory instead of an edge
  /// buffer (gathers one tile reads, docs/exchange.md).
  std::uint64_t exchangeBytesToScratch() const { return bytesToScratch_; }
  /// Whether compute step `c` reads some edge data in place.
  bool readsInPlace(unsigned c) const { return prepared_[c].in != &exe_.computeSteps[c].exchangeIn; }

  /// How compute step `c`'s vertices and its exchange-out are split into
  /// parallel chunks (for tests and benchmarks).
  const TileChunks &computeChunks(unsigned c) const { return prepared_[c].chunks; }
  /// The order compute step `c`'s tiles are walked in (empty: ascending; shareOrder).
  const std::vector<std::uint32_t> &computeOrder(unsigned c) const { return prepared_[c].order; }
  const TileChunks &exchangeOutChunks(unsigned c) const { return prepared_[c].exchangeOut.chunks; }
  /// Whether compute step `c` runs each tile's exchange-in right before that
  /// tile's vertices (exe::ComputeStep::fuseExchangeIn), and how those tiles
  /// are chunked.
  bool fusesExchangeIn(unsigned c) const { return prepared_[c].fused; }
  const TileChunks &fusedChunks(unsigned c) const { return prepared_[c].fusedChunks; }

  /// The simulated cycle counter: estimated cycles executed since load.
  std::uint64_t cycles() const { return cycles_; }

  /// Compute sets with less work than this run on the calling thread instead of
  /// in a parallel loop. A tile's work is the sum over its vertices of their
  /// estimated cycles plus `vertexCallWork` per compute() call.
  static constexpr std::uint64_t inlineComputeWork = 20000;
  /// Steps with at least this many tiles and this much work (as above) whose tiles share
  /// what they read walk their tiles in a sharing order (shareOrder).
  static constexpr std::size_t shareOrderMinTiles = 64;
  static constexpr std::uint64_t shareOrderMinWork = 1u << 20;
  static constexpr std::uint64_t vertexCallWork = 20;
  /// Exchange phases moving fewer bytes than this run on the calling thread.
  static constexpr std::uint64_t inlineExchangeBytes = 64 * 1024;
  /// Parallel phases are cut into about this many chunks per host thread.
  static constexpr unsigned chunksPerThread = 4;
  /// Deeper Call nesting than this is reported as an error.
  static constexpr std::size_t maxCallDepth = 1u << 16;

private:
  struct PreparedVertex {
    ComputeFn compute;
    void *object;
    std::uint32_t type;    // its vertex type (the profile's per-type cycles of counted steps)
    std::uint16_t workers; // 1, or the number of worker contexts for a MultiVertex
    std::uint8_t worker;   // the worker the compiler's packing gives it, or kAlone
    bool counted;          // priced from the cycles its code counts (docs/cost-model.md)
  };
  static_assert(sizeof(void *) != 8 || sizeof(PreparedVertex) == 24, "one vertex in 24 bytes");
  /// How a copy plan runs: in chunks or inline, and through a staging buffer
  /// when some run reads bytes another run writes.
  struct PlanInfo {
    TileChunks chunks;
    bool snapshot = false;
    std::vector<std::uint64_t> tileStagingOffset; // snapshot: per destination tile, size tiles + 1
  };
  /// A tile of a fused step: its index in exchangeIn.tiles and in the step's
  /// tiles (`noTile` where it has no incoming runs or no vertices).
  struct FusedTile {
    std::uint32_t exchangeIn;
    std::uint32_t compute;
  };
  static constexpr std::uint32_t noTile = ~0u;
  struct PreparedComputeStep {
    // The exchange-in it runs: the step's, or the one of reading in place (docs/exchange.md).
    const exe::CopyPlan *in = nullptr;
    std::vector<PreparedVertex> vertices; // the executable's order (tile-major)
    TileChunks chunks;
    // The order a thread walks the step's tiles in (shareOrder; empty: ascending), and
    // `chunks` are ranges of it.
    std::vector<std::uint32_t> order;
    PlanInfo exchangeIn, exchangeOut;
    bool fused = false;
    std::vector<FusedTile> fusedTiles; // ascending tile: the union of exchange-in and compute tiles
    TileChunks fusedChunks;
    // Reading in place, lone gathers (docs/exchange.md): per tile of `in`, its entry in
    // `inPlace.scratch` or noTile (empty: none); the thread scratch they need (window plus
    // page offset), and the bytes their runs copy per run of the step.
    std::vector<std::uint32_t> scratchOf;
    std::uint64_t scratchBytes = 0, scratchRunBytes = 0;
    // Per entry s of `inPlace.scratch`, scratchZero[scratchZeroBegin[s], [s + 1]): the
    // (offset, bytes) from its window's first page that its runs do not fill, zeroed.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> scratchZero;
    std::vector<std::uint32_t> scratchZeroBegin;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> typeCycles;     // (vertex type, summed estimate)
    std::vector<std::pair<std::uint32_t, std::uint64_t>> typeInstances;  // (vertex type, count)
    std::vector<std::pair<std::uint32_t, std::uint64_t>> typeCounted;    // (vertex type, counted instances)
    std::vector<std::pair<std::uint32_t, std::uint64_t>> typeNotCounted; // (type, instances not countable)
    StepSwaps dataSwaps;      // tiles' own copies of their codelets' data (empty: none needed)
    bool anyCounted = false;  // some vertex is priced from its counted cycles
    bool anyBuiltins = false; // some vertex's code may call the IPU builtins (TileBuiltins.hpp)
    bool anyChecked = false;  // some vertex's code checks its writes (docs/tile-model.md)
    // Per tile: the type of all its vertices, or kMixedTypes (counted steps add each tile's
    // cycles to its type at once).
    std::vector<std::uint32_t> tileType;
    // Per tile: 1 when it has one vertex type and its vertices are all counted, the j-th on
    // worker j mod the workers (how the packing deals vertices of one estimate), so the counted
    // loop prices it without clearing per-worker loads (by its slowest vertex when each is
    // alone on its worker).
    std::vector<std::uint8_t> roundRobin;
    // The vertex type of every tile when each is roundRobin with that one type, else
    // kMixedTypes.
    std::uint32_t uniformType = ~0u; // kMixedTypes
    // Per vertex: the tile's time before it by the static estimates, as the packing places it
    // (what __builtin_ipu_get_scount reads in a step without counted vertices).
    std::vector<std::uint64_t> staticBefore;
  };
  static constexpr std::uint32_t kMixedTypes = ~0u;
  /// A chunk's share of the totals of a step with counted vertices (docs/cost-model.md,
  /// "Cycles from the code"): its slowest tile's cycles and, when profiling, its vertices'
  /// cycles per vertex type (a few types held here; others added to the step's directly).
  /// Chunks combine theirs into the step's once each, so the step's figures (a maximum and
  /// sums of integers) do not depend on how its tiles were cut or on the number of threads.
  struct CountedTotals {
    static constexpr unsigned kTypes = 4;
    std::uint64_t worst = 0;
    unsigned used = 0;
    std::uint32_t types[kTypes];
    std::uint64_t cycles[kTypes];

    static void addTo(std::uint64_t &shared, std::uint64_t c) {
      std::atomic_ref<std::uint64_t>(shared).fetch_add(c, std::memory_order_relaxed);
    }
    void add(std::uint32_t type, std::uint64_t c, std::uint64_t *typeTotals) {
      for (unsigned j = 0; j < used; ++j)
        if (types[j] == type) {
          cycles[j] += c;
          return;
        }
      if (used == kTypes) {
        addTo(typeTotals[type], c);
        return;
      }
      types[used] = type;
      cycles[used++] = c;
    }
    /// `alone`: the step runs as one chunk on the calling thread, so nothing else writes the
    /// step's figures (plain adds; locked read-modify-writes cost ~10 ns a step).
    void combineInto(std::atomic<std::uint64_t> &stepWorst, std::uint64_t *typeTotals, bool alone) const {
      if (alone) {
        if (worst > stepWorst.load(std::memory_order_relaxed))
          stepWorst.store(worst, std::memory_order_relaxed);
        for (unsigned j = 0; j < used; ++j)
          typeTotals[types[j]] += cycles[j];
        return;
      }
      std::uint64_t seen = stepWorst.load(std::memory_order_relaxed);
      while (worst > seen && !stepWorst.compare_exchange_weak(seen, worst, std::memory_order_relaxed)) {
      }
      for (unsigned j = 0; j < used; ++j)
        addTo(typeTotals[types[j]], cycles[j]);
    }
  };
  /// What the tile loops read of a step (execute()).
  struct TileLoop {
    const PreparedVertex *vertices;
    const exe::VertexInstance *instances;
    const std::uint32_t *tileBegin;
    const std::uint32_t *tileType;
    const std::uint8_t *roundRobin; // per tile (PreparedComputeStep::roundRobin)
    std::uint32_t uniformType;      // PreparedComputeStep::uniformType
    std::uint64_t *tileTotals;      // per tile, summed over executions (profiling), or nullptr
    std::uint64_t *typeTotals;      // per vertex type (when tileTotals)
    std::atomic<std::size_t> *firstFailure;
    const std::atomic<bool> *stop;
    std::uint32_t numWorkers;
    const BuiltinStep *builtins; // what the IPU builtins read (TileBuiltins.hpp)
    const std::uint32_t *stepTiles;
    std::uintptr_t ownBase; // checked writes: the first tile's pages, less a guard
    std::uint64_t stride;   // bytes from one tile's pages to the next's
    bool writeRange;        // some vertex checks its writes: set the running tile's range
  };
  /// A chunk's tiles, run as one loop (execute()): counted (`totals`) or plain (null).
  struct TileRange {
    CountedTotals *totals;
  };
  /// Runs tiles [begin, end) of a step without counted vertices. `kBuiltins`: some vertex of
  /// the step may call the IPU builtins, so the thread records the running tile and call
  /// for them (TileBuiltins.hpp); a step whose libraries call none skips that bookkeeping.
  template <bool kBuiltins>
  __attribute__((noinline)) static void runPlainTiles(const TileLoop &step, std::size_t begin,
                                                      std::size_t end, VertexThread &vt);
  /// Runs tiles [begin, end) of a step with counted vertices, pricing each tile as it goes
  /// (docs/cost-model.md, "Compute"): its cycles into `totals` (and the step's per-tile
  /// totals when profiling), its vertices' cycles per type too when profiling (`kProfile`).
  /// `kBuiltins` as for runPlainTiles: the tile's time before each vertex is known as it
  /// starts (what __builtin_ipu_get_scount reads).
  template <bool kBuiltins, bool kProfile>
  __attribute__((noinline)) static void runCountedTiles(const TileLoop &step, std::size_t begin,
                                                        std::size_t end, VertexThread &vt,
                                                        CountedTotals &totals);
  /// runCountedTiles for a step whose tiles are all roundRobin of one type (uniformType).
  template <bool kBuiltins, bool kProfile>
  __attribute__((noinline)) static void runUniformTiles(const TileLoop &step, std::size_t begin,
                                                        std::size_t end, VertexThread &vt,
                                                        CountedTotals &totals);
  /// Runs vertices [i, e) of a roundRobin tile (the j-th on worker j mod `nw`) and returns its
  /// busiest worker's counted cycles; `last`: the counter after the vertex before, updated;
  /// `load`: nw words of scratch (no clear needed: the first nw vertices set them).
  template <bool kBuiltins>
  static std::uint64_t runRoundRobin(const PreparedVertex *vs, std::uint32_t i, std::uint32_t e,
                                     std::uint64_t nw, VertexThread &vt, std::uint64_t &last,
                                     std::uint64_t *load, std::atomic<std::size_t> *firstFailure);
  using PlainTilesFn = void (*)(const TileLoop &, std::size_t, std::size_t, VertexThread &);
  using CountedTilesFn = void (*)(const TileLoop &, std::size_t, std::size_t, VertexThread &,
                                  CountedTotals &);
  /// The role a reserved stream (poplar::cycleCount/cycleStamp) plays.
  enum class CycleStream : std::uint8_t { None, Stamp, CountBegin, CountEnd };

  void prepare(const std::vector<VertexCode> &vertexCode);
  /// `mayOverlap` false: the plan is known not to read what it writes (skips that analysis).
  PlanInfo analyse(const exe::CopyPlan &plan, bool mayOverlap = true) const;
  /// The order to walk a (not fused) step's tiles in so that tiles reading the same ranges
  /// (in place or from the same source) run one after another; empty: ascending. Only the
  /// host's walk changes: addresses, results and simulated cycles do not depend on it.
  static std::vector<std::uint32_t> shareOrder(const exe::ComputeStep &cs, const exe::CopyPlan &in,
                                               const std::vector<std::uint64_t> &tileWork);
  void prepareFused(const exe::ComputeStep &cs, const std::vector<std::uint64_t> &computeWork,
                    PreparedComputeStep &p) const;
  /// Cuts tiles with the given work into chunks, or one chunk when the total is
  /// too small to repay a parallel loop.
  TileChunks makeChunks(const std::vector<std::uint64_t> &tileWork, std::uint64_t inlineBelow) const;
  /// Runs a compute step; `tileTotals` (profiling a step with counted vertices): each
  /// tile's compute cycles are added to it.
  void execute(const exe::Step &step, std::uint64_t *tileTotals = nullptr);
  static constexpr std::uint8_t kAlone = 0xff;
  void runCopyPlan(const exe::CopyPlan &plan, const PlanInfo &info);
  /// Reading in place: fills the staging area of a step (docs/exchange.md).
  void stageInPlace(const exe::InPlaceReads &ip);
  void runCycleStream(unsigned stream, const exe::HostTransfer &transfer);
  void remoteCopy(const exe::Step &step, bool toDevice);
  void print(const exe::PrintSpec &spec);
  bool predicate(const exe::ScalarRef &scalar) const;
  void account(std::uint32_t stepIndex, std::uint64_t cycles);
  void account(std::uint32_t stepIndex, std::uint64_t cycles, CycleCategory category);
  [[noreturn]] void vertexFailed(const exe::ComputeStep &cs, std::size_t vertexIndex) const;
  /// A fault (or the watchdog) stopped the vertex `vertexIndex` of `cs`.
  [[noreturn]] void vertexFaulted(const exe::ComputeStep &cs, std::size_t vertexIndex,
                                  const VertexFault &fault);
  /// "vertex 3 of type 'T' on tile 1 in compute set 'cs'".
  std::string describeVertex(const exe::ComputeStep &cs, std::size_t vertexIndex) const;
  /// "step 7 (Execute of compute set 'cs')".
  std::string describeStep(std::uint32_t stepIndex) const;
  [[noreturn]] void cycleBoundReached(std::uint32_t stepIndex, std::uint64_t cycles) const;
  [[noreturn]] void stoppedByWatchdog(std::uint32_t stepIndex) const;

  const exe::ExecutableData &exe_;
  TileMemory &memory_;
  HostContext host_;
  std::vector<PreparedComputeStep> prepared_;
  std::vector<PlanInfo> copyPlans_; // per exe.copies
  std::vector<CycleStream> cycleStreams_;
  std::vector<std::uint32_t> cycleStreamSlot_; // pairs CountBegin/CountEnd
  std::vector<std::uint64_t> cycleCountStart_;
  std::vector<std::uint64_t> counters_;
  std::vector<std::uint32_t> callStack_;
  std::vector<std::uint8_t> staging_;
  // Reading in place: the staging area of the running step (the largest any step needs),
  // page-aligned, and the bytes the exchange copied since load.
  std::unique_ptr<std::uint8_t, void (*)(void *)> inPlaceStaging_{nullptr, &std::free};
  std::uint64_t bytesCopied_ = 0, bytesToScratch_ = 0;
  // A step with counted vertices: its slowest tile's cycles, and per vertex type the cycles
  // of its vertices (when profiling), combined from the parallel chunks' partial results.
  std::atomic<std::uint64_t> countedWorst_{0};
  std::vector<std::uint64_t> typeScratch_; // per vertex type (added to atomically)
  std::uint64_t cycles_ = 0;
  std::uint64_t runStartCycles_ = 0; // cycles_ when the run began
  // The IPU builtins (TileBuiltins.hpp): where the running step's compute phase begins on
  // the simulated clock, and each (tile, worker context)'s generator (2 words each).
  std::uint64_t computeStart_ = 0;
  std::vector<std::uint64_t> generators_;   // default states (graphs without hardware seeds)
  std::vector<std::uint8_t *> generatorAt_; // per (tile, worker context): its 16-byte state
  bool checkTileWrites_ = false;
  std::size_t workerStackBytes_ = 0;
  std::string workerStackWhat_;
  bool warnedUnchecked_ = false;
  std::uint64_t maxRunCycles_ = 0;
  const std::atomic<bool> *stop_ = nullptr;
  // Whether pvti records traces (fixed when the process starts): no calls per stream step if not.
  const bool tracing_ = pvti::Tracepoint::enabled();
  double maxRunSeconds_ = 0;
  std::string faultMessage_;
  unsigned program_ = 0;
  std::uint32_t pc_ = 0;
  std::uint32_t paused_ = 0;
};

/// Prefix of the stream handles `poplar::cycleCount`/`cycleStamp` create; the
/// executor fills them with the cycle counter and charges them no cycles.
inline constexpr const char *cycleStreamPrefix = "__aspen_cycles/";

} // namespace aspen::rt
