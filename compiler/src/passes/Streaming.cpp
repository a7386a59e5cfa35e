// Copyright (c) Aspen contributors.
#include "passes/Streaming.hpp"

#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <tuple>

namespace aspen::compiler {
namespace {

using K = exe::StepKind;

std::uint64_t variableBytes(const ir::GraphData &g, std::uint32_t v) {
  return g.variables[v].numElements * g.variables[v].type.size();
}

/// Steps that run between supersteps without changing control flow: a variable's uses may
/// span them and still be staged by one load before and one store after.
bool isPlainStep(K kind) {
  switch (kind) {
  case K::Execute:
  case K::Copy:
  case K::StreamToDevice:
  case K::DeviceToStream:
  case K::RemoteToDevice:
  case K::DeviceToRemote:
  case K::Print:
  case K::Sync:
  case K::WriteUndef:
  case K::BlockBegin:
  case K::BlockEnd:
  case K::Collective:
    return true;
  default:
    return false;
  }
}

bool hasTarget(K kind) {
  return kind == K::Jump || kind == K::JumpIfZero || kind == K::JumpIfNonZero || kind == K::LoopTest ||
         kind == K::Call;
}

std::string humanBytes(std::uint64_t b) {
  std::ostringstream s;
  if (b >= (std::uint64_t(1) << 30))
    s << double(b) / double(std::uint64_t(1) << 30) << " GiB";
  else if (b >= (1u << 20))
    s << double(b) / double(1u << 20) << " MiB";
  else
    s << b << " bytes";
  return s.str();
}

/// First and last step that reads or writes each variable, how many steps do, and whether any writes.
struct AccessSummary {
  std::vector<std::uint32_t> first, last, count;
  std::vector<std::uint8_t> written;
};

AccessSummary summarise(std::size_t numVars, const ExchangePlan &plan) {
  AccessSummary a;
  a.first.assign(numVars, ~0u);
  a.last.assign(numVars, 0);
  a.count.assign(numVars, 0);
  a.written.assign(numVars, 0);
  for (std::size_t s = 0; s + 1 < plan.stepAccessBegin.size(); ++s)
    for (std::uint32_t k = plan.stepAccessBegin[s]; k < plan.stepAccessBegin[s + 1]; ++k) {
      const VarAccess &x = plan.stepAccesses[k];
      if (!(x.flags & (kRead | kWrite)))
        continue;
      a.first[x.var] = std::min(a.first[x.var], static_cast<std::uint32_t>(s));
      a.last[x.var] = std::max(a.last[x.var], static_cast<std::uint32_t>(s));
      ++a.count[x.var];
      a.written[x.var] |= (x.flags & kWrite) != 0;
    }
  return a;
}

/// Steps that control flow can reach other than by falling through from the step before.
std::vector<std::uint8_t> jumpTargets(const LoweredProgram &lp) {
  const std::size_t n = lp.steps.size();
  std::vector<std::uint8_t> target(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const exe::Step &s = lp.steps[i];
    if (hasTarget(s.kind) && s.target <= n)
      target[s.target] = 1;
    if (s.kind == K::Call)
      target[i + 1] = 1; // where the call returns
  }
  for (const exe::SwitchTable &t : lp.switchTables) {
    for (std::uint32_t x : t.targets)
      if (x <= n)
        target[x] = 1;
    if (t.defaultTarget <= n)
      target[t.defaultTarget] = 1;
  }
  for (std::uint32_t e : lp.programEntry)
    if (e <= n)
      target[e] = 1;
  for (std::uint32_t e : lp.functionEntry)
    if (e <= n)
      target[e] = 1;
  return target;
}

} // namespace

void checkStreamingMemoryCapacity(const ir::GraphData &g, std::uint64_t offloadedBytes) {
  const std::uint64_t capacity = g.target.streamingMemoryBytes * std::max(1u, g.target.numIPUs);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> sizes;
  std::uint64_t total = offloadedBytes;
  bool overflow = false;
  for (std::size_t b = 0; b < g.remoteBuffers.size(); ++b) {
    const ir::RemoteBufferRecord &r = g.remoteBuffers[b];
    std::uint64_t row = 0, bytes = 0;
    overflow |= __builtin_mul_overflow(r.numElements, std::uint64_t(r.type.size()), &row) ||
                __builtin_mul_overflow(row, std::max<std::uint64_t>(1, r.repeats), &bytes) ||
                __builtin_add_overflow(total, bytes, &total);
    sizes.push_back({bytes, static_cast<std::uint32_t>(b)});
  }
  if (!overflow && total <= capacity)
    return;
  std::sort(sizes.begin(), sizes.end(), [](auto &a, auto &b) { return a.first > b.first; });
  std::ostringstream msg;
  msg << "Out of Streaming Memory: the remote buffers need "
      << (overflow ? std::string("more than 2^64 bytes") : std::to_string(total) + " bytes")
      << " but the target has " << capacity << " bytes of Streaming Memory (" << g.target.streamingMemoryBytes
      << " per IPU, " << std::max(1u, g.target.numIPUs) << (g.target.numIPUs > 1 ? " IPUs)" : " IPU)");
  if (offloadedBytes)
    msg << ", of which " << offloadedBytes << " bytes hold variables aspen.streamingMemory=auto offloaded";
  msg << ". Largest remote buffers:";
  for (std::size_t i = 0; i < sizes.size() && i < 8; ++i) {
    const ir::RemoteBufferRecord &r = g.remoteBuffers[sizes[i].second];
    msg << "\n    '" << r.handle << "': " << r.numElements << " x " << r.type.toString() << " x "
        << std::max<std::uint64_t>(1, r.repeats) << " rows = " << sizes[i].first << " bytes";
  }
  throw poplar::graph_memory_allocation_error(msg.str());
}

OffloadCandidates findOffloadCandidates(const ir::GraphData &g, const LoweredProgram &lp,
                                        const ExchangePlan &plan, const LivenessResult &live,
                                        const std::vector<std::string> &pinned) {
  const std::size_t numVars = g.variables.size();
  const std::size_t numSteps = plan.steps.size();
  OffloadCandidates c;
  c.eligible.assign(numVars, 0);
  c.reason.assign(numVars, std::string());
  const AccessSummary acc = summarise(numVars, plan);

  // Variables control flow reads (predicates, loop counts, switch controls, remote-buffer offsets)
  // must be on tiles whenever a step may read them.
  std::vector<std::uint8_t> control(numVars, 0);
  auto markControl = [&](const SymScalar &s) {
    if (s.where.valid() && s.where.object < plan.memory.numPieces())
      control[plan.memory.objects[s.where.object].owner] = 1;
  };
  for (const SymScalar &s : plan.stepScalar)
    markControl(s);
  for (const SymScalar &s : plan.switchControl)
    markControl(s);
  std::vector<std::uint8_t> replicaIndex(numVars, 0);
  for (std::uint32_t v : g.replicationIndexVars)
    if (v < numVars)
      replicaIndex[v] = 1;

  const std::vector<std::uint8_t> target = jumpTargets(lp);
  std::vector<std::uint32_t> nonPlain(numSteps + 1, 0), targets(numSteps + 1, 0);
  for (std::size_t i = 0; i < numSteps; ++i) {
    nonPlain[i + 1] = nonPlain[i] + !isPlainStep(lp.steps[i].kind);
    targets[i + 1] = targets[i] + target[i];
  }

  for (std::uint32_t v = 0; v < numVars; ++v) {
    const ir::Variable &var = g.variables[v];
    std::string &why = c.reason[v];
    if (variableBytes(g, v) == 0)
      why = "it is empty";
    else if (std::find(pinned.begin(), pinned.end(), var.name) != pinned.end())
      why = "pinned to tile memory (aspen.streamingMemoryPinned)";
    else if (control[v])
      why = "control flow reads it (a predicate, loop count, switch or remote-buffer offset)";
    else if (replicaIndex[v])
      why = "it is a replication index";
    else if (!live.alwaysLive[v])
      why = "it is not always-live: it already shares tile memory outside its live range";
    else if (acc.count[v] != 0 && (nonPlain[acc.last[v] + 1] != nonPlain[acc.first[v]] ||
                                   targets[acc.last[v] + 1] != targets[acc.first[v] + 1]))
      why = "control flow (a loop, branch, call or program boundary) lies between its first and last use";
    else
      c.eligible[v] = 1;
    if (c.eligible[v])
      c.priority.push_back(v);
  }
  // Offload first what is used in few steps, then what is used over a short stretch of the
  // program, then the largest: what is hot stays in tile memory.
  std::sort(c.priority.begin(), c.priority.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::uint32_t spanA = acc.count[a] ? acc.last[a] - acc.first[a] : 0;
    const std::uint32_t spanB = acc.count[b] ? acc.last[b] - acc.first[b] : 0;
    return std::make_tuple(acc.count[a], spanA, ~variableBytes(g, a), a) <
           std::make_tuple(acc.count[b], spanB, ~variableBytes(g, b), b);
  });
  return c;
}

std::vector<std::uint32_t> chooseMoreOffloads(const ir::GraphData &g, const ExchangePlan &plan,
                                              const OffloadCandidates &c, const AllocationResult &alloc,
                                              const std::vector<std::uint8_t> &chosen) {
  const unsigned numTiles = g.target.numTiles();
  std::vector<std::int64_t> excess(numTiles, 0);
  bool any = false;
  for (unsigned t = 0; t < numTiles && t < alloc.tiles.size(); ++t) {
    const std::uint64_t peak = alloc.tiles[t].peakBytes;
    if (peak > g.target.bytesPerTile) {
      excess[t] = static_cast<std::int64_t>(peak - g.target.bytesPerTile);
      any = true;
    }
  }
  std::vector<std::uint32_t> more;
  if (!any)
    return more;
  for (std::uint32_t v : c.priority) {
    if (chosen[v])
      continue;
    bool helps = false;
    for (std::uint32_t p = plan.memory.firstPiece[v]; p < plan.memory.firstPiece[v + 1]; ++p)
      helps |= excess[plan.memory.objects[p].tile] > 0;
    if (!helps)
      continue;
    more.push_back(v);
    for (std::uint32_t p = plan.memory.firstPiece[v]; p < plan.memory.firstPiece[v + 1]; ++p)
      excess[plan.memory.objects[p].tile] -= static_cast<std::int64_t>(plan.memory.objects[p].size);
    if (std::none_of(excess.begin(), excess.end(), [](std::int64_t e) { return e > 0; }))
      break;
  }
  return more;
}

void applyOffload(const ir::GraphData &g, LoweredProgram &lp, ExchangePlan &plan,
                  const std::vector<std::uint32_t> &vars) {
  const std::size_t numVars = g.variables.size();
  const std::size_t numSteps = plan.steps.size();
  ASPEN_ASSERT(lp.steps.size() == numSteps, "lowered and planned step lists differ");
  const AccessSummary acc = summarise(numVars, plan);
  const std::vector<std::uint8_t> target = jumpTargets(lp);
  const MemoryObjects &memory = plan.memory;

  // The arena in first-read order (variables no step touches last).
  std::vector<std::uint32_t> order(vars);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::make_pair(acc.first[a], a) < std::make_pair(acc.first[b], b);
  });
  plan.offloaded.assign(numVars, 0);
  std::vector<std::uint32_t> layoutOf(numVars, ~0u), transferOf(numVars, ~0u);
  std::uint64_t arena = 0;
  for (std::uint32_t v : order) {
    plan.offloaded[v] = 1;
    layoutOf[v] = static_cast<std::uint32_t>(plan.streaming.size());
    exe::StreamingVariable sv;
    sv.name = g.variables[v].name;
    sv.variable = v;
    sv.bytes = variableBytes(g, v);
    sv.offset = arena;
    arena += (sv.bytes + 63) / 64 * 64; // each variable starts a 64-byte DDR burst
    sv.remoteBuffer = static_cast<std::uint32_t>(plan.remoteBuffers.size());
    plan.remoteBuffers.push_back(
        {"aspen.streamingMemory/" + std::to_string(v), poplar::Type::Id::UnsignedChar, sv.bytes, 1});
    if (auto it = g.initialValues.find(v); it != g.initialValues.end()) {
      sv.initial.assign(sv.bytes, 0);
      std::memcpy(sv.initial.data(), it->second.data(), std::min<std::size_t>(sv.bytes, it->second.size()));
    }
    // One transfer serves the variable's loads and stores: its pieces in byte order.
    PlannedTransfer tr;
    tr.bytes = sv.bytes;
    for (std::uint32_t p = memory.firstPiece[v]; p < memory.firstPiece[v + 1]; ++p)
      tr.runs.push_back(
          {memory.objects[p].ownerOffset, Loc{p, 0}, static_cast<std::uint32_t>(memory.objects[p].size)});
    transferOf[v] = static_cast<std::uint32_t>(plan.transfers.size());
    plan.transfers.push_back(std::move(tr));
    plan.streaming.push_back(std::move(sv));
  }

  // Blobs in an offloaded variable's pieces become part of its initial value.
  std::vector<SymBlob> keptBlobs;
  for (const SymBlob &b : plan.blobs) {
    const std::uint32_t obj = b.where.object;
    if (obj < memory.numPieces() && plan.offloaded[memory.objects[obj].owner]) {
      exe::StreamingVariable &sv = plan.streaming[layoutOf[memory.objects[obj].owner]];
      if (sv.initial.empty())
        sv.initial.assign(sv.bytes, 0);
      const std::uint64_t at = memory.objects[obj].ownerOffset + b.where.offset;
      std::memcpy(sv.initial.data() + at, plan.blobPool.data() + b.poolBegin,
                  std::min<std::uint64_t>(b.size, sv.bytes - std::min(sv.bytes, at)));
    } else {
      keptBlobs.push_back(b);
    }
  }
  plan.blobs.swap(keptBlobs);

  // Host handles read and write the Streaming Memory copy of an offloaded variable's bytes.
  for (exe::HostHandleInfo &h : plan.hostHandles)
    for (const SymHostRun &r : plan.transfers[h.transfer].runs) {
      if (r.device.object >= memory.numPieces())
        continue;
      const MemObject &piece = memory.objects[r.device.object];
      if (plan.offloaded[piece.owner])
        h.streamingRuns.push_back(
            {r.hostOffset, layoutOf[piece.owner], piece.ownerOffset + r.device.offset, r.bytes});
    }
  plan.hostVisibleVars.erase(std::remove_if(plan.hostVisibleVars.begin(), plan.hostVisibleVars.end(),
                                            [&](std::uint32_t v) { return plan.offloaded[v] != 0; }),
                             plan.hostVisibleVars.end());

  // The steps to insert: at position `pos` (before old step `pos`), stores (which jumps to `pos`
  // skip: they end a window that only falls through) before loads (which jumps to `pos` run).
  struct Insert {
    std::uint32_t pos;
    bool isLoad;
    std::uint32_t var;
    std::uint32_t overlapOld; // old Execute step the load overlaps, or kNoObject
  };
  std::vector<Insert> inserts;
  for (std::uint32_t v : order) {
    if (acc.count[v] == 0)
      continue;
    const std::uint32_t first = acc.first[v], last = acc.last[v];
    if (first > 0 && !target[first] && lp.steps[first - 1].kind == K::Execute)
      inserts.push_back({first - 1, true, v, first - 1}); // prefetch beside the compute before
    else
      inserts.push_back({first, true, v, kNoObject});
    ++plan.streaming[layoutOf[v]].loads;
    if (acc.written[v]) {
      inserts.push_back({last + 1, false, v, kNoObject});
      ++plan.streaming[layoutOf[v]].stores;
    }
  }
  std::stable_sort(inserts.begin(), inserts.end(), [](const Insert &a, const Insert &b) {
    return a.pos != b.pos ? a.pos < b.pos : (!a.isLoad && b.isLoad);
  });

  // Old step i moves to newIndex[i]; a jump to old step i goes to jumpIndex[i] (its loads).
  std::vector<std::uint32_t> newIndex(numSteps + 1), jumpIndex(numSteps + 1);
  {
    std::size_t k = 0;
    std::uint32_t shift = 0;
    for (std::uint32_t i = 0; i <= numSteps; ++i) {
      for (; k < inserts.size() && inserts[k].pos == i; ++k)
        ++shift;
      newIndex[i] = i + shift;
    }
    // jumpIndex: i + (inserts before i) + (stores at i).
    k = 0;
    std::uint32_t before = 0;
    for (std::uint32_t i = 0; i <= numSteps; ++i) {
      std::uint32_t stores = 0, here = 0;
      for (; k < inserts.size() && inserts[k].pos == i; ++k, ++here)
        stores += !inserts[k].isLoad;
      jumpIndex[i] = i + before + stores;
      before += here;
    }
  }

  const std::size_t total = numSteps + inserts.size();
  std::vector<exe::Step> lSteps, pSteps;
  std::vector<const ir::ProgramNode *> nodes;
  std::vector<SymScalar> scalars;
  std::vector<std::vector<VarAccess>> accesses;
  std::vector<std::uint32_t> overlap;
  lSteps.reserve(total);
  pSteps.reserve(total);
  nodes.reserve(total);
  scalars.reserve(total);
  accesses.reserve(total);
  overlap.reserve(total);
  std::size_t k = 0;
  for (std::uint32_t i = 0; i <= numSteps; ++i) {
    for (; k < inserts.size() && inserts[k].pos == i; ++k) {
      const Insert &in = inserts[k];
      const exe::StreamingVariable &sv = plan.streaming[layoutOf[in.var]];
      exe::Step s;
      s.kind = in.isLoad ? K::RemoteToDevice : K::DeviceToRemote;
      s.a = sv.remoteBuffer;
      s.b = transferOf[in.var];
      s.message = std::string(in.isLoad ? "load '" : "store '") + sv.name + "' (Streaming Memory)";
      lSteps.push_back(s);
      pSteps.push_back(s);
      nodes.push_back(nullptr);
      scalars.push_back(SymScalar{});
      accesses.push_back(
          {VarAccess{in.var, static_cast<std::uint8_t>(in.isLoad ? kWrite | kFullWrite : kRead)}});
      overlap.push_back(in.overlapOld == kNoObject ? kNoObject : newIndex[in.overlapOld]);
    }
    if (i == numSteps)
      break;
    lSteps.push_back(lp.steps[i]);
    pSteps.push_back(plan.steps[i]);
    nodes.push_back(lp.stepNode[i]);
    scalars.push_back(plan.stepScalar[i]);
    accesses.emplace_back(plan.stepAccesses.begin() + plan.stepAccessBegin[i],
                          plan.stepAccesses.begin() + plan.stepAccessBegin[i + 1]);
    overlap.push_back(plan.overlapStep.empty() ? kNoObject : plan.overlapStep[i]);
  }
  for (std::size_t s = 0; s < total; ++s) {
    if (hasTarget(lSteps[s].kind))
      lSteps[s].target = jumpIndex[lSteps[s].target];
    if (hasTarget(pSteps[s].kind))
      pSteps[s].target = jumpIndex[pSteps[s].target];
  }
  for (exe::SwitchTable &t : lp.switchTables) {
    for (std::uint32_t &x : t.targets)
      x = jumpIndex[x];
    t.defaultTarget = jumpIndex[t.defaultTarget];
  }
  for (std::uint32_t &e : lp.programEntry)
    e = jumpIndex[e];
  for (std::uint32_t &e : lp.functionEntry)
    if (e != ~0u)
      e = jumpIndex[e];
  for (auto &[a, b] : plan.computeSetSteps) {
    a = newIndex[a];
    b = newIndex[b];
  }
  for (exe::StreamingVariable &sv : plan.streaming)
    if (acc.count[sv.variable])
      sv.firstStep = newIndex[acc.first[sv.variable]];

  lp.steps.swap(lSteps);
  lp.stepNode.swap(nodes);
  plan.steps.swap(pSteps);
  plan.stepScalar.swap(scalars);
  plan.overlapStep.swap(overlap);
  plan.stepAccessBegin.assign(total + 1, 0);
  plan.stepAccesses.clear();
  for (std::size_t s = 0; s < total; ++s) {
    plan.stepAccessBegin[s] = static_cast<std::uint32_t>(plan.stepAccesses.size());
    plan.stepAccesses.insert(plan.stepAccesses.end(), accesses[s].begin(), accesses[s].end());
  }
  plan.stepAccessBegin[total] = static_cast<std::uint32_t>(plan.stepAccesses.size());
}

std::string describeOffload(const ir::GraphData &g, const ExchangePlan &plan, const OffloadCandidates &c,
                            const AllocationResult &alloc) {
  std::ostringstream msg;
  std::uint64_t offloaded = 0;
  for (const exe::StreamingVariable &sv : plan.streaming)
    offloaded += sv.bytes;
  msg << "\n  aspen.streamingMemory=auto offloaded " << plan.streaming.size()
      << (plan.streaming.size() == 1 ? " variable" : " variables") << " (" << humanBytes(offloaded)
      << ") to Streaming Memory";
  for (std::size_t i = 0; i < plan.streaming.size() && i < 8; ++i)
    msg << (i ? ", " : ": ") << g.describeVariable(plan.streaming[i].variable);
  if (plan.streaming.size() > 8)
    msg << ", ...";
  // The fullest tile's largest resident variables, and why each stayed.
  unsigned worst = 0;
  for (unsigned t = 0; t < alloc.tiles.size(); ++t)
    if (alloc.tiles[t].peakBytes > alloc.tiles[worst].peakBytes)
      worst = t;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> resident;
  for (std::uint32_t v = 0; v < g.variables.size(); ++v) {
    if (!plan.offloaded.empty() && plan.offloaded[v])
      continue;
    std::uint64_t bytes = 0;
    for (std::uint32_t p = plan.memory.firstPiece[v]; p < plan.memory.firstPiece[v + 1]; ++p)
      if (plan.memory.objects[p].tile == worst)
        bytes += plan.memory.objects[p].size;
    if (bytes)
      resident.push_back({bytes, v});
  }
  std::sort(resident.begin(), resident.end(),
            [](auto &a, auto &b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (!resident.empty()) {
    msg << "\n  Resident on tile " << worst << ":";
    for (std::size_t i = 0; i < resident.size() && i < 8; ++i) {
      const std::uint32_t v = resident[i].second;
      msg << "\n    " << g.describeVariable(v) << ": " << resident[i].first << " bytes, stays because "
          << (c.reason[v].empty() ? "offloading it would not help this tile" : c.reason[v]);
    }
  }
  msg << "\n  Offloaded variables still need tile memory while staged (from their load to their last use):"
         " split large weights into smaller variables used by fewer steps (docs/streaming-memory.md).";
  return msg.str();
}

} // namespace aspen::compiler
