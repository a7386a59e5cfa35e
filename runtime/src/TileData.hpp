// Copyright (c) Aspen contributors.
// Each tile's own copy of its codelets' globals and statics (docs/tile-model.md,
// "What a tile owns"). A codelet library is loaded once per process; a library
// with writable data (codelets::TileData) has a copy of that data in the memory
// of every tile that runs its code. Around a tile's vertices, the executor puts
// the tile's copy into the library's memory under the library's lock and takes
// it back afterwards:
//
//   enterTileData(b, e);   // lock each library (in a global order), copy the tile's copies in
//   ... run the tile's vertices ...
//   leaveTileData(b, e);   // copy back, unlock
//
// A path that leaves a vertex abnormally (a fault handler that jumps back to
// the executor) calls leaveHeldTileData(): it finishes the swap this thread is
// in, if any, so the tile keeps what its vertex wrote and the locks are freed.
#pragma once

#include "TileMemory.hpp"
#include "codelets/VertexLibrary.hpp"
#include "exe/ExecutableData.hpp"

#include <cstdint>
#include <vector>

namespace aspen::rt {

/// One shared object's data on one tile: what the executor swaps in.
struct TileDataSwap {
  codelets::TileData *data = nullptr;
  std::uint8_t *copy = nullptr; // the tile's copy, in tile memory
};

/// A library's per-tile data as one executable uses it: its shared objects
/// with data, and where each one's bytes start in a tile's copy.
struct CodeletImage {
  std::vector<std::pair<codelets::TileData *, std::uint32_t>> parts;
};

/// The swaps of one compute step: tile k (index into the step's tiles) swaps
/// `swaps[begin[k] .. begin[k+1])`, in lock order. Empty when no tile needs any.
struct StepSwaps {
  std::vector<std::uint32_t> begin;
  std::vector<TileDataSwap> swaps;
  bool empty() const { return swaps.empty(); }
};

/// Resolves `x.codeletData` against the loaded libraries (VertexLibraries of
/// Loader.hpp, in `x.codeletLibraries` order) and returns, per vertex type, the
/// index of its library's image (~0u: none) in `typeImage`. Throws
/// graph_object_load_error naming the library and vertex type when the
/// executable does not reserve the data a library has (or reserves another size).
std::vector<CodeletImage>
resolveCodeletData(const exe::ExecutableData &x,
                   const std::vector<const codelets::LoadedVertexLibrary *> &libraries,
                   std::vector<std::uint32_t> &typeImage);

/// Writes every tile's copy as loading the library left its data: what a load
/// (and a reload) of the executable starts from.
void writeCodeletData(const exe::ExecutableData &x, const std::vector<CodeletImage> &images,
                      TileMemory &memory);

/// The swaps compute step `cs` needs (`typeImage` from resolveCodeletData).
/// Throws graph_object_load_error for a tile that runs a library's code but
/// holds no copy of its data (a corrupt executable).
StepSwaps planStepSwaps(const exe::ExecutableData &x, const exe::ComputeStep &cs,
                        const std::vector<std::uint32_t> &typeImage, const std::vector<CodeletImage> &images,
                        const TileMemory &memory);

/// Locks each swap's library (in the order of the list, which is the global
/// lock order) and puts the tile's copies into the libraries' memory.
void enterTileData(const TileDataSwap *begin, const TileDataSwap *end);
/// Takes the libraries' memory back into the tile's copies and unlocks them.
void leaveTileData(const TileDataSwap *begin, const TileDataSwap *end);
/// leaveTileData for the swaps this thread entered and has not left (none: nothing).
/// For recovery paths that leave vertex code without returning through the executor.
void leaveHeldTileData();

/// The codelet data a run of tiles (a chunk, on one thread) has swapped in. A
/// tile with the same libraries as the tile before it only moves the copies
/// (the one before's back, its own in) and keeps the locks; another set of
/// libraries leaves and enters; a tile without any leaves. Leaves what it holds
/// when destroyed (also when a vertex throws).
class TileDataHolder {
public:
  TileDataHolder() = default;
  TileDataHolder(const TileDataHolder &) = delete;
  TileDataHolder &operator=(const TileDataHolder &) = delete;
  ~TileDataHolder() {
    if (begin_)
      release();
  }
  /// Swaps in `[begin, end)` (a tile's list from StepSwaps) for the tile about to run.
  void moveTo(const TileDataSwap *begin, const TileDataSwap *end);
  void release();

private:
  const TileDataSwap *begin_ = nullptr, *end_ = nullptr;
};

} // namespace aspen::rt
