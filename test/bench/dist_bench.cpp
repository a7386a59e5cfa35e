// Distributed benchmarks, run as several instances:
//   mpirun --oversubscribe -np 2 dist_bench allreduce   # popdist allReduce vs plain MPI_Allreduce
//   test/bench/dist_scaling.sh build                    # weak scaling, 1 -> 2 -> 4 instances
//
// allreduce: 16M floats, popdist::collectives::allReduce (deterministic: fixed fold order)
// against MPI_Allreduce of the same bytes in the same run, best of several repetitions; prints
// the ratio. work: each instance runs the same Engine program (a fixed amount of simulated work
// per instance) and reports the slowest instance's time, for weak scaling.
#include <gcl/Collectives.hpp>
#include <popdist/collectives.hpp>
#include <popdist/popdist_poplar.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include "BenchSupport.hpp"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

using aspen::bench::Clock;
using aspen::bench::secondsSince;

namespace {

// The slowest instance's time: what a synchronous step costs.
double slowest(double mine) {
  std::vector<double> time = {mine};
  popdist::collectives::allReduce(time.data(), 1, popdist::collectives::ReduceOp::MAX);
  return time[0];
}

int allReduceBench() {
  constexpr std::size_t count = 16u << 20;
  constexpr int repetitions = 5;
  std::vector<float> data(count, 1.0f), out(count);
  popdist::collectives::synchronize(); // MPI is up
  double best_popdist = 1e30, best_mpi = 1e30;
  for (int rep = 0; rep < repetitions; ++rep) {
    std::fill(data.begin(), data.end(), static_cast<float>(popdist::getInstanceIndex() + 1));
    popdist::collectives::synchronize();
    auto start = Clock::now();
    popdist::collectives::allReduce(data.data(), count, popdist::collectives::ReduceOp::SUM);
    best_popdist = std::min(best_popdist, slowest(secondsSince(start)));

    std::fill(data.begin(), data.end(), static_cast<float>(popdist::getInstanceIndex() + 1));
    popdist::collectives::synchronize();
    start = Clock::now();
    MPI_Allreduce(data.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    best_mpi = std::min(best_mpi, slowest(secondsSince(start)));
  }
  if (popdist::getInstanceIndex() == 0) {
    const double gb = count * sizeof(float) / 1e9;
    std::cout << "allReduce of 16M floats over " << popdist::getNumInstances() << " instances (best of "
              << repetitions << "):\n"
              << "  popdist::collectives::allReduce  " << best_popdist * 1e3 << " ms (" << gb / best_popdist
              << " GB/s)\n"
              << "  MPI_Allreduce                    " << best_mpi * 1e3 << " ms (" << gb / best_mpi
              << " GB/s)\n"
              << "  ratio popdist / MPI              " << best_popdist / best_mpi << " (aim <= 2)\n";
  }
  return 0;
}

// gcl: allReduceCrossReplica of 16M floats in a replicated graph spanning the instances (one
// replica each), against MPI_Allreduce of the same bytes, in the same run.
int gclBench() {
  constexpr std::size_t count = 16u << 20;
  constexpr int repetitions = 5;
  auto manager = poplar::DeviceManager::createDeviceManager();
  poplar::Device device = manager.getDevice(popdist::getDeviceId());
  device.attach();
  poplar::Graph graph(device.getTarget(), poplar::replication_factor(popdist::getNumLocalReplicas()));
  auto x = graph.addVariable(poplar::FLOAT, {count}, "x");
  poputil::mapTensorLinearly(graph, x);
  poplar::program::Sequence prog;
  gcl::allReduceInPlaceCrossReplica(graph, x, gcl::CollectiveOperator::ADD, prog, "allReduce");
  poplar::Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> data(count, 1.0f), out(count);
  popdist::collectives::synchronize();
  double best_gcl = 1e30, best_mpi = 1e30;
  for (int rep = 0; rep < repetitions; ++rep) {
    popdist::collectives::synchronize();
    auto start = Clock::now();
    engine.run(0);
    best_gcl = std::min(best_gcl, slowest(secondsSince(start)));
    popdist::collectives::synchronize();
    start = Clock::now();
    MPI_Allreduce(data.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    best_mpi = std::min(best_mpi, slowest(secondsSince(start)));
  }
  if (popdist::getInstanceIndex() == 0) {
    std::cout << "gcl::allReduceCrossReplica of 16M floats, " << popdist::getNumTotalReplicas()
              << " replicas over " << popdist::getNumInstances() << " instances (best of " << repetitions
              << "):\n"
              << "  engine.run (device gather, MPI, fold, scatter)  " << best_gcl * 1e3 << " ms\n"
              << "  MPI_Allreduce of the same bytes                 " << best_mpi * 1e3 << " ms\n"
              << "  ratio                                           " << best_gcl / best_mpi
              << " (aim <= 2)\n";
  }
  return 0;
}

int workBench() {
  auto manager = poplar::DeviceManager::createDeviceManager();
  poplar::Device device = manager.getDevice(popdist::getDeviceId());
  device.attach();
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const std::size_t n = 1u << 20;
  auto x = graph.addVariable(poplar::FLOAT, {n}, "x");
  for (unsigned t = 0; t < 64; ++t) {
    graph.setTileMapping(x.slice(t * n / 64, (t + 1) * n / 64), t);
  }
  poplar::program::Sequence step;
  popops::mulInPlace(graph, x, 1.0001f, step, "scale");
  popops::addInPlace(graph, x, 0.5f, step, "shift");
  poplar::program::Repeat prog(50, step);
  graph.createHostWrite("x", x);
  poplar::Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> init(n, 1.0f);
  engine.writeTensor("x", init.data(), init.data() + n);
  popdist::collectives::synchronize();
  const auto start = Clock::now();
  popdist::run(engine, 0);
  const double time = slowest(secondsSince(start));
  if (popdist::getInstanceIndex() == 0) {
    std::cout << "weak scaling: " << popdist::getNumInstances()
              << " instances, same work each: " << time * 1e3 << " ms\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const std::string what = argc > 1 ? argv[1] : "allreduce";
  if (what == "allreduce")
    return allReduceBench();
  if (what == "work")
    return workBench();
  if (what == "gcl")
    return gclBench();
  std::cerr << "usage: dist_bench allreduce|gcl|work\n";
  return 2;
}
