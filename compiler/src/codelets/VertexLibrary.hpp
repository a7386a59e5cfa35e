// Copyright (c) Aspen contributors.
// Loading compiled vertex libraries for execution. A library's shared object is
// written to the codelet cache under its content hash and dlopen'ed once per
// process; every later load of the same library (by .gp hash or by shared
// object hash) returns the same LoadedVertexLibrary, which lives until exit.
//
//   const auto &lib = loadVertexLibrary(blob.contentHash, blob.bytes);
//   const AspenVertexEntry *e = lib.find("popops::Fill<float>");
//   e->compute(vertexObject, workerId);
#pragma once

#include "codelets/CodeletAbi.h"
#include "codelets/CodeletData.hpp"
#include "ir/GraphData.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace aspen::codelets {

/// A loaded shared object's per-tile data (CodeletData.hpp): where its pieces
/// are in the process, and a tile's first copy. The runtime gives a tile's
/// vertices their own copy by swapping it in under `mutex` (docs/tile-model.md).
struct TileData {
  DataLayout layout;
  std::uint8_t *base = nullptr;      // load base: a piece is at base + address
  std::vector<std::uint8_t> initial; // a tile's copy as loading left it (constructors ran)
  std::uint64_t order = 0;           // locks are taken in this order (unique in the process)
  std::mutex mutex;                  // held while some tile's copy is in the object's memory

  /// Puts a tile's copy (layout.bytes bytes) into the object's memory.
  void copyIn(const std::uint8_t *copy) const {
    for (const DataPiece &p : layout.pieces)
      std::memcpy(base + p.address, copy + p.offset, p.size);
  }
  /// Takes the object's memory back into a tile's copy.
  void copyOut(std::uint8_t *copy) const {
    for (const DataPiece &p : layout.pieces)
      std::memcpy(copy + p.offset, base + p.address, p.size);
  }
};

class LoadedVertexLibrary {
public:
  /// `data`: its per-tile data, null when it has none.
  LoadedVertexLibrary(void *handle, std::string sharedObjectHash, std::string path,
                      std::unique_ptr<TileData> data = nullptr);
  /// A library of several shared objects (a .gp that popc linked from others).
  LoadedVertexLibrary(const std::vector<const LoadedVertexLibrary *> &parts, std::string hash);
  LoadedVertexLibrary(const LoadedVertexLibrary &) = delete;
  LoadedVertexLibrary &operator=(const LoadedVertexLibrary &) = delete;

  /// The entry of vertex type `name` (canonical spelling), or null.
  const AspenVertexEntry *find(std::string_view name) const;
  std::size_t numEntries() const { return count_; }
  const AspenVertexEntry &entry(std::size_t i) const { return *entries_[i]; }
  /// Where printf() from this library's codelets goes (null: stdout).
  void setPrintSink(AspenPrintSink sink, void *context) const;
  const std::string &sharedObjectHash() const { return hash_; }
  const std::string &path() const { return path_; }
  /// The vertex types as the graph records them (offsets from the compiler).
  std::vector<ir::VertexTypeInfo> describe() const;
  /// The shared objects it consists of, in .gp part order (itself unless linked).
  std::vector<const LoadedVertexLibrary *> sharedObjects() const;
  /// Its per-tile data: null when it has none (and for a linked library: see its parts).
  TileData *tileData() const { return data_.get(); }
  /// The shared object (a part) that holds vertex type entry `e`, or null.
  const LoadedVertexLibrary *partOf(const AspenVertexEntry *e) const;
  /// Whether the code of vertex type entry `e` counts the cycles it runs (compiled with the
  /// cycle-counting plugin; docs/cost-model.md): then cycleCounter() grows by them.
  bool countsCycles(const AspenVertexEntry *e) const;
  /// Whether the code of vertex type entry `e` checks its writes into tile memory
  /// (compiled with the plugin's write check; docs/tile-model.md).
  bool checksWrites(const AspenVertexEntry *e) const;
  /// Whether the code of vertex type entry `e` may call an IPU builtin backed by the runtime
  /// (<ipu_tile_builtins.h>): its library exports the builtins' table setter, which the entry
  /// unit defines only when some object calls one (docs/codelets.md). When not, the executor
  /// keeps no per-call record for the builtins while its vertices run.
  bool usesBuiltins(const AspenVertexEntry *e) const;

private:
  void *handle_ = nullptr;
  std::string hash_;
  std::string path_;
  std::vector<const AspenVertexEntry *> entries_;
  std::size_t count_ = 0;
  void (*setSink_)(AspenPrintSink, void *) = nullptr;
  bool countsCycles_ = false;                      // this shared object's code counts its cycles
  bool checksWrites_ = false;                      // ... and checks its writes into tile memory
  bool usesBuiltins_ = false;                      // ... and may call the IPU builtins
  std::vector<const LoadedVertexLibrary *> parts_; // a linked library: setPrintSink reaches each
  std::unordered_map<std::string_view, const AspenVertexEntry *> byName_;
  std::unique_ptr<TileData> data_;
};

/// Loads the library in a .gp file's bytes (`gpHash` = contentHash of the bytes,
/// as in ir::CodeletLibrary and the executable). Checks the bytes against `gpHash`
/// and the metadata against what the shared object itself describes (names, sizes,
/// field offsets, kinds and types), so a library swapped or edited after the graph
/// recorded it is a named error, never a vertex run with the wrong layout. A shared
/// object found in the cache is reused only if its bytes are those of the library
/// (a damaged one is rewritten). Throws graph_object_load_error.
const LoadedVertexLibrary &loadVertexLibrary(const std::string &gpHash, const std::uint8_t *gpBytes,
                                             std::size_t size, const std::string &nameForMessages = "");
const LoadedVertexLibrary &loadVertexLibrary(const std::string &gpHash,
                                             const std::vector<std::uint8_t> &gpBytes,
                                             const std::string &nameForMessages = "");

/// The calling thread's count of the cycles instrumented codelet code ran (docs/cost-model.md,
/// "Cycles from the code"): the executor reads it before and after each compute() call.
extern __thread std::uint64_t aspenCycleCounter __attribute__((tls_model("initial-exec")));
inline std::uint64_t &cycleCounter() {
  return aspenCycleCounter;
}

/// The table of the IPU builtins backed by the runtime (CodeletAbi.h), given to every vertex
/// library loaded after this call (the runtime installs it when libpoplar loads; the compiler
/// does not depend on the runtime).
void setCodeletRuntime(const AspenCodeletRuntime *table);

/// Checked writes (docs/tile-model.md, "Writes into other tiles"): the calling thread's
/// record that instrumented codelet code reads at every function entry. A write to an
/// address `a` with `a - ownLo >= ownBytes` and `a - arenaLo < arenaBytes` (unsigned) is
/// stopped before it happens: the code calls the handler given to setTileWriteFaultHandler
/// (which does not return while a vertex runs). All zero: nothing is stopped. The layout is
/// the plugin's (WriteCheckPass.cpp): four 8-byte words in this order.
struct TileWriteRange {
  std::uintptr_t ownLo; // the running tile's pages and the guards on either side
  std::uint64_t ownBytes;
  std::uintptr_t arenaLo;   // all of the running engine's tile memory
  std::uint64_t arenaBytes; // 0 outside vertex code
};
extern __thread TileWriteRange aspenTileWriteRange __attribute__((tls_model("initial-exec")));
/// What checked code calls on a write into another tile (the runtime sets it).
void setTileWriteFaultHandler(void (*handler)(void *address));

/// Loads a shared object with content hash `soHash` (used by the codelet compiler).
const LoadedVertexLibrary &loadSharedObject(const std::string &soHash, const std::uint8_t *bytes,
                                            std::size_t size, const std::string &nameForMessages);

} // namespace aspen::codelets
