// Copyright (c) Aspen contributors.
#include "passes/Emit.hpp"
#include "passes/ProfileTables.hpp"

#include "codelets/GpFile.hpp"
#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

namespace aspen::compiler {
namespace {

class Resolver {
public:
  Resolver(const ExchangePlan &plan, const AllocationResult &alloc) : plan_(plan), alloc_(alloc) {}
  exe::TileAddr operator()(Loc l) const {
    ASPEN_ASSERT(l.valid(), "resolving an absent location");
    return exe::TileAddr{plan_.memory.objects[l.object].tile, alloc_.address[l.object] + l.offset};
  }
  exe::ScalarRef scalar(const SymScalar &s) const {
    exe::ScalarRef r;
    if (s.where.valid()) {
      r.where = (*this)(s.where);
      r.type = s.type;
    }
    return r;
  }
  std::vector<exe::CopyRun> runs(const std::vector<SymCopyRun> &in) const {
    std::vector<exe::CopyRun> out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i)
      out[i] = exe::CopyRun{(*this)(in[i].src), (*this)(in[i].dst), in[i].bytes};
    return out;
  }

private:
  const ExchangePlan &plan_;
  const AllocationResult &alloc_;
};

} // namespace

exe::CopyPlan makeCopyPlan(std::vector<exe::CopyRun> runs) {
  exe::CopyPlan plan;
  // Counting sort by destination tile keeps each tile's runs in their order.
  std::uint32_t maxTile = 0;
  for (const exe::CopyRun &r : runs)
    maxTile = std::max(maxTile, r.dst.tile);
  std::vector<std::uint32_t> start(runs.empty() ? 1 : maxTile + 2, 0);
  for (const exe::CopyRun &r : runs)
    ++start[r.dst.tile + 1];
  for (std::size_t t = 1; t < start.size(); ++t)
    start[t] += start[t - 1];
  std::vector<exe::CopyRun> sorted(runs.size());
  for (const exe::CopyRun &r : runs)
    sorted[start[r.dst.tile]++] = r;
  runs = {};
  plan.runs.reserve(sorted.size());
  for (const exe::CopyRun &r : sorted) {
    if (r.bytes == 0)
      continue;
    plan.totalBytes += r.bytes;
    if (!plan.runs.empty()) {
      exe::CopyRun &p = plan.runs.back();
      if (p.dst.tile == r.dst.tile && p.src.tile == r.src.tile && p.src.addr + p.bytes == r.src.addr &&
          p.dst.addr + p.bytes == r.dst.addr) {
        p.bytes += r.bytes;
        continue;
      }
    }
    if (plan.tiles.empty() || plan.tiles.back() != r.dst.tile) {
      plan.tiles.push_back(r.dst.tile);
      plan.tileBegin.push_back(static_cast<std::uint32_t>(plan.runs.size()));
    }
    plan.runs.push_back(r);
  }
  plan.tileBegin.push_back(static_cast<std::uint32_t>(plan.runs.size()));
  plan.runs.shrink_to_fit();
  return plan;
}

namespace {

/// Phase 1. Contract: copies the target into `x`, sets `bytesPerTile` large
/// enough for a CPU target's one tile, and records peak bytes per tile and the
/// out-of-memory verdict from the allocation.
void emitTargetAndMemory(exe::ExecutableData &x, const ir::GraphData &g, const AllocationResult &alloc) {
  const unsigned numTiles = g.target.numTiles();
  x.target = g.target;
  x.target.perTileOverheadBytes = alloc.overheadBytes;
  x.tileBytesUsed.resize(numTiles);
  std::uint64_t maxPeak = 0;
  for (unsigned t = 0; t < numTiles; ++t) {
    x.tileBytesUsed[t] = alloc.tiles[t].peakBytes;
    maxPeak = std::max(maxPeak, alloc.tiles[t].peakBytes);
  }
  // A CPU target has no memory limit: its one tile is as large as it needs to be.
  if (g.target.type == poplar::TargetType::CPU && maxPeak > x.target.bytesPerTile)
    x.target.bytesPerTile = (maxPeak + 4095) / 4096 * 4096;
  x.outOfMemory = alloc.outOfMemory;
  x.outOfMemoryMessage = alloc.outOfMemoryMessage;
}

/// Phase 2. Contract: the exchange pass's steps (table indices resolved) with
/// their cycles and control scalars resolved to tile addresses; program
/// entries, counters, switch tables and block names from lowering.
void emitSteps(exe::ExecutableData &x, const LoweredProgram &lp, const ExchangePlan &plan,
               const CycleEstimates &est, const Resolver &at) {
  x.programEntry = lp.programEntry;
  x.numCounters = lp.numCounters;
  x.steps = plan.steps;
  for (std::size_t s = 0; s < x.steps.size(); ++s) {
    x.steps[s].cycles = est.stepCycles[s];
    x.steps[s].scalar = at.scalar(plan.stepScalar[s]);
  }
  x.switchTables = lp.switchTables;
  for (std::size_t i = 0; i < x.switchTables.size(); ++i)
    x.switchTables[i].control = at.scalar(plan.switchControl[i]);
  x.blockNames = lp.blockNames;
}

/// Phase 3. Contract: the vertex types some executed compute set uses, in
/// graph order, with the bytes of each vertex library (.gp) they need (each
/// library once). Returns the executable's type index per graph vertex type
/// (~0u for unused types). Throws `graph_object_load_error` when a library
/// file cannot be read.
std::vector<std::uint32_t> emitVertexTypes(exe::ExecutableData &x, const ir::GraphData &g,
                                           const ExchangePlan &plan) {
  std::vector<std::uint32_t> typeIndex(g.vertexTypes.size(), ~0u);
  for (const PlannedComputeSet &pcs : plan.computeSets)
    for (const PlannedVertex &v : pcs.vertices)
      typeIndex[g.vertices[v.vertex].type] = 0;
  std::vector<std::uint32_t> libIndex(g.codeletLibraries.size(), ~0u);
  for (std::size_t t = 0; t < g.vertexTypes.size(); ++t) {
    if (typeIndex[t] == ~0u)
      continue;
    const ir::VertexTypeInfo &info = g.vertexTypes[t];
    typeIndex[t] = static_cast<std::uint32_t>(x.vertexTypes.size());
    exe::VertexTypeEntry e;
    e.name = info.name;
    e.isMultiVertex = info.isMultiVertex; // a SupervisorVertex runs once, like a Vertex
    e.isSupervisor = info.isSupervisor;
    ASPEN_ASSERT(info.library < g.codeletLibraries.size(), "a vertex type from an unknown library");
    if (libIndex[info.library] == ~0u) {
      const ir::CodeletLibrary &lib = g.codeletLibraries[info.library];
      exe::CodeletLibraryBlob blob;
      blob.contentHash = lib.contentHash;
      blob.bytes = codelets::readCodeletLibrary(lib, "vertex type " + info.name);
      libIndex[info.library] = static_cast<std::uint32_t>(x.codeletLibraries.size());
      x.codeletLibraries.push_back(std::move(blob));
    }
    e.library = libIndex[info.library];
    x.vertexTypes.push_back(std::move(e));
  }
  return typeIndex;
}

/// Each tile's copy of a library's data (planCodeletData), under the library's
/// index in the executable.
void emitCodeletData(exe::ExecutableData &x, const ir::GraphData &g, const ExchangePlan &plan,
                     const AllocationResult &alloc, const std::vector<std::uint32_t> &typeIndex) {
  if (plan.codeletData.empty())
    return;
  std::vector<std::uint32_t> libIndex(g.codeletLibraries.size(), ~0u);
  for (std::size_t t = 0; t < g.vertexTypes.size(); ++t)
    if (typeIndex[t] != ~0u)
      libIndex[g.vertexTypes[t].library] = x.vertexTypes[typeIndex[t]].library;
  for (const ExchangePlan::CodeletData &d : plan.codeletData) {
    ASPEN_ASSERT(libIndex[d.library] != ~0u, "per-tile data of a library no vertex uses");
    exe::CodeletDataImage image;
    image.library = libIndex[d.library];
    image.bytes = d.bytes;
    for (const auto &[tile, object] : d.copies)
      image.regions.push_back({tile, alloc.address[object]});
    x.codeletData.push_back(std::move(image));
  }
}

/// A range of a tile's edge buffer that one tile alone reads (a gather, or a vertex's own
/// buffer): its first byte, size, exchange-in runs and the pointers to it.
struct LoneRange {
  Loc buffer;
  std::uint64_t bytes = 0;
  std::vector<std::uint32_t> runs;        // PlannedComputeSet::exchangeIn
  std::vector<std::uint32_t> relocations; // ExchangePlan::relocations
};

/// Relocations that point into edge buffers, by target object (for LoneRange).
struct EdgeBufferRelocations {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> byObject; // (object, relocation), sorted
  EdgeBufferRelocations(const ExchangePlan &plan) {
    for (std::size_t r = 0; r < plan.relocations.size(); ++r) {
      const std::uint32_t o = plan.relocations[r].target.object;
      if (o < plan.memory.objects.size() && plan.memory.objects[o].category == MemCategory::EdgeBuffer)
        byObject.push_back({o, static_cast<std::uint32_t>(r)});
    }
    std::sort(byObject.begin(), byObject.end());
  }
};

/// The edge buffers of single vertices (a gather into a buffer of the vertex's own, e.g. the
/// partial sums a matMul reduction reads) that the step fills and never drains, of vertices
/// whose library declares its Inputs read-only: lone ranges of their own.
void addOwnBuffers(std::vector<LoneRange> &alone, const ir::GraphData &g, const ExchangePlan &plan,
                   const PlannedComputeSet &pcs, const std::vector<std::uint8_t> &typeReadOnly,
                   const EdgeBufferRelocations &relocations) {
  const std::vector<MemObject> &objects = plan.memory.objects;
  auto isEdgeBuffer = [&](std::uint32_t o) {
    return o < objects.size() && objects[o].category == MemCategory::EdgeBuffer;
  };
  std::vector<std::uint32_t> excluded; // the shared buffers, and buffers exchange-out drains
  for (const InPlaceCandidate &c : pcs.inPlace)
    excluded.push_back(c.buffer.object);
  for (const SymCopyRun &r : pcs.exchangeOut)
    if (isEdgeBuffer(r.src.object))
      excluded.push_back(r.src.object);
  std::sort(excluded.begin(), excluded.end());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> runs; // (buffer, run)
  for (std::size_t r = 0; r < pcs.exchangeIn.size(); ++r) {
    const std::uint32_t o = pcs.exchangeIn[r].dst.object;
    if (isEdgeBuffer(o) && !std::binary_search(excluded.begin(), excluded.end(), o))
      runs.push_back({o, static_cast<std::uint32_t>(r)});
  }
  std::sort(runs.begin(), runs.end());
  for (std::size_t i = 0; i < runs.size();) {
    const std::uint32_t o = runs[i].first;
    std::size_t j = i;
    while (j < runs.size() && runs[j].first == o)
      ++j;
    const MemObject &m = objects[o];
    const auto refs = std::equal_range(relocations.byObject.begin(), relocations.byObject.end(),
                                       std::pair<std::uint32_t, std::uint32_t>{o, 0},
                                       [](const auto &a, const auto &b) { return a.first < b.first; });
    // A gather buffer (Exchange's buffer of one edge): its runs fill [0, size) end to end and
    // every pointer to it points at its start. A shared buffer (whose `owner` is only its last
    // edge's vertex) not read in place, when its readers mix libraries, fails this and stays.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> filled;
    for (std::size_t k = i; k < j; ++k) {
      const SymCopyRun &run = pcs.exchangeIn[runs[k].second];
      filled.push_back({run.dst.offset, run.dst.offset + std::uint64_t(run.bytes)});
    }
    std::sort(filled.begin(), filled.end());
    std::uint64_t end = 0;
    bool gather = true;
    for (const auto &f : filled) {
      gather = gather && f.first == end;
      end = f.second;
    }
    gather = gather && end == m.size;
    for (auto it = refs.first; gather && it != refs.second; ++it)
      gather = plan.relocations[it->second].target.offset == 0;
    if (gather && m.owner < g.vertices.size() && typeReadOnly[g.vertices[m.owner].type] != 0 &&
        m.align <= 4096 && refs.first != refs.second) {
      LoneRange l;
      l.buffer = Loc{o, 0};
      l.bytes = m.size;
      for (std::size_t k = i; k < j; ++k)
        l.runs.push_back(runs[k].second);
      for (auto it = refs.first; it != refs.second; ++it)
        l.relocations.push_back(it->second);
      alone.push_back(std::move(l));
    }
    i = j;
  }
}

/// The scratch windows of `ip` (exe::InPlaceScratchTile): per tile, the lone ranges' window
/// [lo, hi) of its edge buffers, kept when the tile's leading runs are exactly the runs
/// landing in it (each inside the ranges, together their bytes) and every pointer to rebind
/// lies on the tile (a run merged across the window's edge, other runs inside it, or a
/// pointer elsewhere leave the tile's copies in its edge buffers).
void planScratchTiles(exe::InPlaceReads &ip, const ExchangePlan &plan, const std::vector<LoneRange> &alone,
                      const std::vector<SymCopyRun> &symRuns, const Resolver &at) {
  if (alone.empty())
    return;
  struct Window {
    std::uint64_t lo = ~std::uint64_t(0), hi = 0, bytes = 0; // bytes: of the ranges' runs
    std::vector<const LoneRange *> ranges;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans; // the ranges, adjacent ones joined
  };
  std::map<std::uint32_t, Window> windows; // by tile
  for (const LoneRange &c : alone) {
    const exe::TileAddr buffer = at(c.buffer);
    Window &w = windows[buffer.tile];
    w.lo = std::min<std::uint64_t>(w.lo, buffer.addr);
    w.hi = std::max<std::uint64_t>(w.hi, buffer.addr + c.bytes);
    for (std::uint32_t r : c.runs)
      w.bytes += symRuns[r].bytes;
    w.ranges.push_back(&c);
    w.spans.push_back({buffer.addr, buffer.addr + c.bytes});
  }
  for (auto &entry : windows) {
    Window &w = entry.second;
    std::sort(w.spans.begin(), w.spans.end());
    std::size_t n = 0;
    for (const auto &span : w.spans)
      if (n > 0 && span.first <= w.spans[n - 1].second)
        w.spans[n - 1].second = std::max(w.spans[n - 1].second, span.second);
      else
        w.spans[n++] = span;
    w.spans.resize(n);
  }
  // Whether [addr, addr + bytes) lies inside one of `w`'s (joined) ranges.
  auto inRange = [](const Window &w, std::uint64_t addr, std::uint64_t bytes) {
    auto it = std::upper_bound(w.spans.begin(), w.spans.end(),
                               std::pair<std::uint64_t, std::uint64_t>{addr, ~0ull});
    return it != w.spans.begin() && addr + bytes <= std::prev(it)->second;
  };
  const exe::CopyPlan &in = ip.exchangeIn;
  for (std::size_t k = 0; k < in.tiles.size(); ++k) {
    const auto found = windows.find(in.tiles[k]);
    if (found == windows.end())
      continue;
    const Window &w = found->second;
    std::uint32_t lead = in.tileBegin[k];
    std::uint64_t bytes = 0;
    while (lead < in.tileBegin[k + 1] && inRange(w, in.runs[lead].dst.addr, in.runs[lead].bytes))
      bytes += in.runs[lead++].bytes;
    bool clean = bytes == w.bytes && w.hi - w.lo <= std::numeric_limits<std::uint32_t>::max();
    for (std::uint32_t r = lead; clean && r < in.tileBegin[k + 1]; ++r)
      clean = in.runs[r].dst.addr + std::uint64_t(in.runs[r].bytes) <= w.lo || in.runs[r].dst.addr >= w.hi;
    if (!clean)
      continue;
    exe::InPlaceScratchTile s;
    s.planTile = static_cast<std::uint32_t>(k);
    s.runs = lead - in.tileBegin[k];
    s.lo = static_cast<std::uint32_t>(w.lo);
    s.bytes = static_cast<std::uint32_t>(w.hi - w.lo);
    s.bindBegin = static_cast<std::uint32_t>(ip.scratchBindings.size());
    // The pointers are rewritten as the tile runs: only its own (vertex state, descriptors).
    bool own = true;
    for (const LoneRange *c : w.ranges)
      for (std::uint32_t rel : c->relocations) {
        const SymRelocation &r = plan.relocations[rel];
        const exe::TileAddr where = at(r.where);
        own = own && where.tile == in.tiles[k];
        ip.scratchBindings.push_back({where, at(r.target)});
      }
    if (!own || s.runs == 0) {
      ip.scratchBindings.resize(s.bindBegin);
      continue;
    }
    ip.scratch.push_back(s);
  }
}

/// Reading in place (docs/exchange.md). Contract: for the candidates of `pcs` whose readers
/// all come from libraries that declare their Inputs read-only: a range whose bytes are one
/// run of one tile piece on another tile, aligned as its edges need and not written in place
/// during the step, is bound to that run; a range of several runs that two or more tiles read
/// (the same bytes of the same variable) is bound to one copy in the step's staging area.
/// Their exchange-in runs leave `inPlace.exchangeIn`. In a fused step, ranges one tile alone
/// reads (a gather in the shared buffer, or a read-only vertex's own buffer) get scratch
/// windows (planScratchTiles): their runs lead their tile's runs in `inPlace.exchangeIn`.
/// Everything else stays as planned.
exe::InPlaceReads planInPlaceReads(const ir::GraphData &g, const ExchangePlan &plan,
                                   const PlannedComputeSet &pcs, const Resolver &at,
                                   const std::vector<std::uint8_t> &typeReadOnly,
                                   const EdgeBufferRelocations &ownBuffers) {
  exe::InPlaceReads ip;
  if (pcs.inPlace.empty() && !pcs.fuseExchangeIn)
    return ip;
  std::vector<std::uint8_t> elided(pcs.exchangeIn.size(), 0);
  auto bind = [&](const InPlaceCandidate &c, exe::TileAddr base) {
    const exe::TileAddr buffer = at(c.buffer);
    for (std::uint32_t rel : c.relocations) {
      const SymRelocation &r = plan.relocations[rel];
      const exe::TileAddr target = at(r.target);
      ASPEN_ASSERT(target.tile == buffer.tile && target.addr >= buffer.addr &&
                       target.addr - buffer.addr < c.bytes,
                   "an in-place edge points outside its range");
      ip.bindings.push_back({at(r.where), exe::TileAddr{base.tile, base.addr + (target.addr - buffer.addr)}});
    }
    std::fill(elided.begin() + c.runBegin, elided.begin() + c.runEnd, 1);
  };
  // Gathered ranges by their bytes: (variable, first byte, bytes) -> candidates.
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::uint64_t>, std::vector<const InPlaceCandidate *>>
      gathers;
  for (const InPlaceCandidate &c : pcs.inPlace) {
    if (!std::all_of(c.readers.begin(), c.readers.end(),
                     [&](std::uint32_t v) { return typeReadOnly[g.vertices[v].type] != 0; }))
      continue;
    if (c.runEnd - c.runBegin == 1) {
      if (c.sourceWrittenInPlace)
        continue;
      const exe::TileAddr src = at(pcs.exchangeIn[c.runBegin].src);
      const exe::TileAddr buffer = at(c.buffer);
      if (src.tile != buffer.tile && src.addr % c.align == buffer.addr % c.align)
        bind(c, src);
    } else if (c.runEnd > c.runBegin) {
      gathers[{c.var, c.begin, c.bytes}].push_back(&c);
    }
  }
  // Ranges one tile alone reads, for the per-thread scratch copy (below).
  std::vector<LoneRange> alone;
  for (const auto &[key, readers] : gathers) {
    if (readers.size() < 2) {
      // One reader: a staging copy would cost what the edge buffer's does; a scratch copy
      // made just before the tile runs does not (fused steps only).
      const InPlaceCandidate &c = *readers.front();
      if (pcs.fuseExchangeIn && c.align <= 4096) {
        LoneRange l{c.buffer, c.bytes, {}, c.relocations};
        for (std::uint32_t r = c.runBegin; r < c.runEnd; ++r)
          l.runs.push_back(r);
        alone.push_back(std::move(l));
      }
      continue;
    }
    // The copy lies where the most demanding reader's buffer does modulo its alignment;
    // readers whose buffers agree with it share it (all, unless edges of one start at odd
    // offsets where another's start at even ones).
    const InPlaceCandidate &first = **std::max_element(
        readers.begin(), readers.end(),
        [](const InPlaceCandidate *a, const InPlaceCandidate *b) { return a->align < b->align; });
    const std::uint32_t align = first.align;
    if (align > 4096) // the staging area is page-aligned host memory
      continue;
    const exe::TileAddr buffer = at(first.buffer);
    const std::uint64_t at0 = (ip.stagingBytes + align - 1) / align * align + buffer.addr % align;
    if (at0 + std::get<2>(key) > std::numeric_limits<std::uint32_t>::max())
      continue;
    std::vector<const InPlaceCandidate *> sharing;
    for (const InPlaceCandidate *c : readers)
      if (at(c->buffer).addr % c->align == at0 % c->align)
        sharing.push_back(c);
    if (sharing.size() < 2)
      continue;
    for (std::uint32_t r = first.runBegin; r < first.runEnd; ++r) {
      const SymCopyRun &run = pcs.exchangeIn[r];
      ip.staging.push_back({at(run.src),
                            exe::TileAddr{exe::kStagingTile,
                                          static_cast<std::uint32_t>(at0 + (at(run.dst).addr - buffer.addr))},
                            run.bytes});
    }
    ip.stagingBytes = at0 + std::get<2>(key);
    for (const InPlaceCandidate *c : sharing)
      bind(*c, exe::TileAddr{exe::kStagingTile, static_cast<std::uint32_t>(at0)});
  }
  if (pcs.fuseExchangeIn)
    addOwnBuffers(alone, g, plan, pcs, typeReadOnly, ownBuffers);
  if (ip.bindings.empty() && alone.empty())
    return exe::InPlaceReads{};
  // The runs of lone gathers first (each tile's runs keep their order in the plan), so that
  // a tile's scratch runs lead its runs.
  std::vector<std::uint8_t> toScratch(pcs.exchangeIn.size(), 0);
  for (const LoneRange &c : alone)
    for (std::uint32_t r : c.runs)
      toScratch[r] = 1;
  std::vector<SymCopyRun> kept;
  kept.reserve(pcs.exchangeIn.size());
  for (std::size_t r = 0; r < pcs.exchangeIn.size(); ++r)
    if (toScratch[r])
      kept.push_back(pcs.exchangeIn[r]);
  for (std::size_t r = 0; r < pcs.exchangeIn.size(); ++r)
    if (!elided[r] && !toScratch[r])
      kept.push_back(pcs.exchangeIn[r]);
  ip.exchangeIn = makeCopyPlan(at.runs(kept));
  planScratchTiles(ip, plan, alone, pcs.exchangeIn, at);
  if (ip.bindings.empty() && ip.scratch.empty())
    return exe::InPlaceReads{};
  return ip;
}

/// Phase 4. Contract: one compute step per planned compute set: exchange-in
/// and exchange-out as copy plans (makeCopyPlan), vertex instances grouped by
/// tile (CSR: `tiles`, `tileBegin`) with their state addresses and cycles.
void emitComputeSteps(exe::ExecutableData &x, const ir::GraphData &g, const ExchangePlan &plan,
                      const AllocationResult &alloc, const CycleEstimates &est, const Resolver &at,
                      const std::vector<std::uint32_t> &typeIndex) {
  x.computeSteps.resize(plan.computeSets.size());
  // Per graph vertex type: the object defining it declares its Inputs read-only (reading in
  // place), as the library's metadata records it per vertex type (decided when its objects
  // were linked, and checked against the entries' flags when the library loads).
  std::vector<std::uint8_t> typeReadOnly(g.vertexTypes.size(), 0);
  for (std::size_t t = 0; t < g.vertexTypes.size(); ++t)
    typeReadOnly[t] = typeIndex[t] != ~0u && g.vertexTypes[t].inputsReadOnly ? 1 : 0;
  const EdgeBufferRelocations ownBuffers(plan);
  tbb::parallel_for(std::size_t(0), plan.computeSets.size(), [&](std::size_t c) {
    const PlannedComputeSet &pcs = plan.computeSets[c];
    exe::ComputeStep &cs = x.computeSteps[c];
    cs.name = g.computeSets[pcs.computeSet].name;
    cs.exchangeIn = makeCopyPlan(at.runs(pcs.exchangeIn));
    cs.exchangeIn.cycles = est.exchangeInCycles[c];
    cs.exchangeIn.tileCycles = est.exchangeInTileCycles[c];
    cs.exchangeOut = makeCopyPlan(at.runs(pcs.exchangeOut));
    cs.exchangeOut.cycles = est.exchangeOutCycles[c];
    cs.exchangeOut.tileCycles = est.exchangeOutTileCycles[c];
    cs.fuseExchangeIn = pcs.fuseExchangeIn;
    cs.inPlace = planInPlaceReads(g, plan, pcs, at, typeReadOnly, ownBuffers);
    if (!cs.inPlace.empty()) {
      cs.inPlace.exchangeIn.cycles = cs.exchangeIn.cycles;
      cs.inPlace.exchangeIn.tileCycles = cs.exchangeIn.tileCycles;
    }
    cs.vertices.resize(pcs.vertices.size());
    for (std::size_t i = 0; i < pcs.vertices.size(); ++i) {
      const PlannedVertex &pv = pcs.vertices[i];
      if (cs.tiles.empty() || cs.tiles.back() != pv.tile) {
        cs.tiles.push_back(pv.tile);
        cs.tileBegin.push_back(static_cast<std::uint32_t>(i));
      }
      exe::VertexInstance &vi = cs.vertices[i];
      vi.type = typeIndex[g.vertices[pv.vertex].type];
      vi.state = alloc.address[pv.object];
      vi.graphVertex = pv.vertex;
      vi.cycles = est.vertexCycles[c][i];
      vi.counted = est.vertexCounted[c][i] != 0;
    }
    cs.tileBegin.push_back(static_cast<std::uint32_t>(pcs.vertices.size()));
    cs.computeCycles = est.computeCycles[c];
    cs.totalVertexCycles = est.totalVertexCycles[c];
  });
}

/// Phase 5. Contract: copy programs as copy plans, host transfers as host runs
/// (adjacent runs merged), and the print, stream, remote buffer and host handle
/// tables.
void emitCopiesAndTransfers(exe::ExecutableData &x, const ExchangePlan &plan, const CycleEstimates &est,
                            const Resolver &at) {
  x.copies.resize(plan.copies.size());
  tbb::parallel_for(std::size_t(0), plan.copies.size(), [&](std::size_t k) {
    x.copies[k] = makeCopyPlan(at.runs(plan.copies[k].runs));
    x.copies[k].cycles = est.copyCycles[k];
    x.copies[k].tileCycles = est.copyTileCycles[k];
  });
  x.hostTransfers.resize(plan.transfers.size());
  for (std::size_t k = 0; k < plan.transfers.size(); ++k) {
    exe::HostTransfer &h = x.hostTransfers[k];
    h.bytes = plan.transfers[k].bytes;
    for (const SymHostRun &r : plan.transfers[k].runs) {
      const exe::TileAddr dev = at(r.device);
      if (!h.runs.empty()) {
        exe::HostRun &p = h.runs.back();
        if (p.device.tile == dev.tile && p.device.addr + p.bytes == dev.addr &&
            p.hostOffset + p.bytes == r.hostOffset) {
          p.bytes += r.bytes;
          continue;
        }
      }
      h.runs.push_back({r.hostOffset, dev, r.bytes});
    }
  }
  x.prints = plan.prints;
  x.streams = plan.streams;
  x.remoteBuffers = plan.remoteBuffers;
  x.hostHandles = plan.hostHandles;
  x.streamingLayout = plan.streaming;
  x.collectives = plan.collectives;
  x.replicaIndexTransfers = plan.replicaIndexTransfers;
  x.hwSeedsTransfer = plan.hwSeedsTransfer;
}

/// Phase 6. Contract: the initial tile memory: blobs (vertex objects, state
/// arrays, descriptors, initial values of variables) sorted by tile then
/// address, fragments closer than 16 bytes merged; relocations resolved and
/// grouped by the tile they write (`where.tile` ascending).
void emitInitialMemory(exe::ExecutableData &x, const ir::GraphData &g, const ExchangePlan &plan,
                       const Resolver &at) {
  const unsigned numTiles = g.target.numTiles();
  struct Fragment {
    exe::TileAddr where;
    const std::uint8_t *data;
    std::uint64_t size;
  };
  std::vector<Fragment> fragments;
  fragments.reserve(plan.blobs.size() + g.initialValues.size());
  for (const SymBlob &b : plan.blobs)
    fragments.push_back({at(b.where), plan.blobPool.data() + b.poolBegin, b.size});
  for (const auto &[var, bytes] : g.initialValues) {
    if (var >= g.variables.size() || (var < plan.offloaded.size() && plan.offloaded[var]))
      continue; // an offloaded variable's initial value is in Streaming Memory
    for (std::uint32_t p = plan.memory.firstPiece[var]; p < plan.memory.firstPiece[var + 1]; ++p) {
      const MemObject &piece = plan.memory.objects[p];
      if (piece.ownerOffset >= bytes.size())
        continue;
      const std::uint64_t end = std::min<std::uint64_t>(piece.ownerEnd(), bytes.size());
      fragments.push_back({at(Loc{p, 0}), bytes.data() + piece.ownerOffset, end - piece.ownerOffset});
    }
  }
  // By tile (counting sort), then by address within each tile, tiles in parallel.
  std::vector<std::uint32_t> tileStart(numTiles + 1, 0);
  for (const Fragment &f : fragments)
    ++tileStart[f.where.tile + 1];
  for (unsigned t = 0; t < numTiles; ++t)
    tileStart[t + 1] += tileStart[t];
  {
    std::vector<Fragment> byTile(fragments.size());
    std::vector<std::uint32_t> fill(tileStart.begin(), tileStart.end() - 1);
    for (const Fragment &f : fragments)
      byTile[fill[f.where.tile]++] = f;
    fragments.swap(byTile);
  }
  // Merge fragments that touch or leave only alignment padding between them.
  constexpr std::uint64_t kMaxGap = 16;
  std::vector<std::vector<exe::MemoryBlob>> tileBlobs(numTiles);
  tbb::parallel_for(0u, numTiles, [&](unsigned t) {
    auto first = fragments.begin() + tileStart[t], last = fragments.begin() + tileStart[t + 1];
    std::sort(first, last, [](const Fragment &a, const Fragment &b) { return a.where.addr < b.where.addr; });
    for (auto i = first; i != last;) {
      auto j = i + 1;
      std::uint64_t end = i->where.addr + i->size;
      while (j != last && j->where.addr >= end && j->where.addr - end <= kMaxGap) {
        end = j->where.addr + j->size;
        ++j;
      }
      exe::MemoryBlob blob;
      blob.where = i->where;
      blob.bytes.assign(end - blob.where.addr, 0);
      for (auto k = i; k != j; ++k)
        std::copy(k->data, k->data + k->size, blob.bytes.begin() + (k->where.addr - blob.where.addr));
      tileBlobs[t].push_back(std::move(blob));
      i = j;
    }
  });
  for (auto &blobs : tileBlobs)
    for (auto &b : blobs)
      x.blobs.push_back(std::move(b));
  // Relocations grouped by the tile they write, in plan order within a tile,
  // so that the loader applies a tile's relocations right after its blobs,
  // while its lines are in cache (in plan order they jump from tile to tile: a
  // cache and TLB miss each). A stable counting sort, a few chunks in parallel.
  const std::size_t numRelocations = plan.relocations.size();
  const std::size_t numChunks = std::min<std::size_t>(16, (numRelocations + 4095) / 4096);
  const std::size_t chunk = numChunks ? (numRelocations + numChunks - 1) / numChunks : 0;
  std::vector<std::size_t> next(numChunks * numTiles, 0); // per chunk and tile: a count, then a position
  tbb::parallel_for(std::size_t(0), numChunks, [&](std::size_t c) {
    std::size_t *count = next.data() + c * numTiles;
    for (std::size_t i = c * chunk, end = std::min(numRelocations, i + chunk); i < end; ++i)
      ++count[at(plan.relocations[i].where).tile];
  });
  std::size_t position = 0;
  for (unsigned t = 0; t < numTiles; ++t)
    for (std::size_t c = 0; c < numChunks; ++c)
      position += std::exchange(next[c * numTiles + t], position);
  x.relocations.resize(numRelocations);
  tbb::parallel_for(std::size_t(0), numChunks, [&](std::size_t c) {
    std::size_t *place = next.data() + c * numTiles;
    for (std::size_t i = c * chunk, end = std::min(numRelocations, i + chunk); i < end; ++i) {
      const exe::Relocation r{at(plan.relocations[i].where), at(plan.relocations[i].target)};
      x.relocations[place[r.where.tile]++] = r;
    }
  });
}

/// Phase 7. Contract: the profile JSON (docs/profile-format.md) from what the
/// passes and the earlier phases produced; reads `x`, changes nothing.
std::string emitProfile(const exe::ExecutableData &x, const ir::GraphData &g, const LoweredProgram &lp,
                        const ExchangePlan &plan, const LivenessResult &live, const AllocationResult &alloc,
                        const CycleEstimates &est) {
  const unsigned numTiles = g.target.numTiles();
  std::uint64_t maxPeak = 0;
  for (unsigned t = 0; t < numTiles; ++t)
    maxPeak = std::max(maxPeak, alloc.tiles[t].peakBytes);
  using nlohmann::json;
  json prof;
  prof["format"] = "aspen-profile";
  prof["version"] = 2;
  prof["target"] = {{"type", g.target.type == poplar::TargetType::CPU   ? "CPU"
                             : g.target.type == poplar::TargetType::IPU ? "IPU"
                                                                        : "IPU_MODEL"},
                    {"arch", g.target.arch},
                    {"numIPUs", g.target.numIPUs},
                    {"tilesPerIPU", g.target.tilesPerIPU},
                    {"numTiles", numTiles},
                    {"bytesPerTile", x.target.bytesPerTile},
                    {"numWorkerContexts", g.target.numWorkerContexts},
                    {"tileClockFrequency", g.target.tileClockFrequency},
                    {"replicationFactor", g.replicationFactor}};
  std::uint64_t numEdges = 0;
  for (const ir::Vertex &v : g.vertices) {
    if (v.type >= g.vertexTypes.size())
      continue;
    const auto &fields = g.vertexTypes[v.type].fields;
    for (std::size_t f = 0; f < fields.size() && f < v.fields.size(); ++f)
      if (fields[f].kind != ir::FieldKind::State)
        numEdges += v.fields[f].edges().size();
  }
  prof["graph"] = {{"numVertices", g.vertices.size()},
                   {"numEdges", numEdges},
                   {"numVariables", g.variables.size()},
                   {"numComputeSets", g.computeSets.size()},
                   {"numExecutedComputeSets", plan.computeSets.size()},
                   {"numVertexTypes", x.vertexTypes.size()},
                   {"numPrograms", lp.programEntry.size()},
                   {"numSteps", lp.steps.size()}};
  {
    json tiles;
    std::vector<std::uint64_t> peak(numTiles), always(numTiles), nal(numTiles);
    std::vector<std::int64_t> peakStep(numTiles);
    std::uint64_t totalPeak = 0, overhead = 0;
    json byCategory = json::object(), totalByCategory = json::object();
    json nonOverlapped = json::object(), totalNonOverlapped = json::object();
    for (int c = 0; c < static_cast<int>(MemCategory::Count); ++c) {
      std::vector<std::uint64_t> col(numTiles), colNonOverlapped(numTiles);
      std::uint64_t sum = 0, sumNonOverlapped = 0;
      for (unsigned t = 0; t < numTiles; ++t) {
        col[t] = alloc.tiles[t].categoryBytes[c];
        sum += col[t];
        colNonOverlapped[t] = alloc.tiles[t].categoryNonOverlapped[c];
        sumNonOverlapped += colNonOverlapped[t];
      }
      byCategory[categoryName(static_cast<MemCategory>(c))] = col;
      totalByCategory[categoryName(static_cast<MemCategory>(c))] = sum;
      nonOverlapped[categoryName(static_cast<MemCategory>(c))] = colNonOverlapped;
      totalNonOverlapped[categoryName(static_cast<MemCategory>(c))] = sumNonOverlapped;
    }
    std::uint64_t tilesOver = 0;
    for (unsigned t = 0; t < numTiles; ++t) {
      const TileMemoryStats &st = alloc.tiles[t];
      peak[t] = st.peakBytes;
      always[t] = st.alwaysLiveBytes;
      nal[t] = st.notAlwaysLivePeak;
      peakStep[t] = st.peakStep == ~0u ? -1 : static_cast<std::int64_t>(st.peakStep);
      totalPeak += st.peakBytes;
      overhead += alloc.overheadBytes;
      tilesOver += st.peakBytes > x.target.bytesPerTile;
    }
    totalByCategory["overhead"] = overhead;
    tiles["peakBytes"] = peak;
    tiles["alwaysLiveBytes"] = always;
    tiles["notAlwaysLivePeakBytes"] = nal;
    tiles["notAlwaysLivePeakStep"] = peakStep;
    tiles["byCategory"] = byCategory;
    tiles["byCategoryNonOverlapped"] = nonOverlapped;
    prof["memory"] = {{"perTileOverheadBytes", alloc.overheadBytes},
                      {"totalPeakBytes", totalPeak},
                      {"maxTilePeakBytes", maxPeak},
                      {"byCategory", totalByCategory},
                      {"byCategoryNonOverlapped", totalNonOverlapped},
                      {"tiles", tiles},
                      {"outOfMemory", alloc.outOfMemory},
                      {"tilesOutOfMemory", tilesOver},
                      {"outOfMemoryMessage", alloc.outOfMemoryMessage}};
  }
  {
    json steps = json::array();
    for (std::size_t s = 0; s < lp.steps.size(); ++s) {
      json step = {{"kind", exe::stepKindName(lp.steps[s].kind)},
                   {"name", lp.steps[s].message},
                   {"cycles", est.stepCycles[s]},
                   {"notAlwaysLiveBytes", live.notAlwaysLiveBytes[s]}};
      if (est.streamingBytes[s]) { // Streaming Memory traffic (docs/streaming-memory.md)
        step["streamingBytes"] = est.streamingBytes[s];
        step["hiddenCycles"] = est.hiddenCycles[s];
        if (s < plan.overlapStep.size() && plan.overlapStep[s] != kNoObject)
          step["overlapsStep"] = plan.overlapStep[s];
      }
      steps.push_back(std::move(step));
    }
    prof["steps"] = std::move(steps);
    prof["liveness"] = {{"numAlwaysLiveVariables", live.numAlwaysLive},
                        {"numNotAlwaysLiveVariables", live.numNotAlwaysLive},
                        {"numBasicBlocks", live.numBlocks}};
  }
  {
    json css = json::array();
    std::map<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>>
        perType; // exe type -> (instances, cycles)
    for (std::size_t c = 0; c < x.computeSteps.size(); ++c) {
      const exe::ComputeStep &cs = x.computeSteps[c];
      css.push_back({{"name", cs.name},
                     {"vertices", cs.vertices.size()},
                     {"tiles", cs.tiles.size()},
                     {"computeCycles", cs.computeCycles},
                     {"totalVertexCycles", cs.totalVertexCycles},
                     {"exchangeInBytes", cs.exchangeIn.totalBytes},
                     {"exchangeInCycles", cs.exchangeIn.cycles},
                     {"exchangeOutBytes", cs.exchangeOut.totalBytes},
                     {"exchangeOutCycles", cs.exchangeOut.cycles}});
      for (const exe::VertexInstance &v : cs.vertices) {
        auto &p = perType[v.type];
        ++p.first;
        p.second += v.cycles;
      }
    }
    prof["computeSets"] = std::move(css);
    json types = json::array();
    for (std::size_t t = 0; t < x.vertexTypes.size(); ++t) {
      auto it = perType.find(static_cast<std::uint32_t>(t));
      types.push_back({{"name", x.vertexTypes[t].name},
                       {"instances", it == perType.end() ? 0 : it->second.first},
                       {"cyclesPerExecution", it == perType.end() ? 0 : it->second.second}});
    }
    prof["vertexTypes"] = std::move(types);
  }
  {
    // Streaming Memory: what each remote buffer holds, which variables the compiler offloaded
    // (in arena order) and each variable's tier (docs/streaming-memory.md).
    json buffers = json::array(), variables = json::array();
    std::uint64_t total = 0;
    std::vector<std::uint8_t> offloadedBuffer(x.remoteBuffers.size(), 0);
    for (const exe::StreamingVariable &v : x.streamingLayout)
      offloadedBuffer[v.remoteBuffer] = 1;
    for (std::size_t b = 0; b < x.remoteBuffers.size(); ++b) {
      const exe::RemoteBufferInfo &r = x.remoteBuffers[b];
      const std::uint64_t bytes =
          r.numElements * poplar::Type(r.type).size() * std::max<std::uint64_t>(1, r.repeats);
      total += bytes;
      if (!offloadedBuffer[b])
        buffers.push_back({{"name", r.handle}, {"bytes", bytes}});
    }
    std::uint64_t staged = 0, hidden = 0, stagingCycles = 0;
    for (std::size_t s = 0; s < est.streamingBytes.size(); ++s)
      if (est.streamingBytes[s]) {
        staged += est.streamingBytes[s];
        hidden += est.hiddenCycles[s];
        stagingCycles += est.stepCycles[s] + est.hiddenCycles[s];
      }
    for (const exe::StreamingVariable &v : x.streamingLayout)
      variables.push_back({{"name", v.name},
                           {"variable", v.variable},
                           {"offset", v.offset},
                           {"bytes", v.bytes},
                           {"firstStep", v.firstStep == ~0u ? -1 : static_cast<std::int64_t>(v.firstStep)},
                           {"loads", v.loads},
                           {"stores", v.stores}});
    prof["streamingMemory"] = {
        {"capacityBytes", g.target.streamingMemoryBytes * std::max(1u, g.target.numIPUs)},
        {"bytes", total},
        {"remoteBuffers", std::move(buffers)},
        {"offloadedVariables", std::move(variables)},
        {"stagedBytes", staged},
        {"transferCycles", stagingCycles},
        {"hiddenCycles", hidden}};
  }
  addProfileTables(prof, g, lp, plan, live, x);
  // Names are bytes (Poplar takes any): bytes that are not UTF-8 become U+FFFD in the
  // profile text instead of an exception from the Engine constructor (docs/profiling.md).
  return prof.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace

std::unique_ptr<exe::ExecutableData> emitExecutable(const ir::GraphData &g, const LoweredProgram &lp,
                                                    const ExchangePlan &plan, const LivenessResult &live,
                                                    const AllocationResult &alloc,
                                                    const CycleEstimates &est) {
  auto exe = std::make_unique<exe::ExecutableData>();
  exe::ExecutableData &x = *exe;
  const Resolver at(plan, alloc);
  emitTargetAndMemory(x, g, alloc);
  x.replicationFactor = g.replicationFactor;
  emitSteps(x, lp, plan, est, at);
  const std::vector<std::uint32_t> typeIndex = emitVertexTypes(x, g, plan);
  emitComputeSteps(x, g, plan, alloc, est, at, typeIndex);
  emitCodeletData(x, g, plan, alloc, typeIndex);
  emitCopiesAndTransfers(x, plan, est, at);
  emitInitialMemory(x, g, plan, at);
  x.profileJson = emitProfile(x, g, lp, plan, live, alloc, est);
  return exe;
}

} // namespace aspen::compiler
