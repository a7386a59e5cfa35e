// Copyright (c) Aspen contributors.
// Engine::getReport and libpva's vertex and compute-set views, as PopLibs' tests use them
// (issue 24): which vertex types run on each tile (TileMemory::vertices), each compute set's
// vertices and per-tile cycles (Compilation::computeSets, ExecutionStep::computeSets).
// The expectations are worked out here from the graph the test builds: its vertices, their
// set estimates and the cost model's rule for a tile's compute cycles (docs/cost-model.md:
// worker vertices packed onto the least-loaded worker, the busiest worker's load times the
// number of workers).
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <pva/pva.hpp>

#include "CommandSupport.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

constexpr unsigned kTiles = 4;

std::string vertexSource() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/vertices/report_vertices.cpp";
}

/// Vertex type name -> count, as a group of pva::Vertex lists them.
std::map<std::string, std::uint64_t> byType(const std::vector<pva::Vertex> &vertices) {
  std::map<std::string, std::uint64_t> out;
  for (const pva::Vertex &v : vertices)
    out[v.type().name()] += v.count();
  return out;
}

/// The cost model's cycles for worker vertices with these estimates on one tile.
std::uint64_t tileCycles(std::vector<std::uint64_t> estimates, unsigned workers) {
  std::vector<std::uint64_t> load(workers, 0);
  for (std::uint64_t e : estimates)
    *std::min_element(load.begin(), load.end()) += e;
  return *std::max_element(load.begin(), load.end()) * workers;
}

struct Built {
  Device device;
  Graph graph;
  Tensor x;
  Sequence prog;
  explicit Built(Device d) : device(std::move(d)), graph(device.getTarget()) {}
};

// "first": two AddOne (100 cycles each) on tile 0, one Double (40) on tile 1;
// "second": three Double (10 each) on tile 2. The program runs first, second, first.
void build(Built &b) {
  Graph &g = b.graph;
  g.addCodelets(vertexSource());
  b.x = g.addVariable(FLOAT, {kTiles, 3}, "x");
  for (unsigned t = 0; t < kTiles; ++t)
    g.setTileMapping(b.x[t], t);
  ComputeSet first = g.addComputeSet("first");
  ComputeSet second = g.addComputeSet("second");
  for (unsigned i = 0; i < 2; ++i) {
    VertexRef v = g.addVertex(first, "AddOne", {{"data", b.x[0].slice(i, i + 1)}});
    g.setTileMapping(v, 0);
    g.setPerfEstimate(v, 100);
  }
  VertexRef d = g.addVertex(first, "Double", {{"data", b.x[1]}});
  g.setTileMapping(d, 1);
  g.setPerfEstimate(d, 40);
  for (unsigned i = 0; i < 3; ++i) {
    VertexRef v = g.addVertex(second, "Double", {{"data", b.x[2].slice(i, i + 1)}});
    g.setTileMapping(v, 2);
    g.setPerfEstimate(v, 10);
  }
  g.createHostWrite("x", b.x);
  g.createHostRead("x", b.x);
  b.prog = Sequence{Execute(first), Execute(second), Execute(first)};
}

Device makeDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = kTiles;
  return model.createDevice();
}

} // namespace

TEST_CASE("Engine::getReport: vertices per tile and compute sets, before any run", "[compat][pva][poplibs]") {
  Built b(makeDevice());
  build(b);
  const unsigned workers = b.device.getTarget().getNumWorkerContexts();
  Engine engine(b.graph, b.prog); // no autoReport option: getReport needs none

  const auto report = engine.getReport(false);
  CHECK(report.compilation().graph().numVertices() == 6);
  CHECK(report.compilation().graph().numComputeSets() == 2);
  CHECK(report.execution().steps().empty());

  // Each tile's vertices, by type, as PopLibs' MapExprScalar counts them.
  const std::vector<pva::Tile> tiles = report.compilation().tiles();
  REQUIRE(tiles.size() == kTiles);
  CHECK(byType(tiles[0].memory().vertices()) == std::map<std::string, std::uint64_t>{{"AddOne", 2}});
  CHECK(byType(tiles[1].memory().vertices()) == std::map<std::string, std::uint64_t>{{"Double", 1}});
  CHECK(byType(tiles[2].memory().vertices()) == std::map<std::string, std::uint64_t>{{"Double", 3}});
  CHECK(tiles[3].memory().vertices().empty());
  for (const pva::Vertex &v : tiles[0].memory().vertices())
    CHECK(v.count() >= 1);

  // The compute sets, with their vertices and estimated cycles per tile.
  const std::vector<pva::ComputeSet> css = report.compilation().computeSets();
  std::map<std::string, const pva::ComputeSet *> named;
  for (const pva::ComputeSet &cs : css)
    named[cs.name()] = &cs;
  REQUIRE(named.count("first"));
  REQUIRE(named.count("second"));
  const pva::ComputeSet &first = *named["first"];
  const pva::ComputeSet &second = *named["second"];
  CHECK(byType(first.vertices()) == std::map<std::string, std::uint64_t>{{"AddOne", 2}, {"Double", 1}});
  CHECK(byType(second.vertices()) == std::map<std::string, std::uint64_t>{{"Double", 3}});
  const std::vector<std::uint64_t> firstCycles = {tileCycles({100, 100}, workers), tileCycles({40}, workers),
                                                  0, 0};
  const std::vector<std::uint64_t> secondCycles = {0, 0, tileCycles({10, 10, 10}, workers), 0};
  CHECK(first.estimatedCyclesByTile() == firstCycles);
  CHECK(second.estimatedCyclesByTile() == secondCycles);
  // Not executed: cyclesByTile is the estimate.
  CHECK(first.cyclesByTile() == firstCycles);

  // A Report is a value: copies read the same.
  const pva::Report copy = report;
  CHECK(copy.compilation().computeSets().size() == css.size());
}

TEST_CASE("Engine::getReport: the executed compute sets of each step, and a snapshot",
          "[compat][pva][poplibs]") {
  Built b(makeDevice());
  build(b);
  const unsigned workers = b.device.getTarget().getNumWorkerContexts();
  aspen::test::TempDir dir;
  Engine engine(b.graph, b.prog,
                {{"autoReport.outputExecutionProfile", "true"}, {"autoReport.directory", dir.path}});
  const pva::Report before = engine.getReport();
  std::vector<float> host(kTiles * 3);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = float(i);
  engine.load(b.device);
  engine.writeTensor("x", host.data(), host.data() + host.size());
  engine.run(0);
  std::vector<float> out(host.size());
  engine.readTensor("x", out.data(), out.data() + out.size());
  // Tile 0's first two elements had 1 added twice; tile 1 doubled twice; tile 2 doubled once.
  CHECK(out[0] == host[0] + 2);
  CHECK(out[1] == host[1] + 2);
  CHECK(out[2] == host[2]);
  CHECK(out[3] == host[3] * 4);
  CHECK(out[6] == host[6] * 2);

  const pva::Report report = engine.getReport();
  CHECK(before.execution().steps().empty()); // taken before the run: unchanged
  std::vector<std::string> executed;
  for (const pva::ExecutionStep &s : report.execution().steps()) {
    const std::vector<pva::ComputeSet> css = s.computeSets();
    if (s.program()->type() != pva::Program::Type::OnTileExecute) {
      CHECK(css.empty());
      continue;
    }
    REQUIRE(css.size() == 1);
    executed.push_back(css[0].name());
    // PopLibs' codelet tests read tile 0's entries of both.
    const std::vector<std::uint64_t> cycles = css[0].cyclesByTile();
    const std::vector<std::uint64_t> estimated = css[0].estimatedCyclesByTile();
    REQUIRE(cycles.size() == kTiles);
    REQUIRE(estimated.size() == kTiles);
    if (css[0].name() == "first") {
      CHECK(estimated[0] == tileCycles({100, 100}, workers));
      CHECK(cycles[0] == estimated[0]); // estimated vertices run for their estimate
      CHECK(cycles[1] == tileCycles({40}, workers));
    } else {
      CHECK(estimated[2] == tileCycles({10, 10, 10}, workers));
      CHECK(cycles[2] == estimated[2]);
    }
    CHECK(byType(css[0].vertices()) ==
          (css[0].name() == "first" ? std::map<std::string, std::uint64_t>{{"AddOne", 2}, {"Double", 1}}
                                    : std::map<std::string, std::uint64_t>{{"Double", 3}}));
  }
  CHECK(executed == std::vector<std::string>{"first", "second", "first"});
  // getReport(false) leaves the execution part out.
  CHECK(engine.getReport(false).execution().steps().empty());
}

TEST_CASE("libpva: a report file has the same compute-set views", "[compat][pva][poplibs]") {
  Built b(makeDevice());
  build(b);
  aspen::test::TempDir dir, execOnly;
  {
    Engine engine(b.graph, b.prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir.path}});
    engine.load(b.device);
    engine.run(0);
    Engine again(b.graph, b.prog,
                 {{"autoReport.outputExecutionProfile", "true"}, {"autoReport.directory", execOnly.path}});
    again.load(b.device);
    again.run(0);
  } // the engines write their reports here
  const pva::Report file = pva::openReport(dir.path + "/profile.pop");
  std::map<std::string, std::map<std::string, std::uint64_t>> fromFile;
  for (const pva::ComputeSet &cs : file.compilation().computeSets())
    fromFile[cs.name()] = byType(cs.vertices());
  CHECK(fromFile["first"] == std::map<std::string, std::uint64_t>{{"AddOne", 2}, {"Double", 1}});
  CHECK(fromFile["second"] == std::map<std::string, std::uint64_t>{{"Double", 3}});
  CHECK(byType(file.compilation().tiles()[2].memory().vertices()) ==
        std::map<std::string, std::uint64_t>{{"Double", 3}});

  // Only the execution part: the executed compute sets are named, their vertices unknown.
  const pva::Report exec = pva::openReport(execOnly.path + "/profile.pop");
  std::vector<std::string> names;
  for (const pva::ExecutionStep &s : exec.execution().steps())
    for (const pva::ComputeSet &cs : s.computeSets()) {
      names.push_back(cs.name());
      CHECK(cs.vertices().empty());
    }
  CHECK(names == std::vector<std::string>{"first", "second", "first"});
}
