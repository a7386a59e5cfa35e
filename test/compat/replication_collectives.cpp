// Copyright (c) Aspen contributors.
// GCL collectives (gcl/Collectives.hpp) on replicated graphs, checked against a
// plain host loop for every operator, every CommGroup kind, float, half, int
// and bool; the reduce-scatter + all-gather round trip of replicated tensor
// sharding; all-to-all, broadcast and popops' older replicatedAllReduce.
#include <catch2/catch.hpp>
#include <gcl/Collectives.hpp>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/Collectives.hpp>
#include <poputil/TileMapping.hpp>

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

using namespace poplar;
using gcl::CollectiveOperator;
using gcl::CommGroup;
using gcl::CommGroupType;

namespace {

Device replicaDevice(unsigned ipus, unsigned tiles = 4) {
  IPUModel model;
  model.numIPUs = ipus;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

/// The members of `replica`'s group, in group order (written from the GCL
/// definitions, independently of the runtime).
std::vector<unsigned> members(const CommGroup &g, unsigned R, unsigned replica) {
  std::vector<unsigned> m;
  const unsigned k = g.type == CommGroupType::ALL ? R : g.replicaGroupSize;
  if (g.type == CommGroupType::ALL) {
    for (unsigned r = 0; r < R; ++r)
      m.push_back(r);
  } else if (g.type == CommGroupType::CONSECUTIVE) {
    for (unsigned r = 0; r < R; ++r)
      if (r / k == replica / k)
        m.push_back(r);
  } else {
    for (unsigned r = 0; r < R; ++r)
      if (r % (R / k) == replica % (R / k))
        m.push_back(r);
  }
  return m;
}

/// Bytes of one replica's input and output, per replica, through host handles.
struct Run {
  std::vector<std::uint8_t> out; // R * outBytes
};

/// Builds `in` ({n} of `type`, spread over the tiles), applies `build`, runs
/// on R replicas with `inputs` (R * n elements of host bytes) and returns
/// every replica's output bytes.
std::vector<std::uint8_t>
runOnReplicas(unsigned R, const Type &type, std::size_t n,
              const std::function<Tensor(Graph &, const Tensor &, program::Sequence &)> &build,
              const std::vector<std::uint8_t> &inputs, std::size_t outElems, std::size_t elemBytes) {
  Device device = replicaDevice(R);
  Graph graph(device.getTarget(), replication_factor(R));
  Tensor in = graph.addVariable(type, {n}, "in");
  poputil::mapTensorLinearly(graph, in);
  program::Sequence prog;
  Tensor out = build(graph, in, prog);
  REQUIRE(out.numElements() == outElems);
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);
  Engine engine(graph, prog);
  engine.load(device);
  REQUIRE(inputs.size() == R * n * elemBytes);
  engine.writeTensor("in", inputs.data(), inputs.data() + inputs.size());
  engine.run(0);
  std::vector<std::uint8_t> result(R * outElems * elemBytes);
  engine.readTensor("out", result.data(), result.data() + result.size());
  return result;
}

template <class T> std::vector<std::uint8_t> bytesOf(const std::vector<T> &v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <class T> std::vector<T> valuesOf(const std::vector<std::uint8_t> &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

/// Host reference of a reduction of a (acc, x) in the accumulator type.
template <class A> A refCombine(CollectiveOperator op, A acc, A x) {
  switch (op) {
  case CollectiveOperator::ADD:
  case CollectiveOperator::MEAN:
  case CollectiveOperator::SQUARE_ADD:
    return acc + x;
  case CollectiveOperator::MUL:
    return acc * x;
  case CollectiveOperator::MIN:
    return x < acc ? x : acc;
  case CollectiveOperator::MAX:
    return acc < x ? x : acc;
  case CollectiveOperator::LOGICAL_AND:
    return A(acc != A(0) && x != A(0));
  case CollectiveOperator::LOGICAL_OR:
    return A(acc != A(0) || x != A(0));
  case CollectiveOperator::LOCAL:
    return acc;
  }
  return acc;
}

/// Expected all-reduce of `in` (R rows of n values, as accumulator values).
template <class A>
std::vector<A> refAllReduce(const std::vector<A> &in, unsigned R, std::size_t n, CollectiveOperator op,
                            const CommGroup &g) {
  std::vector<A> out(R * n);
  for (unsigned r = 0; r < R; ++r) {
    const auto m = members(g, R, r);
    for (std::size_t e = 0; e < n; ++e) {
      if (op == CollectiveOperator::LOCAL) {
        out[r * n + e] = in[r * n + e];
        continue;
      }
      auto pre = [&](A x) { return op == CollectiveOperator::SQUARE_ADD ? A(x * x) : x; };
      A acc = pre(in[m[0] * n + e]);
      for (std::size_t i = 1; i < m.size(); ++i)
        acc = refCombine(op, acc, pre(in[m[i] * n + e]));
      if (op == CollectiveOperator::MEAN)
        acc = acc / A(m.size());
      out[r * n + e] = acc;
    }
  }
  return out;
}

const std::vector<CommGroup> &groupsOf4() {
  static const std::vector<CommGroup> groups = {
      CommGroup(), CommGroup(CommGroupType::ALL, 4), CommGroup(CommGroupType::CONSECUTIVE, 2),
      CommGroup(CommGroupType::ORTHOGONAL, 2), CommGroup(CommGroupType::CONSECUTIVE, 1)};
  return groups;
}

Tensor allReduce(Graph &g, const Tensor &in, program::Sequence &p, CollectiveOperator op,
                 const CommGroup &group) {
  return gcl::allReduceCrossReplica(g, in, op, p, group, "allReduce");
}

} // namespace

TEST_CASE("allReduceCrossReplica: every operator and CommGroup on float", "[replication][gcl]") {
  const unsigned R = 4;
  const std::size_t n = 37;
  std::vector<float> in(R * n);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = float((i * 7919) % 23) * 0.25f - 2.0f;
  for (CollectiveOperator op :
       {CollectiveOperator::ADD, CollectiveOperator::MEAN, CollectiveOperator::MUL, CollectiveOperator::MIN,
        CollectiveOperator::MAX, CollectiveOperator::SQUARE_ADD, CollectiveOperator::LOCAL}) {
    for (const CommGroup &group : groupsOf4()) {
      INFO("operator " << op << ", group type " << int(group.type) << " size " << group.replicaGroupSize);
      auto out = valuesOf<float>(runOnReplicas(
          R, FLOAT, n,
          [&](Graph &g, const Tensor &t, program::Sequence &p) { return allReduce(g, t, p, op, group); },
          bytesOf(in), n, 4));
      CHECK(out == refAllReduce<float>(in, R, n, op, group));
    }
  }
}

TEST_CASE("allReduceCrossReplica on half, int and bool", "[replication][gcl]") {
  const unsigned R = 4;
  const std::size_t n = 21;
  Device d = replicaDevice(1);
  const Target &target = d.getTarget();
  SECTION("half: ADD, MEAN, MAX, SQUARE_ADD (float accumulation, one rounding)") {
    std::vector<float> in(R * n);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = float(int(i % 13) - 6) * 0.125f;
    std::vector<std::uint16_t> halves(in.size());
    copyFloatToDeviceHalf(target, in.data(), halves.data(), in.size());
    std::vector<float> rounded(in.size());
    copyDeviceHalfToFloat(target, halves.data(), rounded.data(), in.size());
    for (CollectiveOperator op : {CollectiveOperator::ADD, CollectiveOperator::MEAN, CollectiveOperator::MAX,
                                  CollectiveOperator::SQUARE_ADD}) {
      for (const CommGroup &group : groupsOf4()) {
        auto bytes = runOnReplicas(
            R, HALF, n,
            [&](Graph &g, const Tensor &t, program::Sequence &p) { return allReduce(g, t, p, op, group); },
            bytesOf(halves), n, 2);
        std::vector<float> got(R * n);
        copyDeviceHalfToFloat(target, bytes.data(), got.data(), got.size());
        std::vector<float> want = refAllReduce<float>(rounded, R, n, op, group);
        std::vector<std::uint16_t> wantHalf(want.size());
        copyFloatToDeviceHalf(target, want.data(), wantHalf.data(), want.size());
        copyDeviceHalfToFloat(target, wantHalf.data(), want.data(), want.size());
        INFO("operator " << op);
        CHECK(got == want);
      }
    }
  }
  SECTION("int: ADD, MUL, MIN, MAX, MEAN, SQUARE_ADD") {
    std::vector<std::int32_t> in(R * n);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = std::int32_t((i * 31) % 17) - 8;
    for (CollectiveOperator op :
         {CollectiveOperator::ADD, CollectiveOperator::MUL, CollectiveOperator::MIN, CollectiveOperator::MAX,
          CollectiveOperator::MEAN, CollectiveOperator::SQUARE_ADD}) {
      for (const CommGroup &group : groupsOf4()) {
        auto out = valuesOf<std::int32_t>(runOnReplicas(
            R, INT, n,
            [&](Graph &g, const Tensor &t, program::Sequence &p) { return allReduce(g, t, p, op, group); },
            bytesOf(in), n, 4));
        std::vector<std::int64_t> wide(in.begin(), in.end());
        auto want64 = refAllReduce<std::int64_t>(wide, R, n, op, group);
        std::vector<std::int32_t> want(want64.begin(), want64.end());
        INFO("operator " << op);
        CHECK(out == want);
      }
    }
  }
  SECTION("bool: LOGICAL_AND, LOGICAL_OR") {
    std::vector<std::uint8_t> in(R * n);
    for (std::size_t i = 0; i < in.size(); ++i)
      in[i] = (i % 3 == 0 || i % 5 == 1) ? 1 : 0;
    for (CollectiveOperator op : {CollectiveOperator::LOGICAL_AND, CollectiveOperator::LOGICAL_OR}) {
      for (const CommGroup &group : groupsOf4()) {
        auto out = runOnReplicas(
            R, BOOL, n,
            [&](Graph &g, const Tensor &t, program::Sequence &p) { return allReduce(g, t, p, op, group); },
            in, n, 1);
        std::vector<int> wide(in.begin(), in.end());
        auto want = refAllReduce<int>(wide, R, n, op, group);
        CHECK(std::vector<int>(out.begin(), out.end()) == want);
      }
    }
  }
}

TEST_CASE("reduceScatter then allGather round-trips replicated tensor sharding", "[replication][gcl]") {
  const unsigned R = 4;
  const std::size_t n = 30; // not a multiple of 4: the last shard is zero-padded
  std::vector<float> in(R * n);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = float(i % 11) + 0.5f * float(i / n);
  for (const CommGroup &group : groupsOf4()) {
    const unsigned G = group.type == CommGroupType::ALL ? R : group.replicaGroupSize;
    const std::size_t c = (n + G - 1) / G;
    // The shards alone.
    auto shards = valuesOf<float>(runOnReplicas(
        R, FLOAT, n,
        [&](Graph &g, const Tensor &t, program::Sequence &p) {
          return gcl::reduceScatterCrossReplica(g, t, CollectiveOperator::ADD, p, group, "rs");
        },
        bytesOf(in), c, 4));
    auto sum = refAllReduce<float>(in, R, n, CollectiveOperator::ADD, group);
    for (unsigned r = 0; r < R; ++r) {
      const auto m = members(group, R, r);
      const std::size_t pos = std::find(m.begin(), m.end(), r) - m.begin();
      for (std::size_t e = 0; e < c; ++e) {
        const std::size_t src = pos * c + e;
        CHECK(shards[r * c + e] == (src < n ? sum[r * n + src] : 0.0f));
      }
    }
    // Scatter then gather: every replica holds the group's full reduction (plus padding).
    auto gathered = valuesOf<float>(runOnReplicas(
        R, FLOAT, n,
        [&](Graph &g, const Tensor &t, program::Sequence &p) {
          Tensor shard = gcl::reduceScatterCrossReplica(g, t, CollectiveOperator::ADD, p, group, "rs");
          return gcl::allGatherCrossReplica(g, shard, p, group, "ag");
        },
        bytesOf(in), G * c, 4));
    for (unsigned r = 0; r < R; ++r)
      for (std::size_t e = 0; e < G * c; ++e)
        CHECK(gathered[r * G * c + e] == (e < n ? sum[r * n + e] : 0.0f));
  }
}

TEST_CASE("allGather, allToAll and broadcast move each replica's data", "[replication][gcl]") {
  const unsigned R = 4;
  const std::size_t n = 8;
  std::vector<std::int32_t> in(R * n);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = std::int32_t(100 * (i / n) + i % n);
  for (const CommGroup &group : groupsOf4()) {
    const unsigned G = group.type == CommGroupType::ALL ? R : group.replicaGroupSize;
    auto gathered = valuesOf<std::int32_t>(runOnReplicas(
        R, INT, n,
        [&](Graph &g, const Tensor &t, program::Sequence &p) {
          return gcl::allGatherCrossReplica(g, t, p, group);
        },
        bytesOf(in), G * n, 4));
    auto all = valuesOf<std::int32_t>(runOnReplicas(
        R, INT, n,
        [&](Graph &g, const Tensor &t, program::Sequence &p) {
          return gcl::allToAllCrossReplica(g, t, p, group);
        },
        bytesOf(in), n, 4));
    const unsigned root = G - 1;
    auto bcast = valuesOf<std::int32_t>(runOnReplicas(
        R, INT, n,
        [&](Graph &g, const Tensor &t, program::Sequence &p) {
          return gcl::broadcastCrossReplica(g, t, p, group, root);
        },
        bytesOf(in), n, 4));
    for (unsigned r = 0; r < R; ++r) {
      const auto m = members(group, R, r);
      const std::size_t pos = std::find(m.begin(), m.end(), r) - m.begin();
      const std::size_t block = n / G;
      for (unsigned q = 0; q < G; ++q)
        for (std::size_t e = 0; e < n; ++e)
          CHECK(gathered[(r * G + q) * n + e] == in[m[q] * n + e]);
      for (unsigned q = 0; q < G; ++q)
        for (std::size_t e = 0; e < block; ++e)
          CHECK(all[r * n + q * block + e] == in[m[q] * n + pos * block + e]);
      for (std::size_t e = 0; e < n; ++e)
        CHECK(bcast[r * n + e] == in[m[root] * n + e]);
    }
  }
}

TEST_CASE("In-place, to-destination and popops forms give the same all-reduce", "[replication][gcl]") {
  const unsigned R = 2;
  const std::size_t n = 16;
  std::vector<float> in(R * n);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = float(i) * 0.5f;
  const auto want = refAllReduce<float>(in, R, n, CollectiveOperator::ADD, CommGroup());
  auto inPlace = valuesOf<float>(runOnReplicas(
      R, FLOAT, n,
      [&](Graph &g, const Tensor &t, program::Sequence &p) {
        Tensor x = t;
        gcl::allReduceInPlaceCrossReplica(g, x, CollectiveOperator::ADD, p);
        return x;
      },
      bytesOf(in), n, 4));
  auto toDest = valuesOf<float>(runOnReplicas(
      R, FLOAT, n,
      [&](Graph &g, const Tensor &t, program::Sequence &p) {
        Tensor out = g.clone(t, "out");
        gcl::allReduceToDestinationCrossReplica(g, t, out, CollectiveOperator::ADD, p);
        return out;
      },
      bytesOf(in), n, 4));
  auto legacy = valuesOf<float>(runOnReplicas(
      R, FLOAT, n,
      [&](Graph &g, const Tensor &t, program::Sequence &p) {
        return popops::replicatedAllReduce(g, t, popops::Operation::ADD, p, "legacy");
      },
      bytesOf(in), n, 4));
  CHECK(inPlace == want);
  CHECK(toDest == want);
  CHECK(legacy == want);
}

TEST_CASE("Collective results do not depend on the host thread count", "[replication][gcl]") {
  const unsigned R = 8;
  const std::size_t n = 4096;
  std::vector<float> in(R * n);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = float((i * 2654435761u) % 1000) * 1e-3f;
  auto once = [&](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return runOnReplicas(
        R, FLOAT, n,
        [&](Graph &g, const Tensor &t, program::Sequence &p) {
          return gcl::allReduceCrossReplica(g, t, CollectiveOperator::ADD, p);
        },
        bytesOf(in), n, 4);
  };
  const auto one = once(1);
  const auto two = once(2);
  CHECK(one == two);
  CHECK(valuesOf<float>(one) == refAllReduce<float>(in, R, n, CollectiveOperator::ADD, CommGroup()));
}
