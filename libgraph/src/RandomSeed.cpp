// Copyright (c) Aspen contributors.
// poplar/RandomSeed.hpp: the simulated IPU's hardware random seeds, one
// UNSIGNED_INT[4] per worker of every tile, held in a graph variable that is
// made (each tile's seeds on that tile) the first time it is used. They are the
// states of the generators the random builtins draw from (ir/HwSeeds.hpp): the
// runtime reads and advances them in place.
#include "poplar/RandomSeed.hpp"

#include "ir/GraphData.hpp"
#include "ir/HwSeeds.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/exceptions.hpp"

#include <vector>

namespace poplar {

namespace {

Tensor hwSeedsVariable(Graph &graph) {
  aspen::ir::GraphData &data = graph.getImpl();
  Graph top = graph.getTopLevelGraph();
  const Target &target = top.getTarget();
  if (data.hwSeedsVariable < 0) {
    const std::size_t tiles = target.getNumTiles(), workers = target.getNumWorkerContexts();
    Tensor seeds = top.addVariable(UNSIGNED_INT, {tiles, workers, 4}, "hwSeeds");
    for (std::size_t t = 0; t < tiles; ++t)
      top.setTileMapping(seeds[t], static_cast<unsigned>(t));
    // The generators' states before anything sets them (ir/HwSeeds.hpp): what the random
    // builtins draw from, and what getHwSeeds returns, until setHwSeeds.
    std::vector<unsigned> initial(tiles * workers * 4);
    for (std::size_t t = 0; t < tiles; ++t)
      for (std::size_t w = 0; w < workers; ++w) {
        std::uint64_t state[2];
        aspen::ir::defaultHwSeedState(static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(w),
                                      static_cast<std::uint32_t>(workers), state);
        unsigned *words = &initial[(t * workers + w) * 4];
        for (unsigned k = 0; k < 4; ++k)
          words[k] = static_cast<unsigned>(state[k / 2] >> (32 * (k % 2)));
      }
    top.setInitialValue<unsigned>(seeds, initial);
    data.hwSeedsVariable = seeds.getImpl().segments->front().var;
    return seeds;
  }
  return top.getVariable(VariableRef(static_cast<unsigned>(data.hwSeedsVariable)));
}

} // namespace

Tensor getHwSeeds(Graph &graph, program::Sequence &prog, const DebugContext &debugContext) {
  const Tensor seeds = hwSeedsVariable(graph);
  Tensor out = graph.getTopLevelGraph().clone(seeds, {debugContext, "hwSeeds"});
  prog.add(program::Copy(seeds, out, false, {debugContext, "getHwSeeds"}));
  return out;
}

void setHwSeeds(Graph &graph, const Tensor &hwSeeds, program::Sequence &prog,
                const DebugContext &debugContext) {
  const Tensor seeds = hwSeedsVariable(graph);
  if (!hwSeeds.valid() || hwSeeds.shape() != seeds.shape() || hwSeeds.elementType() != UNSIGNED_INT)
    throw poplar_error(
        "setHwSeeds: tensor " + (hwSeeds.valid() ? hwSeeds.shortString() : std::string("(invalid)")) +
        " must be unsigned int of shape " + seeds.shapeToString() + " (as getHwSeeds returns)");
  prog.add(program::Copy(hwSeeds, seeds, false, {debugContext, "setHwSeeds"}));
}

} // namespace poplar
