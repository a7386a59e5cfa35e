// Copyright (c) Aspen contributors.
// Replicated graphs as Poplar users write them: N replicas, each with its own
// tile memory, replication index constant, streams, host handles and remote
// buffers; the same results at 1 and 2 host threads and from a reloaded
// executable.
#include <catch2/catch.hpp>
#include <gcl/Collectives.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <oneapi/tbb/global_control.h>

#include <cstdint>
#include <memory>
#include <sstream>
#include <vector>

using namespace poplar;

namespace {

Device replicaDevice(unsigned ipus, unsigned tiles = 4) {
  IPUModel model;
  model.numIPUs = ipus;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

} // namespace

TEST_CASE("A replicated graph's target is one replica's", "[replication]") {
  Device device = replicaDevice(4);
  Graph graph(device.getTarget(), replication_factor(4));
  CHECK(graph.getReplicationFactor() == 4);
  CHECK(graph.getTarget().getNumIPUs() == 1);
  CHECK(graph.getTarget().getNumTiles() == 4);
  Graph top = graph.getTopLevelGraph();
  CHECK(top.getTarget().getNumTiles() == 4);
  CHECK(top.getReplicationFactor() == 4);
  Graph twoPerReplica(replicaDevice(4).getTarget(), replication_factor(2));
  CHECK(twoPerReplica.getTarget().getNumIPUs() == 2);
  CHECK(twoPerReplica.getTarget().getNumTiles() == 8);
}

TEST_CASE("Each replica has its own memory, index constant and host handles", "[replication]") {
  const unsigned R = 4;
  Device device = replicaDevice(R);
  Graph graph(device.getTarget(), replication_factor(R));
  popops::addCodelets(graph);
  Tensor index = graph.addReplicationIndexConstant();
  graph.setTileMapping(index, 1);
  Tensor x = graph.addVariable(UNSIGNED_INT, {6}, "x");
  poputil::mapTensorLinearly(graph, x);
  program::Sequence prog;
  // y = x * 10 + index: depends on the replica's own x and on its index.
  Tensor y = popops::add(graph, popops::mul(graph, x, 10u, prog), index, prog, "y");
  graph.createHostWrite("x", x);
  graph.createHostRead("y", y);
  graph.createHostRead("index", index);

  auto runAt = [&](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    Engine engine(graph, prog);
    engine.load(device);
    std::vector<unsigned> xs(R * 6);
    for (unsigned i = 0; i < xs.size(); ++i)
      xs[i] = i;
    engine.writeTensor("x", xs.data(), xs.data() + xs.size()); // one copy per replica
    engine.run(0);
    std::vector<unsigned> ys(R * 6), idx(R);
    engine.readTensor("y", ys.data(), ys.data() + ys.size());
    engine.readTensor("index", idx.data(), idx.data() + idx.size());
    for (unsigned r = 0; r < R; ++r) {
      CHECK(idx[r] == r);
      for (unsigned e = 0; e < 6; ++e)
        CHECK(ys[r * 6 + e] == xs[r * 6 + e] * 10 + r);
    }
    // A buffer of one replica's size: written to every replica, read from replica 0.
    std::vector<unsigned> same = {1, 2, 3, 4, 5, 6};
    engine.writeTensor("x", same.data(), same.data() + same.size());
    engine.run(0);
    engine.readTensor("y", ys.data(), ys.data() + ys.size());
    for (unsigned r = 0; r < R; ++r)
      for (unsigned e = 0; e < 6; ++e)
        CHECK(ys[r * 6 + e] == same[e] * 10 + r);
    std::vector<unsigned> first(6);
    engine.readTensor("y", first.data(), first.data() + first.size());
    CHECK(first == std::vector<unsigned>{10, 20, 30, 40, 50, 60});
    return ys;
  };
  CHECK(runAt(1) == runAt(2));
}

TEST_CASE("Per-replica streams, REPLICATE and BROADCAST", "[replication]") {
  const unsigned R = 2;
  Device device = replicaDevice(R);
  Graph graph(device.getTarget(), replication_factor(R));
  Tensor a = graph.addVariable(FLOAT, {4}, "a");
  Tensor b = graph.addVariable(FLOAT, {4}, "b");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 3);
  DataStream inA = graph.addHostToDeviceFIFO("inA", FLOAT, 4, ReplicatedStreamMode::REPLICATE);
  DataStream inB = graph.addHostToDeviceFIFO("inB", FLOAT, 4, ReplicatedStreamMode::BROADCAST);
  DataStream outA = graph.addDeviceToHostFIFO("outA", FLOAT, 4);
  DataStream outB = graph.addDeviceToHostFIFO("outB", FLOAT, 4);
  program::Sequence prog{program::Copy(inA, a), program::Copy(inB, b), program::Copy(a, outA),
                         program::Copy(b, outB)};
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> a0 = {1, 2, 3, 4}, a1 = {5, 6, 7, 8}, shared = {9, 9, 9, 9};
  std::vector<float> outA0(4), outA1(4), outB0(4), outB1(4);
  engine.connectStream("inA", 0u, a0.data());
  engine.connectStream("inA", 1, a1.data());
  engine.connectStream("inB", shared.data());
  engine.connectStream("outA", 0u, outA0.data());
  engine.connectStream("outA", 1, outA1.data());
  engine.connectStream("outB", 0u, outB0.data());
  engine.connectStream("outB", 1, outB1.data(), outB1.data() + 4);
  engine.run(0);
  CHECK(outA0 == a0);
  CHECK(outA1 == a1);
  CHECK(outB0 == shared);
  CHECK(outB1 == shared);
  // A callback for replica 1 only; replica 0 keeps its buffer.
  std::vector<float> fromCallback;
  engine.connectStreamToCallback("outA", 1, [&](void *p) {
    const float *f = static_cast<const float *>(p);
    fromCallback.assign(f, f + 4);
  });
  engine.run(0);
  CHECK(fromCallback == a1);
}

TEST_CASE("Replicated remote buffers hold one copy per replica", "[replication]") {
  const unsigned R = 2;
  Device device = replicaDevice(R);
  Graph graph(device.getTarget(), replication_factor(R));
  Tensor t = graph.addVariable(INT, {3}, "t");
  graph.setTileMapping(t, 2);
  Tensor index = graph.addReplicationIndexConstant();
  graph.setTileMapping(index, 2);
  RemoteBuffer buffer = graph.addRemoteBuffer("rb", INT, 3, 2);
  Tensor row0 = graph.addConstant(UNSIGNED_INT, {1}, 0u, "row0");
  Tensor row1 = graph.addConstant(UNSIGNED_INT, {1}, 1u, "row1");
  graph.setTileMapping(row0, 2);
  graph.setTileMapping(row1, 2);
  program::Sequence prog{program::Copy(buffer, t, row0), program::Copy(t, buffer, row1)};
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<int> r0 = {1, 2, 3}, r1 = {4, 5, 6};
  engine.copyToRemoteBuffer(r0.data(), "rb", 0, 0);
  engine.copyToRemoteBuffer(r1.data(), "rb", 0, 1);
  engine.run(0);
  std::vector<int> got0(3), got1(3);
  engine.copyFromRemoteBuffer("rb", got0.data(), 1, 0);
  engine.copyFromRemoteBuffer("rb", got1.data(), 1, 1);
  CHECK(got0 == r0);
  CHECK(got1 == r1);
}

TEST_CASE("A replicated executable reloads and runs the same", "[replication]") {
  const unsigned R = 4;
  Device device = replicaDevice(R);
  Graph graph(device.getTarget(), replication_factor(R));
  Tensor x = graph.addVariable(FLOAT, {8}, "x");
  poputil::mapTensorLinearly(graph, x);
  Tensor index = graph.addReplicationIndexConstant();
  graph.setTileMapping(index, 0);
  program::Sequence prog;
  Tensor sum = gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog, "sum");
  graph.createHostWrite("x", x);
  graph.createHostRead("sum", sum);
  graph.createHostRead("index", index);
  Executable exe = compileGraph(graph, {prog});
  std::stringstream saved;
  exe.serialize(saved);
  Engine engine(Executable::deserialize(saved));
  engine.load(device);
  std::vector<float> xs(R * 8);
  for (unsigned i = 0; i < xs.size(); ++i)
    xs[i] = float(i);
  engine.writeTensor("x", xs.data(), xs.data() + xs.size());
  engine.run(0);
  std::vector<float> sums(R * 8);
  std::vector<unsigned> idx(R);
  engine.readTensor("sum", sums.data(), sums.data() + sums.size());
  engine.readTensor("index", idx.data(), idx.data() + idx.size());
  for (unsigned r = 0; r < R; ++r) {
    CHECK(idx[r] == r);
    for (unsigned e = 0; e < 8; ++e)
      CHECK(sums[r * 8 + e] == xs[e] + xs[8 + e] + xs[16 + e] + xs[24 + e]);
  }
}

TEST_CASE("DeviceManager offers devices of 1, 2, 4, 8 and 16 IPUs for replicas", "[replication]") {
  auto manager = DeviceManager::createDeviceManager();
  for (unsigned n : {1u, 2u, 4u, 8u, 16u}) {
    auto devices = manager.getDevices(TargetType::IPU_MODEL, n);
    REQUIRE(!devices.empty());
    CHECK(devices.front().getTarget().getNumIPUs() == n);
    CHECK(devices.front().getTarget().getNumTiles() == n * devices.front().getTarget().getTilesPerIPU());
    // The simulated IPU-POD16: 16 / n devices of n IPUs each.
    auto ipus = manager.getDevices(TargetType::IPU, n);
    CHECK(ipus.size() == 16 / n);
    for (const Device &d : ipus)
      CHECK(d.getTarget().getNumIPUs() == n);
  }
}

TEST_CASE("Collectives inside loops, branches and functions", "[replication]") {
  const unsigned R = 3;
  Device device = replicaDevice(R);
  Graph graph(device.getTarget(), replication_factor(R));
  Tensor x = graph.addVariable(INT, {5}, "x");
  poputil::mapTensorLinearly(graph, x);
  Tensor flag = graph.addVariable(BOOL, {}, "flag");
  graph.setTileMapping(flag, 2);
  program::Sequence reduce;
  gcl::allReduceInPlaceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, reduce, "sumInLoop");
  Function f = graph.addFunction(reduce);
  // Three all-reduces in a loop, a fourth in a called function behind an If every replica takes.
  program::Sequence prog{program::Repeat(3, reduce),
                         program::If(flag, program::Call(f), program::Sequence())};
  graph.createHostWrite("x", x);
  graph.createHostWrite("flag", flag);
  graph.createHostRead("x", x);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<int> xs(R * 5), out(R * 5);
  for (unsigned i = 0; i < xs.size(); ++i)
    xs[i] = int(i) + 1;
  const bool yes = true;
  engine.writeTensor("x", xs.data(), xs.data() + xs.size());
  engine.writeTensor("flag", &yes, &yes + 1);
  engine.run(0);
  engine.readTensor("x", out.data(), out.data() + out.size());
  for (unsigned e = 0; e < 5; ++e) {
    long long v = xs[e] + xs[5 + e] + xs[10 + e]; // after the first all-reduce
    for (int k = 0; k < 3; ++k)                   // three more, each multiplying by R
      v *= R;
    for (unsigned r = 0; r < R; ++r)
      CHECK(out[r * 5 + e] == v);
  }
}
