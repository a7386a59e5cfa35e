// Copyright (c) Aspen contributors.
#include "passes/EstimateCycles.hpp"

#include "passes/Collectives.hpp"

#include "poplar/Target.hpp"
#include "poplar/VertexIntrospector.hpp"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

namespace aspen::compiler {
namespace {

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return b ? (a + b - 1) / b : a;
}

std::uint64_t syncCost(const ir::TargetData &t) {
  return t.syncCycles + t.minIPUSyncDelay;
}

/// Exchange cycles of a set of copy runs between objects. A tile receives
/// each remote byte once however many runs copy it there (the exchange
/// delivers a region to a tile once; further copies of it on that tile are
/// local memcpys), so cross-tile bytes are counted per (destination tile,
/// source byte), duplicates as local copies. A tile sends each byte once
/// however many tiles receive it: the exchange is a broadcast medium, every
/// receiver listening to the sender's bus in the same cycles.
/// ... and a receiving tile listens to one sending tile at a time, so each tile it receives
/// from costs it `exchangeSourceCycles` (docs/cost-model.md, "Exchange").
struct ExchangeCost {
  std::uint64_t cycles = 0;     // the exchange's cycles (its slowest tile, set-up and sync)
  std::uint64_t tileCycles = 0; // each tile's own exchange cycles, summed over the tiles
};

ExchangeCost exchangeCycles(const ir::TargetData &t, const std::vector<MemObject> &objects,
                            const std::vector<SymCopyRun> &runs) {
  if (runs.empty())
    return {};
  const unsigned numTiles = t.numTiles();
  std::vector<std::uint64_t> sent(numTiles, 0), received(numTiles, 0), local(numTiles, 0);
  struct Remote {
    std::uint32_t to, object;
    std::uint64_t begin, end;
    bool operator<(const Remote &o) const {
      return to != o.to ? to < o.to : object != o.object ? object < o.object : begin < o.begin;
    }
  };
  std::vector<Remote> remote;
  struct Sent {
    std::uint32_t object;
    std::uint64_t begin, end;
    bool operator<(const Sent &o) const { return object != o.object ? object < o.object : begin < o.begin; }
  };
  std::vector<Sent> sentRanges;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sources; // (receiving tile, sending tile)
  // Bytes leaving and entering each IPU go over IPU-Links (docs/cost-model.md).
  std::vector<std::uint64_t> ipuOut(t.numIPUs, 0), ipuIn(t.numIPUs, 0);
  const unsigned tilesPerIPU = std::max(1u, t.tilesPerIPU);
  bool crossIpu = false;
  for (const SymCopyRun &r : runs) {
    const std::uint32_t from = objects[r.src.object].tile, to = objects[r.dst.object].tile;
    if (from == to)
      local[to] += r.bytes;
    else
      remote.push_back({to, r.src.object, r.src.offset, std::uint64_t(r.src.offset) + r.bytes});
  }
  const bool crossTile = !remote.empty();
  if (!std::is_sorted(remote.begin(), remote.end()))
    std::sort(remote.begin(), remote.end());
  // A tile receives each remote byte once (overlapping reads of one object merged); further
  // copies of it on that tile are local copies.
  for (std::size_t i = 0; i < remote.size();) {
    const Remote &first = remote[i];
    std::uint64_t b = first.begin, e = first.end, all = first.end - first.begin;
    for (++i; i < remote.size() && remote[i].to == first.to && remote[i].object == first.object &&
              remote[i].begin <= e;
         ++i) {
      e = std::max(e, remote[i].end);
      all += remote[i].end - remote[i].begin;
    }
    const std::uint32_t from = objects[first.object].tile;
    if (sources.empty() || sources.back() != std::pair(first.to, from))
      sources.emplace_back(first.to, from);
    sentRanges.push_back({first.object, b, e});
    received[first.to] += e - b;
    local[first.to] += all - (e - b);
    if (from / tilesPerIPU != first.to / tilesPerIPU && from / tilesPerIPU < t.numIPUs &&
        first.to / tilesPerIPU < t.numIPUs) {
      ipuOut[from / tilesPerIPU] += e - b;
      ipuIn[first.to / tilesPerIPU] += e - b;
      crossIpu = true;
    }
  }
  // Each sender's bytes once, whatever the number of receivers (overlapping ranges merged).
  std::sort(sentRanges.begin(), sentRanges.end());
  for (std::size_t i = 0; i < sentRanges.size();) {
    const std::uint32_t object = sentRanges[i].object;
    std::uint64_t b = sentRanges[i].begin, e = sentRanges[i].end;
    for (++i; i < sentRanges.size() && sentRanges[i].object == object && sentRanges[i].begin <= e; ++i)
      e = std::max(e, sentRanges[i].end);
    sent[objects[object].tile] += e - b;
  }
  // The tiles each tile receives from.
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  std::vector<std::uint32_t> senders(numTiles, 0);
  for (const auto &pair : sources)
    ++senders[pair.first];
  std::uint64_t worst = 0, tileSum = 0, participants = 0;
  for (unsigned tile = 0; tile < numTiles; ++tile) {
    const std::uint64_t c = ceilDiv(std::max(sent[tile], received[tile]), t.exchangeBytesPerCycle) +
                            std::uint64_t(senders[tile]) * t.exchangeSourceCycles +
                            ceilDiv(local[tile], t.memcpyBytesPerCycle);
    worst = std::max(worst, c);
    tileSum += c;
    participants += (sent[tile] | received[tile] | local[tile]) != 0;
  }
  if (crossIpu) { // the links, and a global (inter-IPU) sync instead of an internal one
    std::uint64_t linkBytes = 0;
    for (unsigned ipu = 0; ipu < t.numIPUs; ++ipu)
      linkBytes = std::max({linkBytes, ipuOut[ipu], ipuIn[ipu]});
    const double perCycle = std::max(1e-9, t.ipuLinkBytesPerCycle());
    const auto links =
        static_cast<std::uint64_t>(double(linkBytes) / perCycle + 0.999999) + t.ipuLinkLatencyCycles;
    return {std::max(worst, links) + t.exchangeOverheadCycles + t.globalSyncCycles,
            tileSum + participants * t.exchangeOverheadCycles};
  }
  if (!crossTile)
    return {worst, tileSum};
  return {worst + t.exchangeOverheadCycles + syncCost(t), tileSum + participants * t.exchangeOverheadCycles};
}

/// A transfer whose far end is off the chip: each tile moves its bytes at the exchange's rate,
/// all of an IPU's bytes share one far-end bandwidth (`farBytesPerCycle`), and the far end adds
/// its latency.
std::uint64_t offChipTransferCycles(const ir::TargetData &t, const std::vector<MemObject> &objects,
                                    const PlannedTransfer &tr, double farBytesPerCycle,
                                    std::uint64_t farLatencyCycles) {
  if (tr.runs.empty())
    return 0;
  std::vector<std::uint64_t> perTile(t.numTiles(), 0), perIpu(std::max(1u, t.numIPUs), 0);
  const unsigned tilesPerIPU = std::max(1u, t.tilesPerIPU);
  for (const SymHostRun &r : tr.runs) {
    const std::uint32_t tile = objects[r.device.object].tile;
    perTile[tile] += r.bytes;
    perIpu[std::min<std::size_t>(tile / tilesPerIPU, perIpu.size() - 1)] += r.bytes;
  }
  const std::uint64_t worstTile = *std::max_element(perTile.begin(), perTile.end());
  const std::uint64_t worstIpu = *std::max_element(perIpu.begin(), perIpu.end());
  const auto far = static_cast<std::uint64_t>(std::ceil(double(worstIpu) / std::max(1e-9, farBytesPerCycle)));
  return std::max(ceilDiv(worstTile, t.exchangeBytesPerCycle), far) + farLatencyCycles +
         t.exchangeOverheadCycles + syncCost(t);
}

/// A host transfer: the far end is the host, over the IPU's host link.
std::uint64_t hostTransferCycles(const ir::TargetData &t, const std::vector<MemObject> &objects,
                                 const PlannedTransfer &tr) {
  return offChipTransferCycles(t, objects, tr, t.hostLinkBytesPerCycle(), t.hostLinkLatencyCycles);
}

/// A remote-buffer copy: the far end is the IPU's Streaming Memory, at its bandwidth and after
/// the DDR's latency (docs/cost-model.md, "Streaming Memory").
std::uint64_t streamingTransferCycles(const ir::TargetData &t, const std::vector<MemObject> &objects,
                                      const PlannedTransfer &tr) {
  return offChipTransferCycles(t, objects, tr, t.streamingMemoryBytesPerCycle(),
                               t.streamingMemoryLatencyCycles);
}

} // namespace

std::uint64_t streamingCycles(const ir::TargetData &target, const std::vector<MemObject> &objects,
                              const PlannedTransfer &transfer) {
  return streamingTransferCycles(target, objects, transfer);
}

CycleEstimates estimateCycles(const ir::GraphData &g, const LoweredProgram & /*lowered*/,
                              const ExchangePlan &plan) {
  const ir::TargetData &target = g.target;
  const unsigned workers = std::max(1u, target.numWorkerContexts);
  CycleEstimates est;
  const std::size_t numCs = plan.computeSets.size();
  est.vertexCycles.resize(numCs);
  est.vertexCounted.resize(numCs);
  est.computeCycles.assign(numCs, 0);
  est.totalVertexCycles.assign(numCs, 0);
  est.exchangeInCycles.assign(numCs, 0);
  est.exchangeOutCycles.assign(numCs, 0);
  est.exchangeInTileCycles.assign(numCs, 0);
  est.exchangeOutTileCycles.assign(numCs, 0);

  // Estimators registered for vertex types, by type index.
  std::vector<const poplar::PerfEstimateFunc *> estimator(g.vertexTypes.size(), nullptr);
  for (std::size_t t = 0; t < g.vertexTypes.size(); ++t) {
    auto it = g.perfEstimators.find(g.vertexTypes[t].name);
    if (it != g.perfEstimators.end() && it->second)
      estimator[t] = &it->second;
  }
  auto isMulti = [&](std::uint32_t v) {
    const ir::VertexTypeInfo &type = g.vertexTypes[g.vertices[v].type];
    return type.isMultiVertex || type.isSupervisor;
  };

  // Vertex estimates: defaults and setPerfEstimate in parallel; user estimators in
  // order on this thread (they are the user's code and need not be thread-safe).
  tbb::parallel_for(std::size_t(0), numCs, [&](std::size_t c) {
    const auto &vs = plan.computeSets[c].vertices;
    auto &cycles = est.vertexCycles[c];
    cycles.resize(vs.size());
    est.vertexCounted[c].assign(vs.size(), 0);
    for (std::size_t i = 0; i < vs.size(); ++i) {
      if (const poplar::VertexPerfEstimate *set = g.estimateOf(vs[i].vertex)) {
        cycles[i] = set->cycles;
      } else {
        // Priced from its code at run time when that counts (this default stays the
        // static estimate: docs/cost-model.md).
        est.vertexCounted[c][i] = !estimator[g.vertices[vs[i].vertex].type];
        const std::uint64_t thread = kDefaultVertexCycles + ceilDiv(vs[i].edgeBytes, 4);
        cycles[i] = isMulti(vs[i].vertex)
                        ? workers * (kDefaultVertexCycles + ceilDiv(vs[i].edgeBytes, 4 * workers))
                        : thread;
      }
    }
  });
  bool anyEstimator = std::any_of(estimator.begin(), estimator.end(), [](auto *p) { return p != nullptr; });
  if (anyEstimator) {
    const poplar::Target targetHandle(target);
    for (std::size_t c = 0; c < numCs; ++c) {
      const auto &vs = plan.computeSets[c].vertices;
      for (std::size_t i = 0; i < vs.size(); ++i) {
        const ir::Vertex &vx = g.vertices[vs[i].vertex];
        if (!estimator[vx.type] || g.estimateOf(vs[i].vertex))
          continue;
        const poplar::VertexIntrospector vi(&g, vs[i].vertex);
        est.vertexCycles[c][i] = (*estimator[vx.type])(vi, targetHandle).cycles;
      }
    }
  }

  // Per tile: pack worker vertices onto workers; MultiVertex vertices run alone.
  tbb::parallel_for(std::size_t(0), numCs, [&](std::size_t c) {
    const PlannedComputeSet &pcs = plan.computeSets[c];
    const auto &vs = pcs.vertices;
    std::vector<std::uint64_t> load(workers);
    std::uint64_t worst = 0, total = 0;
    for (std::size_t i = 0; i < vs.size();) {
      const std::uint32_t tile = vs[i].tile;
      std::fill(load.begin(), load.end(), 0);
      std::uint64_t multi = 0;
      for (; i < vs.size() && vs[i].tile == tile; ++i) {
        const std::uint64_t cyc = est.vertexCycles[c][i];
        total += cyc;
        if (isMulti(vs[i].vertex)) {
          multi += cyc;
        } else {
          *std::min_element(load.begin(), load.end()) += cyc;
        }
      }
      const std::uint64_t tileCycles = *std::max_element(load.begin(), load.end()) * workers + multi;
      worst = std::max(worst, tileCycles);
    }
    est.computeCycles[c] = worst;
    est.totalVertexCycles[c] = total;
    const ExchangeCost in = exchangeCycles(target, plan.memory.objects, pcs.exchangeIn);
    const ExchangeCost out = exchangeCycles(target, plan.memory.objects, pcs.exchangeOut);
    est.exchangeInCycles[c] = in.cycles;
    est.exchangeInTileCycles[c] = in.tileCycles;
    est.exchangeOutCycles[c] = out.cycles;
    est.exchangeOutTileCycles[c] = out.tileCycles;
  });

  est.copyCycles.resize(plan.copies.size());
  est.copyTileCycles.resize(plan.copies.size());
  tbb::parallel_for(std::size_t(0), plan.copies.size(), [&](std::size_t k) {
    const ExchangeCost cost = exchangeCycles(target, plan.memory.objects, plan.copies[k].runs);
    est.copyCycles[k] = cost.cycles;
    est.copyTileCycles[k] = cost.tileCycles;
  });
  est.transferCycles.resize(plan.transfers.size());
  tbb::parallel_for(std::size_t(0), plan.transfers.size(), [&](std::size_t k) {
    est.transferCycles[k] = hostTransferCycles(target, plan.memory.objects, plan.transfers[k]);
  });

  using K = exe::StepKind;
  est.stepCycles.assign(plan.steps.size(), 0);
  est.hiddenCycles.assign(plan.steps.size(), 0);
  est.streamingBytes.assign(plan.steps.size(), 0);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const exe::Step &step = plan.steps[s];
    switch (step.kind) {
    case K::Execute:
      est.stepCycles[s] = est.exchangeInCycles[step.a] + est.computeCycles[step.a] + syncCost(target) +
                          est.exchangeOutCycles[step.a];
      break;
    case K::Copy:
      est.stepCycles[s] = est.copyCycles[step.a];
      break;
    case K::StreamToDevice:
    case K::DeviceToStream:
      est.stepCycles[s] = est.transferCycles[step.b];
      break;
    case K::RemoteToDevice:
    case K::DeviceToRemote: {
      est.stepCycles[s] = streamingTransferCycles(target, plan.memory.objects, plan.transfers[step.b]);
      est.streamingBytes[s] = plan.transfers[step.b].bytes;
      // A staged load overlaps the compute of the Execute step after it (docs/streaming-memory.md):
      // only what the compute does not cover costs time.
      const std::uint32_t with = s < plan.overlapStep.size() ? plan.overlapStep[s] : kNoObject;
      if (with != kNoObject && plan.steps[with].kind == K::Execute) {
        est.hiddenCycles[s] = std::min(est.stepCycles[s], est.computeCycles[plan.steps[with].a]);
        est.stepCycles[s] -= est.hiddenCycles[s];
      }
      break;
    }
    case K::Print:
      est.stepCycles[s] = est.transferCycles[plan.prints[step.a].transfer];
      break;
    case K::Collective: { // tiles -> links, the ring, links -> tiles (docs/cost-model.md)
      const exe::CollectiveInfo &c = plan.collectives[step.a];
      est.stepCycles[s] = est.transferCycles[c.src] + est.transferCycles[c.dst] +
                          collectiveLinkCycles(target, c, plan.transfers[c.src].bytes);
      break;
    }
    case K::Sync:
      est.stepCycles[s] = step.a == static_cast<std::uint32_t>(poplar::SyncType::INTERNAL)
                              ? syncCost(target)
                              : target.globalSyncCycles;
      break;
    default:
      break; // control flow runs on the supervisor between supersteps: not counted
    }
  }
  return est;
}

} // namespace aspen::compiler
