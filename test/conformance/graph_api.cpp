// Copyright (c) Aspen contributors.
// Conformance: poplar/Graph.hpp (reference/poplar_api.md "poplar/Graph.hpp")
// minus vertices and codelets, and the recording of poplar/Program.hpp.
// Tile mappings are checked against a naive model that keeps one tile per
// variable element and knows which element each view position refers to.
#include "HalfReference.hpp"
#include "ir/GraphData.hpp"
#include "util/LinearMapping.hpp"

#include <poplar/CSRFunctions.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poplar/Version.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>

using namespace poplar;
using namespace poplar::program;
using aspen::ir::ProgramKind;

namespace {

unsigned varOf(const Tensor &t) {
  return t.getImpl().segments->front().var;
}

/// A naive view: for each row-major position, (variable, element).
struct RefView {
  std::vector<std::size_t> shape;
  std::vector<std::pair<unsigned, std::size_t>> elems;
};

RefView refVariable(const Tensor &whole) {
  RefView r;
  r.shape = whole.shape();
  for (std::size_t i = 0; i < whole.numElements(); ++i)
    r.elems.emplace_back(varOf(whole), i);
  return r;
}

/// A 2-D view of `r` whose element (i, j) is `r`'s element `source(i, j)` (2-D index).
RefView refMap2D(const RefView &r, std::size_t rows, std::size_t cols,
                 const std::function<std::pair<std::size_t, std::size_t>(std::size_t, std::size_t)> &source) {
  RefView out;
  out.shape = {rows, cols};
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      auto [a, b] = source(i, j);
      out.elems.push_back(r.elems[a * r.shape[1] + b]);
    }
  return out;
}

/// One tile per variable element; -1 = unmapped.
struct RefMapping {
  std::map<unsigned, std::vector<int>> tileOf;
  void addVariable(const Tensor &whole) { tileOf[varOf(whole)].assign(whole.numElements(), -1); }
  void map(const RefView &v, int tile) {
    for (const auto &e : v.elems)
      tileOf[e.first][e.second] = tile;
  }
  void map(const RefView &v, const TileToTensorMapping &m) {
    for (std::size_t tile = 0; tile < m.size(); ++tile)
      for (const Interval &i : m[tile])
        for (std::size_t p = i.begin(); p < i.end(); ++p)
          tileOf[v.elems[p].first][v.elems[p].second] = static_cast<int>(tile);
  }
  /// The expected getTileMapping: per tile, runs of consecutive positions.
  TileToTensorMapping expected(const RefView &v, unsigned numTiles, bool *complete) const {
    TileToTensorMapping m(numTiles);
    *complete = true;
    for (std::size_t p = 0; p < v.elems.size(); ++p) {
      const int tile = tileOf.at(v.elems[p].first)[v.elems[p].second];
      if (tile < 0) {
        *complete = false;
        continue;
      }
      auto &intervals = m[static_cast<std::size_t>(tile)];
      if (!intervals.empty() && intervals.back().end() == p)
        intervals.back() = Interval(intervals.back().begin(), p + 1);
      else
        intervals.emplace_back(p, p + 1);
    }
    return m;
  }
};

Target smallTarget(unsigned tiles = 8, unsigned ipus = 1) {
  return Target::createIPUTarget(ipus, tiles, "ipu2");
}

template <class T> std::vector<T> initialValuesOf(Graph &graph, const Tensor &t) {
  const auto &bytes = graph.getImpl().initialValues.at(varOf(t));
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

std::uint16_t halfBits(float f) {
  return aspen::test::referenceHalfBits(f);
}

} // namespace

TEST_CASE("Graph construction and targets", "[graph]") {
  Graph graph(smallTarget(8));
  CHECK(graph.getTarget().getNumTiles() == 8);
  CHECK(graph.getReplicationFactor() == 1);

  Device device = IPUModel("ipu2").createDevice();
  Graph onDevice(device);
  CHECK(onDevice.getTarget() == device.getTarget());

  Graph replicated(smallTarget(8, 2), replication_factor(2));
  CHECK(replicated.getReplicationFactor() == 2);
  CHECK(replicated.getTarget().getNumIPUs() == 1);
  CHECK(replicated.getTarget().getNumTiles() == 8);

  Graph moved = std::move(graph);
  CHECK(moved.getTarget().getNumTiles() == 8);
  CHECK(!versionString().empty());
  CHECK(!packageHash().empty());
}

TEST_CASE("addVariable records type, shape and name", "[graph]") {
  Graph graph(smallTarget());
  Tensor a = graph.addVariable(FLOAT, {2, 3}, "a");
  Tensor b = graph.addVariable(HALF, {5}, VariableMappingMethod::NONE, {"b"});
  Tensor s = graph.addVariable(INT, {}, "scalar");
  CHECK(a.shape() == std::vector<std::size_t>{2, 3});
  CHECK(a.elementType() == FLOAT);
  CHECK(b.elementType() == HALF);
  CHECK(s.numElements() == 1);
  CHECK(s.rank() == 0);
  const auto &vars = graph.getImpl().variables;
  REQUIRE(vars.size() == 3);
  CHECK(vars[varOf(a)].name == "a");
  CHECK(vars[varOf(a)].numElements == 6);
  CHECK(vars[varOf(b)].type == HALF);
  CHECK_FALSE(vars[varOf(a)].isConstant);
  CHECK_FALSE(graph.isConstant(a));
  CHECK(graph.getImpl().describeVariable(varOf(a)) == "'a' (variable 0, {2,3} float)");
  bool complete = true;
  graph.getTileMapping(a, &complete);
  CHECK_FALSE(complete);
}

TEST_CASE("Linear mapping: contiguous, balanced chunks from tile 0", "[graph][mapping]") {
  // Poplar's LINEAR spreads single elements with no minimum a tile (not
  // poputil::mapTensorLinearly's 128 bytes): every used tile but the last holds
  // ceil(n / tiles) elements.
  const unsigned numTiles = 16;
  Graph graph(smallTarget(numTiles));
  for (std::size_t n : {1ul, 31ul, 32ul, 1000ul, 4097ul, 100000ul}) {
    for (Type type : {FLOAT, HALF, UNSIGNED_CHAR, LONGLONG}) {
      INFO("n = " << n << ", type " << type);
      Tensor t = graph.addVariable(type, {n}, VariableMappingMethod::LINEAR);
      const auto m = graph.getTileMapping(t);
      REQUIRE(m.size() == numTiles);
      const std::size_t perTile = (n + numTiles - 1) / numTiles;
      // Tiles are used from 0 upwards, one interval each, covering 0..n in order.
      std::size_t next = 0, usedTiles = 0;
      for (unsigned tile = 0; tile < numTiles; ++tile) {
        if (m[tile].empty())
          break;
        REQUIRE(m[tile].size() == 1);
        CHECK(m[tile][0].begin() == next);
        CHECK(m[tile][0].size() == std::min(perTile, n - next));
        next = m[tile][0].end();
        ++usedTiles;
      }
      CHECK(next == n);
      CHECK(usedTiles == (n + perTile - 1) / perTile);
      for (unsigned tile = usedTiles; tile < numTiles; ++tile)
        CHECK(m[tile].empty());
      Tensor same = graph.addLinearlyMappedVariable(type, {n});
      CHECK(graph.getTileMapping(same) == m);
    }
  }
  // PopLibs' MapFusionTest: 10 floats and 12 long longs on 4 tiles use all 4.
  Graph four(smallTarget(4));
  CHECK(four.getTileMapping(four.addVariable(FLOAT, {10}, VariableMappingMethod::LINEAR)) ==
        TileToTensorMapping{{{0, 3}}, {{3, 6}}, {{6, 9}}, {{9, 10}}});
  CHECK(four.getTileMapping(four.addVariable(LONGLONG, {12}, VariableMappingMethod::LINEAR)) ==
        TileToTensorMapping{{{0, 3}}, {{3, 6}}, {{6, 9}}, {{9, 12}}});
  // Explicit minimum and grain.
  Tensor t = graph.addLinearlyMappedVariable(FLOAT, {100}, 10, 5);
  const auto m = graph.getTileMapping(t);
  for (unsigned tile = 0; tile < numTiles; ++tile)
    for (const Interval &i : m[tile])
      CHECK((i.size() % 5 == 0 && i.size() >= 10));
  CHECK(aspen::util::linearTileMapping(100, numTiles, 10, 5) == m);
}

TEST_CASE("Constants: values, splat, scalar, half and pointer forms", "[graph][constants]") {
  Graph graph(smallTarget());
  Tensor f = graph.addConstant<float>(FLOAT, {3}, {0.5f, 1.0f, 2.0f}, "f");
  CHECK(graph.isConstant(f));
  CHECK(graph.getImpl().variables[varOf(f)].isConstant);
  CHECK(initialValuesOf<float>(graph, f) == std::vector<float>{0.5f, 1.0f, 2.0f});

  Tensor scalar = graph.addConstant(INT, {}, 7);
  CHECK(scalar.rank() == 0);
  CHECK(initialValuesOf<int>(graph, scalar) == std::vector<int>{7});
  CHECK(graph.getImpl().variables[varOf(scalar)].name == "<const>");

  Tensor splat = graph.addConstant(FLOAT, {2, 2}, 3.0f);
  CHECK(initialValuesOf<float>(graph, splat) == std::vector<float>(4, 3.0f));

  std::vector<unsigned> uvec = {1, 2, 3, 4};
  Tensor fromVector = graph.addConstant(UNSIGNED_INT, {2, 2}, uvec);
  CHECK(initialValuesOf<unsigned>(graph, fromVector) == uvec);

  const int ints[] = {-1, 2};
  Tensor converted = graph.addConstant<int>(FLOAT, {2}, ints); // pointer form, count from the shape
  CHECK(initialValuesOf<float>(graph, converted) == std::vector<float>{-1.0f, 2.0f});

  Tensor halves = graph.addConstant<float>(HALF, {3}, {1.5f, 0.1f, -65504.0f});
  CHECK(initialValuesOf<std::uint16_t>(graph, halves) ==
        std::vector<std::uint16_t>{halfBits(1.5f), halfBits(0.1f), halfBits(-65504.0f)});

  Tensor halfSplat = graph.addConstantHalf(HALF, {3}, std::uint16_t(0x3c00));
  CHECK(initialValuesOf<std::uint16_t>(graph, halfSplat) == std::vector<std::uint16_t>(3, 0x3c00));
  const std::uint16_t raw[] = {0x3c00, 0xc000};
  Tensor halfToFloat = graph.addConstantHalf(FLOAT, {2}, raw);
  CHECK(initialValuesOf<float>(graph, halfToFloat) == std::vector<float>{1.0f, -2.0f});

  Tensor boolConst = graph.addConstant<bool>(BOOL, {2}, {true, false});
  CHECK(initialValuesOf<std::uint8_t>(graph, boolConst) == std::vector<std::uint8_t>{1, 0});

  Tensor index = graph.addReplicationIndexConstant();
  CHECK(index.elementType() == UNSIGNED_INT);
  CHECK(index.numElements() == 1);
  CHECK(initialValuesOf<unsigned>(graph, index) == std::vector<unsigned>{0});

  // Constants are mapped like variables.
  graph.setTileMapping(f, 3);
  CHECK(graph.getTileMapping(f)[3] == std::vector<Interval>{{0, 3}});
  CHECK(graph.findUnbroadcastTensor(f) == f);
}

TEST_CASE("setInitialValue writes the viewed elements of the variable", "[graph][constants]") {
  Graph graph(smallTarget());
  Tensor v = graph.addVariable(FLOAT, {3, 4}, "v");
  // t(i, j) = v[j][i + 1], shape {2, 3}.
  Tensor t = v.transpose().slice(1, 3, 0);
  graph.setInitialValue<float>(t, {10, 11, 12, 20, 21, 22});
  std::vector<float> expected(12, 0.0f);
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      expected[j * 4 + i + 1] = static_cast<float>(10 * (i + 1) + j);
  CHECK(initialValuesOf<float>(graph, v) == expected);
  graph.setInitialValue(v[2], 5); // splat, converted from int
  for (std::size_t j = 0; j < 4; ++j)
    expected[8 + j] = 5.0f;
  CHECK(initialValuesOf<float>(graph, v) == expected);

  Tensor h = graph.addVariable(HALF, {2}, "h");
  graph.setInitialValueHalf(h, std::vector<std::uint16_t>{0x3c00, 0x4000});
  CHECK(initialValuesOf<std::uint16_t>(graph, h) == std::vector<std::uint16_t>{0x3c00, 0x4000});
}

TEST_CASE("Tile mapping round trips through views (random, against a naive model)", "[graph][mapping]") {
  const unsigned numTiles = 8;
  Graph graph(smallTarget(numTiles));
  const std::size_t rows = 6, cols = 10;
  Tensor a = graph.addVariable(FLOAT, {rows, cols}, "a");
  Tensor b = graph.addVariable(FLOAT, {rows, cols}, "b");
  RefMapping model;
  model.addVariable(a);
  model.addVariable(b);
  const RefView ra = refVariable(a), rb = refVariable(b);

  // Views of `a` and `b` with their naive equivalents.
  std::vector<std::pair<Tensor, RefView>> views;
  views.emplace_back(a, ra);
  views.emplace_back(a.transpose(), refMap2D(ra, cols, rows, [](auto i, auto j) { return std::pair(j, i); }));
  views.emplace_back(a.slice(2, 7, 1),
                     refMap2D(ra, rows, 5, [](auto i, auto j) { return std::pair(i, j + 2); }));
  views.emplace_back(a.reverse(0),
                     refMap2D(ra, rows, cols, [&](auto i, auto j) { return std::pair(rows - 1 - i, j); }));
  views.emplace_back(a.reverse(1).transpose(),
                     refMap2D(ra, cols, rows, [&](auto i, auto j) { return std::pair(j, cols - 1 - i); }));
  views.emplace_back(a.subSample(3, 1),
                     refMap2D(ra, rows, 4, [](auto i, auto j) { return std::pair(i, 3 * j); }));
  views.emplace_back(b.slice(1, 4, 0).transpose(),
                     refMap2D(rb, cols, 3, [](auto i, auto j) { return std::pair(j + 1, i); }));
  {
    RefView both = ra;
    both.shape = {2 * rows, cols};
    both.elems.insert(both.elems.end(), rb.elems.begin(), rb.elems.end());
    views.emplace_back(concat(a, b), both);
    views.emplace_back(concat(a, b).transpose(),
                       refMap2D(both, cols, 2 * rows, [](auto i, auto j) { return std::pair(j, i); }));
  }

  auto checkAll = [&]() {
    for (std::size_t v = 0; v < views.size(); ++v) {
      INFO("view " << v);
      bool expectedComplete = false, actualComplete = false;
      const auto expected = model.expected(views[v].second, numTiles, &expectedComplete);
      const auto actual = graph.getTileMapping(views[v].first, &actualComplete);
      REQUIRE(actual == expected);
      REQUIRE(actualComplete == expectedComplete);
      if (expectedComplete)
        REQUIRE(graph.getTileMapping(views[v].first) == expected);
    }
  };
  checkAll();
  std::mt19937 rng(42);
  for (int step = 0; step < 60; ++step) {
    const auto &[view, ref] = views[rng() % views.size()];
    if (rng() % 2) {
      const unsigned tile = rng() % numTiles;
      graph.setTileMapping(view, tile);
      model.map(ref, static_cast<int>(tile));
    } else {
      // A random partition of the view's positions into runs on random tiles.
      TileToTensorMapping m(numTiles);
      std::size_t p = 0;
      const std::size_t n = view.numElements();
      while (p < n) {
        const std::size_t len = 1 + rng() % 7;
        const std::size_t end = std::min(n, p + len);
        if (rng() % 5) // leave some runs out: they keep their old tiles
          m[rng() % numTiles].emplace_back(p, end);
        p = end;
      }
      graph.setTileMapping(view, m);
      model.map(ref, m);
    }
    checkAll();
  }
  // The variable records stay sorted, disjoint and merged.
  for (unsigned var : {varOf(a), varOf(b)}) {
    const auto &mapping = graph.getImpl().variables[var].mapping;
    for (std::size_t i = 1; i < mapping.size(); ++i) {
      CHECK(mapping[i - 1].end <= mapping[i].begin);
      CHECK_FALSE((mapping[i - 1].end == mapping[i].begin && mapping[i - 1].tile == mapping[i].tile));
    }
  }
}

TEST_CASE("Later mappings overwrite earlier ones", "[graph][mapping]") {
  Graph graph(smallTarget(4));
  Tensor t = graph.addVariable(INT, {10}, "t");
  graph.setTileMapping(t, 0);
  graph.setTileMapping(t.slice(3, 6), 2);
  graph.setTileMapping(t[9], 1);
  const auto m = graph.getTileMapping(t);
  CHECK(m[0] == std::vector<Interval>{{0, 3}, {6, 9}});
  CHECK(m[1] == std::vector<Interval>{{9, 10}});
  CHECK(m[2] == std::vector<Interval>{{3, 6}});
  CHECK(m[3].empty());
  CHECK(graph.getImpl().variables[varOf(t)].mapping.size() == 4);
  graph.setTileMapping(t, 0);
  CHECK(graph.getImpl().variables[varOf(t)].mapping.size() == 1);
  CHECK(graph.getVariableTileMapping(t.slice(2, 4))[0] == std::vector<Interval>{{0, 10}});
}

TEST_CASE("Reinterpreted views map through bytes", "[graph][mapping]") {
  Graph graph(smallTarget(4));
  Tensor f = graph.addVariable(FLOAT, {4}, "f");
  graph.setTileMapping(f.slice(0, 2), 1);
  graph.setTileMapping(f.slice(2, 4), 2);
  Tensor h = f.reinterpret(HALF); // 8 halves: two per float
  const auto m = graph.getTileMapping(h);
  CHECK(m[1] == std::vector<Interval>{{0, 4}});
  CHECK(m[2] == std::vector<Interval>{{4, 8}});
}

TEST_CASE("Virtual graphs use relative tile numbers", "[graph][virtual]") {
  Graph top(smallTarget(16));
  Graph vg = top.createVirtualGraph(4, 12);
  CHECK(vg.getTarget().getNumTiles() == 8);
  CHECK(vg.getTarget().getNumIPUs() == 1);
  Tensor x = vg.addVariable(FLOAT, {6}, "x");
  vg.setTileMapping(x, 3);
  CHECK(top.getTileMapping(x)[7] == std::vector<Interval>{{0, 6}});
  const auto relative = vg.getTileMapping(x);
  CHECK(relative.size() == 8);
  CHECK(relative[3] == std::vector<Interval>{{0, 6}});
  // Mapped outside the virtual graph: incomplete there.
  top.setTileMapping(x.slice(0, 2), 0);
  bool complete = true;
  const auto partial = vg.getTileMapping(x, &complete);
  CHECK_FALSE(complete);
  CHECK(partial[3] == std::vector<Interval>{{2, 6}});

  // Nested virtual graphs compose offsets; the top-level graph is shared.
  Graph inner = vg.createVirtualGraph(2, 4);
  CHECK(inner.getTarget().getNumTiles() == 2);
  Tensor y = inner.addVariable(INT, {3}, VariableMappingMethod::LINEAR, "y");
  CHECK(top.getTileMapping(y)[6] == std::vector<Interval>{{0, 2}});
  CHECK(top.getTileMapping(y)[7] == std::vector<Interval>{{2, 3}});
  Graph back = inner.getTopLevelGraph();
  CHECK(back.getTarget().getNumTiles() == 16);
  CHECK(back.getTileMapping(y)[6] == std::vector<Interval>{{0, 2}});
  CHECK(&back.getImpl() == &top.getImpl());

  // Linear mapping over the virtual graph's tiles.
  Tensor z = vg.addVariable(FLOAT, {8 * 64}, VariableMappingMethod::LINEAR, "z");
  const auto zm = top.getTileMapping(z);
  for (unsigned tile = 0; tile < 16; ++tile)
    CHECK(zm[tile].empty() == (tile < 4 || tile >= 12));
}

TEST_CASE("Per-IPU virtual graphs on a two-IPU target", "[graph][virtual]") {
  Graph top(smallTarget(8, 2)); // tiles 0-7 on IPU 0, 8-15 on IPU 1
  Graph perIpu = top.createVirtualGraph(std::vector<unsigned>{1, 5});
  CHECK(perIpu.getTarget().getNumIPUs() == 2);
  CHECK(perIpu.getTarget().getTilesPerIPU() == 2);
  CHECK(perIpu.getTarget().getNumTiles() == 4);
  Tensor t = perIpu.addVariable(FLOAT, {4}, "t");
  for (unsigned i = 0; i < 4; ++i)
    perIpu.setTileMapping(t[i], i);
  const auto m = top.getTileMapping(t);
  CHECK(m[1] == std::vector<Interval>{{0, 1}});
  CHECK(m[5] == std::vector<Interval>{{1, 2}});
  CHECK(m[9] == std::vector<Interval>{{2, 3}});
  CHECK(m[13] == std::vector<Interval>{{3, 4}});
  CHECK(perIpu.getTileMapping(t)[2] == std::vector<Interval>{{2, 3}});
  CHECK(perIpu.toRelativeTile(13) == 3);
  CHECK(perIpu.toRelativeTile(2) == -1);

  Graph firstThree = top.createVirtualGraph(3u);
  CHECK(firstThree.getTarget().getNumTiles() == 6);
  Tensor u = firstThree.addVariable(INT, {1}, "u");
  firstThree.setTileMapping(u, 4);
  CHECK(top.getTileMapping(u)[9] == std::vector<Interval>{{0, 1}});
}

TEST_CASE("clone and cloneN keep shape and tile mapping in a new variable", "[graph]") {
  Graph graph(smallTarget(4));
  Tensor x = graph.addVariable(HALF, {3, 4}, "x");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(x.slice(1, 3, 1), 2);
  Tensor xt = x.transpose();
  Tensor c = graph.clone(xt, "c");
  CHECK(c.shape() == xt.shape());
  CHECK(c.elementType() == HALF);
  CHECK(varOf(c) != varOf(x));
  CHECK(graph.getTileMapping(c) == graph.getTileMapping(xt));
  CHECK(graph.getImpl().variables[varOf(c)].name == "c");
  Tensor cf = graph.clone(FLOAT, xt);
  CHECK(cf.elementType() == FLOAT);
  CHECK(graph.getTileMapping(cf) == graph.getTileMapping(xt));
  Tensor n = graph.cloneN(xt, 3, "n");
  CHECK(n.shape() == std::vector<std::size_t>{3, 4, 3});
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(graph.getTileMapping(n[i]) == graph.getTileMapping(xt));
  // An unmapped source gives an unmapped clone.
  Tensor u = graph.addVariable(INT, {2}, "u");
  bool complete = true;
  graph.getTileMapping(graph.clone(u), &complete);
  CHECK_FALSE(complete);
}

TEST_CASE("getSortedContiguousRegions groups by memory order", "[graph][mapping]") {
  Graph graph(smallTarget(4));
  Tensor v = graph.addVariable(FLOAT, {4, 4}, "v");
  Tensor t = v.transpose(); // t position i*4+j holds v element j*4+i
  const auto groups = graph.getSortedContiguousRegions(t, {{0, 16}});
  REQUIRE(groups.size() == 1);
  std::vector<Interval> expected;
  for (std::size_t k = 0; k < 16; ++k) {
    const std::size_t pos = (k % 4) * 4 + k / 4;
    expected.emplace_back(pos, pos + 1);
  }
  CHECK(groups[0] == expected);
  // Two separate parts of the variable give two groups, in memory order.
  Tensor parts = concat(v.slice(3, 4), v.slice(0, 1));
  const auto split = graph.getSortedContiguousRegions(parts, {{0, 8}});
  REQUIRE(split.size() == 2);
  CHECK(split[0] == std::vector<Interval>{{4, 8}});
  CHECK(split[1] == std::vector<Interval>{{0, 4}});
  // Aliased elements removed on request.
  Tensor twice = concat(v[0], v[0]);
  CHECK(graph.getSortedContiguousRegions(twice, {{0, 8}}, true).size() == 1);
  Tensor *none = nullptr;
  graph.reorderToSimplify(none, {});
}

TEST_CASE("Host handles, FIFOs, remote buffers, functions and compute sets", "[graph]") {
  Graph graph(smallTarget(4));
  Tensor t = graph.addVariable(FLOAT, {4}, "t");
  graph.createHostWrite("t", t);
  graph.createHostRead("t", t, true); // one name for both directions is allowed
  const auto &handles = graph.getImpl().hostHandles;
  REQUIRE(handles.size() == 2);
  CHECK(handles[0].isWrite);
  CHECK_FALSE(handles[1].isWrite);
  CHECK(handles[1].tensor == t);

  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 4);
  DataStream out = graph.addDeviceToHostFIFO("out", INT, 2);
  CHECK(in.valid());
  CHECK(in.handle() == "in");
  CHECK(in.numElements() == 4);
  CHECK(in.direction() == DataStream::Direction::HostToDevice);
  CHECK(out.elementType() == INT);
  CHECK(out.direction() == DataStream::Direction::DeviceToHost);
  CHECK(graph.getImpl().streams.at(out.getId()).handle == "out");
  CHECK_FALSE(graph.getImpl().streams.at(out.getId()).hostToDevice);
  DataStream broadcast = graph.addHostToDeviceFIFO("b", HALF, 1, ReplicatedStreamMode::BROADCAST);
  CHECK(graph.getImpl().streams.at(broadcast.getId()).mode == ReplicatedStreamMode::BROADCAST);

  RemoteBuffer rb = graph.addRemoteBuffer("rb", INT, 8, 3);
  CHECK(rb.valid());
  CHECK(rb.getRepeats() == 3);
  CHECK(graph.getImpl().remoteBuffers.at(rb.getId()).numElements == 8);

  ComputeSet cs = graph.addComputeSet("cs");
  ComputeSet unnamed = graph.addComputeSet();
  CHECK(cs.getId() != unnamed.getId());
  CHECK(graph.getImpl().computeSets.at(cs.getId()).name == "cs");

  Tensor u = graph.addVariable(FLOAT, {4}, "u");
  Function f = graph.addFunction(Sequence{Copy(t, u)});
  Function empty = graph.addFunction(Program());
  CHECK(f.getId() != empty.getId());
  Call call(f);
  CHECK(call.getImpl()->kind == ProgramKind::Call);
  CHECK(call.getImpl()->function == f.getId());
  CHECK(graph.getImpl().functions.at(f.getId())->children.at(0)->kind == ProgramKind::Copy);
}

TEST_CASE("Programs record their trees", "[program]") {
  Graph graph(smallTarget(4));
  Tensor a = graph.addVariable(FLOAT, {2, 3}, "a");
  Tensor b = graph.addVariable(FLOAT, {6}, "b");
  Tensor flag = graph.addVariable(BOOL, {}, "flag");
  Tensor control = graph.addVariable(INT, {1}, "control");
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 6);
  DataStream out = graph.addDeviceToHostFIFO("out", FLOAT, 6);
  RemoteBuffer rb = graph.addRemoteBuffer("rb", FLOAT, 3, 4);
  Tensor rows = graph.addVariable(UNSIGNED_INT, {2}, "rows");
  ComputeSet cs = graph.addComputeSet("cs");

  Sequence body({Execute(cs), Copy(a, b)}, "body");
  Sequence seq;
  CHECK(seq.isEmpty());
  seq.add(body);
  seq.add(Program()); // empty programs add nothing
  seq.add(Repeat(3, Sequence()));
  seq.add(RepeatWhileTrue(Sequence(), flag, body));
  seq.add(RepeatWhileFalse(Sequence(), flag.reshape({1}), body));
  seq.add(If(flag, body, Sequence()));
  seq.add(If(flag, body));
  Switch sw(control, {{1, body}}, Sequence(), "switch");
  sw.add(-4, Sequence());
  seq.add(sw);
  seq.add(Copy(in, b));
  seq.add(Copy(b, out));
  seq.add(Copy(rb, b.slice(0, 3)));
  seq.add(Copy(rb, b, rows));
  seq.add(Copy(b.slice(3, 6), rb));
  seq.add(Copy(b, rb, rows));
  seq.add(WriteUndef(a));
  seq.add(Sync(SyncType::GLOBAL));
  seq.add(PrintTensor("a", a));
  seq.add(PrintTensor(b));
  seq.add(AbortOnCondition(flag, "bad"));
  seq.add(Abort("stop"));
  seq.add(Block(body, "block"));
  seq.add(AssumeEqualAcrossReplicas(a));
  seq.add(Sequence(Execute(cs), Execute(cs), Execute(cs))); // legacy variadic form
  CHECK_FALSE(seq.isEmpty());

  const auto &n = *seq.getImpl();
  CHECK(n.kind == ProgramKind::Sequence);
  std::vector<ProgramKind> kinds;
  for (const auto &c : n.children)
    kinds.push_back(c->kind);
  const std::vector<ProgramKind> expected = {ProgramKind::Sequence,
                                             ProgramKind::Repeat,
                                             ProgramKind::RepeatWhileTrue,
                                             ProgramKind::RepeatWhileFalse,
                                             ProgramKind::If,
                                             ProgramKind::If,
                                             ProgramKind::Switch,
                                             ProgramKind::StreamToTensor,
                                             ProgramKind::TensorToStream,
                                             ProgramKind::RemoteToTensor,
                                             ProgramKind::RemoteToTensor,
                                             ProgramKind::TensorToRemote,
                                             ProgramKind::TensorToRemote,
                                             ProgramKind::WriteUndef,
                                             ProgramKind::Sync,
                                             ProgramKind::PrintTensor,
                                             ProgramKind::PrintTensor,
                                             ProgramKind::AbortOnCondition,
                                             ProgramKind::Abort,
                                             ProgramKind::Block,
                                             ProgramKind::Sequence,
                                             ProgramKind::Sequence};
  CHECK(kinds == expected);
  CHECK(n.children[0] == body.getImpl()); // programs share their recorded nodes
  CHECK(n.children[0]->debugName == "body");
  CHECK(n.children[0]->children[0]->computeSet == cs.getId());
  CHECK(n.children[0]->children[1]->src == a);
  CHECK(n.children[1]->count == 3);
  CHECK(n.children[2]->predicate == flag);
  CHECK(n.children[2]->children.size() == 2);
  CHECK(n.children[5]->children.size() == 2); // If without else gets an empty false branch
  const auto &s = *n.children[6];
  CHECK(s.caseValues == std::vector<std::int32_t>{1, -4});
  CHECK(s.hasDefault);
  REQUIRE(s.children.size() == 3);
  CHECK(s.children[0] == body.getImpl());
  CHECK(s.debugName == "switch");
  CHECK(n.children[7]->stream == in.getId());
  CHECK(n.children[8]->stream == out.getId());
  CHECK(n.children[10]->offset == rows);
  CHECK(n.children[10]->remoteBuffer == rb.getId());
  CHECK(n.children[14]->syncType == SyncType::GLOBAL);
  CHECK(n.children[15]->message == "a");
  CHECK(n.children[18]->message == "stop");
  CHECK(n.children[19]->debugName == "block");
  CHECK(n.children[21]->children.size() == 3);

  // Copies between shapes with the same element count are fine.
  Copy reshaped(a, b);
  CHECK(reshaped.getImpl()->dst == b);

  // CSR functions record nothing.
  Sequence csr;
  setFloatingPointBehaviour(graph, csr, FloatingPointBehaviour());
  setStochasticRounding(graph, csr, true);
  CHECK(csr.isEmpty());
  CHECK_FALSE((!FloatingPointBehaviour()).inv);

  std::ostringstream dump;
  graph.outputComputeGraph(dump, {seq});
  CHECK_THAT(dump.str(), Catch::Contains("'a'") && Catch::Contains("Switch") && Catch::Contains("Repeat"));
  std::ostringstream vertices;
  graph.outputVertexGraph(vertices);
  CHECK_THAT(vertices.str(), Catch::Contains("Compute set 0 'cs'"));
}

TEST_CASE("A 100M-element linear mapping over 1472 tiles is fast", "[graph][perf]") {
  Device device = IPUModel("ipu2").createDevice();
  Graph graph(device);
  const std::size_t n = 100000000;
  const auto start = std::chrono::steady_clock::now();
  Tensor big = graph.addVariable(FLOAT, {n}, VariableMappingMethod::LINEAR, "big");
  const auto mapping = graph.getTileMapping(big);
  Tensor other = graph.addVariable(FLOAT, {10000, 10000}, "other");
  graph.setTileMapping(other, aspen::util::linearTileMapping(n, 1472, 1, 1));
  const auto otherMapping = graph.getTileMapping(other.flatten());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 1.0);
  CHECK(mapping == otherMapping);
  std::size_t covered = 0, used = 0;
  for (const auto &intervals : mapping) {
    for (const Interval &i : intervals)
      covered += i.size();
    used += !intervals.empty();
  }
  CHECK(covered == n);
  CHECK(used == 1472);
  // A transposed view of a linearly mapped matrix, against a per-element reference.
  const std::size_t side = 1000;
  Tensor square = graph.addVariable(FLOAT, {side, side}, VariableMappingMethod::LINEAR, "square");
  const auto chunks = graph.getTileMapping(square);
  std::vector<unsigned> tileOf(side * side);
  for (unsigned tile = 0; tile < chunks.size(); ++tile)
    for (const Interval &i : chunks[tile])
      for (std::size_t e = i.begin(); e < i.end(); ++e)
        tileOf[e] = tile;
  TileToTensorMapping expected(1472);
  for (std::size_t p = 0; p < side * side; ++p) {
    auto &intervals = expected[tileOf[(p % side) * side + p / side]];
    if (!intervals.empty() && intervals.back().end() == p)
      intervals.back() = Interval(intervals.back().begin(), p + 1);
    else
      intervals.emplace_back(p, p + 1);
  }
  CHECK(graph.getTileMapping(square.transpose()) == expected);
}

TEST_CASE("A graph with 1,000,000 variables builds quickly", "[graph][perf]") {
  Device device = IPUModel("ipu2").createDevice();
  Graph graph(device);
  const std::size_t count = 1000000;
  std::vector<Tensor> tensors;
  tensors.reserve(count);
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < count; ++i) {
    tensors.push_back(graph.addVariable(FLOAT, {4}, "v"));
    graph.setTileMapping(tensors.back(), static_cast<unsigned>(i % 1472));
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0); // about 1.5 s on a busy 2-core machine
  CHECK(graph.getImpl().variables.size() == count);
  CHECK(graph.getTileMapping(tensors[123456])[123456 % 1472] == std::vector<Interval>{{0, 4}});
}
