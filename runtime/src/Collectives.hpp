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
class InProcessTransport final : public CollectiveTransport {
public:
  explicit InProcessTransport(unsigned replicas) : replicas_(replicas) {}
  const char *name() const override { return "in-process"; }
  unsigned globalReplicas() const override { return replicas_; }
  unsigned firstLocalReplica() const override { return 0; }
  void run(const exe::CollectiveInfo &c, const std::vector<const std::uint8_t *> &in, std::uint64_t inBytes,
           const std::vector<std::uint8_t *> &out, std::uint64_t outBytes) override;

private:
  unsigned replicas_;
};

} // namespace aspen::rt
