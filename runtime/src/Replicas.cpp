// Copyright (c) Aspen contributors.
#include "Replicas.hpp"

#include "ir/ProgramNode.hpp"
#include "poplar/exceptions.hpp"

#include <tbb/parallel_for.h>

#include <cstring>
#include <exception>
#include <string>

namespace aspen::rt {

void writeReplicationIndex(const exe::ExecutableData &exe, unsigned replica, TileMemory &memory) {
  const std::uint32_t value = replica;
  std::uint8_t bytes[4];
  std::memcpy(bytes, &value, 4);
  for (std::uint32_t t : exe.replicaIndexTransfers)
    scatterToDevice(exe.hostTransfers[t], bytes, memory);
}

namespace {

/// Runs `f(r)` for every replica, in parallel when there are several, and
/// rethrows the failure of the lowest replica index.
template <class F> void forEachReplica(std::size_t n, F &&f) {
  std::vector<std::exception_ptr> errors(n);
  auto one = [&](std::size_t r) {
    try {
      f(r);
    } catch (...) {
      errors[r] = std::current_exception();
    }
  };
  if (n == 1)
    one(0);
  else
    tbb::parallel_for(std::size_t(0), n, one, tbb::simple_partitioner());
  for (auto &e : errors)
    if (e)
      std::rethrow_exception(e);
}

void runCollective(const exe::ExecutableData &exe, const exe::CollectiveInfo &c,
                   std::vector<std::unique_ptr<Replica>> &replicas, CollectiveTransport &transport) {
  const exe::HostTransfer &src = exe.hostTransfers[c.src];
  const exe::HostTransfer &dst = exe.hostTransfers[c.dst];
  const std::size_t n = replicas.size();
  const auto kind = static_cast<ir::CollectiveKind>(c.kind);
  if (ir::isWithinReplica(kind)) {
    // Between the IPUs of each replica: row q of the input and output is IPU q's.
    exe::CollectiveInfo rows = c;
    rows.kind = static_cast<std::uint8_t>(ir::acrossKind(kind));
    const std::uint64_t G = c.groupSize, inRow = src.bytes / G, outRow = dst.bytes / G;
    forEachReplica(n, [&](std::size_t r) {
      std::uint8_t *in = replicas[r]->collectiveIn.get(src.bytes);
      std::uint8_t *out = replicas[r]->collectiveOut.get(dst.bytes);
      gatherFromDevice(src, in, *replicas[r]->memory);
      std::vector<const std::uint8_t *> inPtr(G);
      std::vector<std::uint8_t *> outPtr(G);
      for (std::uint64_t q = 0; q < G; ++q) {
        inPtr[q] = in + q * inRow;
        outPtr[q] = out + q * outRow;
      }
      computeCollective(rows, inPtr, inRow, outPtr, outRow);
      scatterToDevice(dst, out, *replicas[r]->memory);
    });
    return;
  }
  std::vector<const std::uint8_t *> inPtr(n);
  std::vector<std::uint8_t *> outPtr(n);
  for (std::size_t r = 0; r < n; ++r) {
    inPtr[r] = replicas[r]->collectiveIn.get(src.bytes);
    outPtr[r] = replicas[r]->collectiveOut.get(dst.bytes);
  }
  forEachReplica(n, [&](std::size_t r) {
    gatherFromDevice(src, replicas[r]->collectiveIn.data.get(), *replicas[r]->memory);
  });
  transport.run(c, inPtr, src.bytes, outPtr, dst.bytes);
  forEachReplica(n, [&](std::size_t r) { scatterToDevice(dst, outPtr[r], *replicas[r]->memory); });
}

} // namespace

void runReplicas(const exe::ExecutableData &exe, std::vector<std::unique_ptr<Replica>> &replicas,
                 unsigned program, CollectiveTransport &transport) {
  const std::size_t n = replicas.size();
  if (n == 1) { // no replica set to keep in step: nothing to allocate per run
    Executor &e = *replicas[0]->executor;
    e.begin(program);
    while (e.resume() == Executor::Pause::Collective)
      runCollective(exe, exe.collectives[exe.steps[e.pausedStep()].a], replicas, transport);
    return;
  }
  for (auto &r : replicas)
    r->executor->begin(program);
  std::vector<Executor::Pause> status(n);
  for (;;) {
    forEachReplica(n, [&](std::size_t r) { status[r] = replicas[r]->executor->resume(); });
    std::size_t finished = 0;
    for (auto s : status)
      finished += s == Executor::Pause::Finished;
    if (finished == n)
      return;
    // Every replica must wait at the same collective: they run one program,
    // but control flow on replica-dependent data can take them apart.
    std::size_t first = 0;
    while (status[first] != Executor::Pause::Collective)
      ++first;
    const std::uint32_t at = replicas[first]->executor->pausedStep();
    for (std::size_t r = 0; r < n; ++r) {
      const bool same = status[r] == Executor::Pause::Collective && replicas[r]->executor->pausedStep() == at;
      if (!same) {
        const std::string where =
            status[r] == Executor::Pause::Finished
                ? "reached the end of the program"
                : "waits at collective step " + std::to_string(replicas[r]->executor->pausedStep());
        throw poplar::runtime_error("Replicas diverged: replica " + std::to_string(first) +
                                    " waits at collective step " + std::to_string(at) + " ('" +
                                    exe.collectives[exe.steps[at].a].name + "') but replica " +
                                    std::to_string(r) + " " + where +
                                    "; every replica must run the same collectives in the same order");
      }
    }
    runCollective(exe, exe.collectives[exe.steps[at].a], replicas, transport);
  }
}

} // namespace aspen::rt
