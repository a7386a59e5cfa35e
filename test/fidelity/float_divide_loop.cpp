// Copyright (c) Aspen contributors.
// Fidelity (issue 23 items 1 and 5): a custom vertex looping n times over a float divide, with
// no cycle estimate, priced from the code it ran (docs/cost-model.md, "Cycles from the code").
//
// Hardware figure: "about 90 cycles an iteration", as issue 23 quotes it for such a loop on an
// IPU (the measurement it comes from is not cited there, and none was found): taken as tile
// (machine) cycles of one vertex alone on its tile, what the tile's cycle counter around the
// vertex gives. Aspen's figure is the per-iteration slope of the simulated compute cycles between
// n = 1,000 and n = 101,000 on a one-tile ipu2 model (one worker: a thread cycle is 6 machine
// cycles). The cost table prices the divide as PopLibs prices its `f32div` instruction (3 thread
// cycles) and the loop's control as one `brnzdec` (1), so an iteration is 6 x 4 = 24 machine
// cycles: checked exactly, as the table's derivation. Against the uncited 90 that is a known
// gap (below half), asserted so that a change to the model shows. docs/fidelity.md has the table.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "ExecutionProfile.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace {

const char *const kCodelet = R"(
#include <poplar/Vertex.hpp>
class DivLoop : public poplar::Vertex {
public:
  poplar::Input<unsigned> n;
  poplar::InOut<float> x;
  bool compute() {
    float v = *x;
    const unsigned count = *n;
    for (unsigned i = 0; i < count; ++i)
      v = v / 1.0001f;
    *x = v;
    return true;
  }
};
)";

/// Simulated compute cycles of one DivLoop vertex dividing n times on a one-tile ipu2 model.
double computeCycles(unsigned n) {
  return fidelity::oneTileComputeCycles(kCodelet, [n](poplar::Graph &graph, poplar::program::Sequence &prog) {
    poplar::Tensor count = graph.addConstant(poplar::UNSIGNED_INT, {}, n, "n");
    poplar::Tensor x = graph.addVariable(poplar::FLOAT, {}, "x");
    graph.setTileMapping(count, 0);
    graph.setTileMapping(x, 0);
    poplar::ComputeSet cs = graph.addComputeSet("divide");
    graph.setTileMapping(graph.addVertex(cs, "DivLoop", {{"n", count}, {"x", x}}), 0);
    prog.add(poplar::program::Execute(cs));
  });
}

} // namespace

TEST_CASE("A float-divide loop costs one f32div and one brnzdec an iteration (known gap to issue 23's "
          "uncited figure)",
          "[fidelity][counted]") {
  const double hardwarePerIteration = 90;
  const double aspenPerIteration = (computeCycles(101000) - computeCycles(1000)) / 100000.0;
  const double ratio = aspenPerIteration / hardwarePerIteration;
  std::printf("float-divide loop: hardware %.0f, Aspen %.1f machine cycles an iteration (ratio %.3f)\n",
              hardwarePerIteration, aspenPerIteration, ratio);
  // W = 6 machine cycles a thread cycle x (f32div 3 + brnzdec 1), docs/cost-model.md.
  REQUIRE(aspenPerIteration == Approx(6.0 * (3 + 1)).epsilon(1e-9));
  // Known gap (docs/fidelity.md): below half the uncited figure.
  REQUIRE(ratio < 0.5);
}
