// Copyright (c) Aspen contributors.
#include "passes/Collectives.hpp"

#include <algorithm>
#include <cmath>

namespace aspen::compiler {

exe::CollectiveInfo collectiveInfo(const ir::ProgramNode &node) {
  exe::CollectiveInfo c;
  c.kind = static_cast<std::uint8_t>(node.collective.kind);
  c.op = static_cast<std::uint8_t>(node.collective.op);
  c.group = static_cast<std::uint8_t>(node.collective.group);
  c.groupSize = std::max<std::uint32_t>(1, node.collective.groupSize);
  c.root = node.collective.root;
  c.type = node.src.elementType().id();
  c.name = node.debugName;
  return c;
}

std::uint64_t collectiveLinkCycles(const ir::TargetData &target, const exe::CollectiveInfo &c,
                                   std::uint64_t srcBytes) {
  const std::uint64_t local = 0;
  const std::uint64_t G = c.groupSize;
  using K = ir::CollectiveKind;
  const auto kind = ir::acrossKind(static_cast<K>(c.kind));
  if (G <= 1 || (kind != K::AllGather && kind != K::AllToAll && kind != K::Broadcast &&
                 static_cast<ir::CollectiveOp>(c.op) == ir::CollectiveOp::Local))
    return local;
  const double bytesPerCycle = std::max(1e-9, target.ipuLinkBytesPerCycle());
  const double chunk = std::ceil(double(srcBytes) / double(G)); // one ring step's bytes
  auto ring = [&](double steps, double bytesPerStep) {
    return steps *
           (std::ceil(bytesPerStep / bytesPerCycle) + target.ipuLinkLatencyCycles + target.globalSyncCycles);
  };
  double links = 0;
  switch (kind) {
  case K::AllReduce: // reduce-scatter then all-gather: 2(G-1) steps of B/G bytes
    links = ring(2.0 * double(G - 1), chunk);
    break;
  case K::ReduceScatter: // G-1 steps of B/G bytes
  case K::AllToAll:      // G-1 steps, each passing one replica's block on
    links = ring(double(G - 1), chunk);
    break;
  case K::AllGather: // G-1 steps of the whole input (it is one replica's block)
    links = ring(double(G - 1), double(srcBytes));
    break;
  case K::Broadcast: // pipelined along the ring: fill latency, then the bytes once
    links = double(G - 1) * (target.ipuLinkLatencyCycles + target.globalSyncCycles) +
            std::ceil(double(srcBytes) / bytesPerCycle);
    break;
  default: // within-replica kinds were mapped to their cross-replica kind above
    break;
  }
  return local + static_cast<std::uint64_t>(links);
}

} // namespace aspen::compiler
