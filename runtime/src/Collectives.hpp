// Copyright (c) Aspen contributors.
// The collective layer (docs/replication.md): what a Collective step computes,
// and the transport that moves replicas' bytes. Replicas share nothing mutable
// except through this layer and the host streams.
#pragma once

#include "exe/ExecutableData.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace aspen::rt {

/// The replicas of `replica`'s group, in group order (the position in this
/// list is the replica's rank in the group: the root of a broadcast, the
/// block of a reduce-scatter or all-to-all, the row of an all-gather).
///  - All: every replica; Consecutive(k): {0..k-1}, {k..2k-1}, ...;
///  - Orthogonal(k): replicas with the same index modulo R/k, i.e.
///    {i, i + R/k, i + 2R/k, ...} for i < R/k.
std::vector<unsigned> commGroupMembers(std::uint8_t group, unsigned groupSize, unsigned replicationFactor,
                                       unsigned replica);

/// Computes collective `c` for one group: `in[m]` is member m's input
/// (`inBytes` bytes: the source tensor in row-major order), `out[m]` its
/// output (`outBytes`). Reductions fold the members in group order, in float
/// for half (rounded once at the end) and in the element type otherwise, so a
/// result does not depend on thread count or transport.
void computeCollective(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in,
                       std::uint64_t inBytes, const std::vector<std::uint8_t *> &out, std::uint64_t outBytes);

/// Moves collective data between replicas. The engine calls `run` once per
/// collective step, with the buffers of the replicas this process runs
/// (`in[i]`, `out[i]` of local replica i; local replica i is global replica
/// firstLocalReplica() + i), once every local replica has reached the step.
/// It returns when every local output is complete. A transport across
/// processes (MPI) exchanges the remote members' blocks and calls
/// computeCollective the same way, so results are identical bit for bit.
class CollectiveTransport {
public:
  virtual ~CollectiveTransport() = default;
  virtual const char *name() const = 0;
  /// Replicas of the whole job and the global index of the first local one.
  virtual unsigned globalReplicas() const = 0;
  virtual unsigned firstLocalReplica() const = 0;
  virtual void run(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in,
                   std::uint64_t inBytes, const std::vector<std::uint8_t *> &out, std::uint64_t outBytes) = 0;
};

/// All replicas in this process: groups are computed in memory, in parallel.
/// `firstReplica` is the global index of replica 0 (non-zero only for one of several instances
/// whose executable has no collectives: the replicas still know their global index).
class InProcessTransport final : public CollectiveTransport {
public:
  explicit InProcessTransport(unsigned replicas, unsigned firstReplica = 0)
      : replicas_(replicas), firstReplica_(firstReplica) {}
  const char *name() const override { return "in-process"; }
  unsigned globalReplicas() const override { return replicas_; }
  unsigned firstLocalReplica() const override { return firstReplica_; }
  void run(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in, std::uint64_t inBytes,
           const std::vector<std::uint8_t *> &out, std::uint64_t outBytes) override;

private:
  unsigned replicas_;
  unsigned firstReplica_;
};

/// Makes the transport for replicas spread over several processes (libpopdist registers the MPI
/// one when it is loaded: libpoplar itself never depends on MPI).
using DistributedTransportFactory = std::unique_ptr<CollectiveTransport> (*)(unsigned localReplicas,
                                                                             unsigned globalReplicas);
void registerDistributedTransport(DistributedTransportFactory factory);

/// The transport of an engine whose executable has `localReplicas` replicas, chosen at load time
/// (docs/distributed.md): in memory when this process is the only instance (or the executable has
/// no collectives), the registered distributed transport when it is one of several instances.
/// Throws poplar::poplar_error when several instances need collectives and libpopdist is not
/// linked, or the replicas do not match what popdist gives this instance.
std::unique_ptr<CollectiveTransport> makeCollectiveTransport(unsigned localReplicas, bool hasCollectives);

} // namespace aspen::rt
