// Run by mpirun or poprun as several instances (label distributed). Each instance checks what
// popdist says of its place against the launch it was given (argv), that the instances' replica
// ranges tile [0, total) exactly, and the host collectives against a plain host loop over every
// instance's inputs (which each instance can generate, as they depend only on the instance index).
//
//   popdist_instances <expected instances> <expected total replicas>
#include <popdist/collectives.hpp>
#include <popdist/popdist_poplar.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    ++failures;
    std::cerr << "instance " << popdist::getInstanceIndex() << ": FAILED: " << what << "\n";
  }
}

// Instance `instance`'s input: values of mixed magnitude, so the order of a float sum matters.
std::vector<float> inputOf(unsigned instance, std::size_t n) {
  std::vector<float> values(n);
  std::uint32_t state = 0x9e3779b9u * (instance + 1);
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    values[i] = static_cast<float>(state >> 8) / 16777216.0f * std::pow(10.0f, static_cast<float>(i % 7) - 3);
  }
  return values;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::cerr << "usage: popdist_instances <instances> <total replicas>\n";
    return 2;
  }
  const unsigned expectedInstances = static_cast<unsigned>(std::atoi(argv[1]));
  const unsigned expectedTotal = static_cast<unsigned>(std::atoi(argv[2]));
  const unsigned instances = popdist::getNumInstances();
  const unsigned me = popdist::getInstanceIndex();

  expect(instances == expectedInstances, "getNumInstances() == " + std::to_string(expectedInstances));
  expect(popdist::getNumTotalReplicas() == expectedTotal,
         "getNumTotalReplicas() == " + std::to_string(expectedTotal));
  expect(popdist::getNumLocalReplicas() == expectedTotal / expectedInstances, "getNumLocalReplicas()");
  expect(popdist::getReplicaIndexOffset() == me * popdist::getNumLocalReplicas(), "getReplicaIndexOffset()");
  expect(popdist::getNumIpusPerReplica() == 1, "getNumIpusPerReplica() == 1");
  expect(popdist::checkNumIpusPerReplica(1), "checkNumIpusPerReplica(1)");

  // The instances' replica ranges, gathered: disjoint and covering every replica once.
  const std::uint32_t range[2] = {popdist::getReplicaIndexOffset(), popdist::getNumLocalReplicas()};
  std::vector<std::uint32_t> ranges(2 * instances);
  popdist::collectives::allGather(range, sizeof(range), ranges.data());
  std::vector<int> owners(expectedTotal, 0);
  for (unsigned i = 0; i < instances; ++i) {
    for (unsigned r = 0; r < ranges[2 * i + 1]; ++r) {
      if (ranges[2 * i] + r < expectedTotal)
        ++owners[ranges[2 * i] + r];
    }
  }
  expect(std::all_of(owners.begin(), owners.end(), [](int n) { return n == 1; }),
         "every replica is owned by exactly one instance");

  // allReduce SUM of floats: the reference folds the instances' inputs in instance order with a
  // plain loop, so the result must be bit-identical; odd sizes exercise uneven chunks.
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000003}}) {
    std::vector<float> data = inputOf(me, n);
    std::vector<float> reference = inputOf(0, n);
    for (unsigned i = 1; i < instances; ++i) {
      const auto other = inputOf(i, n);
      for (std::size_t k = 0; k < n; ++k)
        reference[k] += other[k];
    }
    popdist::collectives::allReduceSum(data);
    expect(std::memcmp(data.data(), reference.data(), n * sizeof(float)) == 0,
           "allReduceSum of " + std::to_string(n) + " floats is bit-identical to the host fold");
  }

  // MIN, MAX, PROD on integers.
  std::vector<std::int32_t> ints = {static_cast<std::int32_t>(me) - 5, static_cast<std::int32_t>(me * me), 2};
  std::vector<std::int32_t> mins = ints, maxs = ints, prods = ints;
  popdist::collectives::allReduce(mins.data(), mins.size(), popdist::collectives::ReduceOp::MIN);
  popdist::collectives::allReduce(maxs.data(), maxs.size(), popdist::collectives::ReduceOp::MAX);
  popdist::collectives::allReduce(prods.data(), prods.size(), popdist::collectives::ReduceOp::PROD);
  const auto last = static_cast<std::int32_t>(instances - 1);
  expect(mins[0] == -5 && mins[1] == 0, "allReduce MIN");
  expect(maxs[0] == last - 5 && maxs[1] == last * last, "allReduce MAX");
  expect(prods[2] == (1 << instances), "allReduce PROD");

  // allReduceMean of doubles.
  std::vector<double> mean = {static_cast<double>(me)};
  popdist::collectives::allReduceMean(mean);
  expect(mean[0] == (instances - 1) / 2.0, "allReduceMean");

  // broadcast from the last instance.
  std::vector<std::uint64_t> payload(100, me == instances - 1 ? 0xABCDEFull : 0);
  popdist::collectives::broadcast(payload, instances - 1);
  expect(std::all_of(payload.begin(), payload.end(), [](std::uint64_t v) { return v == 0xABCDEF; }),
         "broadcast from the last instance");

  popdist::collectives::synchronize();
  std::cout << "instance " << me << " of " << instances << " ok: replicas "
            << popdist::getReplicaIndexOffset() << ".."
            << popdist::getReplicaIndexOffset() + popdist::getNumLocalReplicas() - 1 << std::endl;
  return failures == 0 ? 0 : 1;
}
