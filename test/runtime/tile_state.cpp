// Copyright (c) Aspen contributors.
// Conformance: each tile owns its codelets' global and static variables
// (issue 22 item 2; docs/tile-model.md, "What a tile owns"): initialised as the
// library's image initialises them, kept across compute sets and runs, reset by
// loading the executable again, counted in the tile's memory, and independent
// of the number of host threads. A library without such data costs nothing.
#include "RuntimeTestSupport.hpp"
#include "exe/ExecutableData.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>

#include <memory>
#include <sstream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

const char *const kLibrary = ASPEN_TILE_STATE_GP; // tile_state_codelets.cpp + tile_state_c.c

Device device(unsigned tiles) {
  IPUModel model("ipu2");
  if (tiles)
    model.tilesPerIPU = tiles;
  return model.createDevice();
}

template <class T> std::vector<T> read(Engine &engine, const std::string &handle, std::size_t n) {
  std::vector<T> out(n);
  engine.readTensor(handle, out.data(), out.data() + n);
  return out;
}

nlohmann::json memoryByCategory(const Executable &exe) {
  return nlohmann::json::parse(exe.getImpl().profileJson)["memory"]["tiles"]["byCategory"];
}

} // namespace

TEST_CASE("Every one of 1,472 tiles counts its own runs in a static variable", "[tile-state]") {
  Device d = device(0);
  const unsigned tiles = d.getTarget().getNumTiles();
  REQUIRE(tiles == 1472);
  Graph g(d.getTarget());
  g.addCodelets(kLibrary);
  Tensor counts = g.addVariable(UNSIGNED_INT, {tiles}, "counts");
  Tensor guarded = g.addVariable(INT, {tiles}, "guarded");
  ComputeSet cs = g.addComputeSet("count");
  for (unsigned t = 0; t < tiles; ++t) {
    g.setTileMapping(counts[t], t);
    g.setTileMapping(guarded[t], t);
    VertexRef a = g.addVertex(cs, "StaticCounter", {{"out", counts[t]}});
    VertexRef b = g.addVertex(cs, "GuardedCounter", {{"out", guarded[t]}});
    g.setTileMapping(a, t);
    g.setTileMapping(b, t);
  }
  g.createHostRead("counts", counts);
  g.createHostRead("guarded", guarded);
  Engine engine(g, Execute(cs));
  engine.load(d);
  for (unsigned run = 1; run <= 2; ++run) {
    engine.run(0);
    CHECK(read<unsigned>(engine, "counts", tiles) == std::vector<unsigned>(tiles, run));
    CHECK(read<int>(engine, "guarded", tiles) == std::vector<int>(tiles, 41 + int(run)));
  }
  // Loading the executable again starts every tile's copy afresh.
  engine.load(d);
  engine.run(0);
  CHECK(read<unsigned>(engine, "counts", tiles) == std::vector<unsigned>(tiles, 1u));
  CHECK(read<int>(engine, "guarded", tiles) == std::vector<int>(tiles, 42));
}

namespace {

/// Tile t adds t + 1 to its global in each of two compute sets, twice per
/// program, and reads it in a third; the C vertex accumulates t on tile t.
struct TotalsProgram {
  static constexpr unsigned tiles = 8;
  Device d = device(tiles);
  Graph g{d.getTarget()};
  Program program;
  TotalsProgram() {
    g.addCodelets(kLibrary);
    Tensor x = g.addConstant<unsigned>(UNSIGNED_INT, {tiles},
                                       std::vector<unsigned>{1, 2, 3, 4, 5, 6, 7, 8}.data(), "x");
    std::vector<int> cInputs(tiles);
    for (unsigned t = 0; t < tiles; ++t)
      cInputs[t] = int(t);
    Tensor cx = g.addConstant<int>(INT, {tiles}, cInputs.data(), "cx");
    Tensor total = g.addVariable(UNSIGNED_INT, {tiles}, "total");
    Tensor atLoad = g.addVariable(INT, {tiles}, "atLoad");
    Tensor cOut = g.addVariable(INT, {tiles}, "cOut");
    ComputeSet add1 = g.addComputeSet("add1"), add2 = g.addComputeSet("add2"),
               readCs = g.addComputeSet("read");
    ComputeSet c = g.addComputeSet("c");
    for (unsigned t = 0; t < tiles; ++t) {
      for (Tensor v : {x, cx, total, atLoad, cOut})
        g.setTileMapping(v[t], t);
      for (ComputeSet cs : {add1, add2})
        g.setTileMapping(g.addVertex(cs, "AddToTotal", {{"x", x[t]}}), t);
      g.setTileMapping(g.addVertex(readCs, "ReadTotal", {{"total", total[t]}, {"atLoadValue", atLoad[t]}}),
                       t);
      // The C library runs on the even tiles only.
      if (t % 2 == 0)
        g.setTileMapping(g.addVertex(c, "CAccumulate", {{"x", cx[t]}, {"out", cOut[t]}}), t);
      else
        g.setTileMapping(cOut[t], t);
    }
    g.createHostRead("total", total);
    g.createHostRead("atLoad", atLoad);
    g.createHostRead("cOut", cOut);
    program = Sequence{Repeat(2, Sequence{Execute(add1), Execute(add2)}), Execute(readCs), Execute(c)};
  }
};

} // namespace

TEST_CASE("Globals of C++ and C code stay with their tile across compute sets and runs", "[tile-state]") {
  TotalsProgram p;
  Engine engine(p.g, p.program);
  engine.load(p.d);
  for (unsigned run = 1; run <= 2; ++run) {
    engine.run(0);
    const auto total = read<unsigned>(engine, "total", p.tiles);
    const auto atLoad = read<int>(engine, "atLoad", p.tiles);
    const auto cOut = read<int>(engine, "cOut", p.tiles);
    for (unsigned t = 0; t < p.tiles; ++t) {
      INFO("tile " << t << ", run " << run);
      CHECK(total[t] == 4 * (t + 1) * run); // 4 additions per run, of t + 1
      CHECK(atLoad[t] == 700);              // the library's constructor's value
      if (t % 2 == 0)
        CHECK(cOut[t] == (100 + int(t * run)) * 1000 + int(run)); // accumulator, calls
    }
  }
}

TEST_CASE("Tiles' codelet data gives the same results with 1 and 2 host threads", "[tile-state]") {
  auto results = [](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    TotalsProgram p;
    Engine engine(p.g, p.program);
    engine.load(p.d);
    engine.run(0);
    engine.run(0);
    return std::make_pair(read<unsigned>(engine, "total", p.tiles), read<int>(engine, "cOut", p.tiles));
  };
  const auto one = results(1);
  const auto two = results(2);
  CHECK(one == two);
  CHECK(one.first[7] == 64u);
}

TEST_CASE("A tile's codelet data is part of its memory; a stateless library reserves none", "[tile-state]") {
  SECTION("stateful library: the tiles that run it, and only those") {
    TotalsProgram p;
    Executable exe = compileGraph(p.g, {p.program});
    const aspen::exe::ExecutableData &x = exe.getImpl();
    REQUIRE(x.codeletData.size() == 1);
    const std::uint32_t bytes = x.codeletData[0].bytes;
    CHECK(bytes >= 4 * sizeof(int)); // at least globalTotal, seed, atLoad, the C globals
    CHECK(x.codeletData[0].regions.size() == p.tiles);
    const auto perTile = memoryByCategory(exe)["codeletData"].get<std::vector<std::uint64_t>>();
    CHECK(perTile == std::vector<std::uint64_t>(p.tiles, bytes));
    // The summary's memory by data type shows them.
    Engine engine(std::move(exe));
    std::ostringstream summary;
    engine.printProfileSummary(summary);
    CHECK_THAT(summary.str(), Catch::Contains("Codelet Data"));
  }
  SECTION("stateless library") {
    runtime_test::TestGraph t(4);
    Tensor v = t.graph.addVariable(FLOAT, {4}, "v");
    ComputeSet cs = t.graph.addComputeSet("add");
    for (unsigned i = 0; i < 4; ++i) {
      t.graph.setTileMapping(v[i], i);
      t.graph.setTileMapping(t.graph.addVertex(cs, "AddOne", {{"data", v.slice(i, i + 1)}}), i);
    }
    Executable exe = compileGraph(t.graph, {Execute(cs)});
    CHECK(exe.getImpl().codeletData.empty());
    const auto perTile = memoryByCategory(exe)["codeletData"].get<std::vector<std::uint64_t>>();
    CHECK(perTile == std::vector<std::uint64_t>(4, 0));
  }
}

TEST_CASE("A reloaded executable from disk starts every tile's codelet data afresh", "[tile-state]") {
  TotalsProgram p;
  Executable exe = compileGraph(p.g, {p.program});
  std::stringstream file;
  exe.serialize(file);
  Engine engine(Executable::deserialize(file));
  engine.load(p.d);
  engine.run(0);
  engine.run(0);
  CHECK(read<unsigned>(engine, "total", p.tiles)[0] == 8u);
  engine.load(p.d);
  engine.run(0);
  CHECK(read<unsigned>(engine, "total", p.tiles)[0] == 4u);
}

TEST_CASE("Each replica's tiles own their codelet data", "[tile-state]") {
  constexpr unsigned R = 2, tiles = 4;
  IPUModel model("ipu2");
  model.numIPUs = R;
  model.tilesPerIPU = tiles;
  Device d = model.createDevice();
  Graph g(d.getTarget(), replication_factor(R));
  g.addCodelets(kLibrary);
  Tensor index = g.addReplicationIndexConstant();
  g.setTileMapping(index, 0);
  Tensor total = g.addVariable(UNSIGNED_INT, {tiles}, "total");
  Tensor atLoad = g.addVariable(INT, {tiles}, "atLoad");
  ComputeSet add = g.addComputeSet("add"), readCs = g.addComputeSet("read");
  for (unsigned t = 0; t < tiles; ++t) {
    g.setTileMapping(total[t], t);
    g.setTileMapping(atLoad[t], t);
    g.setTileMapping(g.addVertex(add, "AddToTotal", {{"x", index}}), t); // adds the replica's index
    g.setTileMapping(g.addVertex(readCs, "ReadTotal", {{"total", total[t]}, {"atLoadValue", atLoad[t]}}), t);
  }
  g.createHostRead("total", total);
  Engine engine(g, Sequence{Repeat(3, Execute(add)), Execute(readCs)});
  engine.load(d);
  for (unsigned run = 1; run <= 2; ++run) {
    engine.run(0);
    std::vector<unsigned> expected;
    for (unsigned r = 0; r < R; ++r)
      expected.insert(expected.end(), tiles, 3 * r * run);
    CHECK(read<unsigned>(engine, "total", R * tiles) == expected);
  }
}

TEST_CASE("A vertex faulting with its codelet data swapped in leaves the data and its lock behind",
          "[tile-state][fault]") {
  // The recovery path of a fault (docs/tile-model.md) copies the tile's data back and frees the
  // library's lock: after a reload, every tile (the faulting one included) runs again and counts
  // from the start, with no thread left waiting for the lock.
  Device d = device(4);
  Graph g(d.getTarget());
  std::stringstream source;
  source << "#include <poplar/Vertex.hpp>\n"
            "static unsigned runs = 0;\n"
            "class CountThenDivide : public poplar::Vertex {\n"
            "public:\n"
            "  poplar::Input<unsigned> divisor;\n"
            "  poplar::Output<unsigned> out;\n"
            "  void compute() { ++runs; *out = runs * 100u / *divisor; }\n"
            "};\n";
  g.addCodelets(source);
  Tensor divisors = g.addVariable(UNSIGNED_INT, {4}, "divisors");
  Tensor out = g.addVariable(UNSIGNED_INT, {4}, "out");
  ComputeSet cs = g.addComputeSet("countThenDivide");
  for (unsigned t = 0; t < 4; ++t) {
    g.setTileMapping(divisors[t], t);
    g.setTileMapping(out[t], t);
    g.setTileMapping(g.addVertex(cs, "CountThenDivide", {{"divisor", divisors[t]}, {"out", out[t]}}), t);
  }
  g.createHostWrite("divisors", divisors);
  g.createHostRead("out", out);
  Engine engine(g, Execute(cs));
  engine.load(d);
  const std::vector<unsigned> ones(4, 1u), zeroOnTile2{1u, 1u, 0u, 1u};
  engine.writeTensor("divisors", ones.data(), ones.data() + 4);
  engine.run(0);
  CHECK(read<unsigned>(engine, "out", 4) == std::vector<unsigned>(4, 100u));
  engine.writeTensor("divisors", zeroOnTile2.data(), zeroOnTile2.data() + 4);
  CHECK_THROWS_AS(engine.run(0), poplar::application_runtime_error);
  engine.load(d);
  for (unsigned run = 1; run <= 2; ++run) {
    engine.writeTensor("divisors", ones.data(), ones.data() + 4);
    engine.run(0);
    CHECK(read<unsigned>(engine, "out", 4) == std::vector<unsigned>(4, 100u * run));
  }
}
