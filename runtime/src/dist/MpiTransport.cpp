// The replicas' collective transport across instances (docs/distributed.md), registered with the
// runtime when libpopdist is loaded. Every instance gathers every replica's input of the step
// (MPI_Iallgather), then computes the groups that hold its own replicas with the same
// computeCollective as the in-process transport, folding members in group order: the results are
// bit-identical to one process running all the replicas, whatever the split into instances.
#include "Collectives.hpp"
#include "dist/MpiSupport.hpp"
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
