// Copyright (c) Aspen contributors.
#include "TileBuiltins.hpp"

#include "VertexFaults.hpp"
#include "codelets/CodeletAbi.h"
#include "codelets/VertexLibrary.hpp"
#include "ir/HwSeeds.hpp"

#include <algorithm>
#include <cstring>

namespace aspen::rt {

namespace {

/// The running vertex's step and thread record, or null outside vertex code.
VertexThread *running() {
  VertexThread *t = aspenVertexThread;
  return t && t->builtins ? t : nullptr;
}

std::uint32_t vertexIndex(const VertexThread &t) {
  return t.vertex.load(std::memory_order_relaxed);
}

/// The worker context running the call: the packing's slot of a worker vertex, the
/// compute(workerId) argument of a MultiVertex (0 for a Supervisor), as the executor set it.
std::uint32_t workerOf(const VertexThread &t) {
  return t.builtinWorker;
}

std::uint32_t tileId() {
  const VertexThread *t = running();
  if (!t)
    return 0;
  return t->builtins->tiles[t->builtinTile] % t->builtins->tilesPerIpu;
}

std::uint32_t workerId() {
  const VertexThread *t = running();
  return t ? workerOf(*t) : 0;
}

/// The tile's clock (docs/codelets.md): the step's compute start, plus the tile's time
/// before this vertex as the profile prices the tile (worker vertices on their packing's
/// slot, MultiVertex and Supervisor vertices one after another), plus what this call has
/// counted so far, in tile cycles (a worker's cycle is numWorkers tile cycles).
std::uint64_t scount() {
  const VertexThread *t = running();
  if (!t)
    return 0;
  const BuiltinStep &s = *t->builtins;
  const std::uint64_t before = s.counted ? t->builtinBefore : s.staticBefore[vertexIndex(*t)];
  const std::uint64_t inCall = codelets::cycleCounter() - t->builtinCounterStart;
  return s.computeStart + before + s.numWorkers * inCall;
}

std::uint64_t urand64() {
  const VertexThread *t = running();
  if (!t)
    return 0;
  const BuiltinStep &s = *t->builtins;
  const std::uint64_t generator =
      static_cast<std::uint64_t>(s.tiles[t->builtinTile]) * s.workerContexts + workerOf(*t);
  std::uint64_t state[2]; // in tile memory (the hardware seeds variable) or the executor's
  std::memcpy(state, s.generators[generator], sizeof state);
  const std::uint64_t out = xoroshiro128aox(state);
  std::memcpy(s.generators[generator], state, sizeof state);
  return out;
}

const AspenCodeletRuntime kTable = {sizeof(AspenCodeletRuntime), tileId, workerId, scount, urand64};

} // namespace

void seedGenerators(std::uint64_t *states, std::uint32_t numTiles, std::uint32_t workerContexts) {
  for (std::uint32_t t = 0; t < numTiles; ++t)
    for (std::uint32_t w = 0; w < workerContexts; ++w)
      ir::defaultHwSeedState(t, w, workerContexts, states + 2 * (std::uint64_t(t) * workerContexts + w));
}

void installCodeletRuntime() {
  codelets::setCodeletRuntime(&kTable);
}

namespace {
// At load of libpoplar, before any vertex library can be loaded.
const bool kInstalled = (installCodeletRuntime(), true);
} // namespace

} // namespace aspen::rt
