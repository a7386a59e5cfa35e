// Copyright (c) Aspen contributors.
// Conformance: poplar/Tensor.hpp, the view operations and queries
// (reference/poplar_api.md, section "poplar/Tensor.hpp, Interval.hpp").
//
// Every operation is checked against a naive reference model: a tensor is its
// shape plus the explicit list of (variable, element) pairs in row-major order,
// and each view operation is written as "result index -> source index".
// Tensors are built directly on a GraphData so that this test depends only on
// the tensor algebra.
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"

#include <poplar/Tensor.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

using namespace poplar;
using aspen::ir::GraphData;
using aspen::ir::VarId;

namespace {

using Shape = std::vector<std::size_t>;
using Index = std::vector<std::size_t>;

struct Elem {
  VarId var;
  std::int64_t index; // in units of the view's element type
  bool operator==(const Elem &o) const { return var == o.var && index == o.index; }
  bool operator<(const Elem &o) const { return var != o.var ? var < o.var : index < o.index; }
};

/// The reference model of a tensor.
struct Ref {
  Shape shape;
  std::vector<Elem> elems;
  Type type;
};

std::size_t count(const Shape &s) {
  std::size_t n = 1;
  for (auto d : s)
    n *= d;
  return n;
}

std::string str(const Shape &s) {
  std::ostringstream os;
  os << '{';
  for (std::size_t i = 0; i < s.size(); ++i)
    os << (i ? "," : "") << s[i];
  return os.str() + "}";
}

Elem at(const Ref &r, const Index &idx) {
  std::size_t flat = 0;
  for (std::size_t d = 0; d < r.shape.size(); ++d)
    flat = flat * r.shape[d] + idx[d];
  return r.elems.at(flat);
}

/// A tensor of `shape` whose element at each index is `f(index)`.
Ref build(const Shape &shape, Type type, const std::function<Elem(const Index &)> &f) {
  Ref r{shape, {}, type};
  const std::size_t n = count(shape);
  Index idx(shape.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    r.elems.push_back(f(idx));
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return r;
}

// ---- the reference operations -------------------------------------------------

Ref refSlice(const Ref &r, const Index &begin, const Index &end) {
  Shape shape(r.shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    shape[d] = end[d] - begin[d];
  return build(shape, r.type, [&](const Index &i) {
    Index src = i;
    for (std::size_t d = 0; d < src.size(); ++d)
      src[d] += begin[d];
    return at(r, src);
  });
}

Ref refSliceDim(const Ref &r, std::size_t b, std::size_t e, unsigned dim) {
  Index begin(r.shape.size(), 0), end = r.shape;
  begin[dim] = b;
  end[dim] = e;
  return refSlice(r, begin, end);
}

Ref refWithShape(const Ref &r, const Shape &shape) {
  return Ref{shape, r.elems, r.type};
}

Ref refIndex(const Ref &r, const Index &prefix) {
  Shape shape(r.shape.begin() + prefix.size(), r.shape.end());
  return build(shape, r.type, [&](const Index &i) {
    Index src = prefix;
    src.insert(src.end(), i.begin(), i.end());
    return at(r, src);
  });
}

Ref refShuffle(const Ref &r, const std::vector<unsigned> &perm) {
  Shape shape(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    shape[i] = r.shape[perm[i]];
  return build(shape, r.type, [&](const Index &i) {
    Index src(perm.size());
    for (std::size_t k = 0; k < perm.size(); ++k)
      src[perm[k]] = i[k];
    return at(r, src);
  });
}

/// Moves source dims to destination positions; the others keep their order.
std::vector<unsigned> refPartialPermutation(unsigned rank, const std::vector<unsigned> &source,
                                            const std::vector<unsigned> &destination) {
  std::vector<unsigned> order;
  for (unsigned d = 0; d < rank; ++d)
    if (std::find(source.begin(), source.end(), d) == source.end())
      order.push_back(d);
  std::vector<std::pair<unsigned, unsigned>> moves;
  for (std::size_t i = 0; i < source.size(); ++i)
    moves.emplace_back(destination[i], source[i]);
  std::sort(moves.begin(), moves.end());
  for (auto [dst, src] : moves)
    order.insert(order.begin() + dst, src);
  return order;
}

Ref refSubSample(const Ref &r, unsigned stride, unsigned dim) {
  Shape shape = r.shape;
  shape[dim] = (shape[dim] + stride - 1) / stride;
  return build(shape, r.type, [&](const Index &i) {
    Index src = i;
    src[dim] *= stride;
    return at(r, src);
  });
}

Ref refBroadcast(const Ref &r, unsigned n, unsigned dim) {
  Shape shape = r.shape;
  shape[dim] *= n;
  return build(shape, r.type, [&](const Index &i) {
    Index src = i;
    src[dim] %= r.shape[dim];
    return at(r, src);
  });
}

Ref refUpsample(const Ref &r, unsigned scale, unsigned dim) {
  Shape shape = r.shape;
  shape[dim] *= scale;
  return build(shape, r.type, [&](const Index &i) {
    Index src = i;
    src[dim] /= scale;
    return at(r, src);
  });
}

Ref refReverse(const Ref &r, unsigned dim) {
  return build(r.shape, r.type, [&](const Index &i) {
    Index src = i;
    src[dim] = r.shape[dim] - 1 - i[dim];
    return at(r, src);
  });
}

Ref refConcat(const std::vector<Ref> &rs, unsigned dim) {
  Shape shape = rs[0].shape;
  shape[dim] = 0;
  for (const Ref &r : rs)
    shape[dim] += r.shape[dim];
  return build(shape, rs[0].type, [&](const Index &i) {
    Index src = i;
    for (const Ref &r : rs) {
      if (src[dim] < r.shape[dim])
        return at(r, src);
      src[dim] -= r.shape[dim];
    }
    FAIL("bad concat index");
    return Elem{};
  });
}

Shape refExpandShape(const Shape &shape, std::vector<std::size_t> indices) {
  std::sort(indices.begin(), indices.end());
  Shape out = shape;
  for (std::size_t k = 0; k < indices.size(); ++k)
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(indices[k] + k), 1);
  return out;
}

/// Reinterpret through the byte stream; false when the bytes do not form whole
/// aligned elements of the new type.
bool refReinterpret(const Ref &r, Type type, Ref &out) {
  const std::size_t oldSize = r.type.size(), newSize = type.size();
  std::vector<std::pair<VarId, std::int64_t>> bytes;
  for (const Elem &e : r.elems)
    for (std::size_t j = 0; j < oldSize; ++j)
      bytes.emplace_back(e.var, e.index * static_cast<std::int64_t>(oldSize) + static_cast<std::int64_t>(j));
  Shape shape = r.shape;
  if (shape.empty())
    shape.push_back(1);
  if (shape.back() * oldSize % newSize != 0)
    return false;
  shape.back() = shape.back() * oldSize / newSize;
  if (r.shape.empty() && shape.back() == 1)
    shape.clear();
  out = Ref{shape, {}, type};
  for (std::size_t b = 0; b < bytes.size(); b += newSize) {
    if (bytes[b].second % static_cast<std::int64_t>(newSize) != 0)
      return false;
    for (std::size_t j = 1; j < newSize; ++j)
      if (bytes[b + j].first != bytes[b].first ||
          bytes[b + j].second != bytes[b].second + static_cast<std::int64_t>(j))
        return false;
    out.elems.push_back(Elem{bytes[b].first, bytes[b].second / static_cast<std::int64_t>(newSize)});
  }
  return true;
}

// ---- reference queries ----------------------------------------------------------

bool refIsContiguous(const Ref &r) {
  if (r.elems.empty())
    return false;
  for (std::size_t i = 1; i < r.elems.size(); ++i)
    if (r.elems[i].var != r.elems[0].var || r.elems[i].index != r.elems[i - 1].index + 1)
      return false;
  return true;
}

bool refContainsAliases(const Ref &r) {
  std::set<Elem> seen;
  for (const Elem &e : r.elems)
    if (!seen.insert(e).second)
      return true;
  return false;
}

std::vector<Interval> refContiguousRegions(const Ref &r) {
  std::vector<Interval> out;
  for (std::size_t i = 0; i < r.elems.size(); ++i) {
    if (i > 0 && r.elems[i].var == r.elems[i - 1].var && r.elems[i].index == r.elems[i - 1].index + 1)
      out.back() = Interval(out.back().begin(), i + 1);
    else
      out.emplace_back(i, i + 1);
  }
  return out;
}

struct ByteRef {
  VarId var;
  std::uint64_t begin, end;
};

/// Element by element: the byte runs of the view, contiguous runs merged.
std::vector<ByteRef> refByteRuns(const Ref &r) {
  std::vector<ByteRef> out;
  const std::uint64_t size = r.type.size();
  for (const Elem &e : r.elems) {
    const std::uint64_t b = static_cast<std::uint64_t>(e.index) * size;
    if (!out.empty() && out.back().var == e.var && out.back().end == b)
      out.back().end = b + size;
    else
      out.push_back(ByteRef{e.var, b, b + size});
  }
  return out;
}

std::vector<ByteRef> refVarRegions(const Ref &r, const GraphData &g) {
  std::vector<ByteRef> out;
  for (const ByteRef &b : refByteRuns(r)) {
    const std::uint64_t varSize = g.variables[b.var].type.size();
    const std::uint64_t begin = b.begin / varSize, end = (b.end + varSize - 1) / varSize;
    if (!out.empty() && out.back().var == b.var && out.back().end == begin)
      out.back().end = end;
    else
      out.push_back(ByteRef{b.var, begin, end});
  }
  return out;
}

std::set<std::pair<VarId, std::uint64_t>> refByteSet(const Ref &r) {
  std::set<std::pair<VarId, std::uint64_t>> s;
  for (const Elem &e : r.elems)
    for (std::size_t j = 0; j < r.type.size(); ++j)
      s.emplace(e.var, static_cast<std::uint64_t>(e.index) * r.type.size() + j);
  return s;
}

bool refIntersects(const Ref &a, const Ref &b) {
  const auto sa = refByteSet(a), sb = refByteSet(b);
  for (const auto &x : sa)
    if (sb.count(x))
      return true;
  return false;
}

bool refEqual(const Ref &a, const Ref &b) {
  return a.shape == b.shape && a.type == b.type && a.elems == b.elems;
}

// ---- comparing a Tensor with the reference ------------------------------------------

/// Naively expands the view's segments into (variable, element) pairs.
Ref decode(const Tensor &t) {
  Ref r{t.shape(), {}, t.elementType()};
  for (const auto &s : *t.getImpl().segments) {
    REQUIRE(s.count > 0);
    if (s.count == 1)
      REQUIRE(s.stride == 1);
    for (std::uint64_t k = 0; k < s.count; ++k)
      r.elems.push_back(Elem{s.var, s.start + static_cast<std::int64_t>(k) * s.stride});
  }
  return r;
}

/// Checks every query of `t` against the reference model.
void checkMatches(const Tensor &t, const Ref &ref, const GraphData &g) {
  REQUIRE(t.valid());
  REQUIRE(t.shape() == ref.shape);
  REQUIRE(t.rank() == ref.shape.size());
  REQUIRE(t.numElements() == count(ref.shape));
  for (unsigned d = 0; d < ref.shape.size(); ++d)
    REQUIRE(t.dim(d) == ref.shape[d]);
  REQUIRE(t.elementType() == ref.type);
  const Ref got = decode(t);
  REQUIRE(got.elems.size() == ref.elems.size());
  REQUIRE(got.elems == ref.elems);

  CHECK(t.isContiguous() == refIsContiguous(ref));
  CHECK(t.containsAliases() == refContainsAliases(ref));
  bool constant = false;
  for (const Elem &e : ref.elems)
    constant = constant || g.variables[e.var].isConstant;
  CHECK(t.containsConstant() == constant);
  CHECK(t.isParallelWriteable() == (!constant && !refContainsAliases(ref)));
  CHECK(t.getContiguousRegions() == refContiguousRegions(ref));

  const auto varRegions = t.getVarRegions();
  const auto refRegions = refVarRegions(ref, g);
  REQUIRE(varRegions.size() == refRegions.size());
  for (std::size_t i = 0; i < refRegions.size(); ++i) {
    CHECK(varRegions[i].var.getId() == refRegions[i].var);
    CHECK(varRegions[i].interval == Interval(refRegions[i].begin, refRegions[i].end));
  }
  const auto byteRuns = aspen::ir::toByteRuns(t.getImpl());
  const auto refRuns = refByteRuns(ref);
  REQUIRE(byteRuns.size() == refRuns.size());
  for (std::size_t i = 0; i < refRuns.size(); ++i) {
    CHECK(byteRuns[i].var == refRuns[i].var);
    CHECK(byteRuns[i].byteBegin == refRuns[i].begin);
    CHECK(byteRuns[i].bytes == refRuns[i].end - refRuns[i].begin);
  }
  CHECK(t == t);
  CHECK(t == t.flatten().reshape(ref.shape));
  if (!ref.elems.empty())
    CHECK(t.intersectsWith(t));
}

/// A graph with named variables, each also given as its reference.
struct Fixture {
  std::shared_ptr<GraphData> graph = std::make_shared<GraphData>();

  std::pair<Tensor, Ref> var(const std::string &name, const Shape &shape, Type type = FLOAT,
                             bool constant = false) {
    const VarId id = static_cast<VarId>(graph->variables.size());
    aspen::ir::Variable v;
    v.type = type;
    v.numElements = count(shape);
    v.isConstant = constant;
    v.name = name;
    v.shape = shape;
    graph->variables.push_back(v);
    Ref r{shape, {}, type};
    for (std::size_t i = 0; i < count(shape); ++i)
      r.elems.push_back(Elem{id, static_cast<std::int64_t>(i)});
    return {aspen::ir::makeVariableTensor(graph, id, type, shape), r};
  }
};

std::vector<std::vector<unsigned>> allPermutations(unsigned rank) {
  std::vector<unsigned> p(rank);
  std::iota(p.begin(), p.end(), 0u);
  std::vector<std::vector<unsigned>> out;
  do
    out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

/// Several tensors of `shape` with different layouts: a plain variable, a
/// transposed one, a concatenation of two variables, a subsampled and a reversed one.
std::vector<std::pair<Tensor, Ref>> sourcesOfShape(Fixture &f, const Shape &shape) {
  std::vector<std::pair<Tensor, Ref>> out;
  out.push_back(f.var("plain", shape));
  if (shape.size() >= 2) {
    Shape reversed(shape.rbegin(), shape.rend());
    auto [t, r] = f.var("transposed", reversed);
    std::vector<unsigned> perm(shape.size());
    for (unsigned i = 0; i < perm.size(); ++i)
      perm[i] = static_cast<unsigned>(shape.size()) - 1 - i;
    out.emplace_back(t.dimShuffle(perm), refShuffle(r, perm));
  }
  if (!shape.empty() && shape.back() >= 2) {
    Shape left = shape, right = shape;
    left.back() = 1;
    right.back() = shape.back() - 1;
    auto [a, ra] = f.var("left", left);
    auto [b, rb] = f.var("right", right, FLOAT, true);
    const unsigned last = static_cast<unsigned>(shape.size()) - 1;
    out.emplace_back(concat(a, b, last), refConcat({ra, rb}, last));
  }
  if (!shape.empty()) {
    Shape twice = shape;
    twice[0] *= 2;
    auto [t, r] = f.var("twice", twice);
    out.emplace_back(t.subSample(2, 0), refSubSample(r, 2, 0));
    auto [u, ru] = f.var("reversed", shape);
    out.emplace_back(u.reverse(0), refReverse(ru, 0));
  }
  for (auto &[t, r] : out)
    checkMatches(t, r, *f.graph);
  return out;
}

const std::vector<Shape> shapes = {{}, {5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 2}};

} // namespace

TEST_CASE("tensor: a variable is one contiguous segment", "[tensor][conformance]") {
  Fixture f;
  auto [t, r] = f.var("v", {4, 5});
  checkMatches(t, r, *f.graph);
  CHECK(aspen::ir::numSegments(t.getImpl()) == 1);
  CHECK(t.isContiguous());
  CHECK(!Tensor().valid());
  CHECK(Tensor() == Tensor());
  CHECK(Tensor() != t);
}

TEST_CASE("tensor: operator[] and index", "[tensor][conformance]") {
  Fixture f;
  for (const Shape &shape : shapes) {
    if (shape.empty())
      continue;
    for (auto &[t, r] : sourcesOfShape(f, shape)) {
      for (std::size_t i = 0; i < shape[0]; ++i) {
        INFO("shape " << str(shape) << " [" << i << "]");
        checkMatches(t[i], refIndex(r, {i}), *f.graph);
      }
      // every full and partial index prefix (lambdas capture references, not the structured
      // bindings themselves: clang before 16 cannot capture a binding)
      std::function<void(Index)> visit = [&, &t = t, &r = r](Index prefix) {
        checkMatches(t.index(prefix), refIndex(r, prefix), *f.graph);
        if (prefix.size() == shape.size())
          return;
        for (std::size_t i = 0; i < shape[prefix.size()]; ++i) {
          Index next = prefix;
          next.push_back(i);
          visit(next);
        }
      };
      visit({});
    }
  }
  auto [v, rv] = f.var("v1", {3});
  CHECK(v[2].shape().empty());
  CHECK(v[2].numElements() == 1);
}

TEST_CASE("tensor: slice in every form", "[tensor][conformance]") {
  Fixture f;
  for (const Shape &shape : shapes) {
    for (auto &[t, r] : sourcesOfShape(f, shape)) {
      for (unsigned d = 0; d < shape.size(); ++d)
        for (std::size_t b = 0; b <= shape[d]; ++b)
          for (std::size_t e = b; e <= shape[d]; ++e) {
            INFO("shape " << str(shape) << " slice(" << b << ", " << e << ", " << d << ")");
            const Ref expected = refSliceDim(r, b, e, d);
            checkMatches(t.slice(b, e, d), expected, *f.graph);
            checkMatches(t.slice(Interval(b, e), d), expected, *f.graph);
          }
      // the multi-dimensional form on a few boxes
      if (!shape.empty()) {
        Index begin(shape.size()), end(shape.size());
        for (std::size_t d = 0; d < shape.size(); ++d) {
          begin[d] = shape[d] / 3;
          end[d] = shape[d] - shape[d] / 4;
        }
        checkMatches(t.slice(begin, end), refSlice(r, begin, end), *f.graph);
        checkMatches(t.slice(Index(shape.size(), 0), shape), r, *f.graph);
        // Fewer bounds than dimensions (as PopLibs' convolutions slice {group, batch, ...}):
        // the leading dimensions are sliced, the others kept whole.
        for (std::size_t n = 1; n < shape.size(); ++n) {
          Index fullEnd = end;
          std::copy(shape.begin() + static_cast<std::ptrdiff_t>(n), shape.end(),
                    fullEnd.begin() + static_cast<std::ptrdiff_t>(n));
          Index fullBegin = begin;
          std::fill(fullBegin.begin() + static_cast<std::ptrdiff_t>(n), fullBegin.end(), 0);
          checkMatches(t.slice(Index(begin.begin(), begin.begin() + static_cast<std::ptrdiff_t>(n)),
                               Index(end.begin(), end.begin() + static_cast<std::ptrdiff_t>(n))),
                       refSlice(r, fullBegin, fullEnd), *f.graph);
        }
      }
    }
  }
  // The reference's example: {3,5}.slice({0,1},{2,3}) is {2,2}.
  auto [m, rm] = f.var("m", {3, 5});
  CHECK(m.slice({0, 1}, {2, 3}).shape() == Shape({2, 2}));
}

TEST_CASE("tensor: slices of a scattered view match the reference and reuse the view's index",
          "[tensor][conformance]") {
  // Many segments (pieces of two variables, some reversed or strided), so that
  // slicing goes through the index kept with the view (built once, not per slice).
  Fixture f;
  auto [a, ra] = f.var("a", {400});
  auto [b, rb] = f.var("b", {400});
  std::vector<Tensor> pieces;
  std::vector<Ref> refs;
  for (std::size_t i = 0; i < 60; ++i) {
    const std::size_t at = (i * 37) % 390;
    if (i % 3 == 0) {
      pieces.push_back(a.slice(at, at + 5));
      refs.push_back(refSliceDim(ra, at, at + 5, 0));
    } else if (i % 3 == 1) {
      pieces.push_back(b.slice(at, at + 4).reverse(0));
      refs.push_back(refReverse(refSliceDim(rb, at, at + 4, 0), 0));
    } else {
      pieces.push_back(a.slice(at, at + 9).subSample(2, 0));
      refs.push_back(refSubSample(refSliceDim(ra, at, at + 9, 0), 2, 0));
    }
  }
  const Tensor t = concat(pieces);
  const Ref r = refConcat(refs, 0);
  checkMatches(t, r, *f.graph);
  REQUIRE(aspen::ir::numSegments(t.getImpl()) >= 40);
  const std::size_t n = t.numElements();
  for (std::size_t begin = 0; begin <= n; begin += 7)
    for (std::size_t end = begin; end <= n; end += 5) {
      INFO("slice(" << begin << ", " << end << ")");
      checkMatches(t.slice(begin, end), refSliceDim(r, begin, end, 0), *f.graph);
    }
  for (std::size_t i = 0; i < n; i += 3)
    checkMatches(t[i], refIndex(r, {i}), *f.graph);
  // The index was built by the first slice and is the one every later slice
  // uses, also through views that share the list.
  const auto *index = t.getImpl().segments.builtGatherer();
  REQUIRE(index != nullptr);
  (void)t.slice(1, n - 1);
  (void)t.reshape({n / 10, 10})[2];
  REQUIRE(t.getImpl().segments.builtGatherer() == index);

  // The same in two dimensions: rows, columns and the transpose.
  REQUIRE(n % 10 == 0);
  const Tensor m = t.reshape({n / 10, 10});
  const Ref rm = refWithShape(r, {n / 10, 10});
  const Tensor mt = m.dimShuffle({1, 0});
  const Ref rmt = refShuffle(rm, {1, 0});
  for (std::size_t begin = 0; begin <= 10; begin += 3)
    for (std::size_t end = begin; end <= 10; end += 2) {
      checkMatches(m.slice(begin, end, 1), refSliceDim(rm, begin, end, 1), *f.graph);
      checkMatches(mt.slice(begin, end, 0), refSliceDim(rmt, begin, end, 0), *f.graph);
    }
  for (std::size_t row = 0; row < n / 10; ++row)
    checkMatches(m[row], refIndex(rm, {row}), *f.graph);
}

TEST_CASE("tensor: slices", "[tensor][conformance]") {
  Fixture f;
  auto sources = sourcesOfShape(f, {4, 6});
  for (auto &[t, r] : sources) {
    const std::vector<Interval> intervals = {{0, 2}, {1, 4}, {5, 6}, {3, 3}};
    const auto parts = t.slices(intervals, 1);
    REQUIRE(parts.size() == intervals.size());
    for (std::size_t i = 0; i < intervals.size(); ++i)
      checkMatches(parts[i], refSliceDim(r, intervals[i].begin(), intervals[i].end(), 1), *f.graph);

    const std::vector<std::vector<Interval>> groups = {{{0, 1}, {3, 4}}, {{2, 4}}, {{1, 2}, {0, 1}, {3, 4}}};
    const auto joined = t.slices(groups, 0);
    REQUIRE(joined.size() == groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i) {
      std::vector<Ref> pieces;
      for (const Interval &iv : groups[i])
        pieces.push_back(refSliceDim(r, iv.begin(), iv.end(), 0));
      checkMatches(joined[i], refConcat(pieces, 0), *f.graph);
    }

    const std::vector<unsigned> indices = {3, 0, 5, 5};
    const auto single = t.slices(indices, 1);
    REQUIRE(single.size() == indices.size());
    for (std::size_t i = 0; i < indices.size(); ++i)
      checkMatches(single[i], refSliceDim(r, indices[i], indices[i] + 1, 1), *f.graph);
  }
}

TEST_CASE("tensor: flatten, reshape, reshapePartial, expand, squeeze keep the element order",
          "[tensor][conformance]") {
  Fixture f;
  for (const Shape &shape : shapes) {
    for (auto &[t, r] : sourcesOfShape(f, shape)) {
      INFO("shape " << str(shape));
      checkMatches(t.flatten(), refWithShape(r, {count(shape)}), *f.graph);
      for (unsigned b = 0; b <= shape.size(); ++b)
        for (unsigned e = b; e <= shape.size(); ++e) {
          Shape merged(shape.begin(), shape.begin() + b);
          std::size_t n = 1;
          for (unsigned d = b; d < e; ++d)
            n *= shape[d];
          merged.push_back(n);
          merged.insert(merged.end(), shape.begin() + e, shape.end());
          checkMatches(t.flatten(b, e), refWithShape(r, merged), *f.graph);
        }
      const std::size_t n = count(shape);
      for (const Shape &to : std::vector<Shape>{{n}, {1, n}, {n, 1}, {n, 1, 1}})
        checkMatches(t.reshape(to), refWithShape(r, to), *f.graph);
      if (n % 2 == 0)
        checkMatches(t.reshape({2, n / 2}), refWithShape(r, {2, n / 2}), *f.graph);
      if (shape.size() >= 2) {
        Shape to = shape;
        to.erase(to.begin(), to.begin() + 2);
        to.insert(to.begin(), {shape[0] * shape[1]});
        checkMatches(t.reshapePartial(0, 2, {shape[0] * shape[1]}), refWithShape(r, to), *f.graph);
        Shape to2 = shape;
        to2.insert(to2.begin() + 1, 1);
        checkMatches(t.reshapePartial(1, 2, {1, shape[1]}), refWithShape(r, to2), *f.graph);
      }
      for (const std::vector<std::size_t> &indices :
           std::vector<std::vector<std::size_t>>{{0}, {shape.size()}, {0, 0}, {0, shape.size()}}) {
        const Shape expanded = refExpandShape(shape, indices);
        const Tensor e = t.expand(indices);
        checkMatches(e, refWithShape(r, expanded), *f.graph);
        // squeezing the inserted unit dims gives the tensor back
        std::vector<std::size_t> unitDims;
        for (std::size_t d = 0; d < expanded.size(); ++d)
          if (expanded[d] == 1)
            unitDims.push_back(d);
        Shape squeezed;
        for (std::size_t d = 0; d < expanded.size(); ++d)
          if (expanded[d] != 1)
            squeezed.push_back(expanded[d]);
        checkMatches(e.squeeze(unitDims), refWithShape(r, squeezed), *f.graph);
      }
    }
  }
  // Poplar's own usage: a {N} gradient expanded at {0,1} and broadcast to {T,N,C}.
  auto [g, rg] = f.var("grad", {4});
  const Tensor tnc = g.expand({0, 1}).broadcast(3, 0).broadcast(2, 2);
  CHECK(tnc.shape() == Shape({3, 4, 2}));
  // and a scalar expanded at {0,0} is {1,1}
  auto [s, rs] = f.var("scalar", {});
  CHECK(s.expand({0, 0}).shape() == Shape({1, 1}));
}

TEST_CASE("tensor: transpose, dimShuffle, dimShufflePartial, dimRoll", "[tensor][conformance]") {
  Fixture f;
  for (const Shape &shape : shapes) {
    const unsigned rank = static_cast<unsigned>(shape.size());
    for (auto &[t, r] : sourcesOfShape(f, shape)) {
      INFO("shape " << str(shape));
      if (rank == 2)
        checkMatches(t.transpose(), refShuffle(r, {1, 0}), *f.graph);
      for (const auto &perm : allPermutations(rank))
        checkMatches(t.dimShuffle(perm), refShuffle(r, perm), *f.graph);
      for (unsigned from = 0; from < rank; ++from)
        for (unsigned to = 0; to < rank; ++to) {
          const auto perm = refPartialPermutation(rank, {from}, {to});
          checkMatches(t.dimRoll(from, to), refShuffle(r, perm), *f.graph);
          checkMatches(t.dimShufflePartial({from}, {to}), refShuffle(r, perm), *f.graph);
        }
      if (rank >= 3) {
        const std::vector<unsigned> src = {0, 2}, dst = {2, 1};
        checkMatches(t.dimShufflePartial(src, dst), refShuffle(r, refPartialPermutation(rank, src, dst)),
                     *f.graph);
      }
      if (rank >= 1)
        checkMatches(t.dimRoll(rank - 1), refShuffle(r, refPartialPermutation(rank, {rank - 1}, {0})),
                     *f.graph);
    }
  }
}

TEST_CASE("tensor: subSample, broadcast, upsample, reverse", "[tensor][conformance]") {
  Fixture f;
  for (const Shape &shape : shapes) {
    for (auto &[t, r] : sourcesOfShape(f, shape)) {
      for (unsigned d = 0; d < shape.size(); ++d) {
        INFO("shape " << str(shape) << " dim " << d);
        for (unsigned stride = 1; stride <= shape[d] + 1; ++stride)
          checkMatches(t.subSample(stride, d), refSubSample(r, stride, d), *f.graph);
        for (unsigned n = 0; n <= 3; ++n) {
          checkMatches(t.broadcast(n, d), refBroadcast(r, n, d), *f.graph);
          checkMatches(t.upsample(n, d, UpsampleMethod::REPEAT), refUpsample(r, n, d), *f.graph);
        }
        checkMatches(t.reverse(d), refReverse(r, d), *f.graph);
        checkMatches(t.reverse(d).reverse(d), r, *f.graph);
      }
    }
  }
  // broadcasting a scalar-like tensor uses stride-0 segments
  auto [one, rone] = f.var("one", {1});
  const Tensor wide = one.broadcast(1000, 0);
  CHECK(aspen::ir::numSegments(wide.getImpl()) == 1);
  CHECK(wide.containsAliases());
  CHECK(!wide.isParallelWriteable());
}

TEST_CASE("tensor: concat and append", "[tensor][conformance]") {
  Fixture f;
  for (const Shape &shape : shapes) {
    if (shape.empty())
      continue;
    auto sources = sourcesOfShape(f, shape);
    for (unsigned d = 0; d < shape.size(); ++d) {
      INFO("shape " << str(shape) << " dim " << d);
      std::vector<Tensor> ts;
      std::vector<Ref> rs;
      for (auto &[t, r] : sources) {
        ts.push_back(t);
        rs.push_back(r);
        // a piece of a different length along d
        ts.push_back(t.slice(0, shape[d] / 2, d));
        rs.push_back(refSliceDim(r, 0, shape[d] / 2, d));
      }
      checkMatches(concat(ts, d), refConcat(rs, d), *f.graph);
      checkMatches(concat(ts[0], ts[3], d), refConcat({rs[0], rs[3]}, d), *f.graph);
      checkMatches(concat(std::vector<Tensor>{ts[2]}, d), rs[2], *f.graph);
      // splitting and concatenating gives the tensor back, as one segment when it was one
      const Tensor rejoined = concat(ts[0].slice(0, 1, d), ts[0].slice(1, shape[d], d), d);
      CHECK(rejoined == ts[0]);
      CHECK(aspen::ir::numSegments(rejoined.getImpl()) == aspen::ir::numSegments(ts[0].getImpl()));
    }
    // append: second gets a unit dimension
    auto [a, ra] = f.var("a", shape);
    Shape inner(shape.begin() + 1, shape.end());
    auto [b, rb] = f.var("b", inner);
    Shape unit = inner;
    unit.insert(unit.begin(), 1);
    checkMatches(append(a, b), refConcat({ra, refWithShape(rb, unit)}, 0), *f.graph);
    checkMatches(append(a, b, 0), refConcat({ra, refWithShape(rb, unit)}, 0), *f.graph);
  }
}

TEST_CASE("tensor: reinterpret", "[tensor][conformance]") {
  Fixture f;
  auto [t, r] = f.var("f", {3, 4}, FLOAT);
  for (Type type : {FLOAT, INT, UNSIGNED_INT, HALF, UNSIGNED_CHAR, SHORT}) {
    Ref expected;
    REQUIRE(refReinterpret(r, type, expected));
    const Tensor re = t.reinterpret(type);
    checkMatches(re, expected, *f.graph);
    CHECK(re.reinterpret(FLOAT) == t);
  }
  // a strided float view split into halves: each float is two halves
  const Tensor column = t.slice(1, 2, 1);
  Ref expected;
  REQUIRE(refReinterpret(refSliceDim(r, 1, 2, 1), HALF, expected));
  checkMatches(column.reinterpret(HALF), expected, *f.graph);
  // halves of a half variable, four at a time, as doubles
  auto [h, rh] = f.var("h", {2, 8}, HALF);
  REQUIRE(refReinterpret(rh, DOUBLE, expected));
  checkMatches(h.reinterpret(DOUBLE), expected, *f.graph);
  auto [s, rs] = f.var("s", {}, FLOAT);
  REQUIRE(refReinterpret(rs, HALF, expected));
  checkMatches(s.reinterpret(HALF), expected, *f.graph);
}

TEST_CASE("tensor: intersectsWith and equality", "[tensor][conformance]") {
  Fixture f;
  auto [t, r] = f.var("v", {6, 4});
  auto [u, ru] = f.var("u", {6, 4});
  const std::vector<std::pair<Tensor, Ref>> views = {
      {t, r},
      {t.slice(0, 3, 0), refSliceDim(r, 0, 3, 0)},
      {t.slice(3, 6, 0), refSliceDim(r, 3, 6, 0)},
      {t.slice(1, 2, 1), refSliceDim(r, 1, 2, 1)},
      {t.subSample(2, 1), refSubSample(r, 2, 1)},
      {t.reverse(1).subSample(2, 1), refSubSample(refReverse(r, 1), 2, 1)},
      {t.transpose().slice(2, 3, 0), refSliceDim(refShuffle(r, {1, 0}), 2, 3, 0)},
      {t.flatten().subSample(3, 0), refSubSample(refWithShape(r, {24}), 3, 0)},
      {t.flatten().slice(1, 24).subSample(5, 0),
       refSubSample(refSliceDim(refWithShape(r, {24}), 1, 24, 0), 5, 0)},
      {u, ru},
      {t.reinterpret(HALF).flatten().slice(1, 2), Ref{}},
  };
  Ref halfRef;
  REQUIRE(refReinterpret(r, HALF, halfRef));
  const Ref oneHalf = refSliceDim(refWithShape(halfRef, {48}), 1, 2, 0);
  for (std::size_t i = 0; i < views.size(); ++i)
    for (std::size_t j = 0; j < views.size(); ++j) {
      const Ref &a = i + 1 == views.size() ? oneHalf : views[i].second;
      const Ref &b = j + 1 == views.size() ? oneHalf : views[j].second;
      INFO("views " << i << " and " << j);
      CHECK(views[i].first.intersectsWith(views[j].first) == refIntersects(a, b));
      CHECK((views[i].first == views[j].first) == refEqual(a, b));
      CHECK((views[i].first != views[j].first) == !refEqual(a, b));
    }
  // different segmentations of the same elements are equal
  CHECK(concat(t.slice(0, 1), t.slice(1, 6)) == t);
  CHECK(t.transpose().transpose() == t);
  CHECK(t.reverse(0).reverse(0) == t);
}

TEST_CASE("tensor: strings name the variables", "[tensor][conformance]") {
  Fixture f;
  auto [t, r] = f.var("weights", {4, 3});
  CHECK(t.shortString().find("'weights'") != std::string::npos);
  CHECK(t.shortString().find("{4,3}") != std::string::npos);
  CHECK(t.getVarStr().find("'weights'[0:12)") != std::string::npos);
  CHECK(t.getDebugStr().find("'weights'") != std::string::npos);
  std::ostringstream os;
  os << t.slice(1, 2);
  CHECK(os.str().find("'weights'[3:6)") != std::string::npos);
  CHECK(Tensor().shortString() == "<invalid tensor>");
}

TEST_CASE("tensor: a row or slice inside one segment is that one segment", "[tensor][conformance]") {
  // operator[] and slice take a direct path when the result is a run of one
  // segment of the source; the result must be what the general path gives.
  Fixture f;
  auto [a, ra] = f.var("a", {2, 4});
  auto [b, rb] = f.var("b", {3, 4}, FLOAT, true);
  const Tensor m = concat(a, b, 0); // two segments
  const Ref rm = refConcat({ra, rb}, 0);
  for (std::size_t row = 0; row < 5; ++row) {
    INFO("row " << row);
    checkMatches(m[row], refIndex(rm, {row}), *f.graph);
    CHECK(aspen::ir::numSegments(m[row].getImpl()) == 1);
    checkMatches(m[row].slice(1, 3), refSliceDim(refIndex(rm, {row}), 1, 3, 0), *f.graph);
  }
  checkMatches(m.slice(2, 5, 0), refSliceDim(rm, 2, 5, 0), *f.graph); // all of b
  CHECK(aspen::ir::numSegments(m.slice(2, 5, 0).getImpl()) == 1);
  checkMatches(m.slice(1, 3, 0), refSliceDim(rm, 1, 3, 0), *f.graph); // across a and b
  CHECK(aspen::ir::numSegments(m.slice(1, 3, 0).getImpl()) == 2);
  // A reversed, a strided and a broadcast (stride 0) segment: every element and suffix.
  const Ref repeated{{5}, std::vector<Elem>(5, ra.elems[6]), FLOAT};
  for (const auto &[t, r] : std::vector<std::pair<Tensor, Ref>>{
           {a.flatten().reverse(0), refReverse(refWithShape(ra, {8}), 0)},
           {a.flatten().subSample(3, 0), refSubSample(refWithShape(ra, {8}), 3, 0)},
           {a[1].slice(2, 3).broadcast(5, 0), repeated}}) {
    REQUIRE(aspen::ir::numSegments(t.getImpl()) == 1);
    for (std::size_t i = 0; i < t.numElements(); ++i) {
      checkMatches(t[i], refIndex(r, {i}), *f.graph);
      checkMatches(t.slice(i, t.numElements()), refSliceDim(r, i, t.numElements(), 0), *f.graph);
    }
  }
  const Tensor row = a[1].broadcast(3, 0);
  CHECK(row[5].getVarStr() == "'a'[5:6)");
  CHECK(row.slice(4, 8).getVarStr() == "'a'[4:8)");
  CHECK(row.slice(2, 6).getVarStr() == "'a'[6:8), 'a'[4:6)");
  // The whole of a one-segment view shares its segments.
  const Tensor whole = b.flatten().slice(0, 12);
  CHECK(whole.getImpl().segments == b.getImpl().segments);
}

TEST_CASE("tensor: views outlive their graph and keep to it", "[tensor][conformance]") {
  Tensor t, slice, other;
  {
    Fixture f, g;
    auto [v, rv] = f.var("weights", {4, 3});
    auto [w, rw] = g.var("weights", {4, 3}); // variable 0 of another graph
    t = v;
    slice = v.slice(1, 3, 0);
    other = w;
    CHECK(t.shortString().find("'weights'") != std::string::npos);
    CHECK_FALSE(t == other);
    CHECK_FALSE(t.intersectsWith(other));
    CHECK_THROWS_AS(concat(t, other), index_error);
    CHECK(aspen::ir::lockGraph(t.getImpl().graph) == f.graph);
  }
  // Both graphs are gone: no view keeps one alive, the views still describe
  // themselves (by variable number) and still tell their graphs apart.
  CHECK(aspen::ir::lockGraph(t.getImpl().graph) == nullptr);
  CHECK(t.shortString() == "variable 0 {4,3} float");
  CHECK(slice.getVarStr() == "variable 0[3:9)");
  CHECK(slice.getDebugStr() == "variable 0 {2,3} float = [variable 0[3:9)]");
  CHECK(t.slice(1, 3, 0) == slice);
  CHECK(t.intersectsWith(slice));
  CHECK_FALSE(t == other);
  CHECK_FALSE(t.intersectsWith(other));
  CHECK_FALSE(t.containsConstant());
  CHECK(t.getVarRegions().size() == 1);
  CHECK_THROWS_AS(concat(t, other), index_error);
  // A graph made now gets an id of its own, wherever its data lands.
  Fixture later;
  auto [u, ru] = later.var("weights", {4, 3});
  CHECK(u.getImpl().graph != t.getImpl().graph);
  CHECK(u.getImpl().graph != other.getImpl().graph);
  CHECK_FALSE(u == t);
  CHECK(u.shortString() == "'weights' {4,3} float");
}

// ---- randomised chains of view operations ---------------------------------------------

namespace {

struct Chain {
  Fixture &f;
  std::mt19937 &rng;
  std::vector<std::pair<Tensor, Ref>> bases;
  std::string log;

  std::size_t below(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); }

  /// One random view operation valid for `t`; appends to `log`.
  void step(Tensor &t, Ref &r) {
    const Shape shape = r.shape;
    const unsigned rank = static_cast<unsigned>(shape.size());
    const std::size_t n = count(shape);
    const bool big = n > 600;
    for (;;) {
      switch (below(19)) {
      case 0: { // slice
        if (rank == 0)
          break;
        const unsigned d = static_cast<unsigned>(below(rank));
        std::size_t b = below(shape[d] + 1), e = below(shape[d] + 1);
        if (b > e)
          std::swap(b, e);
        log += " slice(" + std::to_string(b) + "," + std::to_string(e) + "," + std::to_string(d) + ")";
        t = t.slice(b, e, d);
        r = refSliceDim(r, b, e, d);
        return;
      }
      case 1: { // operator[]
        if (rank == 0 || shape[0] == 0)
          break;
        const std::size_t i = below(shape[0]);
        log += " [" + std::to_string(i) + "]";
        t = t[i];
        r = refIndex(r, {i});
        return;
      }
      case 2: { // flatten
        log += " flatten()";
        t = t.flatten();
        r = refWithShape(r, {n});
        return;
      }
      case 3: { // reshape to a random factorisation
        Shape to;
        std::size_t rest = n;
        while (rest > 1 && to.size() < 3) {
          std::vector<std::size_t> divisors;
          for (std::size_t k = 1; k <= rest; ++k)
            if (rest % k == 0)
              divisors.push_back(k);
          const std::size_t k = divisors[below(divisors.size())];
          to.push_back(k);
          rest /= k;
        }
        if (rest != 1 || to.empty())
          to.push_back(rest);
        log += " reshape(" + str(to) + ")";
        t = t.reshape(to);
        r = refWithShape(r, to);
        return;
      }
      case 4: { // transpose / dimShuffle
        if (rank < 2)
          break;
        std::vector<unsigned> perm(rank);
        std::iota(perm.begin(), perm.end(), 0u);
        std::shuffle(perm.begin(), perm.end(), rng);
        log += " dimShuffle";
        t = t.dimShuffle(perm);
        r = refShuffle(r, perm);
        return;
      }
      case 5: { // dimRoll
        if (rank < 2)
          break;
        const unsigned a = static_cast<unsigned>(below(rank)), b = static_cast<unsigned>(below(rank));
        log += " dimRoll(" + std::to_string(a) + "," + std::to_string(b) + ")";
        t = t.dimRoll(a, b);
        r = refShuffle(r, refPartialPermutation(rank, {a}, {b}));
        return;
      }
      case 6: { // expand
        const std::size_t i = below(rank + 1);
        log += " expand(" + std::to_string(i) + ")";
        t = t.expand({i});
        r = refWithShape(r, refExpandShape(shape, {i}));
        return;
      }
      case 7: { // squeeze all unit dims
        std::vector<std::size_t> units;
        Shape to;
        for (std::size_t d = 0; d < rank; ++d) {
          if (shape[d] == 1)
            units.push_back(d);
          else
            to.push_back(shape[d]);
        }
        if (units.empty())
          break;
        log += " squeeze";
        t = t.squeeze(units);
        r = refWithShape(r, to);
        return;
      }
      case 8: { // subSample
        if (rank == 0)
          break;
        const unsigned d = static_cast<unsigned>(below(rank)), s = static_cast<unsigned>(1 + below(4));
        log += " subSample(" + std::to_string(s) + "," + std::to_string(d) + ")";
        t = t.subSample(s, d);
        r = refSubSample(r, s, d);
        return;
      }
      case 9: { // broadcast
        if (rank == 0 || big)
          break;
        const unsigned d = static_cast<unsigned>(below(rank)), k = static_cast<unsigned>(1 + below(3));
        log += " broadcast(" + std::to_string(k) + "," + std::to_string(d) + ")";
        t = t.broadcast(k, d);
        r = refBroadcast(r, k, d);
        return;
      }
      case 10: { // upsample
        if (rank == 0 || big)
          break;
        const unsigned d = static_cast<unsigned>(below(rank)), k = static_cast<unsigned>(1 + below(3));
        log += " upsample(" + std::to_string(k) + "," + std::to_string(d) + ")";
        t = t.upsample(k, d, UpsampleMethod::REPEAT);
        r = refUpsample(r, k, d);
        return;
      }
      case 11: { // reverse
        if (rank == 0)
          break;
        const unsigned d = static_cast<unsigned>(below(rank));
        log += " reverse(" + std::to_string(d) + ")";
        t = t.reverse(d);
        r = refReverse(r, d);
        return;
      }
      case 12: { // concat with a view of itself along some dimension
        if (rank == 0 || big)
          break;
        const unsigned d = static_cast<unsigned>(below(rank));
        Tensor other;
        Ref otherRef;
        switch (below(3)) {
        case 0:
          other = t.reverse(d);
          otherRef = refReverse(r, d);
          break;
        case 1: {
          const std::size_t b = below(shape[d] + 1);
          other = t.slice(b, shape[d], d);
          otherRef = refSliceDim(r, b, shape[d], d);
          break;
        }
        default:
          other = t.subSample(2, d);
          otherRef = refSubSample(r, 2, d);
        }
        const bool before = below(2) == 0;
        log += " concat(self," + std::to_string(d) + (before ? ",before)" : ",after)");
        t = before ? concat(other, t, d) : concat(t, other, d);
        r = before ? refConcat({otherRef, r}, d) : refConcat({r, otherRef}, d);
        return;
      }
      case 13: { // concat with a fresh variable of matching shape
        if (rank == 0 || big)
          break;
        const unsigned d = static_cast<unsigned>(below(rank));
        Shape other = shape;
        other[d] = 1 + below(3);
        auto [v, rv] = f.var("fresh", other, r.type, below(4) == 0);
        log += " concat(fresh," + std::to_string(d) + ")";
        t = concat(t, v, d);
        r = refConcat({r, rv}, d);
        return;
      }
      case 14: { // reinterpret: may legitimately fail; the reference says when
        const Type types[] = {FLOAT, HALF, INT, UNSIGNED_CHAR, DOUBLE};
        const Type type = types[below(5)];
        Ref expected;
        const bool ok = refReinterpret(r, type, expected);
        log += " reinterpret(" + std::string(type.toString()) + (ok ? ")" : ",fails)");
        if (!ok) {
          CHECK_THROWS_AS(t.reinterpret(type), type_error);
          return;
        }
        t = t.reinterpret(type);
        r = expected;
        return;
      }
      case 15: { // slice on many dimensions at once
        if (rank == 0)
          break;
        Index b(rank), e(rank);
        for (unsigned d = 0; d < rank; ++d) {
          b[d] = below(shape[d] + 1);
          e[d] = below(shape[d] + 1);
          if (b[d] > e[d])
            std::swap(b[d], e[d]);
        }
        log += " slice(" + str(b) + "," + str(e) + ")";
        t = t.slice(b, e);
        r = refSlice(r, b, e);
        return;
      }
      case 16: { // flatten a dimension range
        const unsigned b = static_cast<unsigned>(below(rank + 1));
        const unsigned e = b + static_cast<unsigned>(below(rank - b + 1));
        Shape to(shape.begin(), shape.begin() + b);
        std::size_t m = 1;
        for (unsigned d = b; d < e; ++d)
          m *= shape[d];
        to.push_back(m);
        to.insert(to.end(), shape.begin() + e, shape.end());
        log += " flatten(" + std::to_string(b) + "," + std::to_string(e) + ")";
        t = t.flatten(b, e);
        r = refWithShape(r, to);
        return;
      }
      case 17: { // index a prefix
        if (rank == 0)
          break;
        Index prefix;
        const std::size_t length = 1 + below(rank);
        for (unsigned d = 0; d < length; ++d) {
          if (shape[d] == 0)
            break;
          prefix.push_back(below(shape[d]));
        }
        log += " index(" + str(prefix) + ")";
        t = t.index(prefix);
        r = refIndex(r, prefix);
        return;
      }
      default: { // append a view of itself
        if (rank == 0 || big)
          break;
        const unsigned d = static_cast<unsigned>(below(rank));
        if (shape[d] == 0)
          break;
        Shape inner = shape;
        inner.erase(inner.begin() + d);
        log += " append(self[" + std::to_string(d) + "])";
        const Tensor piece = t.slice(0, 1, d).squeeze({d});
        t = append(t, piece, d);
        r = refConcat({r, refSliceDim(r, 0, 1, d)}, d);
        return;
      }
      }
    }
  }
};

} // namespace

TEST_CASE("tensor: randomised chains of view operations match the reference", "[tensor][conformance]") {
  constexpr unsigned numChains = 400;
  Fixture f;
  std::vector<std::pair<Tensor, Ref>> starts;
  for (const Shape &shape : std::vector<Shape>{{6, 4}, {2, 3, 4}, {12}, {1, 5, 1, 3}})
    for (auto &source : sourcesOfShape(f, shape))
      starts.push_back(source);
  auto [m, rm] = f.var("m", {8, 8});
  starts.emplace_back(m.transpose(), refShuffle(rm, {1, 0}));
  auto [h, rh] = f.var("h", {4, 6}, HALF);
  starts.emplace_back(h, rh);

  for (unsigned seed = 1; seed <= numChains; ++seed) {
    std::mt19937 rng(seed);
    Chain chain{f, rng, {}, {}};
    auto [t, r] = starts[chain.below(starts.size())];
    const std::size_t length = 3 + chain.below(6);
    for (std::size_t i = 0; i < length; ++i) {
      chain.step(t, r);
      INFO("seed " << seed << ":" << chain.log);
      checkMatches(t, r, *f.graph);
      // the result against a few other views, for intersection and equality
      const auto &[other, otherRef] = starts[chain.below(starts.size())];
      CHECK(t.intersectsWith(other) == refIntersects(r, otherRef));
      CHECK((t == other) == refEqual(r, otherRef));
    }
  }
}
