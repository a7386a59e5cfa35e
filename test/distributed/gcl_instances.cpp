// GCL collectives of a replicated graph spanning every instance's replicas. Written for popdist:
// each instance builds its graph for its local replicas and runs it; the replicas' inputs depend
// on their global index (the replication index constant), and every output of every local
// replica is compared, bit for bit, with a host loop that folds the group's members in group
// order. Run as 1x4, 2x2 and 4x1 (instances x replicas), which therefore agree bit for bit.
#include <gcl/Collectives.hpp>
#include <popdist/popdist_poplar.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr std::size_t n = 8; // elements per replica; divisible by every group size used here

// Replica g's input element i: magnitudes far apart, so a float sum depends on its order.
const float scale[n] = {1.0f, 1e-3f, 1e3f, -2.5f, 0.1f, 7.0f, 1e-6f, 3.25f};
const float offset[n] = {0.5f, 1e4f, -3.0f, 1e-4f, 2.0f, -1e3f, 0.25f, 9.0f};
float inputOf(unsigned g, std::size_t i) {
  volatile float product = static_cast<float>(g + 1) * scale[i]; // no fused multiply-add
  return product + offset[i];
}

// Members of replica g's group, in group order (docs/replication.md).
std::vector<unsigned> members(gcl::CommGroupType type, unsigned k, unsigned G, unsigned g) {
  std::vector<unsigned> m;
  if (type == gcl::CommGroupType::ALL) {
    for (unsigned r = 0; r < G; ++r)
      m.push_back(r);
  } else if (type == gcl::CommGroupType::CONSECUTIVE) {
    for (unsigned r = g / k * k; r < g / k * k + k; ++r)
      m.push_back(r);
  } else {
    const unsigned stride = G / k;
    for (unsigned r = g % stride; r < G; r += stride)
      m.push_back(r);
  }
  return m;
}

} // namespace

int main() {
  const unsigned local = popdist::getNumLocalReplicas();
  const unsigned G = popdist::getNumTotalReplicas();
  const unsigned first = popdist::getReplicaIndexOffset();

  auto manager = poplar::DeviceManager::createDeviceManager();
  poplar::Device device = manager.getDevice(popdist::getDeviceId());
  if (!device.attach()) {
    std::cerr << "cannot attach device " << device.getId() << "\n";
    return 1;
  }
  poplar::Graph graph(device.getTarget(), poplar::replication_factor(local));

  // Each replica's x is written from the host (its global index picks the values); the
  // replication index constant must be the global index too.
  poplar::program::Sequence prog;
  auto x = graph.addVariable(poplar::FLOAT, {n}, "x");
  graph.setTileMapping(x, 0);
  graph.createHostWrite("x", x);
  auto index = graph.addReplicationIndexConstant("index");
  graph.setTileMapping(index, 0);
  auto indexCopy = graph.addVariable(poplar::UNSIGNED_INT, {}, "indexCopy");
  graph.setTileMapping(indexCopy, 0);
  prog.add(poplar::program::Copy(index, indexCopy));
  graph.createHostRead("index", indexCopy);

  struct Check {
    std::string name;
    poplar::Tensor out;
    std::function<std::vector<float>(unsigned g)> expected;
  };
  std::vector<Check> checks;
  using gcl::CollectiveOperator;
  using gcl::CommGroup;
  using gcl::CommGroupType;
  auto reduction = [&](const std::string &name, CollectiveOperator op, CommGroup group) {
    auto out = gcl::allReduceCrossReplica(graph, x, op, prog, group, name);
    checks.push_back({name, out, [=](unsigned g) {
                        auto m = members(group.type, group.replicaGroupSize, G, g);
                        std::vector<float> acc(n);
                        for (std::size_t i = 0; i < n; ++i) {
                          acc[i] = inputOf(m[0], i);
                          for (std::size_t q = 1; q < m.size(); ++q)
                            acc[i] = op == CollectiveOperator::ADD ? acc[i] + inputOf(m[q], i)
                                                                   : std::max(acc[i], inputOf(m[q], i));
                        }
                        return acc;
                      }});
  };
  reduction("allReduce ADD ALL", CollectiveOperator::ADD, CommGroup(CommGroupType::ALL, 0));
  reduction("allReduce MAX CONSECUTIVE 2", CollectiveOperator::MAX, CommGroup(CommGroupType::CONSECUTIVE, 2));
  reduction("allReduce ADD ORTHOGONAL 2", CollectiveOperator::ADD, CommGroup(CommGroupType::ORTHOGONAL, 2));

  auto scattered = gcl::reduceScatterCrossReplica(graph, x, CollectiveOperator::ADD, prog, "reduceScatter");
  checks.push_back({"reduceScatter ADD ALL", scattered, [=](unsigned g) {
                      const std::size_t c = n / G;
                      std::vector<float> part(c);
                      for (std::size_t i = 0; i < c; ++i) {
                        float acc = inputOf(0, g * c + i);
                        for (unsigned r = 1; r < G; ++r)
                          acc += inputOf(r, g * c + i);
                        part[i] = acc;
                      }
                      return part;
                    }});
  auto gathered =
      gcl::allGatherCrossReplica(graph, x, prog, CommGroup(CommGroupType::CONSECUTIVE, 2), "gather");
  checks.push_back({"allGather CONSECUTIVE 2", gathered, [=](unsigned g) {
                      std::vector<float> rows;
                      for (unsigned m : members(CommGroupType::CONSECUTIVE, 2, G, g))
                        for (std::size_t i = 0; i < n; ++i)
                          rows.push_back(inputOf(m, i));
                      return rows;
                    }});
  auto broadcasted = gcl::broadcastCrossReplica(graph, x, prog, CommGroup(), 1, "broadcast");
  checks.push_back({"broadcast root 1", broadcasted, [=](unsigned) {
                      std::vector<float> v(n);
                      for (std::size_t i = 0; i < n; ++i)
                        v[i] = inputOf(1, i);
                      return v;
                    }});
  auto exchanged = gcl::allToAllCrossReplica(graph, x, prog, CommGroup(), "allToAll");
  checks.push_back({"allToAll ALL", exchanged, [=](unsigned g) {
                      // Block q of the result is block p (= g) of replica q.
                      const std::size_t b = n / G;
                      std::vector<float> v(n);
                      for (unsigned q = 0; q < G; ++q)
                        for (std::size_t i = 0; i < b; ++i)
                          v[q * b + i] = inputOf(q, g * b + i);
                      return v;
                    }});
  for (auto &check : checks)
    graph.createHostRead(check.name, check.out);

  poplar::Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> inputs;
  for (unsigned r = 0; r < local; ++r)
    for (std::size_t i = 0; i < n; ++i)
      inputs.push_back(inputOf(first + r, i));
  engine.writeTensor("x", inputs.data(), inputs.data() + inputs.size());
  popdist::run(engine, 0);

  int failures = 0;
  std::vector<unsigned> indices(local);
  engine.readTensor("index", indices.data(), indices.data() + local);
  for (unsigned r = 0; r < local; ++r)
    if (indices[r] != first + r) {
      ++failures;
      std::cerr << "local replica " << r << ": replication index " << indices[r] << ", expected " << first + r
                << "\n";
    }
  for (auto &check : checks) {
    const std::size_t size = check.out.numElements();
    std::vector<float> all(size * local);
    engine.readTensor(check.name, all.data(), all.data() + all.size());
    for (unsigned r = 0; r < local; ++r) {
      const unsigned g = first + r;
      const auto expected = check.expected(g);
      if (expected.size() != size ||
          std::memcmp(expected.data(), all.data() + r * size, size * sizeof(float)) != 0) {
        ++failures;
        std::cerr << "replica " << g << ": " << check.name << " differs from the host fold\n";
      }
    }
  }
  std::cout << "instance " << popdist::getInstanceIndex() << " (replicas " << first << ".."
            << first + local - 1 << " of " << G << "): " << checks.size() << " collectives "
            << (failures ? "FAILED" : "bit-identical") << std::endl;
  return failures == 0 ? 0 : 1;
}
