// Copyright (c) Aspen contributors.
// Replication benchmarks, each beside its baseline in the same run:
//  1. R replicas of a small program (stream in, element-wise ops, reduce,
//     stream out) against one replica: host time ratio (aim: 4 replicas cost
//     <= 2.5x one on 2 cores);
//  2. gcl::allReduceCrossReplica of N floats over 16 replicas against a native
//     ring all-reduce (reduce-scatter + all-gather with adds and memcpy, each
//     ring step parallel over ranks) of the same bytes: host time ratio (aim
//     <= 3x), and the simulated cycles beside the published IPU-Link figure.
// Usage: replication_bench [floats-for-allreduce (default 16777216)]   (not run by ctest)
#include <gcl/Collectives.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include "BenchSupport.hpp"
#include "EngineImpl.hpp"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

using aspen::bench::bestOf;
using aspen::bench::Clock;

Device device(unsigned ipus, unsigned tiles) {
  IPUModel model("ipu2");
  model.numIPUs = ipus;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

/// Seconds per run of a small program on `replicas` replicas of a 16-tile IPU.
double smallProgram(unsigned replicas, unsigned runs) {
  const std::size_t n = 16 * 1024;
  Device d = device(replicas, 16);
  Graph graph(d.getTarget(), replication_factor(replicas));
  popops::addCodelets(graph);
  Tensor x = graph.addVariable(FLOAT, {n}, "x");
  poputil::mapTensorLinearly(graph, x);
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, n);
  DataStream out = graph.addDeviceToHostFIFO("out", FLOAT, 1);
  Sequence prog;
  prog.add(Copy(in, x));
  Tensor y = popops::mul(graph, x, x, prog, "square");
  popops::addInPlace(graph, y, x, prog, "add");
  popops::mulInPlace(graph, y, 0.5f, prog, "scale");
  Tensor s = popops::reduce(graph, y, {0}, popops::Operation::ADD, prog, "sum");
  prog.add(Copy(s.reshape({1}), out));
  Engine engine(graph, Repeat(runs, prog));
  engine.load(d);
  std::vector<float> host(n, 0.25f), result(replicas);
  engine.connectStream("in", host.data());
  for (unsigned r = 0; r < replicas; ++r)
    engine.connectStream("out", r, &result[r]);
  engine.run(0);
  return bestOf(3, [&] { engine.run(0); }) / runs;
}

/// The native baseline: ring all-reduce (sum) of `ranks` buffers of n floats.
void nativeRingAllReduce(std::vector<std::vector<float>> &bufs) {
  const std::size_t ranks = bufs.size(), n = bufs[0].size(), chunk = (n + ranks - 1) / ranks;
  auto range = [&](std::size_t c) {
    const std::size_t b = std::min(n, c * chunk);
    return std::make_pair(b, std::min(n, b + chunk));
  };
  std::vector<std::vector<float>> recv(ranks, std::vector<float>(chunk));
  // Reduce-scatter: at step s, rank r sends chunk (r - s) to rank r + 1, which adds it.
  for (std::size_t s = 0; s + 1 < ranks; ++s) {
    tbb::parallel_for(std::size_t(0), ranks, [&](std::size_t r) {
      const auto [b, e] = range((r + ranks - s) % ranks);
      std::memcpy(recv[(r + 1) % ranks].data(), bufs[r].data() + b, (e - b) * sizeof(float));
    });
    tbb::parallel_for(std::size_t(0), ranks, [&](std::size_t r) {
      const auto [b, e] = range((r + ranks - 1 + ranks - s) % ranks);
      float *dst = bufs[r].data() + b;
      const float *src = recv[r].data();
      for (std::size_t i = 0; i < e - b; ++i)
        dst[i] += src[i];
    });
  }
  // All-gather: rank r owns chunk (r + 1); pass the finished chunks around.
  for (std::size_t s = 0; s + 1 < ranks; ++s)
    tbb::parallel_for(std::size_t(0), ranks, [&](std::size_t r) {
      const auto [b, e] = range((r + 1 + ranks - s) % ranks);
      std::memcpy(bufs[(r + 1) % ranks].data() + b, bufs[r].data() + b, (e - b) * sizeof(float));
    });
}

} // namespace

int main(int argc, char **argv) {
  const std::size_t floats = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t(1) << 24);

  // ---- 1. replicas of a small program ----
  const unsigned runs = 200;
  const double one = smallProgram(1, runs), four = smallProgram(4, runs);
  double fourSerial = 0;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    fourSerial = smallProgram(4, runs);
  }
  std::printf("small program: 1 replica %.1f us/run, 4 replicas %.1f us/run, ratio %.2fx (aim <= 2x on 2 "
              "cores, its floor there); "
              "4 replicas on 1 thread %.1f us/run\n",
              one * 1e6, four * 1e6, four / one, fourSerial * 1e6);

  // ---- 2. all-reduce of N floats over 16 replicas ----
  const unsigned R = 16;
  Device d = device(R, 1472);
  Graph graph(d.getTarget(), replication_factor(R));
  Tensor x = graph.addVariable(FLOAT, {floats}, "x");
  poputil::mapTensorLinearly(graph, x);
  Sequence prog;
  gcl::allReduceInPlaceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog, "allReduce");
  graph.createHostWrite("x", x);
  Engine engine(graph, prog);
  engine.load(d);
  std::vector<float> init(floats);
  for (std::size_t i = 0; i < floats; ++i)
    init[i] = float(i % 97) * 0.01f;
  engine.writeTensor("x", init.data(), init.data() + floats);
  const double aspen = bestOf(3, [&] { engine.run(0); });
  std::uint64_t cycles = 0;
  const auto &exe = engine.getImpl().exe();
  for (const auto &step : exe.steps)
    if (step.kind == aspen::exe::StepKind::Collective)
      cycles = step.cycles;

  std::vector<std::vector<float>> bufs(R, init);
  const double native = bestOf(3, [&] { nativeRingAllReduce(bufs); });
  const double bytes = double(floats) * 4;
  std::printf(
      "allReduce of %zu floats over %u replicas: Aspen %.1f ms, native memcpy ring %.1f ms, ratio %.2fx "
      "(aim <= 3x)\n",
      floats, R, aspen * 1e3, native * 1e3, aspen / native);
  const double clock = exe.target.tileClockFrequency;
  // Published: ipu2 IPU-Links 320 GB/s per IPU (10 links x 32 GB/s); a bidirectional ring
  // uses 2 links per hop: 2 (R-1)/R x bytes / 64 GB/s.
  const double published = 2.0 * (R - 1) / R * bytes / 64e9;
  std::printf("  simulated: %llu cycles = %.2f ms at %.2f GHz; IPU-Link bound from published figures "
              "(2 links x 32 GB/s per hop): %.2f ms\n",
              static_cast<unsigned long long>(cycles), double(cycles) / clock * 1e3, clock / 1e9,
              published * 1e3);
  return 0;
}
