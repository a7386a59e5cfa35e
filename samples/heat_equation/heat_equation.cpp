// Sample 7 (the flagship): the 2-D heat equation on a grid split across 1,280
// tiles. Each tile owns a block of the grid and runs a Jacobi sweep on it; the
// halo rows and columns it needs from its neighbours arrive by exchange, which
// the compiler plans from the way the vertices are connected. A convergence
// check runs every two sweeps, and RepeatWhileTrue loops until the largest
// change falls below a tolerance. The result is checked against the same
// iteration on the host.
//
// Build with Poplar or Aspen:  g++ -std=c++11 heat_equation.cpp -lpoplar
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
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

struct Problem {
  unsigned blocksY = 32, blocksX = 40;     // 1,280 tiles
  unsigned blockRows = 24, blockCols = 24; // cells per tile
  float hotEdge = 100.0f;
  float tolerance = 1e-3f;
  unsigned maxIterations = 300; // each iteration is two sweeps
  unsigned rows() const { return blocksY * blockRows; }
  unsigned cols() const { return blocksX * blockCols; }
};

// The initial grid including its boundary: the top edge hot, the rest cold.
std::vector<float> initialGrid(const Problem &p) {
  std::vector<float> grid((p.rows() + 2) * (p.cols() + 2), 0.0f);
  for (unsigned j = 0; j < p.cols() + 2; ++j)
    grid[j] = p.hotEdge;
  return grid;
}

// The same iteration on the host, sweep for sweep, as the reference.
std::vector<float> solveOnHost(const Problem &p, unsigned &iterations) {
  const unsigned w = p.cols() + 2;
  std::vector<float> u = initialGrid(p), v = u;
  auto sweep = [&](const std::vector<float> &src, std::vector<float> &dst) {
    float largest = 0.0f;
    for (unsigned i = 1; i <= p.rows(); ++i)
      for (unsigned j = 1; j <= p.cols(); ++j) {
        float next =
            0.25f * (src[(i - 1) * w + j] + src[(i + 1) * w + j] + src[i * w + j - 1] + src[i * w + j + 1]);
        largest = std::max(largest, std::fabs(next - src[i * w + j]));
        dst[i * w + j] = next;
      }
    return largest;
  };
  iterations = 0;
  for (;;) {
    sweep(u, v);
    float largest = sweep(v, u);
    ++iterations;
    if (!(largest > p.tolerance && iterations < p.maxIterations))
      break;
  }
  return u;
}

Device getDevice() {
  // Prefer real hardware when there is some; fall back to the IPU model.
  auto manager = DeviceManager::createDeviceManager();
  auto devices = manager.getDevices(TargetType::IPU, 1);
  for (auto &d : devices)
    if (d.attach())
      return std::move(d);
  IPUModel model("ipu2");
  return model.createDevice();
}

} // namespace

int main(int argc, char **argv) {
  Problem p;
  if (argc > 1)
    p.maxIterations = static_cast<unsigned>(std::atoi(argv[1]));

  Device device = getDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/heat_codelets.cpp");

  const std::size_t h = p.rows() + 2, w = p.cols() + 2;
  Tensor u = graph.addVariable(FLOAT, {h, w}, "u");
  Tensor v = graph.addVariable(FLOAT, {h, w}, "v");
  const unsigned numBlocks = p.blocksY * p.blocksX;
  Tensor deltas = graph.addVariable(FLOAT, {numBlocks}, "deltas");
  Tensor iterations = graph.addVariable(UNSIGNED_INT, {}, "iterations");
  Tensor keepGoing = graph.addVariable(UNSIGNED_INT, {}, "keepGoing");

  // Block (by, bx) lives on tile by * blocksX + bx. Boundary cells go with the
  // block next to them, so every element has a home.
  auto tileOf = [&](std::size_t row, std::size_t col) {
    std::size_t by = std::min<std::size_t>(row == 0 ? 0 : (row - 1) / p.blockRows, p.blocksY - 1);
    std::size_t bx = std::min<std::size_t>(col == 0 ? 0 : (col - 1) / p.blockCols, p.blocksX - 1);
    return static_cast<unsigned>(by * p.blocksX + bx);
  };
  for (std::size_t row = 0; row < h; ++row) {
    std::size_t col = 0;
    while (col < w) {
      unsigned tile = tileOf(row, col);
      std::size_t end = col + 1;
      while (end < w && tileOf(row, end) == tile)
        ++end;
      graph.setTileMapping(u[row].slice(col, end), tile);
      graph.setTileMapping(v[row].slice(col, end), tile);
      col = end;
    }
  }
  for (unsigned b = 0; b < numBlocks; ++b)
    graph.setTileMapping(deltas[b], b);
  graph.setTileMapping(iterations, 0);
  graph.setTileMapping(keepGoing, 0);

  std::vector<float> init = initialGrid(p);
  graph.setInitialValue(u.flatten(), ArrayRef<float>(init));
  graph.setInitialValue(v.flatten(), ArrayRef<float>(init));
  graph.setInitialValue(iterations, 0u);

  // One compute set per sweep direction: u -> v and v -> u.
  auto makeSweep = [&](const Tensor &src, const Tensor &dst, const std::string &name) {
    ComputeSet cs = graph.addComputeSet(name);
    for (unsigned by = 0; by < p.blocksY; ++by)
      for (unsigned bx = 0; bx < p.blocksX; ++bx) {
        const std::size_t r0 = 1 + by * p.blockRows, c0 = 1 + bx * p.blockCols;
        std::vector<Tensor> in, out;
        for (std::size_t i = r0 - 1; i <= r0 + p.blockRows; ++i)
          in.push_back(src[i].slice(c0 - 1, c0 + p.blockCols + 1));
        for (std::size_t i = r0; i < r0 + p.blockRows; ++i)
          out.push_back(dst[i].slice(c0, c0 + p.blockCols));
        const unsigned block = by * p.blocksX + bx;
        VertexRef vtx =
            graph.addVertex(cs, "HeatStep", {{"in", in}, {"out", out}, {"maxDelta", deltas[block]}});
        graph.setTileMapping(vtx, block);
        graph.setPerfEstimate(vtx, 20 + 6 * p.blockRows * p.blockCols);
      }
    return cs;
  };
  ComputeSet sweepUV = makeSweep(u, v, "sweepUV");
  ComputeSet sweepVU = makeSweep(v, u, "sweepVU");

  ComputeSet check = graph.addComputeSet("checkConvergence");
  VertexRef checker = graph.addVertex(
      check, "HeatConverged", {{"deltas", deltas}, {"iterations", iterations}, {"keepGoing", keepGoing}});
  graph.setInitialValue(checker["tolerance"], p.tolerance);
  graph.setInitialValue(checker["maxIterations"], p.maxIterations);
  graph.setTileMapping(checker, 0);
  graph.setPerfEstimate(checker, 10 + numBlocks);

  Sequence iteration({Execute(sweepUV), Execute(sweepVU), Execute(check)});
  Sequence prog({RepeatWhileTrue(iteration, keepGoing, Sequence())});

  graph.createHostRead("u", u);
  graph.createHostRead("iterations", iterations);

  auto start = std::chrono::steady_clock::now();
  Engine engine(graph, prog);
  double compileSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  engine.load(device);

  start = std::chrono::steady_clock::now();
  engine.run(0);
  double runSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<float> result(h * w);
  unsigned deviceIterations = 0;
  engine.readTensor("u", result.data(), result.data() + result.size());
  engine.readTensor("iterations", &deviceIterations, &deviceIterations + 1);

  unsigned hostIterations = 0;
  std::vector<float> expected = solveOnHost(p, hostIterations);
  float worst = 0.0f;
  for (std::size_t i = 0; i < result.size(); ++i)
    worst = std::max(worst, std::fabs(result[i] - expected[i]));

  std::cout << "Heat equation on a " << p.rows() << " x " << p.cols() << " grid over " << numBlocks
            << " tiles\n";
  std::cout << "  sweeps run: " << 2 * deviceIterations << " (host reference: " << 2 * hostIterations
            << ")\n";
  std::cout << "  temperature down the middle column, rows 1, 2, 4, ..., 64 below the hot edge:\n   ";
  for (std::size_t depth = 1; depth <= 64; depth *= 2)
    std::cout << " " << result[depth * w + w / 2];
  std::cout << "\n";
  std::cout << "  largest difference from the host solution: " << worst << "\n";
  std::cout << "  compile time: " << compileSeconds << " s, run time: " << runSeconds << " s\n\n";
  engine.printProfileSummary(std::cout, {{"showExecutionSteps", "false"}});

  const bool ok = deviceIterations == hostIterations && worst <= 1e-4f;
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
