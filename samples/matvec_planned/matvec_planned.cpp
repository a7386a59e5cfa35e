// Sample 6: an optimised matrix-vector multiply that plans its decomposition
// from the Target: how many row bands and column groups to split the matrix
// into, given the number of tiles, workers per tile and exchange bandwidth.
// It prints the plan's cost estimate next to the simulated cycles.
//
// Build with Poplar or Aspen:  g++ -std=c++11 matvec_planned.cpp -lpoplar
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#ifndef ASPEN_SAMPLE_DIR
#define ASPEN_SAMPLE_DIR "."
#endif

using namespace poplar;
using namespace poplar::program;

namespace {

struct Plan {
  unsigned rowBands = 1, colGroups = 1;
  std::uint64_t computeCycles = 0, exchangeCycles = 0, reduceCycles = 0;
  std::uint64_t total() const { return computeCycles + exchangeCycles + reduceCycles; }
};

unsigned ceilDiv(unsigned a, unsigned b) {
  return (a + b - 1) / b;
}

// A simple model: each MAC costs one worker cycle and the tile's workers share
// the rows; the vector slice reaches every tile at exchangeBytesPerCycle; the
// partials of a row band travel to one tile and are summed there.
Plan evaluate(const Target &target, unsigned rows, unsigned cols, unsigned bands, unsigned groups) {
  const unsigned workers = target.getNumWorkerContexts();
  const unsigned bw = target.getExchangeBytesPerCycle();
  const unsigned bandRows = ceilDiv(rows, bands), groupCols = ceilDiv(cols, groups);
  Plan p;
  p.rowBands = bands;
  p.colGroups = groups;
  p.computeCycles = std::uint64_t(ceilDiv(bandRows, workers)) * groupCols * workers + 50;
  p.exchangeCycles = std::uint64_t(groupCols) * 4 / bw + 30;
  p.reduceCycles =
      groups > 1 ? std::uint64_t(groups) * bandRows * 4 / bw + std::uint64_t(groups) * bandRows + 60 : 0;
  return p;
}

Plan choosePlan(const Target &target, unsigned rows, unsigned cols) {
  Plan best;
  best.computeCycles = ~std::uint64_t(0) / 4;
  for (unsigned bands = 1; bands <= rows && bands <= target.getNumTiles(); ++bands) {
    if (rows % bands)
      continue;
    for (unsigned groups = 1; bands * groups <= target.getNumTiles() && groups <= cols; ++groups) {
      if (cols % groups)
        continue;
      Plan p = evaluate(target, rows, cols, bands, groups);
      if (p.total() < best.total())
        best = p;
    }
  }
  return best;
}

} // namespace

int main() {
  const unsigned rows = 4096, cols = 4096;
  IPUModel model("ipu2");
  Device device = model.createDevice();
  const Target &target = device.getTarget();
  Graph graph(target);
  graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/planned_codelets.cpp");

  Plan plan = choosePlan(target, rows, cols);
  const unsigned bandRows = rows / plan.rowBands, groupCols = cols / plan.colGroups;
  std::cout << "Target: " << target.getNumTiles() << " tiles, " << target.getNumWorkerContexts()
            << " workers per tile, " << target.getExchangeBytesPerCycle() << " exchange bytes/cycle\n";
  std::cout << "Plan: " << plan.rowBands << " row bands x " << plan.colGroups << " column groups ("
            << plan.rowBands * plan.colGroups << " tiles), estimate " << plan.total() << " cycles (compute "
            << plan.computeCycles << ", exchange " << plan.exchangeCycles << ", reduce " << plan.reduceCycles
            << ")\n";

  Tensor a = graph.addVariable(FLOAT, {rows, cols}, "A");
  Tensor x = graph.addVariable(FLOAT, {cols}, "x");
  Tensor y = graph.addVariable(FLOAT, {rows}, "y");
  Tensor partials = graph.addVariable(FLOAT, {plan.rowBands, plan.colGroups, bandRows}, "partials");

  ComputeSet dot = graph.addComputeSet("blockDot");
  ComputeSet reduce = graph.addComputeSet("sumPartials");
  for (unsigned g = 0; g < plan.colGroups; ++g)
    graph.setTileMapping(x.slice(g * groupCols, (g + 1) * groupCols), g % target.getNumTiles());
  for (unsigned b = 0; b < plan.rowBands; ++b) {
    for (unsigned g = 0; g < plan.colGroups; ++g) {
      const unsigned tile = b * plan.colGroups + g;
      Tensor block = a.slice({b * bandRows, g * groupCols}, {(b + 1) * bandRows, (g + 1) * groupCols});
      graph.setTileMapping(block, tile);
      graph.setTileMapping(partials[b][g], tile);
      VertexRef v = graph.addVertex(dot, "BlockDot",
                                    {{"block", block.flatten()},
                                     {"x", x.slice(g * groupCols, (g + 1) * groupCols)},
                                     {"partial", partials[b][g]}});
      graph.setTileMapping(v, tile);
      graph.setPerfEstimate(v, plan.computeCycles, 2ull * bandRows * groupCols);
    }
    const unsigned home = b * plan.colGroups;
    graph.setTileMapping(y.slice(b * bandRows, (b + 1) * bandRows), home);
    VertexRef r = graph.addVertex(
        reduce, "SumPartials",
        {{"partials", partials[b].flatten()}, {"y", y.slice(b * bandRows, (b + 1) * bandRows)}});
    graph.setTileMapping(r, home);
    graph.setPerfEstimate(r, std::uint64_t(plan.colGroups) * bandRows + 20);
  }

  graph.createHostWrite("A", a);
  graph.createHostWrite("x", x);
  graph.createHostRead("y", y);
  Engine engine(graph, Sequence({Execute(dot), Execute(reduce)}));
  engine.load(device);

  std::vector<float> ha(std::size_t(rows) * cols), hx(cols), hy(rows);
  for (std::size_t i = 0; i < ha.size(); ++i)
    ha[i] = float(int(i % 23) - 11) / 16.0f;
  for (unsigned k = 0; k < cols; ++k)
    hx[k] = std::cos(0.001f * float(k));
  engine.writeTensor("A", ha.data(), ha.data() + ha.size());
  engine.writeTensor("x", hx.data(), hx.data() + hx.size());
  engine.run(0);
  engine.readTensor("y", hy.data(), hy.data() + hy.size());

  bool ok = true;
  for (unsigned r = 0; r < rows; ++r) {
    double ref = 0.0;
    for (unsigned k = 0; k < cols; ++k)
      ref += double(ha[std::size_t(r) * cols + k]) * double(hx[k]);
    ok = ok && std::fabs(ref - double(hy[r])) <= 1e-3 * (1.0 + std::fabs(ref));
  }
  engine.printProfileSummary(std::cout, {{"showExecutionSteps", "true"}});
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
