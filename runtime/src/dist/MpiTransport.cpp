// The replicas' collective transport across instances (docs/distributed.md), registered with the
// runtime when libpopdist is loaded. Results are computed by the same computeCollective as the
// in-process transport, folding members in group order, so they are bit-identical to one process
// running all the replicas, whatever the split into instances.
//  - All-reduce (element-wise): instance k folds elements chunk k of every group
//    (MPI_Ialltoallv of the replicas' chunks), then the folded chunks are gathered
//    (MPI_Iallgatherv): a ring all-reduce's traffic.
//  - Every other collective: every instance gathers every replica's input (MPI_Iallgather) and
//    computes the groups that hold its replicas.
#include "Collectives.hpp"
#include "DeviceScalar.hpp"
#include "dist/MpiSupport.hpp"
#include "ir/ProgramNode.hpp"
#include "util/DistEnvironment.hpp"

#include "poplar/exceptions.hpp"

#include <tbb/parallel_for.h>

#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace aspen::dist {
namespace {

constexpr const char *kWhat = "collective between instances";

class MpiTransport final : public rt::CollectiveTransport {
public:
  MpiTransport(unsigned localReplicas, unsigned globalReplicas)
      : local_(localReplicas), global_(globalReplicas), first_(distEnvironment().replicaIndexOffset) {
    const DistEnvironment &env = distEnvironment();
    // Instance k's replicas are block k of the gathered inputs.
    if (first_ != env.instanceIndex * local_ || global_ != env.numInstances * local_)
      throw poplar::poplar_error("Engine::load: collectives between instances need every instance to own the "
                                 "same number of consecutive replicas in instance order; instance " +
                                 std::to_string(env.instanceIndex) + " owns replicas from " +
                                 std::to_string(first_) + " of " + std::to_string(global_));
  }

  const char *name() const override { return "mpi"; }
  unsigned globalReplicas() const override { return global_; }
  unsigned firstLocalReplica() const override { return first_; }

  void run(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in, std::uint64_t inBytes,
           const std::vector<std::uint8_t *> &out, std::uint64_t outBytes) override {
    if (c.groupSize == 0 || global_ % c.groupSize != 0)
      fail(kWhat, "collective '" + c.name + "' has groups of " + std::to_string(c.groupSize) +
                      " replicas, which do not divide the " + std::to_string(global_) +
                      " replicas of the job");
    if (inBytes > static_cast<std::uint64_t>(INT_MAX))
      fail(kWhat, "collective '" + c.name + "' moves " + std::to_string(inBytes) +
                      " bytes per replica, more than one MPI call carries (2 GiB)");
    agreeOn(c, inBytes);
    if (c.kind == static_cast<std::uint8_t>(ir::CollectiveKind::AllReduce) && inBytes == outBytes &&
        allReduceByChunks(c, in, inBytes, out))
      return;
    std::vector<std::uint8_t> all(global_ * inBytes);
    for (unsigned r = 0; r < local_; ++r)
      if (inBytes != 0)
        std::memcpy(all.data() + (first_ + r) * inBytes, in[r], inBytes);
    if (inBytes != 0) {
      std::lock_guard<std::mutex> lock(mpiMutex());
      ensureMpi(kWhat);
      MPI_Datatype replicaBlock;
      check(MPI_Type_contiguous(static_cast<int>(inBytes), MPI_BYTE, &replicaBlock), kWhat);
      check(MPI_Type_commit(&replicaBlock), kWhat);
      MPI_Request request;
      const int code = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(),
                                      static_cast<int>(local_), replicaBlock, MPI_COMM_WORLD, &request);
      MPI_Type_free(&replicaBlock);
      check(code, kWhat);
      wait(request, kWhat);
    }
    // The groups holding a local replica, each computed once; members on other instances write to
    // scratch (their own instance computes the same bits for them).
    std::vector<std::vector<unsigned>> groups;
    std::vector<bool> done(local_, false);
    for (unsigned r = 0; r < local_; ++r) {
      if (done[r])
        continue;
      groups.push_back(rt::commGroupMembers(c.group, c.groupSize, global_, first_ + r));
      for (unsigned m : groups.back())
        if (m >= first_ && m < first_ + local_)
          done[m - first_] = true;
    }
    tbb::parallel_for(std::size_t(0), groups.size(), [&](std::size_t g) {
      std::vector<const std::uint8_t *> gin;
      std::vector<std::uint8_t *> gout;
      std::vector<std::unique_ptr<std::uint8_t[]>> scratch;
      for (unsigned m : groups[g]) {
        gin.push_back(all.data() + std::uint64_t(m) * inBytes);
        if (m >= first_ && m < first_ + local_) {
          gout.push_back(out[m - first_]);
        } else {
          scratch.push_back(std::make_unique<std::uint8_t[]>(outBytes));
          gout.push_back(scratch.back().get());
        }
      }
      rt::computeCollective(c, gin, inBytes, gout, outBytes);
    });
  }

private:
  // Every instance shows the others which collective it runs (popdist's agreement): instances
  // whose programs differ, or one that ended, fail at once on every side naming both calls,
  // instead of exchanging bytes of different collectives or waiting for the deadline.
  void agreeOn(const exe::CollectiveInfo &c, std::uint64_t inBytes) {
    CallDescriptor mine{CallKind::ReplicaCollective};
    mine.type = static_cast<std::uint32_t>(c.type);
    mine.op = c.kind | std::uint32_t(c.op) << 8 | std::uint32_t(c.group) << 16;
    mine.root = c.root;
    mine.count = inBytes;
    mine.groupSize = c.groupSize;
    const std::string what = "collective '" + c.name + "' between instances";
    std::lock_guard<std::mutex> lock(mpiMutex());
    ensureMpi(what.c_str());
    agree(what.c_str(), mine);
  }

  // The element-wise all-reduce, chunked over instances; false when a count does not fit MPI's int
  // (the caller then takes the general path).
  bool allReduceByChunks(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in,
                         std::uint64_t bytes, const std::vector<std::uint8_t *> &out) {
    const DistEnvironment &env = distEnvironment();
    const std::uint64_t instances = env.numInstances, me = env.instanceIndex;
    const std::uint64_t elem = rt::deviceTypeSize(c.type), elements = bytes / elem;
    std::vector<std::uint64_t> lo(instances + 1);
    for (std::uint64_t k = 0; k <= instances; ++k)
      lo[k] = elements * k / instances * elem; // chunk k: bytes [lo[k], lo[k+1])
    // Every group of the job, in order of its first member.
    std::vector<std::vector<unsigned>> groups;
    std::vector<unsigned> groupOf(global_, ~0u);
    for (unsigned g = 0; g < global_; ++g)
      if (groupOf[g] == ~0u) {
        groups.push_back(rt::commGroupMembers(c.group, c.groupSize, global_, g));
        for (unsigned m : groups.back())
          groupOf[m] = static_cast<unsigned>(groups.size() - 1);
      }
    const std::uint64_t numGroups = groups.size(), mine = lo[me + 1] - lo[me];
    auto fits = [](std::uint64_t n) { return n <= static_cast<std::uint64_t>(INT_MAX); };
    if (!fits(local_ * bytes) || !fits(global_ * mine) || !fits(numGroups * bytes))
      return false;

    // 1. Chunk k of every local replica goes to instance k; from each instance we receive its
    //    replicas' chunk `me`, so `received` holds chunk `me` of replica 0, 1, ..., global-1.
    std::vector<int> sendCounts(instances), sendStarts(instances), recvCounts(instances),
        recvStarts(instances);
    send_.resize(local_ * bytes);
    std::uint64_t at = 0;
    for (std::uint64_t k = 0; k < instances; ++k) {
      sendStarts[k] = static_cast<int>(at);
      for (unsigned r = 0; r < local_; ++r) {
        std::memcpy(send_.data() + at, in[r] + lo[k], lo[k + 1] - lo[k]);
        at += lo[k + 1] - lo[k];
      }
      sendCounts[k] = static_cast<int>(at - sendStarts[k]);
      recvCounts[k] = static_cast<int>(local_ * mine);
      recvStarts[k] = static_cast<int>(k * local_ * mine);
    }
    received_.resize(global_ * mine);
    exchange([&](MPI_Request &request) {
      return MPI_Ialltoallv(send_.data(), sendCounts.data(), sendStarts.data(), MPI_BYTE, received_.data(),
                            recvCounts.data(), recvStarts.data(), MPI_BYTE, MPI_COMM_WORLD, &request);
    });

    // 2. Fold chunk `me` of every group; each member's output goes to its own scratch block.
    scratch_.resize(global_ * mine);
    tbb::parallel_for(std::size_t(0), groups.size(), [&](std::size_t q) {
      std::vector<const std::uint8_t *> gin;
      std::vector<std::uint8_t *> gout;
      for (unsigned m : groups[q]) {
        gin.push_back(received_.data() + m * mine);
        gout.push_back(scratch_.data() + m * mine);
      }
      rt::computeCollective(c, gin, mine, gout, mine);
    });
    // 3. Gather every instance's folded chunks of every group: [instance k][group q] chunk k.
    send_.resize(numGroups * mine);
    for (std::uint64_t q = 0; q < numGroups; ++q)
      std::memcpy(send_.data() + q * mine, scratch_.data() + groups[q][0] * mine, mine);
    for (std::uint64_t k = 0; k < instances; ++k) {
      recvCounts[k] = static_cast<int>(numGroups * (lo[k + 1] - lo[k]));
      recvStarts[k] = static_cast<int>(numGroups * lo[k]);
    }
    received_.resize(numGroups * bytes);
    exchange([&](MPI_Request &request) {
      return MPI_Iallgatherv(send_.data(), static_cast<int>(numGroups * mine), MPI_BYTE, received_.data(),
                             recvCounts.data(), recvStarts.data(), MPI_BYTE, MPI_COMM_WORLD, &request);
    });
    for (unsigned r = 0; r < local_; ++r) {
      const unsigned q = groupOf[first_ + r];
      for (std::uint64_t k = 0; k < instances; ++k) {
        const std::uint64_t size = lo[k + 1] - lo[k];
        std::memcpy(out[r] + lo[k], received_.data() + numGroups * lo[k] + q * size, size);
      }
    }
    return true;
  }

  template <typename Start> void exchange(Start start) {
    std::lock_guard<std::mutex> lock(mpiMutex());
    ensureMpi(kWhat);
    MPI_Request request;
    check(start(request), kWhat);
    wait(request, kWhat);
  }

  // Buffers kept between steps: a collective runs every iteration of a training loop.
  std::vector<std::uint8_t> send_, received_, scratch_;
  unsigned local_;
  unsigned global_;
  unsigned first_;
};

std::unique_ptr<rt::CollectiveTransport> makeMpiTransport(unsigned localReplicas, unsigned globalReplicas) {
  return std::make_unique<MpiTransport>(localReplicas, globalReplicas);
}

// Loading libpopdist makes engines of several instances use MPI for their collectives.
[[maybe_unused]] const bool registered = (rt::registerDistributedTransport(&makeMpiTransport), true);

} // namespace
} // namespace aspen::dist
