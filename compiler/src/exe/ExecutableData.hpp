// Copyright (c) Aspen contributors.
// The compiled program: what the compiler emits, what is serialised to disk, and
// what the runtime executes. Everything is addresses in tile memory; nothing
// refers back to the Graph. See docs/executable-format.md.
#pragma once

#include "ir/TargetData.hpp"
#include "poplar/Type.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aspen::exe {

/// A location in the device: `tile`'s memory at byte `addr`.
struct TileAddr {
  std::uint32_t tile = 0;
  std::uint32_t addr = 0;
};

/// A contiguous byte copy between two tile-memory locations.
struct CopyRun {
  TileAddr src;
  TileAddr dst;
  std::uint32_t bytes = 0;
};

/// The copies of one exchange phase, grouped by destination tile so that each
/// destination tile's runs can be executed by one task: runs of tile t are
/// `runs[tileBegin[k] .. tileBegin[k+1])` for `k` with `tiles[k] == t`.
struct CopyPlan {
  std::vector<CopyRun> runs;
  std::vector<std::uint32_t> tiles;     // destination tiles that receive data, ascending
  std::vector<std::uint32_t> tileBegin; // size tiles.size() + 1
  std::uint64_t totalBytes = 0;
  std::uint64_t cycles = 0; // estimated exchange cycles (incl. sync)
  // Each tile's own exchange cycles summed over the tiles (the profile's tile average,
  // docs/cost-model.md "Tile averages"); the rest of `cycles` a tile spends waiting.
  std::uint64_t tileCycles = 0;
  bool empty() const { return runs.empty(); }
};

/// A run of bytes of a host-visible buffer (stream chunk, host handle, remote
/// buffer row) and where it lives on the device.
struct HostRun {
  std::uint64_t hostOffset = 0; // byte offset in the host-side buffer
  TileAddr device;
  std::uint32_t bytes = 0;
};

/// Reading in place (docs/exchange.md): a pointer in tile memory (a vertex field or a
/// descriptor entry) that the runtime may point at `target` instead of the edge buffer the
/// relocation table points it at. `target.tile == kStagingTile`: `target.addr` is an offset
/// in the compute step's staging area (host memory the runtime fills before the step).
inline constexpr std::uint32_t kStagingTile = ~0u;
struct InPlaceBinding {
  TileAddr where;
  TileAddr target;
};

/// What the runtime does instead of a compute step's exchange-in when it reads in place:
/// `exchangeIn` holds the runs it still copies (the step's exchange-in less the edge-buffer
/// ranges every reader of which reads in place), `staging` the runs that fill the staging
/// area (`dst.tile == kStagingTile`, `dst.addr` its offset) before any vertex runs, and
/// `bindings` the pointers it redirects at load. Empty: the step reads nothing in place.
/// Cycles, memory and the profile come from the step's own `exchangeIn`, whatever is copied.
///
/// `scratch`: gathered ranges one tile alone reads (docs/exchange.md, "A gather one tile
/// reads"). Entry `s` names a tile of `exchangeIn` (`planTile`, an index into its `tiles`)
/// whose first `runs` runs all land in the edge-buffer window [`lo`, `lo + bytes`) of that
/// tile; when the step runs fused, the runtime may copy those runs into host scratch memory
/// of the running thread instead (each byte at its offset from `lo`, addresses kept modulo
/// 4096), and point the pointers `scratchBindings[bindBegin .. next entry's bindBegin)`
/// (whose targets lie in the window) at the copy, just before the tile's vertices run.
struct InPlaceScratchTile {
  std::uint32_t planTile = 0;
  std::uint32_t runs = 0;
  std::uint32_t lo = 0, bytes = 0;
  std::uint32_t bindBegin = 0;
};
struct InPlaceReads {
  CopyPlan exchangeIn;
  std::vector<CopyRun> staging;
  std::uint64_t stagingBytes = 0; // size of the staging area the step needs
  std::vector<InPlaceBinding> bindings;
  std::vector<InPlaceScratchTile> scratch;
  std::vector<InPlaceBinding> scratchBindings;
  bool empty() const { return bindings.empty() && scratch.empty(); }
};

/// One vertex placed on a tile: its object lives at `state` in tile memory.
struct VertexInstance {
  std::uint32_t type = 0;        // index into Executable::vertexTypes
  std::uint32_t state = 0;       // address of the vertex object on its tile
  std::uint32_t graphVertex = 0; // vertex id in the source graph, for messages
  std::uint64_t cycles = 0;      // estimate (thread cycles for worker vertices)
  // No estimate of its own: priced from the cycles its code counts when its library counts
  // them, `cycles` being the static default (docs/cost-model.md, "Cycles from the code").
  bool counted = false;
};

/// A compute set: exchange in, compute (per tile, vertices in order), exchange out.
struct ComputeStep {
  std::string name;
  CopyPlan exchangeIn;
  std::vector<std::uint32_t> tiles;     // tiles with vertices, ascending
  std::vector<std::uint32_t> tileBegin; // CSR into `vertices`, size tiles.size() + 1
  std::vector<VertexInstance> vertices;
  CopyPlan exchangeOut;
  std::uint64_t computeCycles = 0;     // max over tiles
  std::uint64_t totalVertexCycles = 0; // sum, for per-type reports
  /// Each tile may run its exchange-in runs right before its own vertices
  /// (one pass per tile, data still in cache) instead of all exchange-in
  /// before any vertex: set when no vertex writes in place a variable that
  /// exchange-in reads, so no tile's vertices can change another tile's input.
  bool fuseExchangeIn = false;
  /// Reading in place (docs/exchange.md); empty when nothing is.
  InPlaceReads inPlace;
};

enum class StepKind : std::uint8_t {
  Execute,        // a = index into computeSteps; scalar = failure flag to write (type Invalid: none)
  Copy,           // a = index into copies
  StreamToDevice, // a = stream, b = index into hostTransfers
  DeviceToStream, // a = stream, b = index into hostTransfers
  RemoteToDevice, // a = remote buffer, b = hostTransfers index, offset = scalar location or none.
                  // The compiler emits one step per row: the transfer covers one row (hostOffset
                  // relative to the row's start) and scalar is that row's offset element.
  DeviceToRemote, // same
  SetCounter,     // counter[a] = value
  LoopTest,       // if counter[a] == 0 jump target else counter[a]--
  Jump,           // jump target
  JumpIfZero,     // if scalar at `scalar` == 0 jump target
  JumpIfNonZero,  // if scalar != 0 jump target
  SwitchJump,     // a = index into switchTables
  Call,           // push return, jump target
  Return,         // pop
  Print,          // a = index into prints
                  // (Call: a = graph function id; Return: a = function id)
  Abort,          // message
  AbortIf,        // if scalar != 0: abort with message
  Sync,           // a = SyncType
  WriteUndef,     // no-op at run time (liveness marker)
  BlockBegin,     // profiler grouping: a = index into blockNames
  BlockEnd,
  End,        // end of a program
  Collective, // a = index into collectives (docs/replication.md); appended: numbering is on disk
};

/// The name of a step kind in profiles and reports: the program it comes from
/// where there is one (`PrintTensor`, `AbortOnCondition`), else the step's own.
inline const char *stepKindName(StepKind kind) {
  switch (kind) {
  case StepKind::Execute:
    return "Execute";
  case StepKind::Copy:
    return "Copy";
  case StepKind::StreamToDevice:
    return "StreamToDevice";
  case StepKind::DeviceToStream:
    return "DeviceToStream";
  case StepKind::RemoteToDevice:
    return "RemoteToDevice";
  case StepKind::DeviceToRemote:
    return "DeviceToRemote";
  case StepKind::SetCounter:
    return "SetCounter";
  case StepKind::LoopTest:
    return "LoopTest";
  case StepKind::Jump:
    return "Jump";
  case StepKind::JumpIfZero:
    return "JumpIfZero";
  case StepKind::JumpIfNonZero:
    return "JumpIfNonZero";
  case StepKind::SwitchJump:
    return "SwitchJump";
  case StepKind::Call:
    return "Call";
  case StepKind::Return:
    return "Return";
  case StepKind::Print:
    return "PrintTensor";
  case StepKind::Abort:
    return "Abort";
  case StepKind::AbortIf:
    return "AbortOnCondition";
  case StepKind::Sync:
    return "Sync";
  case StepKind::WriteUndef:
    return "WriteUndef";
  case StepKind::BlockBegin:
    return "BlockBegin";
  case StepKind::BlockEnd:
    return "BlockEnd";
  case StepKind::End:
    return "End";
  case StepKind::Collective:
    return "Collective";
  }
  return "Unknown";
}

/// A scalar on the device, read by control flow.
struct ScalarRef {
  TileAddr where;
  poplar::Type::Id type = poplar::Type::Id::Invalid;
};

struct Step {
  StepKind kind = StepKind::End;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint32_t target = 0; // step index for jumps
  std::uint64_t value = 0;  // SetCounter
  ScalarRef scalar;         // conditions, remote buffer offsets
  std::string message;      // Abort/AbortIf; debug name of the step otherwise
  std::uint64_t cycles = 0; // estimated cycles of this step (execute/copy/stream)
};

struct SwitchTable {
  ScalarRef control;
  std::vector<std::int32_t> values;
  std::vector<std::uint32_t> targets;
  std::uint32_t defaultTarget = 0;
};

/// The device side of a host transfer: the byte layout of a tensor view.
struct HostTransfer {
  std::uint64_t bytes = 0;
  std::vector<HostRun> runs;
};

struct PrintSpec {
  std::string title;
  poplar::Type::Id type;
  std::vector<std::uint64_t> shape;
  std::uint32_t transfer; // index into hostTransfers
};

struct StreamInfo {
  std::string handle;
  poplar::Type::Id type;
  std::uint64_t numElements = 0;
  bool hostToDevice = true;
  bool broadcast = false; // ReplicatedStreamMode::BROADCAST: every replica reads replica 0's connection
};

/// A collective step (docs/replication.md): every replica's `src` bytes (in
/// the tensor's row-major order) go in, its `dst` bytes come out. kind, op and
/// group use the numbering of ir::CollectiveKind / CollectiveOp / CommGroupKind.
struct CollectiveInfo {
  std::uint8_t kind = 0;
  std::uint8_t op = 0;
  std::uint8_t group = 0;
  std::uint32_t groupSize = 1; // replicas per group
  std::uint32_t root = 0;      // Broadcast: source position in the group
  poplar::Type::Id type = poplar::Type::Id::Invalid;
  std::uint32_t src = 0; // index into hostTransfers
  std::uint32_t dst = 0; // index into hostTransfers
  std::string name;
};

struct RemoteBufferInfo {
  std::string handle;
  poplar::Type::Id type;
  std::uint64_t numElements = 0;
  std::uint64_t repeats = 0;
};

/// Bytes of a host handle that live in Streaming Memory: host byte `hostOffset` is byte `offset`
/// of offloaded variable `streamingLayout[layout]`. The handle's transfer still lists them at the
/// variable's staging place on its tiles; the Streaming Memory copy is the one that counts.
struct StreamingRun {
  std::uint64_t hostOffset = 0;
  std::uint32_t layout = 0;
  std::uint64_t offset = 0;
  std::uint32_t bytes = 0;
};

struct HostHandleInfo {
  std::string name;
  bool isWrite = false;
  poplar::Type::Id type;
  std::uint32_t transfer;                  // index into hostTransfers (the bytes resident on tiles)
  std::vector<StreamingRun> streamingRuns; // the bytes of offloaded variables (docs/streaming-memory.md)
};

/// A variable the compiler placed in Streaming Memory (aspen.streamingMemory=auto): its bytes
/// (in the variable's byte order) are row 0 of remote buffer `remoteBuffer` and
/// `[offset, offset + bytes)` of the Streaming Memory arena, which holds the offloaded variables
/// in the order the program first reads them, so staging reads it sequentially
/// (docs/streaming-memory.md).
struct StreamingVariable {
  std::string name;
  std::uint32_t variable = 0;     // graph variable id
  std::uint32_t remoteBuffer = 0; // index into remoteBuffers
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint32_t firstStep = ~0u;     // the first step that reads or writes it (~0u: none)
  std::uint32_t loads = 0;           // load steps the compiler inserted
  std::uint32_t stores = 0;          // store steps the compiler inserted
  std::vector<std::uint8_t> initial; // its initial value (empty: zeros)
};

/// Initial bytes at a location: constants, initial values, vertex state.
struct MemoryBlob {
  TileAddr where;
  std::vector<std::uint8_t> bytes;
};

/// At load time, write the host address of `target` (8 bytes) at `where`:
/// how vertex fields come to point into tile memory.
struct Relocation {
  TileAddr where;
  TileAddr target;
};

struct VertexTypeEntry {
  std::string name;
  std::uint32_t library = 0; // index into codeletLibraries
  bool isMultiVertex = false;
  bool isSupervisor = false; // priced in machine cycles and run alone on its tile, as a MultiVertex
};

struct CodeletLibraryBlob {
  std::string contentHash;
  std::vector<std::uint8_t> bytes; // the .gp file
};

/// A codelet library's writable data (globals, statics; codelets/CodeletData.hpp):
/// each tile that runs one of its vertex types holds its own copy, written at
/// load from the library as loading it leaves it (docs/tile-model.md).
struct CodeletDataImage {
  std::uint32_t library = 0;     // index into codeletLibraries (at most one image per library)
  std::uint32_t bytes = 0;       // size of a tile's copy
  std::vector<TileAddr> regions; // each tile's copy, ascending tile, one per tile that runs its code
};

/// How far the runtime may trust an executable's structure. Never serialised:
/// a deserialised executable always starts as `Unchecked`.
enum class Provenance : std::uint8_t {
  /// Built some other way (by hand, in tests): the runtime runs
  /// exe::validateStructure before using it.
  Unchecked,
  /// exe::validateStructure accepted every field (every deserialised executable).
  Validated,
  /// Made by compiler::compile in this process: the passes guarantee what
  /// validateStructure checks, so the runtime skips it. Set only there.
  Compiled,
};

/// The whole executable.
struct ExecutableData {
  Provenance provenance = Provenance::Unchecked;
  ir::TargetData target;               // one replica's target
  std::uint32_t replicationFactor = 1; // replicas the device runs (its IPUs: target.numIPUs times this)
  std::vector<CollectiveInfo> collectives;
  std::vector<std::uint32_t> replicaIndexTransfers; // hostTransfers each replica writes its index (u32) to
  // The hardware seeds (poplar::getHwSeeds' tensor, {tiles, workers, 4} u32): the states of the
  // random builtins' generators, which the runtime advances in place; ~0u: the graph has none
  // (the runtime keeps default states of its own). Index into hostTransfers.
  std::uint32_t hwSeedsTransfer = ~0u;
  std::vector<std::uint32_t> programEntry; // step index of each program
  std::vector<Step> steps;
  std::uint32_t numCounters = 0;
  std::vector<ComputeStep> computeSteps;
  std::vector<CopyPlan> copies;
  std::vector<HostTransfer> hostTransfers;
  std::vector<SwitchTable> switchTables;
  std::vector<PrintSpec> prints;
  std::vector<std::string> blockNames;
  std::vector<StreamInfo> streams;
  std::vector<RemoteBufferInfo> remoteBuffers;
  std::vector<HostHandleInfo> hostHandles;
  std::vector<StreamingVariable> streamingLayout; // ascending offset = first-read order
  std::vector<MemoryBlob> blobs;
  std::vector<Relocation> relocations;
  std::vector<VertexTypeEntry> vertexTypes;
  std::vector<CodeletLibraryBlob> codeletLibraries;
  std::vector<CodeletDataImage> codeletData; // libraries with per-tile data
  std::vector<std::uint64_t> tileBytesUsed;  // peak bytes per tile
  bool outOfMemory = false;                  // compiled with debug.allowOutOfMemory and does not fit
  std::string outOfMemoryMessage;
  std::string profileJson; // graph/memory profile (docs/profile-format.md)
};

} // namespace aspen::exe
