// Copyright (c) Aspen contributors.
// The collective layer: group membership, the arithmetic of every collective
// and operator, and the in-process transport (docs/replication.md).
#include "Collectives.hpp"

#include "poplar/exceptions.hpp"
#include "util/DistEnvironment.hpp"

#include "DeviceScalar.hpp"
#include "ir/ProgramNode.hpp"
#include "util/Assert.hpp"
#include "util/Half.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace aspen::rt {

using ir::CollectiveKind;
using ir::CollectiveOp;
using ir::CommGroupKind;

std::vector<unsigned> commGroupMembers(std::uint8_t group, unsigned groupSize, unsigned replicationFactor,
                                       unsigned replica) {
  std::vector<unsigned> members;
  const unsigned R = replicationFactor;
  const unsigned k = std::max(1u, groupSize);
  switch (static_cast<CommGroupKind>(group)) {
  case CommGroupKind::All:
    for (unsigned r = 0; r < R; ++r)
      members.push_back(r);
    break;
  case CommGroupKind::Consecutive: {
    const unsigned first = replica / k * k;
    for (unsigned r = first; r < first + k; ++r)
      members.push_back(r);
    break;
  }
  case CommGroupKind::Orthogonal: {
    const unsigned stride = R / k;
    for (unsigned r = replica % stride; r < R; r += stride)
      members.push_back(r);
    break;
  }
  }
  return members;
}

namespace {

/// How one element type is loaded, accumulated and stored.
template <class T> struct Arith {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T,
                                 std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;
  static Acc load(const std::uint8_t *p, std::uint64_t i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    return static_cast<Acc>(v);
  }
  static void store(std::uint8_t *p, std::uint64_t i, Acc a) {
    const T v = static_cast<T>(a);
    std::memcpy(p + i * sizeof(T), &v, sizeof(T));
  }
  static constexpr std::size_t size = sizeof(T);
};

struct HalfTag {};
template <> struct Arith<HalfTag> {
  using Acc = float;
  static Acc load(const std::uint8_t *p, std::uint64_t i) {
    std::uint16_t v;
    std::memcpy(&v, p + i * 2, 2);
    return util::halfToFloat(v);
  }
  static void store(std::uint8_t *p, std::uint64_t i, Acc a) {
    const std::uint16_t v = util::floatToHalf(a);
    std::memcpy(p + i * 2, &v, 2);
  }
  static constexpr std::size_t size = 2;
};

struct BoolTag {};
template <> struct Arith<BoolTag> {
  using Acc = std::int64_t;
  static Acc load(const std::uint8_t *p, std::uint64_t i) { return p[i] != 0; }
  static void store(std::uint8_t *p, std::uint64_t i, Acc a) { p[i] = a != 0; }
  static constexpr std::size_t size = 1;
};

template <CollectiveOp Op, class A> A combine(A a, A b) {
  if constexpr (Op == CollectiveOp::Add || Op == CollectiveOp::Mean || Op == CollectiveOp::SquareAdd) {
    if constexpr (std::is_integral_v<A>) // wraps like the device's integer adds
      return static_cast<A>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
    else
      return a + b;
  } else if constexpr (Op == CollectiveOp::Mul) {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
    else
      return a * b;
  } else if constexpr (Op == CollectiveOp::Min) {
    return b < a ? b : a;
  } else if constexpr (Op == CollectiveOp::Max) {
    return a < b ? b : a;
  } else if constexpr (Op == CollectiveOp::LogicalAnd) {
    return A(a != A(0) && b != A(0));
  } else if constexpr (Op == CollectiveOp::LogicalOr) {
    return A(a != A(0) || b != A(0));
  } else {
    return a; // Local
  }
}

template <CollectiveOp Op, class A> A prepare(A x) {
  if constexpr (Op == CollectiveOp::SquareAdd) {
    if constexpr (std::is_integral_v<A>)
      return static_cast<A>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(x));
    else
      return x * x;
  }
  return x;
}

/// out[i] = fold over members of in[m][first + i], for i < count; the
/// operator is a template argument so that the inner loops vectorise.
template <class T, CollectiveOp Op>
void reduceRangeOp(const std::vector<const std::uint8_t *> &in, std::uint64_t first, std::uint64_t count,
                   std::uint8_t *out) {
  using A = typename Arith<T>::Acc;
  const std::size_t G = in.size();
  constexpr std::uint64_t kBlock = 2048;
  auto body = [&](const tbb::blocked_range<std::uint64_t> &range) {
    A acc[kBlock];
    for (std::uint64_t b = range.begin(); b < range.end(); b += kBlock) {
      const std::uint64_t n = std::min(kBlock, range.end() - b);
      for (std::uint64_t i = 0; i < n; ++i)
        acc[i] = prepare<Op>(Arith<T>::load(in[0], first + b + i));
      for (std::size_t m = 1; m < G; ++m) {
        const std::uint8_t *src = in[m];
        for (std::uint64_t i = 0; i < n; ++i)
          acc[i] = combine<Op>(acc[i], prepare<Op>(Arith<T>::load(src, first + b + i)));
      }
      if constexpr (Op == CollectiveOp::Mean)
        for (std::uint64_t i = 0; i < n; ++i)
          acc[i] = static_cast<A>(acc[i] / static_cast<A>(G));
      for (std::uint64_t i = 0; i < n; ++i)
        Arith<T>::store(out, b + i, acc[i]);
    }
  };
  if (count * G < (1u << 16))
    body(tbb::blocked_range<std::uint64_t>(0, count));
  else
    tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, count, kBlock * 8), body);
}

template <class T>
void reduceRange(CollectiveOp op, const std::vector<const std::uint8_t *> &in, std::uint64_t first,
                 std::uint64_t count, std::uint8_t *out) {
  switch (op) {
  case CollectiveOp::Add:
    return reduceRangeOp<T, CollectiveOp::Add>(in, first, count, out);
  case CollectiveOp::Mean:
    return reduceRangeOp<T, CollectiveOp::Mean>(in, first, count, out);
  case CollectiveOp::Mul:
    return reduceRangeOp<T, CollectiveOp::Mul>(in, first, count, out);
  case CollectiveOp::Min:
    return reduceRangeOp<T, CollectiveOp::Min>(in, first, count, out);
  case CollectiveOp::Max:
    return reduceRangeOp<T, CollectiveOp::Max>(in, first, count, out);
  case CollectiveOp::LogicalAnd:
    return reduceRangeOp<T, CollectiveOp::LogicalAnd>(in, first, count, out);
  case CollectiveOp::LogicalOr:
    return reduceRangeOp<T, CollectiveOp::LogicalOr>(in, first, count, out);
  case CollectiveOp::SquareAdd:
    return reduceRangeOp<T, CollectiveOp::SquareAdd>(in, first, count, out);
  case CollectiveOp::Local:
    return reduceRangeOp<T, CollectiveOp::Local>(in, first, count, out);
  }
}

/// Copies `bytes` from `src` to every other output, in parallel when large.
void copyToOthers(const std::vector<std::uint8_t *> &out, std::uint64_t bytes) {
  if (out.size() < 2)
    return;
  if (bytes * out.size() < (std::uint64_t(1) << 20)) {
    for (std::size_t m = 1; m < out.size(); ++m)
      std::memcpy(out[m], out[0], bytes);
    return;
  }
  constexpr std::uint64_t kPiece = 1 << 20;
  const std::uint64_t pieces = (bytes + kPiece - 1) / kPiece;
  tbb::parallel_for(std::uint64_t(0), pieces * (out.size() - 1), [&](std::uint64_t k) {
    const std::uint64_t m = 1 + k / pieces, at = (k % pieces) * kPiece;
    std::memcpy(out[m] + at, out[0] + at, std::min(kPiece, bytes - at));
  });
}

template <class T>
void computeTyped(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in,
                  std::uint64_t inBytes, const std::vector<std::uint8_t *> &out, std::uint64_t outBytes) {
  const std::size_t G = in.size();
  const std::uint64_t elem = Arith<T>::size;
  const std::uint64_t n = inBytes / elem;
  const auto op = static_cast<CollectiveOp>(c.op);
  switch (static_cast<CollectiveKind>(c.kind)) {
  case CollectiveKind::AllReduce:
    if (op == CollectiveOp::Local) {
      for (std::size_t m = 0; m < G; ++m)
        std::memcpy(out[m], in[m], inBytes);
      return;
    }
    reduceRange<T>(op, in, 0, n, out[0]);
    copyToOthers(out, outBytes);
    return;
  case CollectiveKind::ReduceScatter: {
    const std::uint64_t chunk = outBytes / elem;
    for (std::size_t p = 0; p < G; ++p) {
      const std::uint64_t first = std::min<std::uint64_t>(n, p * chunk);
      const std::uint64_t count = std::min<std::uint64_t>(n, first + chunk) - first;
      std::memset(out[p], 0, outBytes); // padding beyond the input is zero
      if (op == CollectiveOp::Local)
        std::memcpy(out[p], in[p] + first * elem, count * elem);
      else
        reduceRange<T>(op, in, first, count, out[p]);
    }
    return;
  }
  case CollectiveKind::AllGather:
    for (std::size_t m = 0; m < G; ++m)
      for (std::size_t q = 0; q < G; ++q)
        std::memcpy(out[m] + q * inBytes, in[q], inBytes);
    return;
  case CollectiveKind::AllToAll: {
    const std::uint64_t block = inBytes / G;
    for (std::size_t p = 0; p < G; ++p)
      for (std::size_t q = 0; q < G; ++q)
        std::memcpy(out[p] + q * block, in[q] + p * block, block);
    return;
  }
  case CollectiveKind::Broadcast:
    for (std::size_t m = 0; m < G; ++m)
      std::memcpy(out[m], in[c.root], inBytes);
    return;
  case CollectiveKind::AllReduceWithin: // the replica set maps these to their cross-replica kind
  case CollectiveKind::ReduceScatterWithin:
  case CollectiveKind::AllGatherWithin:
    break;
  }
  ASPEN_ASSERT(false, "a within-replica collective reached computeCollective unmapped");
}

} // namespace

void computeCollective(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in,
                       std::uint64_t inBytes, const std::vector<std::uint8_t *> &out,
                       std::uint64_t outBytes) {
  ASPEN_ASSERT(in.size() == out.size() && !in.empty(), "one input and one output per group member");
  using Id = poplar::Type::Id;
  switch (c.type) {
  case Id::Float:
    return computeTyped<float>(c, in, inBytes, out, outBytes);
  case Id::Half:
    return computeTyped<HalfTag>(c, in, inBytes, out, outBytes);
  case Id::Double:
    return computeTyped<double>(c, in, inBytes, out, outBytes);
  case Id::Int:
    return computeTyped<std::int32_t>(c, in, inBytes, out, outBytes);
  case Id::UnsignedInt:
    return computeTyped<std::uint32_t>(c, in, inBytes, out, outBytes);
  case Id::Short:
    return computeTyped<std::int16_t>(c, in, inBytes, out, outBytes);
  case Id::UnsignedShort:
    return computeTyped<std::uint16_t>(c, in, inBytes, out, outBytes);
  case Id::Char:
  case Id::SignedChar:
    return computeTyped<std::int8_t>(c, in, inBytes, out, outBytes);
  case Id::UnsignedChar:
    return computeTyped<std::uint8_t>(c, in, inBytes, out, outBytes);
  case Id::Bool:
    return computeTyped<BoolTag>(c, in, inBytes, out, outBytes);
  case Id::Long:
  case Id::LongLong:
    return computeTyped<std::int64_t>(c, in, inBytes, out, outBytes);
  case Id::UnsignedLong:
  case Id::UnsignedLongLong:
    return computeTyped<std::uint64_t>(c, in, inBytes, out, outBytes);
  default: // data movement only: any type of a known size
    ASPEN_ASSERT(c.kind == static_cast<std::uint8_t>(CollectiveKind::AllGather) ||
                     c.kind == static_cast<std::uint8_t>(CollectiveKind::AllToAll) ||
                     c.kind == static_cast<std::uint8_t>(CollectiveKind::Broadcast),
                 "reduction of an unsupported type (rejected by libgcl)");
    return computeTyped<std::uint8_t>(c, in, inBytes, out, outBytes);
  }
}

void InProcessTransport::run(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in,
                             std::uint64_t inBytes, const std::vector<std::uint8_t *> &out,
                             std::uint64_t outBytes) {
  // Groups partition the replicas; each is computed on its own.
  std::vector<std::vector<unsigned>> groups;
  std::vector<bool> done(replicas_, false);
  for (unsigned r = 0; r < replicas_; ++r)
    if (!done[r]) {
      groups.push_back(commGroupMembers(c.group, c.groupSize, replicas_, r));
      for (unsigned m : groups.back())
        done[m] = true;
    }
  tbb::parallel_for(std::size_t(0), groups.size(), [&](std::size_t g) {
    std::vector<const std::uint8_t *> gin;
    std::vector<std::uint8_t *> gout;
    for (unsigned m : groups[g]) {
      gin.push_back(in[m]);
      gout.push_back(out[m]);
    }
    computeCollective(c, gin, inBytes, gout, outBytes);
  });
}

namespace {
DistributedTransportFactory distributedTransportFactory = nullptr;
} // namespace

void registerDistributedTransport(DistributedTransportFactory factory) {
  distributedTransportFactory = factory;
}

std::unique_ptr<CollectiveTransport> makeCollectiveTransport(unsigned localReplicas, bool hasCollectives) {
  const dist::DistEnvironment &env = dist::distEnvironment();
  if (env.numInstances == 1)
    return std::make_unique<InProcessTransport>(localReplicas);
  // One of several instances: its replicas have global indices from popdist's offset when the
  // graph was made for popdist's local replicas.
  const unsigned first = env.numLocalReplicas == localReplicas ? env.replicaIndexOffset : 0;
  if (!hasCollectives)
    return std::make_unique<InProcessTransport>(localReplicas, first);
  const unsigned global = dist::globalReplicationFactor(localReplicas, "Engine::load");
  if (distributedTransportFactory == nullptr)
    throw poplar::poplar_error(
        "Engine::load: this program runs as instance " + std::to_string(env.instanceIndex) + " of " +
        std::to_string(env.numInstances) +
        " and its executable has collectives between replicas, which need the MPI "
        "transport of libpopdist: link the program with -lpopdist (CMake: Aspen::popdist)");
  return distributedTransportFactory(localReplicas, global);
}

} // namespace aspen::rt
