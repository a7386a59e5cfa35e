// Copyright (c) Aspen contributors.
// poputil: linear tile mappings, region splitting, broadcasting and option parsing,
// checked against independently computed expectations (graph construction only).
#include <catch2/catch.hpp>

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/Util.hpp>
#include <poputil/exceptions.hpp>

#include <numeric>

using namespace poplar;

namespace {

Target targetWithTiles(unsigned tiles) {
  return Target::createIPUTarget(1, tiles, "ipu2");
}

std::size_t elementsOn(const std::vector<Interval> &tile) {
  std::size_t n = 0;
  for (const auto &i : tile)
    n += i.size();
  return n;
}

// Every element exactly once, in ascending order by tile (a linear mapping).
void requireLinearCover(const std::vector<std::vector<Interval>> &m, std::size_t n) {
  std::size_t next = 0;
  for (const auto &tile : m)
    for (const auto &i : tile) {
      REQUIRE(i.begin() == next);
      next = i.end();
    }
  REQUIRE(next == n);
}

} // namespace

TEST_CASE("calcLinearTileMapping uses vector-width grains and at least 128 bytes per tile", "[poputil]") {
  Graph graph(targetWithTiles(16));
  SECTION("float: grain 2, minimum 32 elements") {
    const auto m = poputil::calcLinearTileMapping(graph, {1000}, 32, 2);
    REQUIRE(m.size() == 16);
    requireLinearCover(m, 1000);
    // 500 grains over 16 tiles -> 32 grains (64 elements) per tile, the last tile gets the rest.
    for (unsigned t = 0; t < 15; ++t)
      REQUIRE(elementsOn(m[t]) == 64);
    REQUIRE(elementsOn(m[15]) == 1000 - 15 * 64);
  }
  SECTION("the default for a tensor follows its element type") {
    Tensor f = graph.addVariable(FLOAT, {100});
    const auto m = poputil::calcLinearTileMapping(graph, f);
    requireLinearCover(m, 100);
    // 100 floats: at least 32 per tile (128 bytes) -> tiles 0..3 hold 32, 32, 32, 4.
    REQUIRE(elementsOn(m[0]) == 32);
    REQUIRE(elementsOn(m[3]) == 4);
    REQUIRE(m[4].empty());
    Tensor h = graph.addVariable(HALF, {100});
    const auto mh = poputil::calcLinearTileMapping(graph, h);
    REQUIRE(elementsOn(mh[0]) == 64); // 128 bytes of half
    REQUIRE(elementsOn(mh[1]) == 36);
  }
  SECTION("offset and descending order") {
    const auto m = poputil::calcLinearTileMapping(graph, {64}, 32, 1, 3, true);
    REQUIRE(elementsOn(m[3]) == 32);
    REQUIRE(elementsOn(m[4]) == 32);
    const auto d = poputil::calcLinearTileMapping(graph, {64}, 32, 1, 0, false);
    REQUIRE(elementsOn(d[15]) == 32);
    REQUIRE(elementsOn(d[14]) == 32);
  }
}

TEST_CASE("mapTensorLinearly sets the calculated mapping", "[poputil]") {
  Graph graph(targetWithTiles(8));
  Tensor t = graph.addVariable(FLOAT, {10, 30}, "t");
  poputil::mapTensorLinearly(graph, t);
  REQUIRE(graph.getTileMapping(t) == poputil::calcLinearTileMapping(graph, t));
  Tensor u = graph.addVariable(INT, {7, 9}, "u");
  poputil::mapTensorLinearly(graph, u, 10, 5);
  REQUIRE(graph.getTileMapping(u) == poputil::calcLinearTileMapping(graph, {7, 9}, 10, 5));
  REQUIRE(poputil::getTileImbalance(graph, t) == 0);
}

TEST_CASE("dimIsSplitOverTiles looks at each slice of the dimension", "[poputil]") {
  Graph graph(targetWithTiles(4));
  Tensor t = graph.addVariable(FLOAT, {4, 8}, "t");
  for (unsigned r = 0; r < 4; ++r)
    graph.setTileMapping(t[r], r);
  REQUIRE_FALSE(poputil::dimIsSplitOverTiles(graph, t, 1)); // each row is on one tile
  REQUIRE(poputil::dimIsSplitOverTiles(graph, t, 0));       // each column spans four tiles
}

TEST_CASE("splitRegions balances grains over partitions", "[poputil]") {
  const std::vector<Interval> regions{{0, 10}, {20, 35}};
  const auto parts = poputil::splitRegions(regions, 5, 3);
  // 25 elements, grain 5 -> 5 grains over 3 partitions -> 10, 10, 5.
  REQUIRE(parts.size() == 3);
  REQUIRE(poputil::intervalSequenceNumElements(parts) == 25);
  REQUIRE(parts[0] == std::vector<Interval>{{0, 10}});
  REQUIRE(parts[1] == std::vector<Interval>{{20, 30}});
  REQUIRE(parts[2] == std::vector<Interval>{{30, 35}});
  std::vector<Interval> touching{{0, 4}, {4, 9}, {12, 13}};
  poputil::mergeAdjacentRegions(touching);
  REQUIRE(touching == std::vector<Interval>{{0, 9}, {12, 13}});
  REQUIRE(poputil::balancedPartition(10, 4) == std::vector<int>{3, 3, 2, 2});
  REQUIRE(poputil::unflattenIndex<std::size_t>({2, 3, 4}, 23) == std::vector<std::size_t>{1, 2, 3});
  REQUIRE(poputil::flattenIndex<std::size_t>({2, 3, 4}, {1, 2, 3}) == 23);
}

TEST_CASE("broadcastToMatch follows numpy rules", "[poputil]") {
  Graph graph(targetWithTiles(4));
  Tensor a = graph.addVariable(FLOAT, {3, 1}, "a");
  Tensor b = graph.addVariable(FLOAT, {4}, "b");
  REQUIRE(poputil::canBroadcastToMatch(a, b));
  poputil::broadcastToMatch(a, b);
  REQUIRE(a.shape() == std::vector<std::size_t>{3, 4});
  REQUIRE(b.shape() == std::vector<std::size_t>{3, 4});
  Tensor c = graph.addVariable(FLOAT, {2, 5}, "c");
  Tensor d = graph.addVariable(FLOAT, {3}, "d");
  REQUIRE_FALSE(poputil::canBroadcastToMatch(c, d));
  REQUIRE_THROWS_AS(poputil::broadcastToMatch(c, d), poputil::poplibs_error);
  Tensor e = graph.addVariable(FLOAT, {5}, "e");
  Tensor f = graph.addVariable(FLOAT, {2, 1, 5}, "f");
  poputil::expandToMatchRanks(e, f);
  REQUIRE(e.shape() == std::vector<std::size_t>{1, 1, 5});
}

TEST_CASE("OptionSpec parses known options and rejects others", "[poputil]") {
  bool flag = false;
  unsigned count = 0;
  double ratio = 0;
  poplibs::OptionSpec spec{{"flag", poplibs::OptionHandler::createWithBool(flag)},
                           {"count", poplibs::OptionHandler::createWithUnsignedInt(count)},
                           {"ratio", poplibs::OptionHandler::createWithDouble(ratio)}};
  spec.parse(OptionFlags{{"flag", "true"}, {"count", "12"}, {"ratio", "0.25"}});
  REQUIRE(flag);
  REQUIRE(count == 12);
  REQUIRE(ratio == 0.25);
  REQUIRE_THROWS_AS(spec.parse("flag", "yes"), invalid_option);
  REQUIRE_THROWS_AS(spec.parse("count", "-3"), invalid_option);
  REQUIRE_THROWS_AS(spec.parse("colour", "red"), invalid_option);
}

TEST_CASE("duplicate copies a tensor with the same mapping", "[poputil]") {
  Graph graph(targetWithTiles(4));
  Tensor t = graph.addVariable(FLOAT, {6, 10}, "t");
  poputil::mapTensorLinearly(graph, t);
  program::Sequence prog;
  Tensor d = poputil::duplicate(graph, t, prog, "copy");
  REQUIRE(d.shape() == t.shape());
  REQUIRE(graph.getTileMapping(d) == graph.getTileMapping(t));
  REQUIRE_FALSE(d.intersectsWith(t));
}

TEST_CASE("detectDimGroupings finds the groupings a layout never splits, innermost first", "[poputil]") {
  poplar::Graph graph(poplar::Target::createIPUTarget(1, 4, "ipu2"));
  using Groupings = std::vector<poputil::GroupingInfo>;
  // Tiles hold runs of 8 consecutive elements of dimension 1.
  poplar::Tensor a = graph.addVariable(poplar::FLOAT, {4, 16}, "a");
  for (unsigned row = 0; row < 4; ++row)
    for (unsigned half = 0; half < 2; ++half)
      graph.setTileMapping(a[row].slice(8 * half, 8 * half + 8), (row * 2 + half) % 4);
  CHECK(poputil::detectDimGroupings(graph, a) == Groupings{{1, 8}});
  // A transposed view: the grouped dimension is the outer one of the view.
  poplar::Tensor b = graph.addVariable(poplar::FLOAT, {4, 6}, "b");
  for (unsigned row = 0; row < 4; ++row)
    graph.setTileMapping(b[row], row);
  CHECK(poputil::detectDimGroupings(graph, b.transpose()) == Groupings{{0, 6}});
  // Two levels: whole rows of 4, and pairs of rows on each tile.
  poplar::Tensor c = graph.addVariable(poplar::FLOAT, {8, 4}, "c");
  for (unsigned row = 0; row < 8; ++row)
    graph.setTileMapping(c[row], row / 2);
  CHECK(poputil::detectDimGroupings(graph, c) == Groupings{{1, 4}, {0, 2}});
  // Nothing grouped: single elements alternate between tiles.
  poplar::Tensor d = graph.addVariable(poplar::FLOAT, {6}, "d");
  for (unsigned i = 0; i < 6; ++i)
    graph.setTileMapping(d[i], i % 2);
  CHECK(poputil::detectDimGroupings(graph, d).empty());
  poplar::Tensor scalar = graph.addVariable(poplar::FLOAT, {}, "scalar");
  graph.setTileMapping(scalar, 0);
  CHECK_THROWS_AS(poputil::detectDimGroupings(graph, scalar), poputil::poplibs_error);
}

TEST_CASE("mapTensorLinearlyWithOffset starts at the offset tile and can run downwards", "[poputil]") {
  poplar::Graph graph(poplar::Target::createIPUTarget(1, 8, "ipu2"));
  poplar::Tensor up = graph.addVariable(poplar::FLOAT, {4 * 32}, "up");
  poplar::Tensor down = graph.addVariable(poplar::FLOAT, {4 * 32}, "down");
  poputil::mapTensorLinearlyWithOffset(graph, up, 32, 1, 3);
  poputil::mapTensorLinearlyWithOffset(graph, down, 32, 1, 1, false);
  const auto upMapping = graph.getTileMapping(up), downMapping = graph.getTileMapping(down);
  // 128 elements, 32 per tile: tiles 3, 4, 5, 6 upwards from tile 3; downwards, the offset
  // counts from the highest tile: 6, 5, 4, 3.
  for (unsigned k = 0; k < 4; ++k) {
    INFO("chunk " << k);
    REQUIRE(upMapping[3 + k].size() == 1);
    CHECK(upMapping[3 + k][0] == poplar::Interval(32 * k, 32 * (k + 1)));
    REQUIRE(downMapping[6 - k].size() == 1);
    CHECK(downMapping[6 - k][0] == poplar::Interval(32 * k, 32 * (k + 1)));
  }
  CHECK(upMapping[0].empty());
  CHECK(downMapping[7].empty());
}

TEST_CASE("detectInnermostGrouping and checkAccuracyWhenCast", "[poputil]") {
  poplar::Graph graph(poplar::Target::createIPUTarget(1, 4, "ipu2"));
  poplar::Tensor t = graph.addVariable(poplar::FLOAT, {3, 12}, "t");
  // Tile boundaries every 4 elements: the innermost dimension is grouped by 4.
  for (unsigned k = 0; k < 9; ++k)
    graph.setTileMapping(t.flatten().slice(4 * k, 4 * k + 4), k % 4);
  CHECK(poputil::detectInnermostGrouping(graph, t) == 4);
  // Transposed, the innermost dimension has stride 12: no grouping.
  CHECK(poputil::detectInnermostGrouping(graph, t.transpose()) == 1);
  poplar::Tensor scalar = graph.addVariable(poplar::FLOAT, {}, "scalar");
  CHECK_THROWS_AS(poputil::detectInnermostGrouping(graph, scalar), poputil::poplibs_error);

  const poplar::Target &target = graph.getTarget();
  CHECK(poputil::checkAccuracyWhenCast(target, 0.5, poplar::FLOAT, poplar::HALF, 0));
  CHECK(poputil::checkAccuracyWhenCast(target, 0.1, poplar::FLOAT, poplar::HALF, 1e-3));
  CHECK_FALSE(poputil::checkAccuracyWhenCast(target, 0.1, poplar::FLOAT, poplar::HALF, 1e-5));
  CHECK_FALSE(poputil::checkAccuracyWhenCast(target, 70000.0, poplar::FLOAT, poplar::HALF, 1.0));
  CHECK(poputil::checkAccuracyWhenCast(target, 1e-30, poplar::FLOAT, poplar::FLOAT, 0));
  CHECK_THROWS_AS(poputil::checkAccuracyWhenCast(target, 1.0, poplar::INT, poplar::HALF, 0.1),
                  poputil::poplibs_error);
}
