// Copyright (c) Aspen contributors.
#include "passes/Exchange.hpp"

#include "codelets/CodeletAbi.h"
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
  case MemCategory::CodeletData:
    return "codeletData";
  case MemCategory::Count:
    break;
  }
  return "?";
}

std::uint32_t MemoryObjects::findPiece(std::uint32_t var, std::uint64_t byte) const {
  const MemObject *first = objects.data() + firstPiece[var];
  const MemObject *last = objects.data() + firstPiece[var + 1];
  const MemObject *p = std::upper_bound(first, last, byte,
                                        [](std::uint64_t b, const MemObject &o) { return b < o.ownerEnd(); });
  if (p == last || p->ownerOffset > byte)
    return kNoObject;
  return static_cast<std::uint32_t>(p - objects.data());
}

MemoryObjects buildVariablePieces(const ir::GraphData &g) {
  MemoryObjects memory;
  std::vector<MemObject> &pieces = memory.objects;
  const std::size_t numVars = g.variables.size();
  memory.firstPiece.resize(numVars + 1);
  // CPU targets have one tile and need no mapping: an unmapped element is on tile 0.
  const bool fillGaps = g.target.type == poplar::TargetType::CPU;
  for (std::size_t v = 0; v < numVars; ++v) {
    memory.firstPiece[v] = static_cast<std::uint32_t>(pieces.size());
    const ir::Variable &var = g.variables[v];
    const std::uint64_t es = var.type.size();
    const std::uint32_t align = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(es));
    const MemCategory category = var.isConstant ? MemCategory::Constant : MemCategory::Variable;
    auto add = [&](std::uint64_t begin, std::uint64_t end, std::uint32_t tile) {
      if (begin >= end)
        return;
      if (pieces.size() > memory.firstPiece[v] && pieces.back().tile == tile &&
          pieces.back().ownerEnd() == begin * es) {
        pieces.back().size += (end - begin) * es;
        return;
      }
      MemObject piece;
      piece.size = (end - begin) * es;
      piece.tile = tile;
      piece.align = align;
      piece.owner = static_cast<std::uint32_t>(v);
      piece.category = category;
      piece.ownerOffset = begin * es;
      pieces.push_back(piece);
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
  memory.firstPiece[numVars] = static_cast<std::uint32_t>(pieces.size());
  return memory;
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

/// `View`: an ir::TensorView or an ir::Edge.
template <class View>
void collectPieceRuns(const MemoryObjects &memory, const View &view, std::uint64_t first, std::uint64_t last,
                      std::vector<PieceRun> &out) {
  forEachByteRun(view, first, last, [&](std::uint32_t var, std::uint64_t b, std::uint64_t n) {
    forEachPieceRun(memory, var, b, n, [&](std::uint32_t piece, std::uint64_t off, std::uint64_t len) {
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

/// Marks, in a relocation target, an edge whose data will be in its tile's
/// shared edge buffer; `Loc::offset` is the index of its SharedEdge.
inline constexpr std::uint32_t kSharedEdgeObject = kNoObject - 1;

/// An edge that reads or writes one contiguous byte range of a variable not
/// (wholly, or not suitably aligned) on the vertex's tile: it is served by the
/// tile's shared edge buffer of the compute set.
struct SharedEdge {
  std::uint32_t tile;
  std::uint32_t var;
  std::uint64_t begin, end; // bytes of the variable
  std::uint32_t vertex;     // graph vertex (owner of the buffer in memory reports)
  std::uint32_t relocation; // index of the relocation whose target is this edge's data
  std::uint32_t align;      // the edge's address alignment (a power of two)
  bool reads, writes;
};

/// The plan of a run of vertices of one compute set. Objects it makes are
/// numbered `numPieces + i` until merged.
struct ChunkPlan {
  std::vector<SharedEdge> shared;
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
  ChunkPlanner(const ir::GraphData &g, const MemoryObjects &memory, ChunkPlan &out)
      : g_(g), memory_(memory), out_(out), numPieces_(static_cast<std::uint32_t>(memory.numPieces())) {}

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
      ASPEN_ASSERT(f.offset + std::min<std::uint32_t>(f.size, ASPEN_FIELD_POINTER_BYTES) <= objSize,
                   "a field lies outside its vertex object");
      const Loc field{obj, f.offset};
      const bool hasSize = f.size >= ASPEN_FIELD_SIZED_BYTES && f.offset + ASPEN_FIELD_SIZED_BYTES <= objSize;
      if (f.kind == ir::FieldKind::State) {
        planState(f, val, obj, image, tile, v, hasSize);
        continue;
      }
      switch (f.shape) {
      case ir::FieldShape::Scalar:
      case ir::FieldShape::Vector: {
        ASPEN_ASSERT(!val.edges().empty(), "an unconnected edge after validation");
        const ir::Edge &e = val.edges()[0];
        const Loc data = planEdge(f, e, tile, v, pv.edgeBytes);
        relocate(field, data);
        if (f.elementType == poplar::QUARTER && f.size >= ASPEN_FIELD_QUARTER_SCALAR_BYTES)
          planQuarterMetadata(f, e, obj, tile, v, pv.edgeBytes);
        if (f.shape == ir::FieldShape::Vector && hasSize)
          putU32(out_.pool, image + f.offset + ASPEN_FIELD_SIZE_OFFSET, e.count);
        break;
      }
      case ir::FieldShape::VectorOfEdges:
      case ir::FieldShape::VectorOfScalarEdges: {
        const bool descs = f.shape == ir::FieldShape::VectorOfEdges;
        const auto edges = val.edges();
        const std::uint32_t n = static_cast<std::uint32_t>(edges.size());
        if (hasSize)
          putU32(out_.pool, image + f.offset + ASPEN_FIELD_SIZE_OFFSET, n);
        if (n == 0)
          break;
        const std::uint32_t entry = descs ? ASPEN_FIELD_DESCRIPTOR_BYTES : ASPEN_FIELD_SCALAR_ENTRY_BYTES;
        const std::uint32_t table = newObject(n * entry, 8, tile, v, MemCategory::Descriptor);
        const std::uint64_t tableImage = descs ? newBlob(table, n * entry) : 0;
        relocate(field, Loc{table, 0});
        for (std::uint32_t e = 0; e < n; ++e) {
          const Loc data = planEdge(f, edges[e], tile, v, pv.edgeBytes);
          relocate(Loc{table, e * entry}, data);
          if (descs)
            putU32(out_.pool, tableImage + e * entry + ASPEN_FIELD_SIZE_OFFSET, edges[e].count);
        }
        // fp8: the list's one metadata pointer (validation made the entries agree).
        if (f.elementType == poplar::QUARTER && f.size >= ASPEN_FIELD_QUARTER_VECTOR_BYTES)
          planQuarterMetadata(f, edges[0], obj, tile, v, pv.edgeBytes);
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
    if (!target.valid())
      return;
    if (target.object == kSharedEdgeObject)
      out_.shared[target.offset].relocation = static_cast<std::uint32_t>(out_.relocations.size());
    out_.relocations.push_back({where, target});
  }

  void planState(const ir::FieldInfo &f, const ir::FieldValue &val, std::uint32_t obj, std::uint64_t image,
                 std::uint32_t tile, std::uint32_t v, bool hasSize) {
    if (f.shape == ir::FieldShape::Scalar) {
      if (val.set) {
        const std::size_t n = std::min<std::size_t>(val.stateBytes().size(), f.size);
        std::memcpy(out_.pool.data() + image + f.offset, val.stateBytes().data(), n);
      }
      return;
    }
    // A state array (`Vector<T>`): its own object, pointed at by the field.
    const std::size_t es = f.elementType.valid() ? f.elementType.size() : 1;
    std::size_t count = val.set ? val.stateCount : 0;
    if (!val.set && val.declaredSize != ir::FieldValue::kNoDeclaredSize)
      count = val.declaredSize;
    if (hasSize)
      putU32(out_.pool, image + f.offset + ASPEN_FIELD_SIZE_OFFSET, static_cast<std::uint32_t>(count));
    if (count == 0)
      return;
    const std::uint32_t bytes = static_cast<std::uint32_t>(count * es);
    const std::uint32_t data =
        newObject(bytes, std::max<std::uint32_t>({static_cast<std::uint32_t>(es), f.minAlign, 8}), tile, v,
                  MemCategory::VertexFieldData);
    const std::uint64_t at = newBlob(data, bytes);
    if (val.set)
      std::memcpy(out_.pool.data() + at, val.stateBytes().data(),
                  std::min<std::size_t>(bytes, val.stateBytes().size()));
    relocate(Loc{obj, f.offset}, Loc{data, 0});
  }

  /// fp8: the metadata of a quarter edge, read through the pointer in the field's
  /// last bytes (CodeletAbi.h, docs/fp8.md). Validation made sure it exists.
  void planQuarterMetadata(const ir::FieldInfo &f, const ir::Edge &e, std::uint32_t obj, std::uint32_t tile,
                           std::uint32_t v, std::uint64_t &edgeBytes) {
    const poplar::Tensor t = ir::edgeTensor(g_, e);
    ASPEN_ASSERT(t.hasMetadata(), "a quarter edge without metadata after validation");
    ir::FieldInfo md = f;
    md.kind = ir::FieldKind::Input;
    md.shape = ir::FieldShape::Scalar;
    md.elementType = poplar::QUARTER_METADATA;
    md.minAlign = 1;
    const poplar::Tensor metadata = t.getMetadata();
    relocate(Loc{obj, f.offset + f.size - ASPEN_FIELD_METADATA_POINTER_BYTES},
             planEdge(md, metadata.getImpl(), tile, v, edgeBytes));
  }

  /// Where the vertex finds an edge's data: the variable itself or an edge buffer.
  template <class View>
  Loc planEdge(const ir::FieldInfo &f, const View &view, std::uint32_t tile, std::uint32_t v,
               std::uint64_t &edgeBytes) {
    const std::uint64_t es = view.elementType.size();
    const std::uint64_t bytes = view.numElements() * es;
    edgeBytes += bytes;
    if (bytes == 0)
      return Loc{};
    const bool reads = f.kind != ir::FieldKind::Output;
    const bool writes = f.kind != ir::FieldKind::Input;
    runs_.clear();
    collectPieceRuns(memory_, view, 0, view.numElements(), runs_);
    // The variables this edge touches, for liveness.
    forEachByteRun(view, [&](std::uint32_t var, std::uint64_t b, std::uint64_t n) {
      if (reads && (out_.reads.empty() || out_.reads.back() != var))
        out_.reads.push_back(var);
      if (writes)
        out_.writes.push_back({var, b, b + n});
      return true;
    });
    const std::uint32_t align = std::max<std::uint32_t>(static_cast<std::uint32_t>(es), f.minAlign);
    if (runs_.size() == 1 && memory_.objects[runs_[0].loc.object].tile == tile &&
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
    // One contiguous range of one variable (at any offset): served by the tile's shared
    // edge buffer, which places each edge at an address its alignment allows.
    std::uint32_t onlyVar = 0;
    std::uint64_t begin = 0, numRuns = 0;
    forEachByteRun(view, [&](std::uint32_t var, std::uint64_t b, std::uint64_t) {
      onlyVar = var;
      begin = b;
      return ++numRuns < 2;
    });
    if (numRuns == 1 && (align & (align - 1)) == 0) {
      out_.shared.push_back({tile, onlyVar, begin, begin + bytes, v, kNoObject, align, reads, writes});
      return Loc{kSharedEdgeObject, static_cast<std::uint32_t>(out_.shared.size() - 1)};
    }
    // Anything else (a gather of several ranges): a buffer of its own.
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
  const MemoryObjects &memory_;
  ChunkPlan &out_;
  std::uint32_t numPieces_;
  std::vector<PieceRun> runs_;
};

/// Moves chunk-local object ids to their global place.
inline void rebase(Loc &l, std::uint32_t numPieces, std::uint32_t delta) {
  if (l.object < kSharedEdgeObject && l.object >= numPieces)
    l.object += delta;
}

/// The shared edge buffers of one compute set: per tile, one buffer holding
/// the union of the variable ranges its vertices' shared edges touch.
struct SharedBuffers {
  std::vector<MemObject> objects;                     // buffer k is object `base + k` once placed
  std::vector<SymCopyRun> in, out;                    // dst (in) / src (out) name buffer k as object k
  std::vector<std::pair<std::uint32_t, Loc>> targets; // (relocation, data; object = buffer k)
  std::vector<InPlaceCandidate> inPlace;              // runs index `in`; buffer object = buffer k
};

/// Lays out the shared edge buffers of one compute set. Contract: every edge
/// in `edges` gets a location in its tile's buffer; overlapping or touching
/// ranges of one variable are stored once; each stored range keeps its
/// variable byte offset modulo the largest alignment of the edges in it (so an
/// edge aligned in the variable is aligned in the buffer); exchange-in fills the union of the
/// ranges read, exchange-out drains the union of the ranges written, each run
/// split at tile-piece borders.
SharedBuffers layOutSharedBuffers(const MemoryObjects &memory, std::vector<SharedEdge> &edges) {
  SharedBuffers out;
  auto byTileVarBegin = [](const SharedEdge &a, const SharedEdge &b) {
    if (a.tile != b.tile)
      return a.tile < b.tile;
    if (a.var != b.var)
      return a.var < b.var;
    return a.begin < b.begin;
  };
  // Often already in order: graphs add vertices tile by tile.
  if (!std::is_sorted(edges.begin(), edges.end(), byTileVarBegin))
    std::sort(edges.begin(), edges.end(), byTileVarBegin);
  // Union of sub-ranges with a flag, emitted as piece runs.
  auto emitRuns = [&](std::vector<std::pair<std::uint64_t, std::uint64_t>> &ranges, std::uint32_t var,
                      std::uint32_t buffer, std::uint64_t pos, std::uint64_t base, bool in) {
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 0; i < ranges.size();) {
      std::uint64_t b = ranges[i].first, e = ranges[i].second;
      for (++i; i < ranges.size() && ranges[i].first <= e; ++i)
        e = std::max(e, ranges[i].second);
      std::uint64_t at = pos + (b - base);
      forEachPieceRun(memory, var, b, e - b, [&](std::uint32_t piece, std::uint64_t off, std::uint64_t n) {
        ASPEN_ASSERT(piece != kNoObject, "a shared edge reaches an unmapped element after validation");
        const Loc local{buffer, static_cast<std::uint32_t>(at)};
        const Loc remote{piece, static_cast<std::uint32_t>(off)};
        (in ? out.in : out.out)
            .push_back(in ? SymCopyRun{remote, local, static_cast<std::uint32_t>(n)}
                          : SymCopyRun{local, remote, static_cast<std::uint32_t>(n)});
        at += n;
      });
    }
    ranges.clear();
  };
  out.targets.reserve(edges.size());
  out.in.reserve(edges.size());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> reads, writes;
  for (std::size_t i = 0; i < edges.size();) {
    const std::uint32_t tile = edges[i].tile;
    const std::uint32_t buffer = static_cast<std::uint32_t>(out.objects.size());
    std::uint64_t size = 0;
    std::uint32_t bufferAlign = 1;
    while (i < edges.size() && edges[i].tile == tile) {
      // One merged range [base, reach) of one variable: edges [i, j).
      const std::uint32_t var = edges[i].var;
      const std::uint64_t base = edges[i].begin;
      std::uint64_t reach = base;
      // The range's place `pos` in the buffer must put every edge e at a multiple of its
      // alignment: pos + (e.begin - base) = 0 modulo e.align. Alignments are powers of two,
      // so the edges agree when each one's need agrees with the largest alignment's so far
      // (pos = residue modulo align); an edge that disagrees (one starting at an odd offset
      // where the others start at even ones) begins a range of its own.
      std::uint32_t align = 1;
      std::uint64_t residue = 0;
      std::size_t j = i;
      for (; j < edges.size() && edges[j].tile == tile && edges[j].var == var && edges[j].begin <= reach;
           ++j) {
        const SharedEdge &e = edges[j];
        const std::uint64_t need = (e.align - (e.begin - base) % e.align) % e.align;
        const std::uint32_t common = std::min(align, e.align);
        if (residue % common != need % common)
          break;
        if (e.align > align) {
          align = e.align;
          residue = need;
        }
        reach = std::max(reach, e.end);
      }
      // Edges aligned in the variable need pos = base modulo their alignment: offsets kept
      // modulo the largest one, as before odd offsets were shared.
      const std::uint64_t pos = (size + align - 1) / align * align + residue;
      // A range only Input edges read may be read in place (docs/exchange.md).
      const bool readOnly =
          std::all_of(edges.begin() + i, edges.begin() + j, [](const SharedEdge &e) { return !e.writes; });
      InPlaceCandidate candidate;
      if (readOnly) {
        candidate.buffer = Loc{buffer, static_cast<std::uint32_t>(pos)};
        candidate.var = var;
        candidate.begin = base;
        candidate.bytes = reach - base;
        candidate.align = align;
        candidate.runBegin = static_cast<std::uint32_t>(out.in.size());
      }
      for (; i < j; ++i) {
        const SharedEdge &e = edges[i];
        out.targets.push_back(
            {e.relocation, Loc{buffer, static_cast<std::uint32_t>(pos + (e.begin - base))}});
        if (e.reads)
          reads.push_back({e.begin, e.end});
        if (e.writes)
          writes.push_back({e.begin, e.end});
        if (readOnly) {
          candidate.relocations.push_back(e.relocation);
          candidate.readers.push_back(e.vertex);
        }
      }
      emitRuns(reads, var, buffer, pos, base, true);
      if (readOnly) {
        candidate.runEnd = static_cast<std::uint32_t>(out.in.size());
        out.inPlace.push_back(std::move(candidate));
      }
      emitRuns(writes, var, buffer, pos, base, false);
      size = pos + (reach - base);
      bufferAlign = std::max(bufferAlign, align);
    }
    out.objects.push_back({size, tile, std::max<std::uint32_t>(bufferAlign, 8), edges[i - 1].vertex,
                           MemCategory::EdgeBuffer, kNoObject});
  }
  return out;
}

// ---- host transfers and copies ---------------------------------------------------

PlannedTransfer planTransfer(const MemoryObjects &memory, const ir::TensorView &view, std::uint64_t first,
                             std::uint64_t last) {
  std::vector<PieceRun> runs;
  collectPieceRuns(memory, view, first, last, runs);
  PlannedTransfer t;
  for (const PieceRun &r : runs) {
    t.runs.push_back({t.bytes, r.loc, static_cast<std::uint32_t>(r.bytes)});
    t.bytes += r.bytes;
  }
  return t;
}

SymScalar locateElement(const MemoryObjects &memory, const poplar::Tensor &t, std::uint64_t index) {
  SymScalar s;
  if (!t.valid())
    return s;
  std::vector<PieceRun> runs;
  collectPieceRuns(memory, t.getImpl(), index, index + 1, runs);
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

namespace {

// ---- the phases of planExchange -----------------------------------------------------

/// Phase 1. Contract: plan.memory holds every variable's tile pieces as its
/// objects [0, numPieces()) and nothing else.
void planVariablePieces(const ir::GraphData &g, ExchangePlan &plan) {
  plan.memory = buildVariablePieces(g);
}

/// Phase 2. Contract: numbers the executed compute sets in order of first
/// execution, rewrites the Execute steps of plan.steps to those numbers, fills
/// plan.computeSetSteps; returns the graph's compute set id per number.
std::vector<std::uint32_t> numberComputeSets(const ir::GraphData &g, ExchangePlan &plan) {
  auto &steps = plan.steps;
  std::vector<std::uint32_t> csIndex(g.computeSets.size(), ~0u);
  std::vector<std::uint32_t> executed;
  for (std::uint32_t si = 0; si < steps.size(); ++si) {
    exe::Step &s = steps[si];
    if (s.kind != exe::StepKind::Execute)
      continue;
    if (csIndex[s.a] == ~0u) {
      csIndex[s.a] = static_cast<std::uint32_t>(executed.size());
      executed.push_back(s.a);
      plan.computeSetSteps.push_back({si, si});
    }
    s.a = csIndex[s.a];
    plan.computeSetSteps[s.a].second = si;
  }
  return executed;
}

/// What the compute-set phases hand to each other.
struct ComputeSetWork {
  /// Runs of at most kChunk vertices of one compute set, planned in parallel.
  static constexpr std::size_t kChunk = 2048;
  struct Item {
    std::uint32_t plannedCs;
    std::size_t begin, end;
  };
  std::vector<Item> items;
  std::vector<ChunkPlan> chunks;
  std::vector<std::vector<std::uint32_t>> csReads;
  std::vector<std::vector<WriteRange>> csWrites;
  std::vector<std::vector<std::uint32_t>> csDirectWrites;
};

/// Phase 3a. Contract: every vertex of every executed compute set planned by
/// ChunkPlanner (in parallel, chunk by chunk): vertex objects, state arrays,
/// descriptors, gather buffers, runs, relocations, blobs; shared edges listed
/// for phase 3c.
void planChunks(const ir::GraphData &g, const std::vector<std::uint32_t> &executed,
                const MemoryObjects &memory, ComputeSetWork &w) {
  auto &items = w.items;
  for (std::uint32_t i = 0; i < executed.size(); ++i) {
    const std::size_t n = g.computeSets[executed[i]].vertices.size();
    for (std::size_t b = 0; b < n; b += ComputeSetWork::kChunk)
      items.push_back({i, b, std::min(n, b + ComputeSetWork::kChunk)});
  }
  w.chunks.resize(items.size());
  tbb::parallel_for(std::size_t(0), items.size(), [&](std::size_t k) {
    const auto &it = items[k];
    const auto &vertices = g.computeSets[executed[it.plannedCs]].vertices;
    ChunkPlanner planner(g, memory, w.chunks[k]);
    for (std::size_t i = it.begin; i < it.end; ++i)
      planner.planVertex(vertices[i]);
  });
}

/// Phase 3b. Contract: the chunks' objects, blobs and relocations appended to
/// the plan with global ids (in chunk order), runs and vertices into their
/// planned compute set; chunks keep only their piece alignments, in-place
/// writes and shared edges (relocation indices made global).
void mergeChunks(const std::vector<std::uint32_t> &executed, ComputeSetWork &w, ExchangePlan &plan) {
  const std::uint32_t numPieces = static_cast<std::uint32_t>(plan.memory.numPieces());
  auto &items = w.items;
  auto &chunks = w.chunks;
  auto &csReads = w.csReads;
  auto &csWrites = w.csWrites;
  auto &csDirectWrites = w.csDirectWrites;
  // Merge chunks: objects get global ids in chunk order. Offsets first, then
  // every chunk copies (and renumbers) its part in parallel.
  struct Offsets {
    std::size_t objects, pool, blobs, relocations, in, out, vertices, reads, writes;
  };
  std::vector<Offsets> at(items.size());
  plan.computeSets.resize(executed.size());
  csReads.resize(executed.size());
  csWrites.resize(executed.size());
  csDirectWrites.resize(executed.size());
  {
    Offsets total{plan.memory.objects.size(), 0, 0, 0, 0, 0, 0, 0, 0};
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
    plan.memory.objects.resize(total.objects);
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
    std::copy(c.objects.begin(), c.objects.end(), plan.memory.objects.begin() + o.objects);
    for (std::size_t i = o.objects; i < o.objects + c.objects.size(); ++i)
      if (plan.memory.objects[i].category == MemCategory::EdgeBuffer)
        plan.memory.objects[i].computeSet = items[k].plannedCs;
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
    auto shared = std::move(c.shared);
    for (SharedEdge &e : shared)
      e.relocation += static_cast<std::uint32_t>(o.relocations);
    c = ChunkPlan{};
    c.pieceAlign = std::move(align);
    c.directWrites = std::move(direct);
    c.shared = std::move(shared);
  });
  for (std::size_t k = 0; k < items.size(); ++k) {
    auto &direct = chunks[k].directWrites;
    csDirectWrites[items[k].plannedCs].insert(csDirectWrites[items[k].plannedCs].end(), direct.begin(),
                                              direct.end());
  }
  for (const ChunkPlan &c : chunks)
    for (auto [piece, align] : c.pieceAlign)
      plan.memory.objects[piece].align = std::max(plan.memory.objects[piece].align, align);
}

/// Phase 3c. Contract: per compute set and tile, one shared edge buffer
/// (layOutSharedBuffers) appended to plan.memory.objects, its runs to the compute
/// set's exchange-in/out, and every shared edge's relocation pointed into it.
void addSharedBuffers(const std::vector<std::uint32_t> &executed, ComputeSetWork &w, ExchangePlan &plan) {
  const MemoryObjects &memory = plan.memory;
  auto &items = w.items;
  auto &chunks = w.chunks;
  // Shared edge buffers: per compute set and tile, each range received once.
  {
    std::vector<std::vector<SharedEdge>> csShared(executed.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
      auto &to = csShared[items[k].plannedCs];
      if (to.empty())
        to = std::move(chunks[k].shared);
      else
        to.insert(to.end(), chunks[k].shared.begin(), chunks[k].shared.end());
    }
    std::vector<SharedBuffers> buffers(executed.size());
    tbb::parallel_for(std::size_t(0), executed.size(),
                      [&](std::size_t i) { buffers[i] = layOutSharedBuffers(memory, csShared[i]); });
    for (std::size_t i = 0; i < executed.size(); ++i) {
      SharedBuffers &b = buffers[i];
      const std::uint32_t base = static_cast<std::uint32_t>(plan.memory.objects.size());
      ASPEN_ASSERT(std::uint64_t(base) + b.objects.size() < kSharedEdgeObject, "too many memory objects");
      for (MemObject &obj : b.objects)
        obj.computeSet = static_cast<std::uint32_t>(i);
      plan.memory.objects.insert(plan.memory.objects.end(), b.objects.begin(), b.objects.end());
      PlannedComputeSet &pcs = plan.computeSets[i];
      pcs.exchangeIn.reserve(pcs.exchangeIn.size() + b.in.size());
      pcs.exchangeOut.reserve(pcs.exchangeOut.size() + b.out.size());
      const std::uint32_t firstRun = static_cast<std::uint32_t>(pcs.exchangeIn.size());
      for (SymCopyRun &r : b.in) {
        r.dst.object += base;
        pcs.exchangeIn.push_back(r);
      }
      for (InPlaceCandidate &c : b.inPlace) {
        c.buffer.object += base;
        c.runBegin += firstRun;
        c.runEnd += firstRun;
      }
      pcs.inPlace = std::move(b.inPlace);
      for (SymCopyRun &r : b.out) {
        r.src.object += base;
        pcs.exchangeOut.push_back(r);
      }
      for (auto [reloc, data] : b.targets) {
        ASPEN_ASSERT(plan.relocations[reloc].target.object == kSharedEdgeObject,
                     "a shared edge's relocation is not waiting for its buffer");
        plan.relocations[reloc].target = Loc{data.object + base, data.offset};
      }
    }
  }
}

/// Phase 3d. Contract: per planned compute set: vertices sorted by tile, the
/// variable accesses summarised, fuseExchangeIn decided.
void finishComputeSets(const ir::GraphData &g, const std::vector<std::uint32_t> &executed, ComputeSetWork &w,
                       ExchangePlan &plan) {
  const std::uint32_t numPieces = static_cast<std::uint32_t>(plan.memory.numPieces());
  auto &csReads = w.csReads;
  auto &csWrites = w.csWrites;
  auto &csDirectWrites = w.csDirectWrites;
  w.chunks.clear();
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
      return std::binary_search(direct.begin(), direct.end(), plan.memory.objects[r.src.object].owner);
    });
    // Reading such a variable in place would see what a vertex writes during the step.
    for (InPlaceCandidate &c : pcs.inPlace)
      c.sourceWrittenInPlace = std::binary_search(direct.begin(), direct.end(), c.var);
    direct = {};
    csReads[i] = {};
    csWrites[i] = {};
  });
}

/// Phase 4. Contract: every step other than Execute planned: Copy → copy runs
/// (shared program nodes planned once), stream, remote-buffer and print steps
/// → host transfers and prints, control scalars located; returns each step's
/// variable accesses (an Execute step: its compute set's, plus its flag).
std::vector<std::vector<VarAccess>> planSteps(const ir::GraphData &g, const LoweredProgram &lowered,
                                              ExchangePlan &plan) {
  const MemoryObjects &memory = plan.memory;
  auto &steps = plan.steps;
  const std::size_t numSteps = steps.size();
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
        plan.stepScalar[si] = locateElement(memory, node->predicate, 0);
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
        plan.transfers.push_back(planTransfer(memory, t.getImpl(), 0, t.numElements()));
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
        plan.transfers.push_back(planTransfer(memory, t.getImpl(), row * perRow, (row + 1) * perRow));
      s.b = it->second;
      if (node->offset.valid()) {
        plan.stepScalar[si] = locateElement(memory, node->offset, row);
        addViewAccess(node->offset.getImpl(), row, row + 1, true, false, reads, writes);
      }
      addViewAccess(t.getImpl(), row * perRow, (row + 1) * perRow, !toDevice, toDevice, reads, writes);
      break;
    }
    case K::JumpIfZero:
    case K::JumpIfNonZero:
    case K::AbortIf:
      plan.stepScalar[si] = locateElement(memory, node->predicate, 0);
      addViewAccess(node->predicate.getImpl(), 0, 1, true, false, reads, writes);
      break;
    case K::SwitchJump:
      plan.switchControl[s.a] = locateElement(memory, node->predicate, 0);
      addViewAccess(node->predicate.getImpl(), 0, 1, true, false, reads, writes);
      break;
    case K::Collective: { // src and dst as host transfers (docs/replication.md)
      exe::CollectiveInfo info = collectiveInfo(*node);
      info.src = static_cast<std::uint32_t>(plan.transfers.size());
      plan.transfers.push_back(planTransfer(memory, node->src.getImpl(), 0, node->src.numElements()));
      info.dst = static_cast<std::uint32_t>(plan.transfers.size());
      plan.transfers.push_back(planTransfer(memory, node->dst.getImpl(), 0, node->dst.numElements()));
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
    collectPieceRuns(memory, node->src.getImpl(), 0, node->src.numElements(), src);
    collectPieceRuns(memory, node->dst.getImpl(), 0, node->dst.numElements(), dst);
    zipRuns(src, dst, plan.copies[copyJobs[k].index].runs);
  });
  return stepAcc;
}

/// Phase 5. Contract: host handles (each a transfer; their variables host
/// visible), and the stream and remote buffer tables.
void planHostTables(const ir::GraphData &g, ExchangePlan &plan) {
  const MemoryObjects &memory = plan.memory;
  // Host handles: always readable and writable by the host.
  for (const ir::HostHandle &h : g.hostHandles) {
    exe::HostHandleInfo info;
    info.name = h.name;
    info.isWrite = h.isWrite;
    info.type = h.tensor.elementType().id();
    info.transfer = static_cast<std::uint32_t>(plan.transfers.size());
    plan.transfers.push_back(planTransfer(memory, h.tensor.getImpl(), 0, h.tensor.numElements()));
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
    plan.transfers.push_back(planTransfer(memory, index, 0, 1));
    plan.hostVisibleVars.push_back(var);
  }
  // The hardware seeds (poplar/RandomSeed.hpp) are the random builtins' generator states: the
  // runtime reaches them through this transfer, at any step.
  if (g.hwSeedsVariable >= 0) {
    const auto var = static_cast<std::uint32_t>(g.hwSeedsVariable);
    ir::TensorView seeds;
    seeds.elementType = poplar::UNSIGNED_INT;
    const std::uint64_t words = g.variables[var].numElements;
    seeds.segments =
        std::make_shared<const std::vector<ir::Segment>>(std::vector<ir::Segment>{{var, 0, 1, words}});
    plan.hwSeedsTransfer = static_cast<std::uint32_t>(plan.transfers.size());
    plan.transfers.push_back(planTransfer(memory, seeds, 0, words));
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
}

/// Phase 6. Contract: the per-step accesses as CSR (stepAccessBegin, stepAccesses).
void flattenStepAccesses(std::vector<std::vector<VarAccess>> &stepAcc, ExchangePlan &plan) {
  const std::size_t numSteps = stepAcc.size();
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
}

} // namespace

ExchangePlan planExchange(const ir::GraphData &g, const LoweredProgram &lowered) {
  ExchangePlan plan;
  planVariablePieces(g, plan);
  plan.steps = lowered.steps;
  const std::vector<std::uint32_t> executed = numberComputeSets(g, plan);
  {
    ComputeSetWork work;
    planChunks(g, executed, plan.memory, work);
    mergeChunks(executed, work, plan);
    addSharedBuffers(executed, work, plan);
    finishComputeSets(g, executed, work, plan);
  }
  std::vector<std::vector<VarAccess>> stepAcc = planSteps(g, lowered, plan);
  planHostTables(g, plan);
  flattenStepAccesses(stepAcc, plan);
  return plan;
}

} // namespace aspen::compiler
