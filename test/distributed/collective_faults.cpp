// Copyright (c) Aspen contributors.
// Issue 25, item 3: instances that disagree end with an error on every instance, within
// seconds, never a hang or a silent wrong result.
//   collective_faults mismatch   instance 0 calls allReduce(float, 4), the others broadcast(16)
//   collective_faults early      instance 0 ends after its first popdist call; the others
//                                call allReduce
//   collective_faults silent     instance 0 ends before any popdist call (MPI never started
//                                there); the others wait in MPI's start until the deadline
//   collective_faults gcl        one replica per instance; instance 0's program runs
//                                gcl::allReduceCrossReplica, the others' gcl::allGatherCrossReplica
// Each instance prints "instance <i> caught: <message>" for the error it gets.
#include <gcl/Collectives.hpp>
#include <popdist/collectives.hpp>
#include <popdist/popdist_poplar.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/exceptions.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

namespace {

// Instances whose programs differ in a collective between replicas: each instance runs its
// replica's program; the engine's run fails on every instance naming both collectives.
void runDifferentGclPrograms(unsigned me) {
  auto manager = poplar::DeviceManager::createDeviceManager();
  poplar::Device device = manager.getDevice(popdist::getDeviceId());
  if (!device.attach())
    throw poplar::runtime_error("cannot attach device " + std::to_string(device.getId()));
  poplar::Graph graph(device.getTarget(), poplar::replication_factor(popdist::getNumLocalReplicas()));
  poplar::program::Sequence prog;
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {4}, "x");
  graph.setTileMapping(x, 0);
  if (me == 0)
    gcl::allReduceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog, gcl::CommGroup(), "sum");
  else
    gcl::allGatherCrossReplica(graph, x, prog, gcl::CommGroup(), "gather");
  poplar::Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
}

} // namespace

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (mode == "silent" && rank && std::strcmp(rank, "0") == 0)
    return 0;
  const unsigned me = popdist::getInstanceIndex(); // starts MPI (the first popdist call)
  std::vector<float> data(4, 1.0f);
  try {
    if (mode == "mismatch") {
      if (me == 0)
        popdist::collectives::allReduce(data.data(), data.size(), popdist::collectives::ReduceOp::SUM);
      else
        popdist::collectives::broadcast(data.data(), data.size() * sizeof(float), 0);
    } else if (mode == "early") {
      if (me == 0)
        return 0; // leaves without a collective
      popdist::collectives::allReduce(data.data(), data.size(), popdist::collectives::ReduceOp::SUM);
    } else if (mode == "gcl") {
      runDifferentGclPrograms(me);
    } else {
      std::cerr << "usage: collective_faults mismatch|early|silent|gcl\n";
      return 2;
    }
  } catch (const poplar::poplar_error &e) {
    std::cout << "instance " << me << " caught: " << e.what() << std::endl;
    return 0;
  }
  std::cout << "instance " << me << " FAILED: no error; data[0] = " << data[0] << std::endl;
  return 1;
}
