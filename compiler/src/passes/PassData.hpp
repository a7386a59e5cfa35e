// Copyright (c) Aspen contributors.
// What the passes hand to each other. The graph IR goes in (ir::GraphData), an
// exe::ExecutableData comes out; in between, locations are symbolic (an object
// and an offset in it) until Allocate gives every object an address.
#pragma once

#include "exe/ExecutableData.hpp"
#include "ir/GraphData.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aspen::compiler {

/// Marks "no object" (a zero-length edge, an absent predicate).
inline constexpr std::uint32_t kNoObject = ~0u;

/// A byte in a memory object: what an address becomes once objects are placed.
struct Loc {
  std::uint32_t object = kNoObject;
  std::uint32_t offset = 0;
  bool valid() const { return object != kNoObject; }
};

/// What a memory object holds; the memory report groups bytes by these.
enum class MemCategory : std::uint8_t {
  Variable,        // not-constant variable data
  Constant,        // constant data
  VertexObject,    // vertex instances (the host vertex object: pointers, sizes, state)
  VertexFieldData, // state arrays (`Vector<T>` state fields)
  Descriptor,      // descriptor and pointer arrays of 2-D edge fields
  EdgeBuffer,      // exchange buffers of edges whose data is not on the vertex's tile
  CodeletData,     // a tile's copy of a codelet library's globals and statics (owner: graph library)
  Count,
};
const char *categoryName(MemCategory c);

/// A block of tile memory the allocator places: a tile piece of a variable (a maximal run of
/// its bytes on one tile, the allocation unit of variables) or something Exchange makes.
struct MemObject {
  std::uint64_t size = 0;
  std::uint32_t tile = 0;
  std::uint32_t align = 1;
  std::uint32_t owner = 0; // variable id (pieces) or graph vertex id
  MemCategory category = MemCategory::Variable;
  /// Edge buffers: the planned compute set they serve. They hold data only
  /// while one of its Execute steps runs, so they are live over the hull of
  /// those steps (ExchangePlan::computeSetSteps), not always.
  std::uint32_t computeSet = kNoObject;
  /// Pieces: the first byte of the piece in its variable (it holds [ownerOffset, ownerEnd())).
  std::uint64_t ownerOffset = 0;
  std::uint64_t ownerEnd() const { return ownerOffset + size; }
};

/// Every memory object of the program, one representation for all: objects [0, numPieces())
/// are the variables' tile pieces, variable by variable in byte order (variable v's are
/// [firstPiece[v], firstPiece[v + 1])); the objects Exchange makes follow.
struct MemoryObjects {
  std::vector<MemObject> objects;
  std::vector<std::uint32_t> firstPiece; // size numVariables + 1
  std::uint32_t numPieces() const { return firstPiece.empty() ? 0 : firstPiece.back(); }
  /// The piece of `var` holding byte `byte`, or kNoObject when unmapped.
  std::uint32_t findPiece(std::uint32_t var, std::uint64_t byte) const;
};

// ---- Lower -----------------------------------------------------------------

/// The flat step list with control flow made explicit. Steps still name graph
/// objects (compute set ids, stream ids); `stepNode` says which program node
/// each step came from so that Exchange can plan its data movement.
struct LoweredProgram {
  std::vector<exe::Step> steps;
  std::vector<const ir::ProgramNode *> stepNode; // parallel to steps (null for pure control)
  std::vector<std::uint32_t> programEntry;
  std::vector<std::uint32_t> functionEntry; // per graph function; ~0u when never called
  std::uint32_t numCounters = 0;
  std::vector<exe::SwitchTable> switchTables; // `control` resolved by Exchange
  std::vector<std::string> blockNames;
};

// ---- Exchange ----------------------------------------------------------------

struct SymCopyRun {
  Loc src;
  Loc dst;
  std::uint32_t bytes = 0;
};

struct SymHostRun {
  std::uint64_t hostOffset = 0;
  Loc device;
  std::uint32_t bytes = 0;
};

/// At load time, the address of `target` is written at `where`.
struct SymRelocation {
  Loc where;
  Loc target;
};

/// Initial bytes of a memory object: `pool[poolBegin, poolBegin + size)` at `where`.
struct SymBlob {
  Loc where;
  std::uint64_t poolBegin = 0;
  std::uint32_t size = 0;
};

/// How a step touches a variable. Liveness is per variable: a variable dies
/// only where a step writes all of it (FullWrite) or marks all of it undefined.
enum VarAccessFlags : std::uint8_t {
  kRead = 1,
  kWrite = 2,
  kFullWrite = 4, // all elements written by this one step
  kUndef = 8,     // WriteUndef covering all elements (not a use)
};
struct VarAccess {
  std::uint32_t var = 0;
  std::uint8_t flags = 0;
};

struct PlannedVertex {
  std::uint32_t vertex = 0; // graph vertex id
  std::uint32_t tile = 0;
  std::uint32_t object = 0;    // its vertex object
  std::uint64_t edgeBytes = 0; // bytes of all its edges (for the default estimate)
};

/// A merged range of a tile's shared edge buffer that only Input edges read: a candidate for
/// reading in place (docs/exchange.md). Emit decides, once addresses and libraries are known.
struct InPlaceCandidate {
  std::uint32_t runBegin = 0, runEnd = 0; // its exchange-in runs (PlannedComputeSet::exchangeIn)
  Loc buffer;                             // its first byte in the edge buffer
  std::uint32_t var = 0;                  // the variable bytes it holds: [begin, begin + bytes)
  std::uint64_t begin = 0, bytes = 0;
  std::uint32_t align = 1;                // the largest alignment of its edges
  bool sourceWrittenInPlace = false;      // a vertex of the step writes the variable in place
  std::vector<std::uint32_t> relocations; // of its edges (targets inside the range)
  std::vector<std::uint32_t> readers;     // graph vertices reading it
};

/// One compute set as the device runs it.
struct PlannedComputeSet {
  std::uint32_t computeSet = 0;
  std::vector<SymCopyRun> exchangeIn;
  std::vector<PlannedVertex> vertices; // ascending tile, then vertex id
  std::vector<SymCopyRun> exchangeOut;
  std::vector<VarAccess> accesses;
  bool fuseExchangeIn = false; // see exe::ComputeStep::fuseExchangeIn
  std::vector<InPlaceCandidate> inPlace;
};

struct PlannedCopy {
  std::vector<SymCopyRun> runs;
};

struct PlannedTransfer {
  std::uint64_t bytes = 0;
  std::vector<SymHostRun> runs;
};

/// A scalar read or written by control flow.
struct SymScalar {
  Loc where;
  poplar::Type::Id type = poplar::Type::Id::Invalid;
};

/// Data movement and memory objects of the whole program.
struct ExchangePlan {
  /// The lowered steps with their operands turned into indices of the
  /// executable's tables (Execute: compute step; Copy: copy; Print: print;
  /// stream and remote-buffer copies: `b` = host transfer). Lowering's own step
  /// list is left as it was.
  std::vector<exe::Step> steps;
  MemoryObjects memory;
  std::vector<PlannedComputeSet> computeSets; // index = ExecutableData::computeSteps index
  /// Per planned compute set: the first and last of its Execute steps.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> computeSetSteps;
  std::vector<PlannedCopy> copies;
  std::vector<PlannedTransfer> transfers;
  std::vector<exe::PrintSpec> prints;
  std::vector<exe::StreamInfo> streams;
  std::vector<exe::RemoteBufferInfo> remoteBuffers;
  std::vector<exe::HostHandleInfo> hostHandles;
  std::vector<exe::CollectiveInfo> collectives;     // src/dst index `transfers`
  std::vector<std::uint32_t> replicaIndexTransfers; // index `transfers`
  std::uint32_t hwSeedsTransfer = ~0u;              // index `transfers`: the hardware seeds, or ~0u
  std::vector<SymScalar> stepScalar;                // per step; invalid when the step reads none
  std::vector<SymScalar> switchControl;             // per switch table
  std::vector<SymRelocation> relocations;
  std::vector<SymBlob> blobs;
  std::vector<std::uint8_t> blobPool;
  // Per-step variable accesses (CSR), for Liveness.
  std::vector<std::uint32_t> stepAccessBegin; // size steps + 1
  std::vector<VarAccess> stepAccesses;
  // Variables that must keep their value for the whole program (host handles).
  std::vector<std::uint32_t> hostVisibleVars;
  /// Libraries with per-tile data (planCodeletData): each tile that runs their code holds a copy.
  struct CodeletData {
    std::uint32_t library = 0; // graph library
    std::uint32_t bytes = 0;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> copies; // (tile, memory object), ascending tile
  };
  std::vector<CodeletData> codeletData;
  // Streaming Memory (aspen.streamingMemory=auto, planStreaming): empty when nothing is offloaded.
  std::vector<std::uint8_t> offloaded;           // per variable: 1 = its home is Streaming Memory
  std::vector<exe::StreamingVariable> streaming; // the offloaded variables, in first-read order
  std::vector<std::uint32_t> overlapStep;        // per step: the Execute step a load overlaps (kNoObject)
};

// ---- Liveness ----------------------------------------------------------------

/// Per variable: always-live, or live over the step hull [liveBegin, liveEnd]
/// (in step-list order; liveBegin > liveEnd when no step touches it).
struct LivenessResult {
  std::vector<std::uint8_t> alwaysLive;
  std::vector<std::uint32_t> liveBegin;
  std::vector<std::uint32_t> liveEnd;
  std::vector<std::uint64_t> notAlwaysLiveBytes; // per step: bytes of not-always-live variables live there
  std::uint32_t numAlwaysLive = 0;
  std::uint32_t numNotAlwaysLive = 0;
  std::uint32_t numBlocks = 0;
};

// ---- Allocate ----------------------------------------------------------------

struct TileMemoryStats {
  std::uint64_t peakBytes = 0;         // highest end address, including gaps and overhead
  std::uint64_t alwaysLiveBytes = 0;   // overhead + always-live objects, including padding
  std::uint64_t notAlwaysLivePeak = 0; // max over steps of live not-always-live bytes
  std::uint32_t peakStep = ~0u;        // step at notAlwaysLivePeak
  std::uint64_t categoryBytes[static_cast<int>(MemCategory::Count)] = {}; // every object in full
  // The tile's address space by category: a byte that several not-always-live objects share
  // (at different steps) counts once, for the first of their categories in enum order. These
  // plus the overhead add up to the bytes used excluding gaps (never more than peakBytes).
  std::uint64_t categoryNonOverlapped[static_cast<int>(MemCategory::Count)] = {};
};

struct AllocationResult {
  std::vector<std::uint32_t> address; // per object
  std::vector<TileMemoryStats> tiles;
  bool outOfMemory = false;
  std::string outOfMemoryMessage;
  /// Bytes reserved at the start of every tile: the stacks (and control code).
  std::uint64_t overheadBytes = 0;
};

// ---- EstimateCycles ----------------------------------------------------------

struct CycleEstimates {
  std::vector<std::vector<std::uint64_t>> vertexCycles; // per planned compute set, per planned vertex
  // Per planned compute set, per planned vertex: 1 when the vertex has no estimate of its own
  // (no setPerfEstimate, no registered estimator), so the runtime prices it from the cycles its
  // code counts when its library counts them (docs/cost-model.md, "Cycles from the code").
  std::vector<std::vector<std::uint8_t>> vertexCounted;
  std::vector<std::uint64_t> computeCycles;                       // per planned compute set: max over tiles
  std::vector<std::uint64_t> totalVertexCycles;                   // per planned compute set
  std::vector<std::uint64_t> exchangeInCycles, exchangeOutCycles; // per planned compute set
  std::vector<std::uint64_t> copyCycles;                          // per planned copy
  // Each tile's own exchange cycles summed over the tiles, per planned compute set and copy
  // (the profile's tile averages, docs/cost-model.md).
  std::vector<std::uint64_t> exchangeInTileCycles, exchangeOutTileCycles, copyTileCycles;
  std::vector<std::uint64_t> transferCycles; // per planned transfer
  std::vector<std::uint64_t> stepCycles;     // per step
  std::vector<std::uint64_t> hiddenCycles; // per step: a load's cycles hidden behind the compute it overlaps
  std::vector<std::uint64_t> streamingBytes; // per step: bytes moved to or from Streaming Memory
};

} // namespace aspen::compiler
