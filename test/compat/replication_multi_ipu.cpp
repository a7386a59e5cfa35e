// Copyright (c) Aspen contributors.
// Several IPUs: tiles numbered across IPUs, virtual graphs per IPU, a tensor
// spread over two IPUs, copies and vertices whose data crosses IPUs, the cost
// model's inter-IPU pricing, and replicas of two IPUs each.
#include <catch2/catch.hpp>
#include <gcl/Collectives.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include "exe/ExecutableData.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

using namespace poplar;

namespace {
Device multiIpuDevice(unsigned ipus, unsigned tiles = 4) {
  IPUModel model;
  model.numIPUs = ipus;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

/// Estimated cycles of the only Copy step of a program copying `src` to `dst`.
std::uint64_t copyCycles(Graph &graph, const Tensor &src, const Tensor &dst) {
  Executable exe = compileGraph(graph, {program::Copy(src, dst)});
  for (const auto &step : exe.getImpl().steps)
    if (step.kind == aspen::exe::StepKind::Copy)
      return step.cycles;
  FAIL("no Copy step");
  return 0;
}
} // namespace

TEST_CASE("Virtual graphs per IPU and data crossing IPUs", "[replication][multi-ipu]") {
  Device device = multiIpuDevice(2);
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  REQUIRE(graph.getTarget().getNumTiles() == 8);
  Graph ipu0 = graph.createVirtualGraph(0, 4);
  Graph ipu1 = graph.createVirtualGraph(4, 8);
  CHECK(ipu1.getTarget().getNumTiles() == 4);
  Tensor a = ipu0.addVariable(FLOAT, {8}, "a");
  poputil::mapTensorLinearly(ipu0, a); // IPU 0's tiles 0..3
  Tensor b = ipu1.addVariable(FLOAT, {8}, "b");
  poputil::mapTensorLinearly(ipu1, b); // IPU 1: absolute tiles 4..7
  CHECK(graph.getTileMapping(b)[4].size() + graph.getTileMapping(b)[7].size() > 0);
  // A tensor on both IPUs.
  Tensor both = graph.addVariable(FLOAT, {8}, "both");
  graph.setTileMapping(both.slice(0, 4), 1);
  graph.setTileMapping(both.slice(4, 8), 6);
  program::Sequence prog;
  prog.add(program::Copy(a, b)); // IPU 0 -> IPU 1
  // A vertex on IPU 1 (mapped like b) reading `both`, half of which is on IPU 0.
  Tensor sum = popops::add(graph, b, both, prog, "sum");
  graph.createHostWrite("a", a);
  graph.createHostWrite("both", both);
  graph.createHostRead("sum", sum);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> av = {1, 2, 3, 4, 5, 6, 7, 8}, bothv = {10, 20, 30, 40, 50, 60, 70, 80}, out(8);
  engine.writeTensor("a", av.data(), av.data() + 8);
  engine.writeTensor("both", bothv.data(), bothv.data() + 8);
  engine.run(0);
  engine.readTensor("sum", out.data(), out.data() + 8);
  for (unsigned i = 0; i < 8; ++i)
    CHECK(out[i] == av[i] + bothv[i]);
}

TEST_CASE("The cost model prices inter-IPU exchange over IPU-Links", "[replication][multi-ipu]") {
  Device device = multiIpuDevice(2, 4);
  Graph graph(device.getTarget());
  const std::size_t n = 4096;
  Tensor src = graph.addVariable(FLOAT, {n}, "src");
  Tensor sameIpu = graph.addVariable(FLOAT, {n}, "sameIpu");
  Tensor otherIpu = graph.addVariable(FLOAT, {n}, "otherIpu");
  graph.setTileMapping(src, 0);
  graph.setTileMapping(sameIpu, 1);
  graph.setTileMapping(otherIpu, 5);
  const std::uint64_t within = copyCycles(graph, src, sameIpu);
  const std::uint64_t across = copyCycles(graph, src, otherIpu);
  const auto &t = graph.getTarget().getImpl();
  // Across IPUs the bytes also cross IPU-Links (latency, bandwidth) and the
  // superstep ends with a global sync instead of an internal one.
  const auto links = std::uint64_t(double(n * 4) / t.ipuLinkBytesPerCycle()) + t.ipuLinkLatencyCycles;
  CHECK(across >= within + (t.globalSyncCycles - t.syncCycles));
  CHECK(across >= links + t.globalSyncCycles);
}

TEST_CASE("Replicas of two IPUs each all-reduce a tensor spread over both", "[replication][multi-ipu]") {
  const unsigned R = 2;
  Device device = multiIpuDevice(4);
  Graph graph(device.getTarget(), replication_factor(R));
  REQUIRE(graph.getTarget().getNumIPUs() == 2);
  Tensor x = graph.addVariable(INT, {16}, "x");
  poputil::mapTensorLinearly(graph, x); // over both IPUs of the replica
  program::Sequence prog;
  Tensor sum = gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog);
  graph.createHostWrite("x", x);
  graph.createHostRead("sum", sum);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<int> xs(R * 16), sums(R * 16);
  for (unsigned i = 0; i < xs.size(); ++i)
    xs[i] = int(i * 3) - 7;
  engine.writeTensor("x", xs.data(), xs.data() + xs.size());
  engine.run(0);
  engine.readTensor("sum", sums.data(), sums.data() + sums.size());
  for (unsigned r = 0; r < R; ++r)
    for (unsigned e = 0; e < 16; ++e)
      CHECK(sums[r * 16 + e] == xs[e] + xs[16 + e]);
}

TEST_CASE("Within-replica collectives between the IPUs of a replica", "[replication][multi-ipu]") {
  const unsigned ipus = 4;
  const std::size_t n = 10; // not a multiple of 4: the chunks are zero-padded
  Device device = multiIpuDevice(2 * ipus);
  Graph graph(device.getTarget(), replication_factor(2)); // 2 replicas of 4 IPUs
  const unsigned tiles = graph.getTarget().getTilesPerIPU();
  Tensor x = graph.addVariable(FLOAT, {ipus, n}, "x");
  for (unsigned i = 0; i < ipus; ++i)
    graph.setTileMapping(x[i], i * tiles + 1); // row i on IPU i
  program::Sequence prog;
  Tensor all = gcl::allReduceWithinReplica(graph, x, gcl::CollectiveOperator::MAX, prog, "allReduceWithin");
  gcl::Chunks chunks =
      gcl::reduceScatterWithinReplica(graph, x, gcl::CollectiveOperator::ADD, prog, "rsWithin");
  Tensor gathered = gcl::allGatherWithinReplica(graph, chunks, prog, "agWithin");
  REQUIRE(chunks.chunks.size() == ipus);
  REQUIRE(gathered.shape() == std::vector<std::size_t>{ipus, n});
  // Each chunk and gathered row lives on its IPU.
  for (unsigned i = 0; i < ipus; ++i) {
    const auto mapping = graph.getTileMapping(chunks.chunks[i].tensor);
    for (unsigned t = 0; t < mapping.size(); ++t)
      if (!mapping[t].empty())
        CHECK(t / tiles == i);
  }
  graph.createHostWrite("x", x);
  graph.createHostRead("all", all);
  graph.createHostRead("gathered", gathered);
  graph.createHostRead("chunk1", chunks.chunks[1].tensor);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> xs(2 * ipus * n);
  for (std::size_t i = 0; i < xs.size(); ++i)
    xs[i] = float((i * 37) % 19) - 9.0f;
  engine.writeTensor("x", xs.data(), xs.data() + xs.size());
  engine.run(0);
  std::vector<float> allOut(2 * ipus * n), gatheredOut(2 * ipus * n), chunk1(2 * 3);
  engine.readTensor("all", allOut.data(), allOut.data() + allOut.size());
  engine.readTensor("gathered", gatheredOut.data(), gatheredOut.data() + gatheredOut.size());
  engine.readTensor("chunk1", chunk1.data(), chunk1.data() + chunk1.size());
  for (unsigned r = 0; r < 2; ++r) {
    const float *rx = &xs[r * ipus * n];
    for (std::size_t e = 0; e < n; ++e) {
      float mx = rx[e], sum = rx[e];
      for (unsigned i = 1; i < ipus; ++i) {
        mx = std::max(mx, rx[i * n + e]);
        sum += rx[i * n + e];
      }
      for (unsigned i = 0; i < ipus; ++i) {
        CHECK(allOut[r * ipus * n + i * n + e] == mx);
        CHECK(gatheredOut[r * ipus * n + i * n + e] == sum);
      }
      if (e >= 3 && e < 6) // chunk 1 holds elements [3, 6)
        CHECK(chunk1[r * 3 + e - 3] == sum);
    }
  }
}
