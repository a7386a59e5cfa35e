// Copyright (c) Aspen contributors.
// popops benchmarks on the 1,472-tile IPUModel, each against a native host loop on the
// same cores in the same run (STYLE.md habit 8):
//   add     C = A + B over 16M floats (popops::add, precompiled BinaryOp1D vertices)
//   map     D = 0.5*A + B*B - 1 over 16M floats (one fused, generated codelet)
//   reduce  the sum of 16M floats (popops::reduce, two stages)
// Host time is the best of several engine runs (inputs already on the device), each next to a
// run of the native loop (alternating, so both see the same load). The native loops use TBB over
// the same cores (the engine's TBB arena) and are compiled as the codelets are, without
// floating-point contraction (test/ops.cmake), so the map's results match bit for bit.
// Simulated cycles come from poplar::cycleCount, and the implied IPU rate is
// flops / (cycles / clock).
//
// Usage: popops_bench [numElements]   (default 16777216)
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <poplar/CycleCount.hpp>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "BenchSupport.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace poplar;
using namespace popops::expr;
using aspen::bench::Clock;
using aspen::bench::secondsSince;

namespace {

/// The best of `trials` timings of `aspen()` and of `native()`, run alternately.
template <class F, class G> std::pair<double, double> bestOfAlternating(int trials, F &&aspen, G &&native) {
  double bestAspen = 1e30, bestNative = 1e30;
  for (int i = 0; i < trials; ++i) {
    auto start = Clock::now();
    aspen();
    bestAspen = std::min(bestAspen, secondsSince(start));
    start = Clock::now();
    native();
    bestNative = std::min(bestNative, secondsSince(start));
  }
  return {bestAspen, bestNative};
}

struct Result {
  const char *name;
  double aspenSeconds, nativeSeconds;
  std::uint64_t cycles;
  double flops;
  bool correct;
};

} // namespace

int main(int argc, char **argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t(1) << 24);
  const int repeats = 9;

  IPUModel model("ipu2");
  Device device = model.createDevice();
  device.attach();
  const Target &target = device.getTarget();
  Graph graph(target);
  popops::addCodelets(graph);

  Tensor A = graph.addVariable(FLOAT, {n}, "A");
  Tensor B = graph.addVariable(FLOAT, {n}, "B");
  poputil::mapTensorLinearly(graph, A);
  poputil::mapTensorLinearly(graph, B);
  graph.createHostWrite("A", A);
  graph.createHostWrite("B", B);

  program::Sequence addProg, mapProg, reduceProg;
  Tensor C = popops::add(graph, A, B, addProg, "add");
  Tensor D = popops::map(graph, Const(0.5f) * _1 + _2 * _2 - Const(1.0f), {A, B}, mapProg, "map");
  Tensor S = popops::reduce(graph, A, FLOAT, {0}, popops::Operation::ADD, reduceProg, "reduce");
  Tensor addCycles = cycleCount(graph, addProg, 0, SyncType::INTERNAL, "addCycles");
  Tensor mapCycles = cycleCount(graph, mapProg, 0, SyncType::INTERNAL, "mapCycles");
  Tensor reduceCycles = cycleCount(graph, reduceProg, 0, SyncType::INTERNAL, "reduceCycles");
  graph.createHostRead("C", C);
  graph.createHostRead("D", D);
  graph.createHostRead("S", S);
  graph.createHostRead("addCycles", addCycles);
  graph.createHostRead("mapCycles", mapCycles);
  graph.createHostRead("reduceCycles", reduceCycles);

  std::vector<float> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>((i * 7919) % 1000) / 1000.0f - 0.5f;
    b[i] = static_cast<float>((i * 104729) % 997) / 997.0f;
  }

  const auto c0 = Clock::now();
  Engine engine(graph, {addProg, mapProg, reduceProg});
  const double compileSeconds = secondsSince(c0);
  engine.load(device);
  engine.writeTensor("A", a.data(), a.data() + n);
  engine.writeTensor("B", b.data(), b.data() + n);
  std::printf("popops_bench: %zu floats on %u tiles, %u host threads; graph compiled in %.2f s\n", n,
              target.getNumTiles(), std::thread::hardware_concurrency(), compileSeconds);

  auto cyclesOf = [&](const char *handle) {
    std::uint32_t words[2];
    engine.readTensor(handle, words, words + 2);
    return (static_cast<std::uint64_t>(words[1]) << 32) | words[0];
  };

  std::vector<float> c(n), d(n), nc(n), nd(n);
  std::vector<Result> results;

  // --- add ---
  const auto [addAspen, addNative] = bestOfAlternating(
      repeats, [&] { engine.run(0); },
      [&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16),
                          [&](const tbb::blocked_range<std::size_t> &r) {
                            for (std::size_t i = r.begin(); i < r.end(); ++i)
                              nc[i] = a[i] + b[i];
                          });
      });
  engine.readTensor("C", c.data(), c.data() + n);
  results.push_back({"add", addAspen, addNative, cyclesOf("addCycles"), double(n), c == nc});

  // --- fused map ---
  const auto [mapAspen, mapNative] = bestOfAlternating(
      repeats, [&] { engine.run(1); },
      [&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16),
                          [&](const tbb::blocked_range<std::size_t> &r) {
                            for (std::size_t i = r.begin(); i < r.end(); ++i)
                              nd[i] = 0.5f * a[i] + b[i] * b[i] - 1.0f;
                          });
      });
  engine.readTensor("D", d.data(), d.data() + n);
  results.push_back({"map", mapAspen, mapNative, cyclesOf("mapCycles"), 4.0 * double(n), d == nd});

  // --- reduce ---
  double nativeSum = 0;
  const auto [reduceAspen, reduceNative] = bestOfAlternating(
      repeats, [&] { engine.run(2); },
      [&] {
        nativeSum = tbb::parallel_reduce(
            tbb::blocked_range<std::size_t>(0, n, 1 << 16), 0.0,
            [&](const tbb::blocked_range<std::size_t> &r, double acc) {
              float partial = 0;
              for (std::size_t i = r.begin(); i < r.end(); ++i)
                partial += a[i];
              return acc + partial;
            },
            [](double x, double y) { return x + y; });
      });
  float s = 0;
  engine.readTensor("S", &s, &s + 1);
  results.push_back({"reduce", reduceAspen, reduceNative, cyclesOf("reduceCycles"), double(n),
                     std::fabs(s - nativeSum) <= 1e-3 * (1 + std::fabs(nativeSum))});

  const double clock = target.getTileClockFrequency();
  std::printf("%-8s %12s %12s %8s %14s %12s %14s %s\n", "op", "aspen ms", "native ms", "ratio", "sim cycles",
              "sim us", "IPU GFLOP/s", "check");
  bool allOk = true;
  for (const auto &r : results) {
    const double simSeconds = static_cast<double>(r.cycles) / clock;
    std::printf("%-8s %12.2f %12.2f %7.0f%% %14llu %12.1f %14.1f %s\n", r.name, r.aspenSeconds * 1e3,
                r.nativeSeconds * 1e3, 100.0 * r.nativeSeconds / r.aspenSeconds,
                static_cast<unsigned long long>(r.cycles), simSeconds * 1e6,
                simSeconds > 0 ? r.flops / simSeconds / 1e9 : 0.0, r.correct ? "ok" : "WRONG");
    allOk = allOk && r.correct;
  }
  std::printf("(ratio = native time / Aspen time; aim >= 90%% for add and map (issue 28))\n");
  return allOk ? 0 : 1;
}
