// Copyright (c) Aspen contributors.
#include "ir/TensorAlgebra.hpp"

#include "ir/GraphData.hpp"
#include "util/Assert.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace aspen::ir {

namespace {

std::uint64_t product(const std::vector<std::size_t> &shape) {
  std::uint64_t n = 1;
  for (std::size_t d : shape)
    n *= d;
  return n;
}

std::uint64_t sumCounts(std::span<const Segment> segments) {
  std::uint64_t n = 0;
  for (const Segment &s : segments)
    n += s.count;
  return n;
}

} // namespace

// ---- SegmentBuilder --------------------------------------------------------------

void SegmentBuilder::append(const Segment &in) {
  if (in.count == 0)
    return;
  Segment s = in;
  if (s.count == 1)
    s.stride = 1;
  if (!segments_.empty()) {
    Segment &last = segments_.back();
    if (last.var == s.var) {
      if (last.count == 1 && s.count == 1) {
        last.stride = s.start - last.start;
        last.count = 2;
        return;
      }
      if (last.count == 1) {
        if (s.start - last.start == s.stride) {
          last.stride = s.stride;
          last.count += s.count;
          return;
        }
      } else if (s.start == last.start + static_cast<std::int64_t>(last.count) * last.stride &&
                 (s.count == 1 || s.stride == last.stride)) {
        last.count += s.count;
        return;
      }
    }
  }
  segments_.push_back(s);
}

// ---- SegmentGatherer -------------------------------------------------------------

SegmentGatherer::SegmentGatherer(std::span<const Segment> source) {
  std::uint64_t pos = 0;
  for (const Segment &s : source) {
    ASPEN_ASSERT(s.count > 0, "a tensor view holds an empty segment");
    if (!blocks_.empty()) {
      Block &b = blocks_.back();
      if (b.var == s.var && b.rowLength == s.count && b.stride == s.stride) {
        if (b.rows == 1) {
          b.rowDelta = s.start - b.start;
          b.rows = 2;
          pos += s.count;
          continue;
        }
        if (s.start == b.start + static_cast<std::int64_t>(b.rows) * b.rowDelta) {
          ++b.rows;
          pos += s.count;
          continue;
        }
      }
    }
    blocks_.push_back(Block{pos, 1, s.count, s.var, s.start, s.stride, 0});
    pos += s.count;
  }
  total_ = pos;
}

void SegmentGatherer::pick(std::uint64_t first, std::uint64_t count, std::int64_t stride,
                           SegmentBuilder &out) const {
  while (count > 0) {
    ASPEN_ASSERT(first < total_, "a view picks a position outside its source");
    auto it = std::upper_bound(blocks_.begin(), blocks_.end(), first,
                               [](std::uint64_t p, const Block &b) { return p < b.pos; });
    --it;
    const Block &b = *it;
    const std::uint64_t local = first - b.pos;
    const std::uint64_t row = local / b.rowLength, col = local % b.rowLength;
    const std::int64_t element =
        b.start + static_cast<std::int64_t>(row) * b.rowDelta + static_cast<std::int64_t>(col) * b.stride;
    if (stride == 0) {
      out.append(b.var, element, 0, count);
      return;
    }
    // A step of |stride| positions moves `rowStep` rows and `colStep` columns in the
    // block; the element index is affine in the step number until the column wraps
    // or the rows run out.
    const std::uint64_t magnitude = static_cast<std::uint64_t>(stride < 0 ? -stride : stride);
    const std::uint64_t rowStep = magnitude / b.rowLength, colStep = magnitude % b.rowLength;
    std::uint64_t take = count;
    if (stride > 0) {
      if (colStep)
        take = std::min(take, (b.rowLength - 1 - col) / colStep + 1);
      if (rowStep)
        take = std::min(take, (b.rows - 1 - row) / rowStep + 1);
    } else {
      if (colStep)
        take = std::min(take, col / colStep + 1);
      if (rowStep)
        take = std::min(take, row / rowStep + 1);
    }
    std::int64_t elementStride =
        static_cast<std::int64_t>(rowStep) * b.rowDelta + static_cast<std::int64_t>(colStep) * b.stride;
    if (stride < 0)
      elementStride = -elementStride;
    out.append(b.var, element, elementStride, take);
    count -= take;
    if (count > 0)
      first = static_cast<std::uint64_t>(static_cast<std::int64_t>(first) +
                                         stride * static_cast<std::int64_t>(take));
  }
}

const SegmentGatherer *SegmentList::gatherer() const {
  if (!isShared() || size_ < kGathererFrom)
    return nullptr;
  std::call_once(shared_->gathererBuilt,
                 [&] { shared_->gatherer = std::make_shared<const SegmentGatherer>(shared_->segments); });
  return shared_->gatherer.get();
}

namespace {

/// Calls `pick(position, count, stride)` for each run of the innermost of `dims`
/// (the outer ones walked row-major from `base`).
template <class Pick> void walk(const Axes &dims, std::int64_t base, Pick &&pick) {
  const Axis inner = dims.empty() ? Axis{1, 1} : dims.back();
  const std::size_t numOuter = dims.empty() ? 0 : dims.size() - 1;
  boost::container::small_vector<std::uint64_t, 6> index(numOuter, 0);
  std::int64_t pos = base;
  for (;;) {
    ASPEN_ASSERT(pos >= 0, "a view picks a negative position");
    pick(pos, inner.size, inner.stride);
    bool done = true;
    for (std::size_t k = numOuter; k-- > 0;) {
      pos += dims[k].stride;
      if (++index[k] < dims[k].size) {
        done = false;
        break;
      }
      pos -= dims[k].stride * static_cast<std::int64_t>(dims[k].size);
      index[k] = 0;
    }
    if (done)
      break;
  }
}

SegmentList gather(const SegmentList &source, std::uint64_t sourceElements, std::int64_t base,
                   const Axes &axes) {
  // Drop unit axes and fuse neighbours that walk the source as one axis, so that
  // the innermost axis (one pick per outer index) is as long as possible.
  Axes dims;
  for (const Axis &a : axes) {
    if (a.size == 0)
      return SegmentList();
    if (a.size == 1)
      continue;
    if (!dims.empty() && dims.back().stride == a.stride * static_cast<std::int64_t>(a.size)) {
      dims.back().size *= a.size;
      dims.back().stride = a.stride;
      continue;
    }
    dims.push_back(a);
  }
  const Axis inner = dims.empty() ? Axis{1, 1} : dims.back();
  if (dims.size() <= 1 && base == 0 && inner.stride == 1 && inner.size == sourceElements)
    return source;

  SegmentBuilder out;
  if (source.size() == 1) {
    // One source segment (a variable, or a run of one): its positions are affine,
    // so every pick is one segment and no gatherer is needed.
    const Segment &single = source.front();
    walk(dims, base, [&](std::int64_t pos, std::uint64_t count, std::int64_t stride) {
      const std::int64_t last = pos + static_cast<std::int64_t>(count - 1) * stride;
      ASPEN_ASSERT(static_cast<std::uint64_t>(pos) < single.count && last >= 0 &&
                       static_cast<std::uint64_t>(last) < single.count,
                   "a view picks a position outside its source");
      out.append(single.var, single.start + pos * single.stride, stride * single.stride, count);
    });
    return out.list();
  }
  auto pickFrom = [&](const SegmentGatherer &from) {
    walk(dims, base, [&](std::int64_t pos, std::uint64_t count, std::int64_t stride) {
      from.pick(static_cast<std::uint64_t>(pos), count, stride, out);
    });
  };
  if (const SegmentGatherer *kept = source.gatherer()) // kept with a long list
    pickFrom(*kept);
  else
    pickFrom(SegmentGatherer(source));
  return out.list();
}

} // namespace

SegmentList gatherSegments(const SegmentList &source, std::int64_t base, const Axes &axes) {
  return gather(source, sumCounts(source), base, axes);
}

SegmentList gatherSegments(const TensorView &view, std::int64_t base, const Axes &axes) {
  return gather(view.segments, view.numElements(), base, axes);
}

// ---- construction --------------------------------------------------------------

poplar::Tensor makeVariableTensor(const std::shared_ptr<GraphData> &graph, VarId var, poplar::Type type,
                                  std::vector<std::size_t> shape) {
  graph->identity.publish(graph);
  const std::uint64_t n = product(shape);
  SegmentList segments;
  if (n > 0) {
    const Segment all{var, 0, 1, n};
    segments = SegmentList(&all, &all + 1);
  }
  return poplar::Tensor(
      std::make_shared<const TensorView>(graph->id(), type, std::move(shape), std::move(segments)));
}

poplar::Tensor makeTensor(const std::shared_ptr<GraphData> &graph, poplar::Type type,
                          std::vector<std::size_t> shape, std::span<const Segment> segments) {
  GraphId id = 0;
  if (graph) {
    graph->identity.publish(graph);
    id = graph->id();
  }
  return makeTensor(id, type, std::move(shape), segments);
}

poplar::Tensor makeTensor(GraphId graph, poplar::Type type, std::vector<std::size_t> shape,
                          std::span<const Segment> segments) {
  SegmentBuilder builder;
  builder.appendAll(segments);
  auto view = std::make_shared<const TensorView>(graph, type, std::move(shape), builder.list());
  ASPEN_ASSERT(sumCounts(view->segments) == product(view->shape), "segments do not match the tensor's shape");
  return poplar::Tensor(std::move(view));
}

// ---- reading views back --------------------------------------------------------

std::size_t variableElementSize(const TensorView &view, VarId var) {
  if (auto graph = view.lockGraph())
    if (var < graph->variables.size() && graph->variables[var].type.valid())
      return graph->variables[var].type.size();
  return view.elementType.size();
}

namespace {

/// Calls `visit(var, byteBegin, bytes)` for each element run of the view in
/// row-major order (a stride-1 segment is one run, other segments one run per
/// element) until `visit` returns false.
template <class Visit> void forEachElementRun(const TensorView &view, Visit visit) {
  const std::uint64_t size = view.elementType.size();
  for (const Segment &s : *view.segments) {
    if (s.count == 1 || s.stride == 1) {
      if (!visit(s.var, s.start * size, s.count * size))
        return;
    } else {
      for (std::uint64_t k = 0; k < s.count; ++k)
        if (!visit(s.var, (s.start + static_cast<std::int64_t>(k) * s.stride) * size, size))
          return;
    }
  }
}

} // namespace

std::vector<ByteRun> toByteRuns(const TensorView &view, std::size_t limit) {
  std::vector<ByteRun> out;
  forEachElementRun(view, [&](VarId var, std::uint64_t begin, std::uint64_t bytes) {
    if (!out.empty() && out.back().var == var && out.back().byteBegin + out.back().bytes == begin) {
      out.back().bytes += bytes;
      return true;
    }
    out.push_back(ByteRun{var, begin, bytes});
    return out.size() <= limit; // one beyond the limit: the first `limit` are complete
  });
  if (out.size() > limit)
    out.resize(limit);
  return out;
}

namespace {

/// toVariableRegions of a view of `graph` (null: the graph is gone).
std::vector<VarRegion> toVariableRegionsOf(const GraphData *graph, const TensorView &view,
                                           std::size_t limit) {
  // Through byte runs, so that a reinterpreted view that covers a variable element
  // in consecutive pieces yields that element once.
  std::vector<VarRegion> out;
  const std::uint64_t viewSize = view.elementType.size();
  auto addRegion = [&](const ByteRun &run) {
    std::uint64_t varSize = viewSize;
    if (graph && run.var < graph->variables.size() && graph->variables[run.var].type.valid())
      varSize = graph->variables[run.var].type.size();
    const std::uint64_t begin = run.byteBegin / varSize;
    const std::uint64_t end = (run.byteBegin + run.bytes + varSize - 1) / varSize;
    if (!out.empty() && out.back().var == run.var && out.back().end == begin)
      out.back().end = end;
    else
      out.push_back(VarRegion{run.var, begin, end});
  };
  bool havePending = false;
  ByteRun pending{};
  forEachElementRun(view, [&](VarId var, std::uint64_t begin, std::uint64_t bytes) {
    if (havePending && pending.var == var && pending.byteBegin + pending.bytes == begin) {
      pending.bytes += bytes;
      return true;
    }
    if (havePending)
      addRegion(pending);
    pending = ByteRun{var, begin, bytes};
    havePending = true;
    return out.size() <= limit;
  });
  if (havePending && out.size() <= limit)
    addRegion(pending);
  if (out.size() > limit)
    out.resize(limit);
  return out;
}

} // namespace

std::vector<VarRegion> toVariableRegions(const TensorView &view, std::size_t limit) {
  const auto graph = view.lockGraph();
  return toVariableRegionsOf(graph.get(), view, limit);
}

std::vector<VarRegion> toVariableRegions(const GraphData &graph, const TensorView &view, std::size_t limit) {
  ASPEN_ASSERT(view.graph == graph.id(), "variable regions of a view of another graph");
  return toVariableRegionsOf(&graph, view, limit);
}

std::uint64_t numSegments(const TensorView &view) {
  return view.segments.size();
}

bool sameElements(std::span<const Segment> a, std::span<const Segment> b) {
  std::size_t i = 0, j = 0;
  std::uint64_t offA = 0, offB = 0;
  while (i < a.size() && j < b.size()) {
    const Segment &x = a[i], &y = b[j];
    const std::uint64_t take = std::min(x.count - offA, y.count - offB);
    if (x.var != y.var)
      return false;
    if (x.start + static_cast<std::int64_t>(offA) * x.stride !=
        y.start + static_cast<std::int64_t>(offB) * y.stride)
      return false;
    if (take > 1 && x.stride != y.stride)
      return false;
    offA += take;
    offB += take;
    if (offA == x.count) {
      ++i;
      offA = 0;
    }
    if (offB == y.count) {
      ++j;
      offB = 0;
    }
  }
  return i == a.size() && j == b.size();
}

// ---- aliasing and intersection ---------------------------------------------------

namespace {

/// An ascending arithmetic progression of element units of one variable.
struct Progression {
  VarId var;
  std::int64_t lo;
  std::int64_t step; // > 0; 1 for a single unit
  std::uint64_t count;
  int owner;
  std::int64_t residue = 0; // lo % step, filled in by anyOverlap
  std::int64_t hi() const { return lo + static_cast<std::int64_t>(count - 1) * step; }
};

/// Adds the units of `s` (each element `unitsPerElement` units) as progressions.
/// Returns true at once when `findSelfAlias` and the segment repeats an element.
bool addProgressions(const Segment &s, std::int64_t unitsPerElement, int owner, bool findSelfAlias,
                     std::vector<Progression> &out) {
  const std::int64_t q = unitsPerElement;
  if (s.count > 1 && s.stride == 0) {
    if (findSelfAlias)
      return true;
    out.push_back(Progression{s.var, s.start * q, 1, static_cast<std::uint64_t>(q), owner});
    return false;
  }
  const std::int64_t lo =
      s.stride < 0 ? s.start + static_cast<std::int64_t>(s.count - 1) * s.stride : s.start;
  const std::int64_t step = s.count == 1 ? 1 : (s.stride < 0 ? -s.stride : s.stride);
  if (q == 1)
    out.push_back(Progression{s.var, lo, step, s.count, owner});
  else if (step == 1)
    out.push_back(Progression{s.var, lo * q, 1, s.count * q, owner});
  else
    for (std::int64_t o = 0; o < q; ++o)
      out.push_back(Progression{s.var, lo * q + o, step * q, s.count, owner});
  return false;
}

using Wide = __int128;

/// The inverse of `a` modulo `m` (gcd(a, m) == 1, m > 1).
Wide modularInverse(Wide a, Wide m) {
  Wide oldR = a, r = m, oldS = 1, s = 0;
  while (r != 0) {
    const Wide quotient = oldR / r;
    Wide t = oldR - quotient * r;
    oldR = r;
    r = t;
    t = oldS - quotient * s;
    oldS = s;
    s = t;
  }
  oldS %= m;
  return oldS < 0 ? oldS + m : oldS;
}

/// True when the two progressions share an element.
bool progressionsIntersect(const Progression &p, const Progression &q) {
  const std::int64_t lo = std::max(p.lo, q.lo), hi = std::min(p.hi(), q.hi());
  if (lo > hi)
    return false;
  const std::int64_t s = p.step, t = q.step;
  const std::int64_t g = std::gcd(s, t);
  const std::int64_t diff = q.lo - p.lo;
  if (diff % g != 0)
    return false;
  // Solve p.lo + s*i == q.lo (mod t): (s/g) * i == diff/g (mod t/g).
  const Wide tg = t / g;
  Wide i0 = 0;
  if (tg > 1) {
    Wide rhs = static_cast<Wide>(diff / g) % tg;
    if (rhs < 0)
      rhs += tg;
    i0 = (rhs * modularInverse(static_cast<Wide>(s / g) % tg, tg)) % tg;
  }
  const Wide x0 = static_cast<Wide>(p.lo) + static_cast<Wide>(s) * i0;
  const Wide period = static_cast<Wide>(s) * tg;
  const Wide d = static_cast<Wide>(lo) - x0;
  const Wide k = d >= 0 ? (d + period - 1) / period : -((-d) / period);
  return x0 + k * period <= static_cast<Wide>(hi);
}

/// True when two progressions overlap (only pairs of different owners when `crossOnly`).
bool anyOverlap(std::vector<Progression> &ps, bool crossOnly) {
  constexpr std::int64_t none = std::numeric_limits<std::int64_t>::min();
  for (Progression &p : ps)
    p.residue = p.lo % p.step;
  // Same step and residue: a progression holds every unit of its residue class
  // between its bounds, so overlapping bounds mean a shared element.
  std::sort(ps.begin(), ps.end(), [](const Progression &a, const Progression &b) {
    if (a.var != b.var)
      return a.var < b.var;
    if (a.step != b.step)
      return a.step < b.step;
    if (a.residue != b.residue)
      return a.residue < b.residue;
    return a.lo < b.lo;
  });
  bool severalSteps = false;
  for (std::size_t i = 0; i < ps.size();) {
    std::size_t j = i;
    std::int64_t maxHi[2] = {none, none};
    while (j < ps.size() && ps[j].var == ps[i].var && ps[j].step == ps[i].step &&
           ps[j].residue == ps[i].residue) {
      const Progression &p = ps[j];
      const int other = crossOnly ? 1 - p.owner : p.owner;
      if (maxHi[other] != none && p.lo <= maxHi[other])
        return true;
      maxHi[p.owner] = std::max(maxHi[p.owner], p.hi());
      ++j;
    }
    if (j < ps.size() && ps[j].var == ps[i].var && ps[j].step != ps[i].step)
      severalSteps = true;
    i = j;
  }
  if (!severalSteps)
    return false;

  // Different steps: sweep by lower bound, testing each progression exactly against
  // the live progressions of other steps whose bounds overlap it.
  std::sort(ps.begin(), ps.end(), [](const Progression &a, const Progression &b) {
    return a.var != b.var ? a.var < b.var : a.lo < b.lo;
  });
  for (std::size_t i = 0; i < ps.size();) {
    std::size_t end = i;
    while (end < ps.size() && ps[end].var == ps[i].var)
      ++end;
    std::vector<std::pair<std::int64_t, std::vector<const Progression *>>> live; // by step
    for (std::size_t k = i; k < end; ++k) {
      const Progression &p = ps[k];
      std::vector<const Progression *> *own = nullptr;
      for (auto &[step, list] : live) {
        if (step == p.step) {
          own = &list;
          continue;
        }
        for (std::size_t m = 0; m < list.size();) {
          if (list[m]->hi() < p.lo) {
            list[m] = list.back();
            list.pop_back();
            continue;
          }
          if ((!crossOnly || list[m]->owner != p.owner) && progressionsIntersect(p, *list[m]))
            return true;
          ++m;
        }
      }
      if (!own) {
        live.emplace_back(p.step, std::vector<const Progression *>{});
        own = &live.back().second;
      }
      own->push_back(&p);
    }
    i = end;
  }
  return false;
}

} // namespace

bool containsAliases(const TensorView &view) {
  std::vector<Progression> ps;
  ps.reserve(view.segments->size());
  for (const Segment &s : *view.segments)
    if (addProgressions(s, 1, 0, true, ps))
      return true;
  return anyOverlap(ps, false);
}

bool viewsIntersect(const TensorView &a, const TensorView &b) {
  if (a.segments->empty() || b.segments->empty())
    return false;
  const std::int64_t sizeA = static_cast<std::int64_t>(a.elementType.size());
  const std::int64_t sizeB = static_cast<std::int64_t>(b.elementType.size());
  const std::int64_t unit = std::gcd(sizeA, sizeB);
  ASPEN_ASSERT(unit > 0, "a tensor view has an element type of size 0");
  std::vector<Progression> ps;
  for (const Segment &s : *a.segments)
    addProgressions(s, sizeA / unit, 0, false, ps);
  for (const Segment &s : *b.segments)
    addProgressions(s, sizeB / unit, 1, false, ps);
  return anyOverlap(ps, true);
}

// ---- messages -------------------------------------------------------------------

std::string shapeString(const std::vector<std::size_t> &shape) {
  std::string s = "{";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "}";
}

std::optional<std::uint64_t> checkedElementCount(const std::vector<std::size_t> &dims,
                                                 std::size_t elementSize, std::size_t begin,
                                                 std::size_t end) {
  end = std::min(end, dims.size());
  const std::uint64_t maxElements = kMaxTensorBytes / std::max<std::size_t>(1, elementSize);
  std::uint64_t n = 1;
  for (std::size_t i = begin; i < end; ++i) {
    if (dims[i] == 0)
      return 0;
    if (n > maxElements / dims[i])
      return std::nullopt;
    n *= dims[i];
  }
  return n;
}

std::string tensorName(const TensorView &view) {
  constexpr std::size_t maxNames = 3;
  std::vector<VarId> vars;
  bool more = false;
  if (view.segments) {
    for (const Segment &s : *view.segments) {
      if (std::find(vars.begin(), vars.end(), s.var) != vars.end())
        continue;
      if (vars.size() == maxNames) {
        more = true;
        break;
      }
      vars.push_back(s.var);
    }
  }
  if (vars.empty())
    return "<empty>";
  auto graph = view.lockGraph();
  std::string s;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    if (i)
      s += '+';
    const VarId v = vars[i];
    if (graph && v < graph->variables.size() && !graph->variables[v].name.empty())
      s += "'" + graph->variables[v].name + "'";
    else
      s += "variable " + std::to_string(v);
  }
  if (more)
    s += "+...";
  return s;
}

} // namespace aspen::ir
