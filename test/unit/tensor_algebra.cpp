// Copyright (c) Aspen contributors.
// Unit tests of the tensor-view algebra (libgraph/src/ir/TensorAlgebra.hpp):
// variable regions, byte runs, segment counts of large views, aliasing.
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"

#include <poplar/Tensor.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <thread>

using namespace poplar;
using namespace aspen::ir;

namespace {

struct Fixture {
  std::shared_ptr<GraphData> graph = std::make_shared<GraphData>();

  Tensor var(const std::string &name, const std::vector<std::size_t> &shape, Type type = FLOAT) {
    const auto id = static_cast<VarId>(graph->variables.size());
    Variable v;
    v.type = type;
    v.numElements = 1;
    for (auto d : shape)
      v.numElements *= d;
    v.name = name;
    v.shape = shape;
    graph->variables.push_back(v);
    return makeVariableTensor(graph, id, type, shape);
  }
};

} // namespace

// Comparison and printing for CHECK, found by argument-dependent lookup.
namespace aspen::ir {
bool operator==(const VarRegion &a, const VarRegion &b) {
  return a.var == b.var && a.begin == b.begin && a.end == b.end;
}
bool operator==(const ByteRun &a, const ByteRun &b) {
  return a.var == b.var && a.byteBegin == b.byteBegin && a.bytes == b.bytes;
}
std::ostream &operator<<(std::ostream &os, const VarRegion &r) {
  return os << "var " << r.var << " [" << r.begin << "," << r.end << ")";
}
std::ostream &operator<<(std::ostream &os, const ByteRun &r) {
  return os << "var " << r.var << " bytes " << r.byteBegin << "+" << r.bytes;
}

} // namespace aspen::ir

TEST_CASE("algebra: variable regions of simple views", "[tensor][unit]") {
  Fixture f;
  const Tensor a = f.var("a", {4, 3});
  const Tensor b = f.var("b", {5});
  CHECK(toVariableRegions(a.getImpl()) == std::vector<VarRegion>{{0, 0, 12}});
  CHECK(toVariableRegions(a.slice(1, 3).getImpl()) == std::vector<VarRegion>{{0, 3, 9}});
  // a column: one region per element
  CHECK(toVariableRegions(a.slice(1, 2, 1).getImpl()) ==
        std::vector<VarRegion>{{0, 1, 2}, {0, 4, 5}, {0, 7, 8}, {0, 10, 11}});
  // two variables, adjacent regions of one variable merged
  const Tensor ab = concat(a.flatten().slice(0, 2), concat(a.flatten().slice(2, 5), b));
  CHECK(toVariableRegions(ab.getImpl()) == std::vector<VarRegion>{{0, 0, 5}, {1, 0, 5}});
  // a broadcast repeats the region
  CHECK(toVariableRegions(b.slice(1, 2).broadcast(3, 0).getImpl()) ==
        std::vector<VarRegion>{{1, 1, 2}, {1, 1, 2}, {1, 1, 2}});
}

TEST_CASE("algebra: byte runs and variable regions of reinterpreted views", "[tensor][unit]") {
  Fixture f;
  const Tensor a = f.var("a", {4}, FLOAT);
  const Tensor halves = a.reinterpret(HALF);
  REQUIRE(halves.shape() == std::vector<std::size_t>{8});
  CHECK(toByteRuns(halves.getImpl()) == std::vector<ByteRun>{{0, 0, 16}});
  // halves 3..5 cover bytes 6..12: floats 1 and 2, the partial ones rounded out
  CHECK(toByteRuns(halves.slice(3, 6).getImpl()) == std::vector<ByteRun>{{0, 6, 6}});
  CHECK(toVariableRegions(halves.slice(3, 6).getImpl()) == std::vector<VarRegion>{{0, 1, 3}});
  // the two halves of float 2, in reverse order: two pieces of one element
  CHECK(toByteRuns(halves.slice(4, 6).reverse(0).getImpl()) == std::vector<ByteRun>{{0, 10, 2}, {0, 8, 2}});
  CHECK(toVariableRegions(halves.slice(4, 6).reverse(0).getImpl()) ==
        std::vector<VarRegion>{{0, 2, 3}, {0, 2, 3}});
  // halves of a half variable seen as floats: units of the variable stay halves
  const Tensor h = f.var("h", {8}, HALF);
  const Tensor asFloat = h.slice(2, 8).reinterpret(FLOAT);
  REQUIRE(asFloat.shape() == std::vector<std::size_t>{3});
  CHECK(toByteRuns(asFloat.getImpl()) == std::vector<ByteRun>{{1, 4, 12}});
  CHECK(toVariableRegions(asFloat.getImpl()) == std::vector<VarRegion>{{1, 2, 8}});
  CHECK(asFloat.getVarRegions().size() == 1);
  CHECK(asFloat.getVarRegions()[0].interval == Interval(2, 8));
  // strided floats as bytes: one run per element
  CHECK(toByteRuns(a.subSample(2, 0).getImpl()) == std::vector<ByteRun>{{0, 0, 4}, {0, 8, 4}});
  CHECK(toByteRuns(a.reverse(0).getImpl()) ==
        std::vector<ByteRun>{{0, 12, 4}, {0, 8, 4}, {0, 4, 4}, {0, 0, 4}});
}

TEST_CASE("algebra: segment counts of views of a 4096x4096 tensor", "[tensor][unit]") {
  Fixture f;
  const Tensor m = f.var("m", {4096, 4096});
  CHECK(numSegments(m.getImpl()) == 1);
  CHECK(numSegments(m.flatten().getImpl()) == 1);
  CHECK(numSegments(m.reshape({64, 64, 4096}).getImpl()) == 1);
  CHECK(numSegments(m.slice(100, 200).getImpl()) == 1);
  CHECK(numSegments(m.slice(7, 8, 1).getImpl()) == 1); // a column is one strided segment
  CHECK(numSegments(m.subSample(2, 0).getImpl()) == 2048);
  CHECK(numSegments(m.subSample(2, 1).getImpl()) == 1);
  CHECK(numSegments(m.reverse(0).getImpl()) == 4096);
  CHECK(numSegments(m.reverse(1).getImpl()) == 4096);
  CHECK(numSegments(m.reverse(0).reverse(1).getImpl()) == 1);
  const Tensor t = m.transpose();
  CHECK(numSegments(t.getImpl()) == 4096);
  CHECK(numSegments(t.flatten().getImpl()) == 4096);
  CHECK(numSegments(t.transpose().getImpl()) == 1);
  CHECK(t.transpose() == m);
  CHECK(numSegments(t.slice(5, 6, 1).getImpl()) == 1); // a row of m
  CHECK(numSegments(t.slice(5, 6, 0).getImpl()) == 1); // a column of m
  CHECK(numSegments(t.slice(0, 16, 0).getImpl()) == 16);
  CHECK(numSegments(m.reshape({64, 64, 64, 64}).dimShuffle({2, 3, 0, 1}).getImpl()) == 4096);
  CHECK(numSegments(m.broadcast(2, 0).getImpl()) == 2);
  // row r repeated, then row r+1: the second copy of row r runs into row r+1
  CHECK(numSegments(m.broadcast(2, 1).getImpl()) == 4097);
  CHECK(numSegments(concat(m, m, 0).getImpl()) == 2);
  CHECK(numSegments(concat(m.slice(0, 2048), m.slice(2048, 4096)).getImpl()) == 1);
  CHECK(numSegments(concat(m.slice(0, 2048, 1), m.slice(2048, 4096, 1), 1).getImpl()) == 1);
  CHECK(numSegments(m.reinterpret(HALF).getImpl()) == 1);
  CHECK(numSegments(m.flatten().slice(0, 10).reinterpret(UNSIGNED_CHAR).getImpl()) == 1);
  // the diagonal of the transpose is one strided segment
  CHECK(numSegments(t.flatten().subSample(4097, 0).getImpl()) == 1);
}

TEST_CASE("algebra: flatten, reshape, expand and squeeze share the segment list", "[tensor][unit]") {
  Fixture f;
  const Tensor m = f.var("m", {4, 6}).transpose();
  const auto &segments = m.getImpl().segments;
  CHECK(m.flatten().getImpl().segments == segments);
  CHECK(m.reshape({2, 12}).getImpl().segments == segments);
  CHECK(m.expand({0}).getImpl().segments == segments);
  CHECK(m.expand({0}).squeeze({0}).getImpl().segments == segments);
  CHECK(m.slice(0, 6).getImpl().segments == segments);
}

TEST_CASE("algebra: segment builder merges strided runs", "[tensor][unit]") {
  SegmentBuilder b;
  b.append(0, 5, 1, 1);
  b.append(0, 7, 1, 1); // 5,7: a run of stride 2
  b.append(0, 9, 2, 3); // 9,11,13 continues it
  b.append(0, 15, 1, 1);
  b.append(1, 16, 1, 1); // another variable
  b.append(1, 16, 1, 1); // the same element again: stride 0
  b.append(1, 16, 1, 1);
  b.append(1, 20, 1, 0); // empty: ignored
  const auto s = b.take();
  REQUIRE(s.size() == 2);
  CHECK((s[0].var == 0 && s[0].start == 5 && s[0].stride == 2 && s[0].count == 6));
  CHECK((s[1].var == 1 && s[1].start == 16 && s[1].stride == 0 && s[1].count == 3));
}

TEST_CASE("algebra: gatherSegments walks a transposed block down its columns", "[tensor][unit]") {
  // The source is a 3x4 block of rows of stride 3 (the transpose of a 4x3 variable).
  const aspen::ir::SegmentList source(std::vector<Segment>{{0, 0, 3, 4}, {0, 1, 3, 4}, {0, 2, 3, 4}});
  // positions 0, 4, 8: down the first column -> elements 0, 1, 2
  auto column = gatherSegments(source, 0, {{3, 4}});
  REQUIRE(column->size() == 1);
  CHECK(((*column)[0].start == 0 && (*column)[0].stride == 1 && (*column)[0].count == 3));
  // positions 11, 7, 3: up the last column -> elements 11, 10, 9
  auto reversed = gatherSegments(source, 11, {{3, -4}});
  REQUIRE(reversed->size() == 1);
  CHECK(((*reversed)[0].start == 11 && (*reversed)[0].stride == -1 && (*reversed)[0].count == 3));
  // positions 1, 6, 11: one row and one column each step -> elements 3, 7, 11
  auto diagonal = gatherSegments(source, 1, {{3, 5}});
  REQUIRE(diagonal->size() == 1);
  CHECK(((*diagonal)[0].start == 3 && (*diagonal)[0].stride == 4 && (*diagonal)[0].count == 3));
  // identity keeps the list itself
  CHECK(gatherSegments(source, 0, {{3, 4}, {4, 1}}) == source);
}

TEST_CASE("algebra: aliasing between progressions of different strides", "[tensor][unit]") {
  Fixture f;
  const Tensor v = f.var("v", {60});
  const Tensor evens = v.subSample(2, 0), threes = v.subSample(3, 0);
  CHECK(!evens.containsAliases());
  CHECK(concat(evens.slice(0, 3), v.slice(1, 2)).containsAliases() == false); // 0,2,4 and 1
  CHECK(concat(evens.slice(1, 5), threes.slice(1, 3)).containsAliases());     // 2..8 and 3,6
  CHECK(!concat(evens.slice(1, 3), threes.slice(3, 5)).containsAliases());    // 2,4 and 9,12
  CHECK(
      concat(v.slice(1, 60).subSample(4, 0), v.slice(3, 60).subSample(6, 0)).containsAliases()); // 9 in both
  CHECK(!concat(v.slice(1, 60).subSample(4, 0), v.slice(2, 60).subSample(6, 0))
             .containsAliases()); // odd vs even
  CHECK(evens.intersectsWith(threes));
  CHECK(!evens.intersectsWith(v.slice(1, 60).subSample(2, 0)));
  CHECK(v.slice(1, 60).subSample(4, 0).intersectsWith(v.slice(3, 60).subSample(6, 0)));
  const Tensor t = f.var("m", {64, 64}).transpose();
  CHECK(!t.containsAliases());
  CHECK(concat(t.flatten(), t.flatten().slice(100, 101)).containsAliases());
  // across element sizes: the second half of float 3 is in the halves view
  CHECK(v.slice(3, 4).intersectsWith(v.reinterpret(HALF).slice(7, 8)));
  CHECK(!v.slice(3, 4).intersectsWith(v.reinterpret(HALF).slice(8, 9)));
}

TEST_CASE("algebra: aliasing, intersection and equality of random segment lists match brute force",
          "[tensor][unit]") {
  Fixture f;
  (void)f.var("x", {400});
  (void)f.var("y", {400});
  std::mt19937 rng(7);
  auto below = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto randomSegments = [&] {
    std::vector<Segment> segments;
    const int n = 1 + below(5);
    for (int i = 0; i < n; ++i) {
      const std::int64_t stride = below(13) - 6;
      const std::uint64_t count = 1 + below(12);
      std::int64_t start = below(100);
      if (stride < 0)
        start += -stride * static_cast<std::int64_t>(count);
      segments.push_back(Segment{static_cast<VarId>(below(2)), start, stride, count});
    }
    return segments;
  };
  auto elements = [](const std::vector<Segment> &segments) {
    std::vector<std::pair<VarId, std::int64_t>> out;
    for (const Segment &s : segments)
      for (std::uint64_t k = 0; k < s.count; ++k)
        out.emplace_back(s.var, s.start + static_cast<std::int64_t>(k) * s.stride);
    return out;
  };
  for (int trial = 0; trial < 3000; ++trial) {
    const auto a = randomSegments(), b = randomSegments();
    const auto ea = elements(a), eb = elements(b);
    const Tensor ta = makeTensor(f.graph, FLOAT, {ea.size()}, a);
    const Tensor tb = makeTensor(f.graph, FLOAT, {eb.size()}, b);
    REQUIRE(elements(ta.getImpl().segments.vec()) == ea); // merging keeps the elements
    std::set<std::pair<VarId, std::int64_t>> sa(ea.begin(), ea.end()), sb(eb.begin(), eb.end());
    bool shared = false;
    for (const auto &e : sa)
      shared = shared || sb.count(e) > 0;
    INFO("trial " << trial);
    CHECK(containsAliases(ta.getImpl()) == (sa.size() != ea.size()));
    CHECK(viewsIntersect(ta.getImpl(), tb.getImpl()) == shared);
    CHECK(sameElements(a, b) == (ea == eb));
    CHECK(sameElements(a, *ta.getImpl().segments));
  }
}

TEST_CASE("algebra: region lists can stop early", "[tensor][unit]") {
  Fixture f;
  const Tensor small = f.var("s", {6, 5}).transpose();
  const auto allRuns = toByteRuns(small.getImpl());
  const auto allRegions = toVariableRegions(small.getImpl());
  REQUIRE(allRuns.size() == 30);
  REQUIRE(allRegions.size() == 30);
  for (std::size_t limit : {0, 1, 7, 30, 31}) {
    const auto runs = toByteRuns(small.getImpl(), limit);
    const auto regions = toVariableRegions(small.getImpl(), limit);
    CHECK(runs == std::vector<ByteRun>(allRuns.begin(), allRuns.begin() + std::min<std::size_t>(limit, 30)));
    CHECK(regions ==
          std::vector<VarRegion>(allRegions.begin(), allRegions.begin() + std::min<std::size_t>(limit, 30)));
  }
  // a debug string of a large scattered view lists a few regions, not 16M
  const Tensor big = f.var("big", {4096, 4096}).transpose();
  const std::string text = big.getDebugStr();
  CHECK(text.size() < 1000);
  CHECK(text.find("'big'[4096:4097)") != std::string::npos);
  CHECK(text.find(", ...") != std::string::npos);
}

TEST_CASE("graph ids: each graph its own, found while it lives, from several threads", "[tensor][unit]") {
  // Graphs made, used and dropped on four threads at once: every graph gets an
  // id no other graph had, lockGraph finds exactly that graph while it lives
  // and nothing once it is gone, and toVariableRegions with the graph given
  // agrees with the look-up.
  constexpr int kThreads = 4, kGraphs = 200;
  std::vector<std::vector<GraphId>> ids(kThreads);
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kGraphs; ++i) {
        Tensor view;
        {
          Fixture f;
          view = f.var("v", {4, 2}, i % 2 ? FLOAT : HALF)[1];
          const GraphId id = view.getImpl().graph;
          ids[t].push_back(id);
          if (id == 0 || id != f.graph->id() || lockGraph(id) != f.graph ||
              toVariableRegions(*f.graph, view.getImpl()) != toVariableRegions(view.getImpl()))
            ++failures[t];
        }
        if (lockGraph(view.getImpl().graph) != nullptr ||
            view.shortString() != "variable 0 {2} " + std::string(view.elementType().toString()))
          ++failures[t];
      }
    });
  for (auto &thread : threads)
    thread.join();
  std::set<GraphId> distinct;
  for (int t = 0; t < kThreads; ++t) {
    CHECK(failures[t] == 0);
    distinct.insert(ids[t].begin(), ids[t].end());
  }
  CHECK(distinct.size() == std::size_t(kThreads) * kGraphs);
  CHECK(lockGraph(0) == nullptr);
}

TEST_CASE("graph ids: a view rebuilt from segments by graph id is of that graph", "[tensor][unit]") {
  Fixture f;
  const Tensor t = f.var("w", {6, 4}).slice(1, 3, 0);
  const TensorView &v = t.getImpl();
  const Tensor rebuilt =
      makeTensor(f.graph->id(), v.elementType, {8}, std::span(v.segments.begin(), v.segments.end()));
  CHECK(rebuilt == t.flatten());
  CHECK(rebuilt.shortString() == "'w' {8} float");
  CHECK(rebuilt.getImpl().graph == v.graph);
  Fixture other;
  const Tensor foreign =
      makeTensor(other.graph, v.elementType, {8}, std::span(v.segments.begin(), v.segments.end()));
  CHECK_FALSE(foreign == t.flatten());
}
