// Copyright (c) Aspen contributors.
// What the benchmarks in test/bench share: wall-clock timing (a steady clock,
// the seconds since a start, the best of several trials), the process's
// resident memory, and the generated graph of compile_bench and load_bench.
// Header-only: each benchmark is one source file.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace aspen::bench {

using Clock = std::chrono::steady_clock;

/// Seconds from `start` to now.
inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Milliseconds from `start` to now.
inline double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The shortest of `trials` timings of `f()`, in seconds (the machine is shared,
/// so the best run is the one least disturbed).
template <class F> double bestOf(int trials, F &&f) {
  double best = 1e30;
  for (int i = 0; i < trials; ++i) {
    const auto start = Clock::now();
    f();
    best = std::min(best, secondsSince(start));
  }
  return best;
}

/// The median of `v` (the upper one of an even count).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Resident memory now (VmRSS), MiB.
inline double rssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  return 0;
}

/// Peak resident memory of the process so far, MiB.
inline double peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// ---- the graph of compile_bench and load_bench ----------------------------------------

/// The one codelet of the scale graph: `out = in * k`.
inline const char *scaleCodelet() {
  return R"(
#include <poplar/Vertex.hpp>
class BenchScale : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> in;
  poplar::Output<poplar::Vector<float>> out;
  float k;
  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = in[i] * k;
    return true;
  }
};
)";
}

/// Builds the scale graph with `numVertices` vertices on every tile of the
/// graph's target (its codelet, `scaleCodelet()`, must have been added): four
/// compute sets; every vertex scales 8 floats of its tile's input into its
/// tile's output; every other vertex reads its input from the next tile (so the
/// exchange planner has work), the rest point straight at it. Host handles
/// "in" (write) and "out" (read). Returns the program Repeat(10, Execute(cs0..cs3)).
inline std::vector<poplar::program::Program> buildScaleGraph(poplar::Graph &graph, std::size_t numVertices) {
  using namespace poplar;
  using namespace poplar::program;
  constexpr unsigned kComputeSets = 4;
  constexpr unsigned kElems = 8;
  const unsigned tiles = graph.getTarget().getNumTiles();
  const std::size_t perTileCs = (numVertices + tiles * kComputeSets - 1) / (tiles * kComputeSets);
  // Per tile: one input and one output variable of perTileCs * kComputeSets * kElems floats.
  const std::size_t perTile = perTileCs * kComputeSets * kElems;
  Tensor in = graph.addVariable(FLOAT, {tiles, perTile}, "in");
  Tensor out = graph.addVariable(FLOAT, {tiles, perTile}, "out");
  for (unsigned t = 0; t < tiles; ++t) {
    graph.setTileMapping(in[t], t);
    graph.setTileMapping(out[t], t);
  }
  std::vector<ComputeSet> css;
  for (unsigned c = 0; c < kComputeSets; ++c)
    css.push_back(graph.addComputeSet("cs" + std::to_string(c)));
  std::size_t made = 0;
  for (std::size_t k = 0; k < perTileCs && made < numVertices; ++k)
    for (unsigned c = 0; c < kComputeSets && made < numVertices; ++c)
      for (unsigned t = 0; t < tiles && made < numVertices; ++t, ++made) {
        const std::size_t at = (k * kComputeSets + c) * kElems;
        const unsigned src = (made % 2) ? (t + 1) % tiles : t;
        VertexRef v =
            graph.addVertex(css[c], "BenchScale",
                            {{"in", in[src].slice(at, at + kElems)}, {"out", out[t].slice(at, at + kElems)}});
        graph.setInitialValue(v["k"], 0.5f);
        graph.setTileMapping(v, t);
      }
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);
  Sequence body;
  for (ComputeSet cs : css)
    body.add(Execute(cs));
  return {Repeat(10, body)};
}

} // namespace aspen::bench
