// Copyright (c) Aspen contributors.
#include "passes/Exchange.hpp"

#include "passes/Collectives.hpp"
#include "passes/ViewRuns.hpp"
#include "util/Assert.hpp"

#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

namespace aspen::compiler {

const char *categoryName(MemCategory c) {
  switch (c) {
  case MemCategory::Variable:
    return "variables";
  case MemCategory::Constant:
    return "constants";
  case MemCategory::VertexObject:
    return "vertexInstances";
  case MemCategory::VertexFieldData:
    return "vertexFieldData";
  case MemCategory::Descriptor:
    return "descriptors";
  case MemCategory::EdgeBuffer:
    return "edgeBuffers";
  case MemCategory::Count:
    break;
  }
  return "?";
}

std::uint32_t VariableLayout::findPiece(std::uint32_t var, std::uint64_t byte) const {
  const Piece *first = pieces.data() + firstPiece[var];
  const Piece *last = pieces.data() + firstPiece[var + 1];
  const Piece *p =
      std::upper_bound(first, last, byte, [](std::uint64_t b, const Piece &pc) { return b < pc.byteEnd; });
  if (p == last || p->byteBegin > byte)
    return kNoObject;
  return static_cast<std::uint32_t>(p - pieces.data());
}

VariableLayout buildVariableLayout(const ir::GraphData &g) {
  VariableLayout layout;
  const std::size_t numVars = g.variables.size();
  layout.firstPiece.resize(numVars + 1);
  // CPU targets have one tile and need no mapping: an unmapped element is on tile 0.
  const bool fillGaps = g.target.type == poplar::TargetType::CPU;
  for (std::size_t v = 0; v < numVars; ++v) {
    layout.firstPiece[v] = static_cast<std::uint32_t>(layout.pieces.size());
    const ir::Variable &var = g.variables[v];
    const std::uint64_t es = var.type.size();
    auto add = [&](std::uint64_t begin, std::uint64_t end, std::uint32_t tile) {
      if (begin >= end)
        return;
      if (!layout.pieces.empty() && layout.pieces.size() > layout.firstPiece[v] &&
          layout.pieces.back().tile == tile && layout.pieces.back().byteEnd == begin * es) {
        layout.pieces.back().byteEnd = end * es;
        return;
      }
      layout.pieces.push_back({begin * es, end * es, tile});
    };
    std::uint64_t at = 0;
    for (const ir::TileInterval &ti : var.mapping) {
      if (fillGaps && ti.begin > at)
        add(at, ti.begin, 0);
      add(ti.begin, std::min<std::uint64_t>(ti.end, var.numElements), fillGaps ? 0 : ti.tile);
      at = std::max(at, ti.end);
    }
    if (fillGaps && at < var.numElements)
      add(at, var.numElements, 0);
  }
  layout.firstPiece[numVars] = static_cast<std::uint32_t>(layout.pieces.size());
  return layout;
}

namespace {

/// A byte range of a variable written by one compute set / copy / transfer.
struct WriteRange {
  std::uint32_t var;
  std::uint64_t begin, end;
};

/// Summarises reads and writes into per-variable accesses (sorted by variable).
/// `fullWriteMask` is kFullWrite, or kUndef for WriteUndef.
std::vector<VarAccess> summariseAccesses(const ir::GraphData &g, std::vector<std::uint32_t> &reads,
                                         std::vector<WriteRange> &writes, bool parallel = false,
                                         std::uint8_t fullFlag = kFullWrite,
                                         std::uint8_t writeFlag = kWrite) {
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  auto byVarBegin = [](const WriteRange &a, const WriteRange &b) {
    return a.var != b.var ? a.var < b.var : a.begin < b.begin;
  };
  // Often already sorted: vertices tend to write their outputs in order.
  if (!std::is_sorted(writes.begin(), writes.end(), byVarBegin)) {
    if (parallel)
      tbb::parallel_sort(writes.begin(), writes.end(), byVarBegin);
    else
      std::sort(writes.begin(), writes.end(), byVarBegin);
  }
  std::vector<VarAccess> out;
  out.reserve(reads.size() + writes.size());
  std::size_t r = 0, w = 0;
  while (r < reads.size() || w < writes.size()) {
    const std::uint32_t var =
        w < writes.size() && (r >= reads.size() || writes[w].var < reads[r]) ? writes[w].var : reads[r];
    std::uint8_t flags = 0;
    if (r < reads.size() && reads[r] == var) {
      flags |= kRead;
      ++r;
    }
    if (w < writes.size() && writes[w].var == var) {
      flags |= writeFlag;
      // Union of the written byte ranges: does it cover the whole variable?
      std::uint64_t covered = 0, reach = 0;
      for (; w < writes.size() && writes[w].var == var; ++w) {
        const WriteRange &x = writes[w];
        if (x.end > reach) {
          covered += x.end - std::max(x.begin, reach);
          reach = x.end;
        }
      }
      const ir::Variable &v = g.variables[var];
      if (covered >= v.numElements * v.type.size())
        flags |= fullFlag;
    }
    out.push_back({var, flags});
  }
  return out;
}

/// The bytes of a view as runs of piece bytes: (Loc, bytes), in order.
struct PieceRun {
  Loc loc;
  std::uint64_t bytes;
};

void collectPieceRuns(const VariableLayout &layout, const ir::TensorView &view, std::uint64_t first,
                      std::uint64_t last, std::vector<PieceRun> &out) {
  forEachByteRun(view, first, last, [&](std::uint32_t var, std::uint64_t b, std::uint64_t n) {
    forEachPieceRun(layout, var, b, n, [&](std::uint32_t piece, std::uint64_t off, std::uint64_t len) {
      ASPEN_ASSERT(piece != kNoObject, "a view reaches an unmapped element after validation");
      if (!out.empty() && out.back().loc.object == piece && out.back().loc.offset + out.back().bytes == off) {
        out.back().bytes += len;
        return;
      }
      out.push_back({Loc{piece, static_cast<std::uint32_t>(off)}, len});
    });
    return true;
  });
}

/// Pairs source and destination piece runs of equal total length into copy runs.
void zipRuns(const std::vector<PieceRun> &src, const std::vector<PieceRun> &dst,
             std::vector<SymCopyRun> &out) {
  std::size_t i = 0, j = 0;
  std::uint64_t si = 0, dj = 0; // bytes consumed of src[i], dst[j]
  while (i < src.size() && j < dst.size()) {
    const std::uint64_t n = std::min(src[i].bytes - si, dst[j].bytes - dj);
    SymCopyRun run{Loc{src[i].loc.object, static_cast<std::uint32_t>(src[i].loc.offset + si)},
                   Loc{dst[j].loc.object, static_cast<std::uint32_t>(dst[j].loc.offset + dj)},
                   static_cast<std::uint32_t>(n)};
    out.push_back(run);
    si += n;
    dj += n;
    if (si == src[i].bytes) {
      ++i;
      si = 0;
    }
    if (dj == dst[j].bytes) {
      ++j;
      dj = 0;
    }
  }
}

void putU32(std::vector<std::uint8_t> &pool, std::uint64_t at, std::uint32_t value) {
  std::memcpy(pool.data() + at, &value, sizeof value);
}

// ---- compute sets ----------------------------------------------------------------

/// The plan of a run of vertices of one compute set. Objects it makes are
/// numbered `numPieces + i` until merged.
struct ChunkPlan {
  std::vector<MemObject> objects;
  std::vector<SymBlob> blobs;
  std::vector<std::uint8_t> pool;
  std::vector<SymRelocation> relocations;
  std::vector<SymCopyRun> in, out;
  std::vector<PlannedVertex> vertices;
  std::vector<std::uint32_t> reads;
  std::vector<WriteRange> writes;
  std::vector<std::uint32_t> directWrites; // variables a vertex writes in place (not via an edge buffer)
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pieceAlign; // (piece, alignment needed)
};

class ChunkPlanner {
public:
  ChunkPlanner(const ir::GraphData &g, const VariableLayout &layout, ChunkPlan &out)
      : g_(g), layout_(layout), out_(out), numPieces_(static_cast<std::uint32_t>(layout.pieces.size())) {}

  void planVertex(std::uint32_t v) {
    const ir::Vertex &vx = g_.vertices[v];
    const ir::VertexTypeInfo &type = g_.vertexTypes[vx.type];
    const std::uint32_t tile = vx.tile < 0 ? 0 : static_cast<std::uint32_t>(vx.tile);
    const std::uint32_t objSize = std::max<std::uint32_t>(type.objectSize, 1);
    const std::uint32_t obj =
        newObject(objSize, std::max<std::uint32_t>(type.objectAlign, 8), tile, v, MemCategory::VertexObject);
    const std::uint64_t image = newBlob(obj, objSize);
    PlannedVertex pv{v, tile, obj, 0};
    static const ir::FieldValue unset;
    for (std::size_t fi = 0; fi < type.fields.size(); ++fi) {
      const ir::FieldInfo &f = type.fields[fi];
      const ir::FieldValue &val = fi < vx.fields.size() ? vx.fields[fi] : unset;
      ASPEN_ASSERT(f.offset + std::min<std::uint32_t>(f.size, 8) <= objSize,
                   "a field lies outside its vertex object");
      const Loc field{obj, f.offset};
      const bool hasSize = f.size >= 12 && f.offset + 12 <= objSize;
      if (f.kind == ir::FieldKind::State) {
        planState(f, val, obj, image, tile, v, hasSize);
        continue;
      }
      switch (f.shape) {
      case ir::FieldShape::Scalar:
      case ir::FieldShape::Vector: {
        const poplar::Tensor &t = val.edges.at(0);
        const Loc data = planEdge(f, t.getImpl(), tile, v, pv.edgeBytes);
        relocate(field, data);
        if (f.shape == ir::FieldShape::Vector && hasSize)
          putU32(out_.pool, image + f.offset + 8, static_cast<std::uint32_t>(t.numElements()));
        break;
      }
      case ir::FieldShape::VectorOfEdges:
      case ir::FieldShape::VectorOfScalarEdges: {
        const bool descs = f.shape == ir::FieldShape::VectorOfEdges;
        const std::uint32_t n = static_cast<std::uint32_t>(val.edges.size());
        if (hasSize)
          putU32(out_.pool, image + f.offset + 8, n);
        if (n == 0)
          break;
        const std::uint32_t entry = descs ? 16 : 8;
        const std::uint32_t table = newObject(n * entry, 8, tile, v, MemCategory::Descriptor);
        const std::uint64_t tableImage = descs ? newBlob(table, n * entry) : 0;
        relocate(field, Loc{table, 0});
        for (std::uint32_t e = 0; e < n; ++e) {
          const poplar::Tensor &t = val.edges[e];
          const Loc data = planEdge(f, t.getImpl(), tile, v, pv.edgeBytes);
          relocate(Loc{table, e * entry}, data);
          if (descs)
            putU32(out_.pool, tableImage + e * entry + 8, static_cast<std::uint32_t>(t.numElements()));
        }
        break;
      }
      }
    }
    out_.vertices.push_back(pv);
  }

private:
  std::uint32_t newObject(std::uint64_t size, std::uint32_t align, std::uint32_t tile, std::uint32_t owner,
                          MemCategory cat) {
    out_.objects.push_back({size, tile, align, owner, cat});
    return numPieces_ + static_cast<std::uint32_t>(out_.objects.size() - 1);
  }
  /// Zeroed initial bytes for a whole object; returns their place in the pool.
  std::uint64_t newBlob(std::uint32_t obj, std::uint32_t size) {
    const std::uint64_t at = out_.pool.size();
    out_.pool.resize(at + size, 0);
    out_.blobs.push_back({Loc{obj, 0}, at, size});
    return at;
  }
  void relocate(Loc where, Loc target) {
    if (target.valid())
      out_.relocations.push_back({where, target});
  }

  void planState(const ir::FieldInfo &f, const ir::FieldValue &val, std::uint32_t obj, std::uint64_t image,
                 std::uint32_t tile, std::uint32_t v, bool hasSize) {
    if (f.shape == ir::FieldShape::Scalar) {
      if (val.set) {
        const std::size_t n = std::min<std::size_t>(val.stateBytes.size(), f.size);
        std::memcpy(out_.pool.data() + image + f.offset, val.stateBytes.data(), n);
      }
      return;
    }
    // A state array (`Vector<T>`): its own object, pointed at by the field.
    const std::size_t es = f.elementType.valid() ? f.elementType.size() : 1;
    std::size_t count = val.set ? val.stateCount : 0;
    if (!val.set && val.declaredSize != ~std::size_t(0))
      count = val.declaredSize;
    if (hasSize)
      putU32(out_.pool, image + f.offset + 8, static_cast<std::uint32_t>(count));
    if (count == 0)
      return;
    const std::uint32_t bytes = static_cast<std::uint32_t>(count * es);
    const std::uint32_t data =
        newObject(bytes, std::max<std::uint32_t>({static_cast<std::uint32_t>(es), f.minAlign, 8}), tile, v,
                  MemCategory::VertexFieldData);
    const std::uint64_t at = newBlob(data, bytes);
    if (val.set)
      std::memcpy(out_.pool.data() + at, val.stateBytes.data(),
                  std::min<std::size_t>(bytes, val.stateBytes.size()));
    relocate(Loc{obj, f.offset}, Loc{data, 0});
  }

  /// Where the vertex finds an edge's data: the variable itself or an edge buffer.
  Loc planEdge(const ir::FieldInfo &f, const ir::TensorView &view, std::uint32_t tile, std::uint32_t v,
               std::uint64_t &edgeBytes) {
    const std::uint64_t es = view.elementType.size();
    const std::uint64_t bytes = view.numElements() * es;
    edgeBytes += bytes;
    if (bytes == 0)
      return Loc{};
    const bool reads = f.kind != ir::FieldKind::Output;
    const bool writes = f.kind != ir::FieldKind::Input;
    runs_.clear();
    collectPieceRuns(layout_, view, 0, view.numElements(), runs_);
    // The variables this edge touches, for liveness.
    forEachByteRun(view, [&](std::uint32_t var, std::uint64_t b, std::uint64_t n) {
      if (reads && (out_.reads.empty() || out_.reads.back() != var))
        out_.reads.push_back(var);
      if (writes)
        out_.writes.push_back({var, b, b + n});
      return true;
    });
    const std::uint32_t align = std::max<std::uint32_t>(static_cast<std::uint32_t>(es), f.minAlign);
    if (runs_.size() == 1 && layout_.pieces[runs_[0].loc.object].tile == tile &&
        runs_[0].loc.offset % align == 0) {
      const std::uint32_t piece = runs_[0].loc.object;
      out_.pieceAlign.push_back({piece, align});
      if (writes)
        forEachByteRun(view, [&](std::uint32_t var, std::uint64_t, std::uint64_t) {
          out_.directWrites.push_back(var);
          return true;
        });
      return runs_[0].loc;
    }
    const std::uint32_t buffer = newObject(bytes, align, tile, v, MemCategory::EdgeBuffer);
    std::uint64_t at = 0;
    for (const PieceRun &r : runs_) {
      const Loc local{buffer, static_cast<std::uint32_t>(at)};
      if (reads)
        out_.in.push_back({r.loc, local, static_cast<std::uint32_t>(r.bytes)});
      if (writes)
        out_.out.push_back({local, r.loc, static_cast<std::uint32_t>(r.bytes)});
      at += r.bytes;
    }
    return Loc{buffer, 0};
  }

  const ir::GraphData &g_;
  const VariableLayout &layout_;
  ChunkPlan &out_;
  std::uint32_t numPieces_;
  std::vector<PieceRun> runs_;
};

/// Moves chunk-local object ids to their global place.
inline void rebase(Loc &l, std::uint32_t numPieces, std::uint32_t delta) {
  if (l.object != kNoObject && l.object >= numPieces)
    l.object += delta;
}

// ---- host transfers and copies ---------------------------------------------------

PlannedTransfer planTransfer(const VariableLayout &layout, const ir::TensorView &view, std::uint64_t first,
                             std::uint64_t last) {
  std::vector<PieceRun> runs;
  collectPieceRuns(layout, view, first, last, runs);
  PlannedTransfer t;
  for (const PieceRun &r : runs) {
    t.runs.push_back({t.bytes, r.loc, static_cast<std::uint32_t>(r.bytes)});
    t.bytes += r.bytes;
  }
  return t;
}

SymScalar locateElement(const VariableLayout &layout, const poplar::Tensor &t, std::uint64_t index) {
  SymScalar s;
  if (!t.valid())
    return s;
  std::vector<PieceRun> runs;
  collectPieceRuns(layout, t.getImpl(), index, index + 1, runs);
  ASPEN_ASSERT(runs.size() == 1, "a scalar element spans pieces");
  s.where = runs[0].loc;
  s.type = t.elementType().id();
  return s;
}

void addViewAccess(const ir::TensorView &view, std::uint64_t first, std::uint64_t last, bool read, bool write,
                   std::vector<std::uint32_t> &reads, std::vector<WriteRange> &writes) {
  forEachByteRun(view, first, last, [&](std::uint32_t var, std::uint64_t b, std::uint64_t n) {
    if (read)
      reads.push_back(var);
    if (write)
      writes.push_back({var, b, b + n});
    return true;
  });
}

} // namespace

ExchangePlan planExchange(const ir::GraphData &g, LoweredProgram &lowered) {
  ExchangePlan plan;
  plan.layout = buildVariableLayout(g);
  const VariableLayout &layout = plan.layout;
  const std::uint32_t numPieces = static_cast<std::uint32_t>(layout.pieces.size());
  plan.objects.reserve(numPieces);
  for (const Piece &p : layout.pieces) {
    plan.objects.push_back({p.byteEnd - p.byteBegin, p.tile, 1, 0, MemCategory::Variable});
  }
  for (std::uint32_t v = 0; v < g.variables.size(); ++v) {
    const ir::Variable &var = g.variables[v];
    for (std::uint32_t p = layout.firstPiece[v]; p < layout.firstPiece[v + 1]; ++p) {
      plan.objects[p].owner = v;
      plan.objects[p].align = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(var.type.size()));
      plan.objects[p].category = var.isConstant ? MemCategory::Constant : MemCategory::Variable;
    }
  }

  auto &steps = lowered.steps;
  const std::size_t numSteps = steps.size();

  // ---- compute sets: number them in order of first execution -------------------
  std::vector<std::uint32_t> csIndex(g.computeSets.size(), ~0u);
  std::vector<std::uint32_t> executed;
  for (auto &s : steps) {
    if (s.kind != exe::StepKind::Execute)
      continue;
    if (csIndex[s.a] == ~0u) {
      csIndex[s.a] = static_cast<std::uint32_t>(executed.size());
      executed.push_back(s.a);
    }
    s.a = csIndex[s.a];
  }

  // Work items: runs of at most kChunk vertices of one compute set.
  constexpr std::size_t kChunk = 2048;
  struct Item {
    std::uint32_t plannedCs;
    std::size_t begin, end;
  };
  std::vector<Item> items;
  for (std::uint32_t i = 0; i < executed.size(); ++i) {
    const std::size_t n = g.computeSets[executed[i]].vertices.size();
    for (std::size_t b = 0; b < n; b += kChunk)
      items.push_back({i, b, std::min(n, b + kChunk)});
  }
  std::vector<ChunkPlan> chunks(items.size());
  tbb::parallel_for(std::size_t(0), items.size(), [&](std::size_t k) {
    const Item &it = items[k];
    const auto &vertices = g.computeSets[executed[it.plannedCs]].vertices;
    ChunkPlanner planner(g, layout, chunks[k]);
    for (std::size_t i = it.begin; i < it.end; ++i)
      planner.planVertex(vertices[i]);
  });

  // Merge chunks: objects get global ids in chunk order. Offsets first, then
  // every chunk copies (and renumbers) its part in parallel.
  struct Offsets {
    std::size_t objects, pool, blobs, relocations, in, out, vertices, reads, writes;
  };
  std::vector<Offsets> at(items.size());
  plan.computeSets.resize(executed.size());
  std::vector<std::vector<std::uint32_t>> csReads(executed.size());
  std::vector<std::vector<WriteRange>> csWrites(executed.size());
  std::vector<std::vector<std::uint32_t>> csDirectWrites(executed.size());
  {
    Offsets total{plan.objects.size(), 0, 0, 0, 0, 0, 0, 0, 0};
    std::vector<Offsets> perCs(executed.size(), Offsets{0, 0, 0, 0, 0, 0, 0, 0, 0});
    for (std::size_t k = 0; k < items.size(); ++k) {
      const ChunkPlan &c = chunks[k];
      Offsets &cs = perCs[items[k].plannedCs];
      at[k] = Offsets{total.objects, total.pool,  total.blobs, total.relocations, cs.in,
                      cs.out,        cs.vertices, cs.reads,    cs.writes};
      total.objects += c.objects.size();
      total.pool += c.pool.size();
      total.blobs += c.blobs.size();
      total.relocations += c.relocations.size();
      cs.in += c.in.size();
      cs.out += c.out.size();
      cs.vertices += c.vertices.size();
      cs.reads += c.reads.size();
      cs.writes += c.writes.size();
    }
    ASPEN_ASSERT(total.objects < kNoObject, "too many memory objects");
    plan.objects.resize(total.objects);
    plan.blobPool.resize(total.pool);
    plan.blobs.resize(total.blobs);
    plan.relocations.resize(total.relocations);
    for (std::size_t i = 0; i < executed.size(); ++i) {
      plan.computeSets[i].exchangeIn.resize(perCs[i].in);
      plan.computeSets[i].exchangeOut.resize(perCs[i].out);
      plan.computeSets[i].vertices.resize(perCs[i].vertices);
      csReads[i].resize(perCs[i].reads);
      csWrites[i].resize(perCs[i].writes);
    }
  }
  tbb::parallel_for(std::size_t(0), items.size(), [&](std::size_t k) {
    ChunkPlan &c = chunks[k];
    const Offsets &o = at[k];
    const std::uint32_t d = static_cast<std::uint32_t>(o.objects - numPieces);
    PlannedComputeSet &pcs = plan.computeSets[items[k].plannedCs];
    std::copy(c.objects.begin(), c.objects.end(), plan.objects.begin() + o.objects);
    std::copy(c.pool.begin(), c.pool.end(), plan.blobPool.begin() + o.pool);
    for (std::size_t i = 0; i < c.blobs.size(); ++i) {
      SymBlob b = c.blobs[i];
      rebase(b.where, numPieces, d);
      b.poolBegin += o.pool;
      plan.blobs[o.blobs + i] = b;
    }
    for (std::size_t i = 0; i < c.relocations.size(); ++i) {
      SymRelocation r = c.relocations[i];
      rebase(r.where, numPieces, d);
      rebase(r.target, numPieces, d);
      plan.relocations[o.relocations + i] = r;
    }
    auto moveRuns = [&](const std::vector<SymCopyRun> &from, std::vector<SymCopyRun> &to, std::size_t base) {
      for (std::size_t i = 0; i < from.size(); ++i) {
        SymCopyRun r = from[i];
        rebase(r.src, numPieces, d);
        rebase(r.dst, numPieces, d);
        to[base + i] = r;
      }
    };
    moveRuns(c.in, pcs.exchangeIn, o.in);
    moveRuns(c.out, pcs.exchangeOut, o.out);
    for (std::size_t i = 0; i < c.vertices.size(); ++i) {
      PlannedVertex v = c.vertices[i];
      v.object += d;
      pcs.vertices[o.vertices + i] = v;
    }
    std::copy(c.reads.begin(), c.reads.end(), csReads[items[k].plannedCs].begin() + o.reads);
    std::copy(c.writes.begin(), c.writes.end(), csWrites[items[k].plannedCs].begin() + o.writes);
    auto align = std::move(c.pieceAlign);
    auto direct = std::move(c.directWrites);
    c = ChunkPlan{};
    c.pieceAlign = std::move(align);
    c.directWrites = std::move(direct);
  });
  for (std::size_t k = 0; k < items.size(); ++k) {
    auto &direct = chunks[k].directWrites;
    csDirectWrites[items[k].plannedCs].insert(csDirectWrites[items[k].plannedCs].end(), direct.begin(),
                                              direct.end());
  }
  for (const ChunkPlan &c : chunks)
    for (auto [piece, align] : c.pieceAlign)
      plan.objects[piece].align = std::max(plan.objects[piece].align, align);
  chunks.clear();
  tbb::parallel_for(std::size_t(0), executed.size(), [&](std::size_t i) {
    PlannedComputeSet &pcs = plan.computeSets[i];
    pcs.computeSet = executed[i];
    std::stable_sort(pcs.vertices.begin(), pcs.vertices.end(),
                     [](const PlannedVertex &a, const PlannedVertex &b) { return a.tile < b.tile; });
    pcs.accesses = summariseAccesses(g, csReads[i], csWrites[i], executed.size() == 1);
    // Tile-by-tile exchange-in is safe unless a vertex may overwrite, in place,
    // a variable some other tile's exchange-in still has to read.
    std::vector<std::uint32_t> &direct = csDirectWrites[i];
    std::sort(direct.begin(), direct.end());
    direct.erase(std::unique(direct.begin(), direct.end()), direct.end());
    pcs.fuseExchangeIn = std::none_of(pcs.exchangeIn.begin(), pcs.exchangeIn.end(), [&](const SymCopyRun &r) {
      ASPEN_ASSERT(r.src.object < numPieces, "exchange-in reads variable pieces");
      return std::binary_search(direct.begin(), direct.end(), plan.objects[r.src.object].owner);
    });
    direct = {};
    csReads[i] = {};
    csWrites[i] = {};
  });

  // ---- per-step plans: copies, transfers, prints, scalars --------------------------
  plan.stepScalar.resize(numSteps);
  plan.switchControl.resize(lowered.switchTables.size());
  std::vector<std::vector<VarAccess>> stepAcc(numSteps);
  std::map<std::pair<const ir::ProgramNode *, std::uint32_t>, std::uint32_t> planned; // dedupe shared nodes
  struct CopyJob {
    const ir::ProgramNode *node;
    std::uint32_t index;
  };
  std::vector<CopyJob> copyJobs;

  for (std::size_t si = 0; si < numSteps; ++si) {
    exe::Step &s = steps[si];
    const ir::ProgramNode *node = lowered.stepNode[si];
    std::vector<std::uint32_t> reads;
    std::vector<WriteRange> writes;
    std::uint8_t fullFlag = kFullWrite, writeFlag = kWrite;
    using K = exe::StepKind;
    switch (s.kind) {
    case K::Execute: {
      const PlannedComputeSet &pcs = plan.computeSets[s.a];
      stepAcc[si] = pcs.accesses;
      if (node && node->predicate.valid()) {
        plan.stepScalar[si] = locateElement(layout, node->predicate, 0);
        addViewAccess(node->predicate.getImpl(), 0, 1, false, true, reads, writes);
        // Merge the flag's access with the compute set's.
        auto extra = summariseAccesses(g, reads, writes);
        for (const VarAccess &x : extra) {
          auto it = std::find_if(stepAcc[si].begin(), stepAcc[si].end(),
                                 [&](const VarAccess &y) { return y.var == x.var; });
          if (it == stepAcc[si].end())
            stepAcc[si].push_back(x);
          else
            it->flags |= x.flags & ~kFullWrite;
        }
      }
      continue;
    }
    case K::Copy: {
      auto [it, fresh] = planned.try_emplace({node, 0u}, static_cast<std::uint32_t>(plan.copies.size()));
      if (fresh) {
        plan.copies.emplace_back();
        copyJobs.push_back({node, it->second});
      }
      s.a = it->second;
      addViewAccess(node->src.getImpl(), 0, node->src.numElements(), true, false, reads, writes);
      addViewAccess(node->dst.getImpl(), 0, node->dst.numElements(), false, true, reads, writes);
      break;
    }
    case K::StreamToDevice:
    case K::DeviceToStream:
    case K::Print: {
      const poplar::Tensor &t = s.kind == K::StreamToDevice ? node->dst : node->src;
      auto [it, fresh] = planned.try_emplace({node, 0u}, static_cast<std::uint32_t>(plan.transfers.size()));
      if (fresh)
        plan.transfers.push_back(planTransfer(layout, t.getImpl(), 0, t.numElements()));
      if (s.kind == K::Print) {
        exe::PrintSpec spec;
        spec.title = node->message;
        spec.type = t.elementType().id();
        for (std::size_t d : t.shape())
          spec.shape.push_back(d);
        spec.transfer = it->second;
        s.a = static_cast<std::uint32_t>(plan.prints.size());
        plan.prints.push_back(std::move(spec));
      } else {
        s.b = it->second;
      }
      const bool write = s.kind == K::StreamToDevice;
      addViewAccess(t.getImpl(), 0, t.numElements(), !write, write, reads, writes);
      break;
    }
    case K::RemoteToDevice:
    case K::DeviceToRemote: {
      const bool toDevice = s.kind == K::RemoteToDevice;
      const poplar::Tensor &t = toDevice ? node->dst : node->src;
      const std::uint32_t row = s.b;
      const std::uint64_t rows = node->offset.valid() ? node->offset.numElements() : 1;
      const std::uint64_t perRow = t.numElements() / rows;
      auto [it, fresh] = planned.try_emplace({node, row}, static_cast<std::uint32_t>(plan.transfers.size()));
      if (fresh)
        plan.transfers.push_back(planTransfer(layout, t.getImpl(), row * perRow, (row + 1) * perRow));
      s.b = it->second;
      if (node->offset.valid()) {
        plan.stepScalar[si] = locateElement(layout, node->offset, row);
        addViewAccess(node->offset.getImpl(), row, row + 1, true, false, reads, writes);
      }
      addViewAccess(t.getImpl(), row * perRow, (row + 1) * perRow, !toDevice, toDevice, reads, writes);
      break;
    }
    case K::JumpIfZero:
    case K::JumpIfNonZero:
    case K::AbortIf:
      plan.stepScalar[si] = locateElement(layout, node->predicate, 0);
      addViewAccess(node->predicate.getImpl(), 0, 1, true, false, reads, writes);
      break;
    case K::SwitchJump:
      plan.switchControl[s.a] = locateElement(layout, node->predicate, 0);
      addViewAccess(node->predicate.getImpl(), 0, 1, true, false, reads, writes);
      break;
    case K::Collective: { // src and dst as host transfers (docs/replication.md)
      exe::CollectiveInfo info = collectiveInfo(*node);
      info.src = static_cast<std::uint32_t>(plan.transfers.size());
      plan.transfers.push_back(planTransfer(layout, node->src.getImpl(), 0, node->src.numElements()));
      info.dst = static_cast<std::uint32_t>(plan.transfers.size());
      plan.transfers.push_back(planTransfer(layout, node->dst.getImpl(), 0, node->dst.numElements()));
      s.a = static_cast<std::uint32_t>(plan.collectives.size());
      plan.collectives.push_back(std::move(info));
      addViewAccess(node->src.getImpl(), 0, node->src.numElements(), true, false, reads, writes);
      addViewAccess(node->dst.getImpl(), 0, node->dst.numElements(), false, true, reads, writes);
      break;
    }
    case K::WriteUndef:
      // Not a use: it only lets a variable die when it covers all of it.
      addViewAccess(node->dst.getImpl(), 0, node->dst.numElements(), false, true, reads, writes);
      fullFlag = kUndef;
      writeFlag = 0;
      break;
    default:
      continue;
    }
    stepAcc[si] = summariseAccesses(g, reads, writes, false, fullFlag, writeFlag);
  }

  tbb::parallel_for(std::size_t(0), copyJobs.size(), [&](std::size_t k) {
    const ir::ProgramNode *node = copyJobs[k].node;
    std::vector<PieceRun> src, dst;
    collectPieceRuns(layout, node->src.getImpl(), 0, node->src.numElements(), src);
    collectPieceRuns(layout, node->dst.getImpl(), 0, node->dst.numElements(), dst);
    zipRuns(src, dst, plan.copies[copyJobs[k].index].runs);
  });

  // Host handles: always readable and writable by the host.
  for (const ir::HostHandle &h : g.hostHandles) {
    exe::HostHandleInfo info;
    info.name = h.name;
    info.isWrite = h.isWrite;
    info.type = h.tensor.elementType().id();
    info.transfer = static_cast<std::uint32_t>(plan.transfers.size());
    plan.transfers.push_back(planTransfer(layout, h.tensor.getImpl(), 0, h.tensor.numElements()));
    plan.hostHandles.push_back(std::move(info));
    forEachByteRun(h.tensor.getImpl(), [&](std::uint32_t var, std::uint64_t, std::uint64_t) {
      plan.hostVisibleVars.push_back(var);
      return true;
    });
  }
  // Each replica writes its index into these constants when it is loaded.
  for (std::uint32_t var : g.replicationIndexVars) {
    plan.replicaIndexTransfers.push_back(static_cast<std::uint32_t>(plan.transfers.size()));
    ir::TensorView index;
    index.elementType = poplar::UNSIGNED_INT;
    index.segments =
        std::make_shared<const std::vector<ir::Segment>>(std::vector<ir::Segment>{{var, 0, 1, 1}});
    plan.transfers.push_back(planTransfer(layout, index, 0, 1));
    plan.hostVisibleVars.push_back(var);
  }
  std::sort(plan.hostVisibleVars.begin(), plan.hostVisibleVars.end());
  plan.hostVisibleVars.erase(std::unique(plan.hostVisibleVars.begin(), plan.hostVisibleVars.end()),
                             plan.hostVisibleVars.end());
  for (const ir::StreamRecord &s : g.streams)
    plan.streams.push_back({s.handle, s.type.id(), s.numElements, s.hostToDevice,
                            s.mode == poplar::ReplicatedStreamMode::BROADCAST});
  for (const ir::RemoteBufferRecord &r : g.remoteBuffers)
    plan.remoteBuffers.push_back({r.handle, r.type.id(), r.numElements, r.repeats});

  plan.stepAccessBegin.resize(numSteps + 1);
  std::size_t total = 0;
  for (std::size_t si = 0; si < numSteps; ++si) {
    plan.stepAccessBegin[si] = static_cast<std::uint32_t>(total);
    total += stepAcc[si].size();
  }
  plan.stepAccessBegin[numSteps] = static_cast<std::uint32_t>(total);
  plan.stepAccesses.reserve(total);
  for (auto &a : stepAcc)
    plan.stepAccesses.insert(plan.stepAccesses.end(), a.begin(), a.end());
  return plan;
}

} // namespace aspen::compiler
