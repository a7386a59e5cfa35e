// Copyright (c) Aspen contributors.
// Bad input to replication and collectives: named poplar_errors, no crash, no hang.
#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>
#include <gcl/Collectives.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>
#include <poputil/TileMapping.hpp>

#include <vector>

using namespace poplar;
using aspen::test::requireError;

namespace {
Device replicaDevice(unsigned ipus, unsigned tiles = 4) {
  IPUModel model;
  model.numIPUs = ipus;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}
} // namespace

TEST_CASE("Replication factor that does not divide the device's IPUs", "[replication][error]") {
  Device device = replicaDevice(3);
  requireError<graph_object_creation_error>([&] { Graph g(device.getTarget(), replication_factor(2)); },
                                            {"replication factor 2", "3 IPUs"});
}

TEST_CASE("Loading a replicated executable on a device too small for it", "[replication][error]") {
  Device big = replicaDevice(4);
  Graph graph(big.getTarget(), replication_factor(4));
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  poputil::mapTensorLinearly(graph, x);
  program::Sequence prog;
  gcl::allReduceInPlaceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog);
  Engine engine(graph, prog);
  Device small = replicaDevice(2);
  requireError<poplar_error>([&] { engine.load(small); }, {"4 replicas of 1 IPU", "2 IPUs"});
}

TEST_CASE("Replica index out of range", "[replication][error]") {
  Device device = replicaDevice(2);
  Graph graph(device.getTarget(), replication_factor(2));
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  graph.setTileMapping(x, 0);
  graph.addRemoteBuffer("rb", FLOAT, 4);
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 4);
  program::Sequence prog{program::Copy(in, x)};
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> buf(4);
  requireError<index_error>([&] { engine.connectStream("in", 2, buf.data()); },
                            {"connectStream", "replica index 2"});
  requireError<index_error>([&] { engine.connectStreamToCallback("in", 5, [](void *) {}); },
                            {"replica index 5"});
  requireError<index_error>([&] { engine.copyToRemoteBuffer(buf.data(), "rb", 0, 2); },
                            {"copyToRemoteBuffer", "replica index 2"});
}

TEST_CASE("A collective on a non-replicated graph", "[replication][error]") {
  Device device = replicaDevice(1);
  Graph graph(device.getTarget());
  Tensor x = graph.addVariable(FLOAT, {4}, "gradients");
  graph.setTileMapping(x, 0);
  program::Sequence prog;
  requireError<poplar_error>(
      [&] { gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog); },
      {"allReduceCrossReplica", "gradients", "not replicated"});
}

TEST_CASE("Mismatched CommGroup sizes and bad collective arguments", "[replication][error]") {
  Device device = replicaDevice(4);
  Graph graph(device.getTarget(), replication_factor(4));
  Tensor x = graph.addVariable(FLOAT, {6}, "x");
  poputil::mapTensorLinearly(graph, x);
  program::Sequence prog;
  using gcl::CommGroup;
  using gcl::CommGroupType;
  requireError<poplar_error>(
      [&] {
        gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog,
                                   CommGroup(CommGroupType::CONSECUTIVE, 3));
      },
      {"CONSECUTIVE of size 3", "replication factor 4"});
  requireError<poplar_error>(
      [&] {
        gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog,
                                   CommGroup(CommGroupType::ORTHOGONAL, 0));
      },
      {"ORTHOGONAL of size 0"});
  requireError<poplar_error>(
      [&] {
        gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog,
                                   CommGroup(CommGroupType::ALL, 2));
      },
      {"ALL of size 2"});
  requireError<poplar_error>(
      [&] { gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::LOGICAL_OR, prog); },
      {"LOGICAL_OR", "BOOL"});
  requireError<poplar_error>(
      [&] { gcl::broadcastCrossReplica(graph, x, prog, CommGroup(CommGroupType::CONSECUTIVE, 2), 2); },
      {"root replica 2"});
  requireError<poplar_error>([&] { gcl::allToAllCrossReplica(graph, x, prog); },
                             {"'x'", "multiple of the group size 4"});
  Tensor wrong = graph.addVariable(FLOAT, {5}, "wrong");
  poputil::mapTensorLinearly(graph, wrong);
  requireError<poplar_error>(
      [&] { gcl::allReduceToDestinationCrossReplica(graph, x, wrong, gcl::CollectiveOperator::ADD, prog); },
      {"destination", "wrong"});
}

TEST_CASE("A virtual graph outside the device", "[replication][error]") {
  Device device = replicaDevice(2);
  Graph graph(device.getTarget());
  requireError<invalid_tile_mapping>([&] { graph.createVirtualGraph(4, 9); },
                                     {"createVirtualGraph", "[4, 9)"});
  requireError<invalid_tile_mapping>(
      [&] {
        graph.createVirtualGraph(std::vector<unsigned>{1, 7});
      },
      {"tile 7"});
}

TEST_CASE("Replicas whose control flow diverges before a collective", "[replication][error]") {
  Device device = replicaDevice(2);
  Graph graph(device.getTarget(), replication_factor(2));
  Tensor index = graph.addReplicationIndexConstant();
  graph.setTileMapping(index, 0);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  graph.setTileMapping(x, 1);
  program::Sequence reduce;
  gcl::allReduceInPlaceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, reduce, "onlyReplicaOne");
  // Only replica 1 runs the collective: replica 0 ends first.
  program::Sequence prog{program::If(index, reduce, program::Sequence())};
  Engine engine(graph, prog);
  engine.load(device);
  requireError<poplar_error>([&] { engine.run(0); }, {"Replicas diverged", "onlyReplicaOne", "replica 0"});
}

TEST_CASE("Within-replica collectives on a tensor without one row per IPU", "[replication][error]") {
  Device device = replicaDevice(2);
  Graph graph(device.getTarget());
  Tensor x = graph.addVariable(FLOAT, {3, 4}, "rows");
  poputil::mapTensorLinearly(graph, x);
  program::Sequence prog;
  requireError<poplar_error>(
      [&] { gcl::allReduceWithinReplica(graph, x, gcl::CollectiveOperator::ADD, prog); },
      {"allReduceWithinReplica", "'rows'", "{2, n}"});
  gcl::Chunks three(3);
  requireError<poplar_error>([&] { gcl::allGatherWithinReplica(graph, three, prog); },
                             {"allGatherWithinReplica", "3 chunks", "2 IPUs"});
}

TEST_CASE("A failure in one replica is reported and the engine runs again", "[replication][error]") {
  Device device = replicaDevice(2);
  Graph graph(device.getTarget(), replication_factor(2));
  Tensor index = graph.addReplicationIndexConstant();
  graph.setTileMapping(index, 0);
  Tensor fail = graph.addVariable(BOOL, {}, "fail");
  graph.setTileMapping(fail, 0);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  graph.setTileMapping(x, 1);
  program::Sequence prog;
  // Replica 1 aborts when asked to, at the collective's doorstep.
  prog.add(program::If(fail, program::AbortOnCondition(index, "replica one gives up"), program::Sequence()));
  gcl::allReduceInPlaceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog);
  graph.createHostWrite("fail", fail);
  Engine engine(graph, prog);
  engine.load(device);
  const bool yes = true, no = false;
  engine.writeTensor("fail", &yes, &yes + 1);
  requireError<application_runtime_error>([&] { engine.run(0); }, {"replica one gives up"});
  engine.writeTensor("fail", &no, &no + 1);
  engine.run(0); // every replica reaches the collective again
}
