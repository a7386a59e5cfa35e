// Copyright (c) Aspen contributors.
// The replicas an engine runs (docs/replication.md): each has its own tile
// memory, stream connections, remote buffers and executor; they run side by
// side on the TBB threads and meet only at collective steps.
#pragma once

#include "Collectives.hpp"
#include "ExecutionProfile.hpp"
#include "Executor.hpp"
#include "HostStreams.hpp"
#include "TileMemory.hpp"
#include "poplar/StreamCallback.hpp"

#include <memory>
#include <mutex>
#include <vector>

namespace aspen::rt {

/// Host bytes reused from one collective to the next (never zero-filled).
struct StagingBuffer {
  std::uint8_t *get(std::uint64_t bytes) {
    if (bytes > capacity) {
      data.reset(new std::uint8_t[bytes]);
      capacity = bytes;
    }
    return data.get();
  }
  std::unique_ptr<std::uint8_t[]> data;
  std::uint64_t capacity = 0;
};

/// One replica: what it owns. Nothing here is shared with another replica.
struct Replica {
  Replica(const exe::ExecutableData &exe, unsigned index)
      : index(index), streams(exe.streams), remoteBuffers(exe.remoteBuffers) {}
  unsigned index;
  HostStreams streams;
  RemoteBuffers remoteBuffers;
  ExecutionProfile ownProfile; // replicas other than 0 account here (the engine's profile is replica 0's)
  std::unique_ptr<TileMemory> memory;
  std::unique_ptr<Executor> executor;
  StagingBuffer collectiveIn, collectiveOut; // this replica's bytes of a collective's src and dst
};

/// Writes replica `replica`'s index into the executable's replication index
/// constants (after the memory image is loaded).
void writeReplicationIndex(const exe::ExecutableData &exe, unsigned replica, TileMemory &memory);

/// Runs program `program` on every replica: each runs until it ends or reaches
/// a collective step; when all wait at the same collective it is run through
/// `transport` and they go on. Replicas that end, fail or wait at different
/// steps are reported (the failure of the lowest replica index is rethrown),
/// never left waiting.
void runReplicas(const exe::ExecutableData &exe, std::vector<std::unique_ptr<Replica>> &replicas,
                 unsigned program, CollectiveTransport &transport);

/// One stream callback shared by several replicas (`connectStreamToCallback`
/// without a replica index): calls are serialised.
class SharedStreamCallback final : public poplar::StreamCallback {
public:
  SharedStreamCallback(std::shared_ptr<poplar::StreamCallback> callback, std::shared_ptr<std::mutex> mutex)
      : callback_(std::move(callback)), mutex_(std::move(mutex)) {}
  Result prefetch(void *p) override {
    std::lock_guard<std::mutex> lock(*mutex_);
    return callback_->prefetch(p);
  }
  void fetch(void *p) override {
    std::lock_guard<std::mutex> lock(*mutex_);
    callback_->fetch(p);
  }
  void complete() override {
    std::lock_guard<std::mutex> lock(*mutex_);
    callback_->complete();
  }
  void invalidatePrefetched() override {
    std::lock_guard<std::mutex> lock(*mutex_);
    callback_->invalidatePrefetched();
  }

private:
  std::shared_ptr<poplar::StreamCallback> callback_;
  std::shared_ptr<std::mutex> mutex_;
};

} // namespace aspen::rt
