// Copyright (c) Aspen contributors.
// Counted cycles (docs/cost-model.md, "Cycles from the code"; issue 23 item 1): a custom
// vertex without an estimate is priced from the operations its code ran, counted by the
// cycle-counting plugin clang++-16 runs on codelets. The count grows with the work the code
// does, does not depend on host threads or runs, loses to an explicit estimate, and is
// shown in the profile.
#include "CommandSupport.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

using namespace poplar;
using namespace poplar::program;

namespace {

const char *const kCodelets = R"(
#include <poplar/Vertex.hpp>
#include <ipudef.h>
#include <ipu_builtins.h>
using namespace poplar;

// n float divides, each on the last one's result.
class DivLoop : public Vertex {
public:
  Input<unsigned> n;
  Input<float> d;
  InOut<float> x;
  bool compute() {
    float v = *x;
    const unsigned count = *n;
    const float by = *d;
    for (unsigned i = 0; i < count; ++i)
      v = v / by;
    *x = v;
    return true;
  }
};

// The same divides as a do-while loop counted down: its latch compares the induction variable
// itself (`icmp ugt i, 1`), not its decrement, and is still one brnzdec.
class DivDoWhile : public Vertex {
public:
  Input<unsigned> n;
  Input<float> d;
  InOut<float> x;
  bool compute() {
    float v = *x;
    unsigned i = *n;
    const float by = *d;
    do
      v = v / by;
    while (i-- > 1);
    *x = v;
    return true;
  }
};

// The same element-wise work, one float at a time and two (float2) at a time.
class ScaleScalar : public Vertex {
public:
  InOut<Vector<float>> data;
  bool compute() {
    const unsigned n = data.size();
    for (unsigned i = 0; i < n; ++i)
      data[i] = data[i] * 1.5f + 0.5f;
    return true;
  }
};
class ScaleFloat2 : public Vertex {
public:
  InOut<Vector<float, VectorLayout::SPAN, 8>> data;
  bool compute() {
    float2 *p = reinterpret_cast<float2 *>(&data[0]);
    const unsigned n = data.size() / 2;
    for (unsigned i = 0; i < n; ++i)
      p[i] = p[i] * 1.5f + 0.5f;
    return true;
  }
};

// IPU builtins in counted loops: each is the IPU's instruction(s) for it, not a call.
class TileIds : public Vertex {
public:
  Input<unsigned> n;
  Output<unsigned> out;
  bool compute() {
    unsigned sum = 0;
    const unsigned count = *n;
    for (unsigned i = 0; i < count; ++i)
      sum += __builtin_ipu_get_tile_id();
    *out = sum;
    return true;
  }
};
class Uniforms : public Vertex {
public:
  Input<unsigned> n;
  Output<float> out;
  bool compute() {
    float sum = 0;
    const unsigned count = *n;
    for (unsigned i = 0; i < count; ++i)
      sum += __builtin_ipu_urand_f32();
    *out = sum;
    return true;
  }
};
class Normals : public Vertex {
public:
  Input<unsigned> n;
  Output<Vector<float, VectorLayout::SPAN, 8>> out;
  bool compute() {
    float2 sum = {0, 0};
    const unsigned count = *n;
    for (unsigned i = 0; i < count; ++i)
      sum += __builtin_ipu_f32v2grand();
    out[0] = sum[0];
    out[1] = sum[1];
    return true;
  }
};

// Each worker divides its share: the vertex costs W x its slowest worker.
class DivMulti : public MultiVertex {
public:
  Input<unsigned> n;
  InOut<Vector<float>> x;
  bool compute(unsigned worker) {
    float v = x[worker];
    for (unsigned i = 0; i < *n * (worker + 1); ++i)
      v = v / 1.0001f;
    x[worker] = v;
    return true;
  }
};
)";

struct Run {
  std::map<std::string, std::uint64_t> typeCycles, typeCounted, typeNotCounted;
  std::uint64_t totalCycles = 0, computeCycles = 0;
  std::string summary;
  // The profile's per-tile compute cycles of the Execute steps (tile -> cycles), whether it
  // calls them counted, and what the analyser's library (pva) reads for the same steps.
  std::vector<std::map<unsigned, std::uint64_t>> tileCycles, pvaTileCycles;
  std::vector<bool> tileCyclesCounted;
};

/// Builds the graph `build` makes on a `tiles`-tile ipu2 model, runs program 0 once, and
/// returns what the profile says. `reload`: through Executable::serialize/deserialize.
/// `runs`: of program 0; `withGraph`: the graph profile too, and what pva reads from both.
template <class Build>
Run runGraph(unsigned tiles, const Build &build, bool reload = false, unsigned runs = 1,
             bool withGraph = false) {
  IPUModel model("ipu2");
  model.tilesPerIPU = tiles;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  std::stringstream source(kCodelets);
  graph.addCodelets(source, "-O2");
  Sequence prog;
  build(graph, prog);
  aspen::test::TempDir dir;
  const OptionFlags options{{"autoReport.outputExecutionProfile", "true"},
                            {"autoReport.outputGraphProfile", withGraph ? "true" : "false"},
                            {"autoReport.outputHtml", "false"},
                            {"autoReport.directory", dir.path}};
  Run r;
  {
    std::unique_ptr<Engine> engine;
    if (reload) {
      std::stringstream saved;
      compileGraph(graph, {prog}).serialize(saved);
      engine = std::make_unique<Engine>(Executable::deserialize(saved), options);
    } else {
      engine = std::make_unique<Engine>(graph, prog, options);
    }
    engine->load(device);
    for (unsigned i = 0; i < runs; ++i)
      engine->run(0);
    std::ostringstream summary;
    engine->printProfileSummary(summary);
    r.summary = summary.str();
  }
  std::ifstream in(dir.path + "/profile.json");
  REQUIRE(in.good());
  const nlohmann::json profile = nlohmann::json::parse(in);
  const nlohmann::json &x = profile.at("execution");
  r.totalCycles = x.at("totalCycles").get<std::uint64_t>();
  r.computeCycles = x.at("cycles").at("compute").get<std::uint64_t>();
  for (const auto &step : x.at("steps")) {
    if (step.at("kind") != "Execute")
      continue;
    std::map<unsigned, std::uint64_t> perTile;
    for (std::size_t k = 0; k < step.at("tiles").size(); ++k)
      perTile[step.at("tiles")[k].get<unsigned>()] = step.at("tileComputeCycles")[k].get<std::uint64_t>();
    r.tileCycles.push_back(perTile);
    r.tileCyclesCounted.push_back(step.value("tileComputeCyclesCounted", false));
  }
  for (const auto &t : x.at("vertexTypes")) {
    const std::string name = t.at("name").get<std::string>();
    r.typeCycles[name] = t.at("cycles").get<std::uint64_t>();
    r.typeCounted[name] = t.at("instancesCounted").get<std::uint64_t>();
    r.typeNotCounted[name] = t.at("instancesNotCounted").get<std::uint64_t>();
  }
  if (!withGraph)
    return r;
  const pva::Report report = pva::openReport(dir.path + "/profile.json");
  for (const pva::ExecutionStep &step : report.execution().steps()) {
    if (step.program()->type() != pva::Program::Type::OnTileExecute || step.run() != 0)
      continue;
    std::map<unsigned, std::uint64_t> perTile;
    const std::vector<std::uint64_t> cycles = step.cyclesByTile();
    for (unsigned t = 0; t < cycles.size(); ++t)
      if (cycles[t])
        perTile[t] = cycles[t];
    r.pvaTileCycles.push_back(perTile);
  }
  return r;
}

/// One DivLoop vertex per tile, tile t dividing n[t] times.
auto divLoops(std::vector<unsigned> counts, std::uint64_t estimate = 0) {
  return [counts, estimate](Graph &g, Sequence &prog) {
    ComputeSet cs = g.addComputeSet("divide");
    for (unsigned t = 0; t < counts.size(); ++t) {
      Tensor n = g.addConstant(UNSIGNED_INT, {}, counts[t], "n");
      Tensor d = g.addConstant(FLOAT, {}, 1.0001f, "d");
      Tensor x = g.addVariable(FLOAT, {}, "x");
      g.setTileMapping(n, t);
      g.setTileMapping(d, t);
      g.setTileMapping(x, t);
      g.setInitialValue(x, 3.0f);
      VertexRef v = g.addVertex(cs, "DivLoop", {{"n", n}, {"d", d}, {"x", x}});
      g.setTileMapping(v, t);
      if (estimate)
        g.setPerfEstimate(v, estimate);
    }
    prog.add(Execute(cs));
  };
}

std::uint64_t divLoopCycles(unsigned n) {
  return runGraph(1, divLoops({n})).typeCycles.at("DivLoop");
}

} // namespace

TEST_CASE("A float-divide loop's counted cycles grow linearly with its iterations", "[counted][cycles]") {
  const std::uint64_t small = divLoopCycles(1000), large = divLoopCycles(100000);
  INFO("n = 1,000: " << small << " cycles; n = 100,000: " << large);
  REQUIRE(small > 1000);
  const double ratio = double(large) / double(small);
  REQUIRE(ratio == Approx(100.0).epsilon(0.03));
  // Per iteration: one divide (f32div, 3 thread cycles) and the loop's control, one brnzdec (its
  // increment and compare fold into it: the counter only counts).
  const double perIteration = double(large - small) / 99000.0;
  REQUIRE(perIteration == Approx(4.0).epsilon(0.01));
}

TEST_CASE("A do-while loop whose latch compares the induction variable itself is one brnzdec",
          "[counted][cycles]") {
  // The loop's control folds whichever of `iv` and `iv - 1` the latch compares: an iteration is
  // the divide (f32div, 3) and brnzdec (1), as for the for loop above, exactly.
  auto cycles = [](unsigned n) {
    return runGraph(1,
                    [n](Graph &g, Sequence &prog) {
                      ComputeSet cs = g.addComputeSet("divide");
                      Tensor count = g.addConstant(UNSIGNED_INT, {}, n, "n");
                      Tensor d = g.addConstant(FLOAT, {}, 1.0001f, "d");
                      Tensor x = g.addVariable(FLOAT, {}, "x");
                      for (const Tensor &t : {count, d, x})
                        g.setTileMapping(t, 0);
                      g.setTileMapping(g.addVertex(cs, "DivDoWhile", {{"n", count}, {"d", d}, {"x", x}}), 0);
                      prog.add(Execute(cs));
                    })
        .typeCycles.at("DivDoWhile");
  };
  const std::uint64_t small = cycles(1000), large = cycles(3000);
  INFO("n = 1,000: " << small << " cycles; n = 3,000: " << large);
  REQUIRE(large - small == 2000 * (3 + 1));
}

TEST_CASE("IPU builtins count as the IPU's instructions for them, not as calls", "[counted][cycles]") {
  // One vertex of each type, n iterations; the slope from n = 1,000 to 3,000 is the loop body:
  // the builtin (CostTable.hpp, kBuiltinCosts: get 1, urand32 + f32v2sufromui 2, f32v2grand 1),
  // the add (1, a float2 add is one 64-bit operation) and the loop's brnzdec (1).
  auto cycles = [](unsigned n) {
    return runGraph(1, [n](Graph &g, Sequence &prog) {
      ComputeSet cs = g.addComputeSet("builtins");
      Tensor count = g.addConstant(UNSIGNED_INT, {}, n, "n");
      Tensor ids = g.addVariable(UNSIGNED_INT, {}, "ids");
      Tensor uniforms = g.addVariable(FLOAT, {}, "uniforms");
      Tensor normals = g.addVariable(FLOAT, {2}, "normals");
      for (const Tensor &t : {count, ids, uniforms, normals})
        g.setTileMapping(t, 0);
      g.setTileMapping(g.addVertex(cs, "TileIds", {{"n", count}, {"out", ids}}), 0);
      g.setTileMapping(g.addVertex(cs, "Uniforms", {{"n", count}, {"out", uniforms}}), 0);
      g.setTileMapping(g.addVertex(cs, "Normals", {{"n", count}, {"out", normals}}), 0);
      prog.add(Execute(cs));
    });
  };
  const Run small = cycles(1000), large = cycles(3000);
  for (const auto &[type, perIteration] :
       std::map<std::string, std::uint64_t>{{"TileIds", 3}, {"Uniforms", 4}, {"Normals", 3}}) {
    INFO(type);
    REQUIRE(small.typeCounted.at(type) == 1);
    REQUIRE(large.typeCycles.at(type) - small.typeCycles.at(type) == 2000 * perIteration);
  }
}

TEST_CASE("Counted cycles do not depend on host threads, runs or a reload", "[counted][cycles]") {
  const std::vector<unsigned> counts = {100, 2000, 30, 4000, 500, 60000, 7, 800};
  Run one, two, again, reloaded;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = runGraph(8, divLoops(counts));
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    two = runGraph(8, divLoops(counts));
    again = runGraph(8, divLoops(counts));
    reloaded = runGraph(8, divLoops(counts), true);
  }
  REQUIRE(one.typeCycles.at("DivLoop") > 60000 * 4);
  REQUIRE(one.typeCycles == two.typeCycles);
  REQUIRE(one.totalCycles == two.totalCycles);
  REQUIRE(again.typeCycles == one.typeCycles);
  REQUIRE(again.totalCycles == one.totalCycles);
  REQUIRE(reloaded.typeCycles == one.typeCycles);
  REQUIRE(reloaded.totalCycles == one.totalCycles);
  // The slowest tile sets the step: its vertex alone on a worker, W = 6 slots.
  REQUIRE(one.totalCycles >= 6 * 4 * 60000);
}

TEST_CASE("An explicit estimate wins over counted cycles", "[counted][cycles]") {
  const Run set = runGraph(1, divLoops({100000}, 1234));
  REQUIRE(set.typeCycles.at("DivLoop") == 1234);
  REQUIRE(set.typeCounted.at("DivLoop") == 0);
  const Run registered = runGraph(1, [](Graph &g, Sequence &prog) {
    g.registerPerfEstimator(
        "DivLoop", [](const VertexIntrospector &, const Target &) { return VertexPerfEstimate(4321); });
    divLoops({100000})(g, prog);
  });
  REQUIRE(registered.typeCycles.at("DivLoop") == 4321);
  REQUIRE(registered.typeCounted.at("DivLoop") == 0);
}

TEST_CASE("float2 work counts fewer cycles per element than the same work on scalars", "[counted][cycles]") {
  const unsigned n = 4096;
  const Run r = runGraph(1, [&](Graph &g, Sequence &prog) {
    ComputeSet cs = g.addComputeSet("scale");
    for (const char *type : {"ScaleScalar", "ScaleFloat2"}) {
      Tensor t = g.addVariable(FLOAT, {n}, type);
      g.setTileMapping(t, 0);
      g.setTileMapping(g.addVertex(cs, type, {{"data", t}}), 0);
    }
    prog.add(Execute(cs));
  });
  const std::uint64_t scalar = r.typeCycles.at("ScaleScalar"), vector = r.typeCycles.at("ScaleFloat2");
  INFO("scalar " << scalar << ", float2 " << vector << " cycles for " << n << " elements");
  REQUIRE(scalar > n);
  // The same instructions a loop iteration, for two elements instead of one.
  REQUIRE(vector < scalar * 0.6);
  REQUIRE(vector > n / 2);
}

TEST_CASE("A MultiVertex's counted cycles are its slowest worker's, in machine cycles", "[counted][cycles]") {
  auto build = [](unsigned n) {
    return [n](Graph &g, Sequence &prog) {
      ComputeSet cs = g.addComputeSet("multi");
      Tensor count = g.addConstant(UNSIGNED_INT, {}, n, "n");
      Tensor x = g.addVariable(FLOAT, {6}, "x");
      g.setTileMapping(count, 0);
      g.setTileMapping(x, 0);
      g.setTileMapping(g.addVertex(cs, "DivMulti", {{"n", count}, {"x", x}}), 0);
      prog.add(Execute(cs));
    };
  };
  const std::uint64_t small = runGraph(1, build(1000)).typeCycles.at("DivMulti");
  const std::uint64_t large = runGraph(1, build(2000)).typeCycles.at("DivMulti");
  // The slowest worker (worker 5) divides 6n times, 4 thread cycles each; x 6 workers.
  REQUIRE(double(large - small) == Approx(6.0 * 6000 * 4).epsilon(0.01));
}

TEST_CASE("The profile summary and JSON say which vertices were counted", "[counted][profile]") {
  const Run r = runGraph(2, [](Graph &g, Sequence &prog) { divLoops({5000, 7000}, 0)(g, prog); });
  REQUIRE(r.typeCounted.at("DivLoop") == 2);
  REQUIRE(r.typeNotCounted.at("DivLoop") == 0);
  INFO(r.summary);
  REQUIRE(r.summary.find("DivLoop (2 instances, counted)") != std::string::npos);
  // The figure beside it is the counted one: each vertex's count as it gives alone, far above the
  // static default (20 + 3 thread cycles a vertex), with thousands separators as Poplar prints.
  const std::uint64_t counted = divLoopCycles(5000) + divLoopCycles(7000);
  REQUIRE(r.typeCycles.at("DivLoop") == counted);
  REQUIRE(counted > 2 * 4 * 5000);
  std::smatch line;
  REQUIRE(
      std::regex_search(r.summary, line, std::regex("DivLoop \\(2 instances, counted\\)[ .:]*([0-9,]+)")));
  std::string digits = line[1];
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  REQUIRE(std::stoull(digits) == counted);
}

TEST_CASE("Codelets compiled by GCC do not count: named, priced by the default estimate, never 0",
          "[counted][profile]") {
  // ASPEN_CXX chooses the codelet compiler (docs/codelets.md); GCC cannot load the plugin.
  ::setenv("ASPEN_CXX", "g++", 1);
  struct Restore {
    ~Restore() { ::unsetenv("ASPEN_CXX"); }
  } restore;
  const Run r = runGraph(1, divLoops({100000}));
  REQUIRE(r.typeCounted.at("DivLoop") == 0);
  REQUIRE(r.typeNotCounted.at("DivLoop") == 1);
  // The default: 20 + ceil(edge bytes / 4) thread cycles, edges n, d, x of 4 bytes each.
  REQUIRE(r.typeCycles.at("DivLoop") == 20 + 3);
  INFO(r.summary);
  REQUIRE(r.summary.find("DivLoop (1 instances, 1 NOT counted (default estimate))") != std::string::npos);
}

TEST_CASE("Per-tile compute cycles in the profile and the analyser are the counted ones",
          "[counted][profile]") {
  // One DivLoop per tile; each tile's vertex alone on one of its W = 6 workers, so the tile
  // costs 6 x its vertex, whose cycles a one-tile run of the same vertex gives on its own.
  const std::vector<unsigned> counts = {5000, 7000, 100};
  std::map<unsigned, std::uint64_t> expected;
  for (unsigned t = 0; t < counts.size(); ++t)
    expected[t] = 6 * divLoopCycles(counts[t]);
  Run one, two, twice;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = runGraph(3, divLoops(counts), false, 1, true);
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    two = runGraph(3, divLoops(counts));
    twice = runGraph(3, divLoops(counts), false, 2, true);
  }
  REQUIRE(one.tileCycles.size() == 1);
  REQUIRE(one.tileCyclesCounted == std::vector<bool>{true});
  INFO("tile 0: " << one.tileCycles[0][0] << ", expected " << expected[0]);
  REQUIRE(one.tileCycles[0] == expected);
  // Not the static default (20 + 3 cycles a vertex, x 6): 100 iterations of 4 thread cycles.
  REQUIRE(one.tileCycles[0][2] > 6 * 100 * 4);
  // The step's compute cycles are its slowest tile's.
  REQUIRE(one.computeCycles == expected[1]);
  REQUIRE(two.tileCycles == one.tileCycles);
  REQUIRE(two.computeCycles == one.computeCycles);
  // Two runs: the profile's figures are per execution (the mean of the two, equal here).
  REQUIRE(twice.tileCycles == one.tileCycles);
  REQUIRE(twice.computeCycles == 2 * one.computeCycles);
  // The analyser's library reads the same per-tile figures.
  REQUIRE(one.pvaTileCycles == one.tileCycles);
  REQUIRE(twice.pvaTileCycles == one.tileCycles);
}

TEST_CASE("A tile's counted cycles are its busiest worker's, however its vertices are packed",
          "[counted][profile]") {
  // Tile 0: eight DivLoops of one static estimate; the packing puts the first six on workers
  // 0-5, the seventh on worker 0 and the eighth on worker 1 (the first least-loaded ones).
  // Tile 1: two DivLoops and a ScaleScalar, each alone on its worker (two vertex types).
  // Tile 2: three DivLoops, each alone on its worker (one type). Every vertex counts the same
  // cycles as it does alone on a tile.
  const std::vector<unsigned> tile0 = {1000, 2000, 100, 100, 100, 100, 3000, 4000};
  const std::vector<unsigned> tile1 = {600, 900}, tile2 = {300, 5000, 200};
  constexpr unsigned scaled = 64;
  auto build = [&](Graph &g, Sequence &prog) {
    ComputeSet cs = g.addComputeSet("packed");
    auto addDiv = [&](unsigned tile, unsigned count) {
      Tensor n = g.addConstant(UNSIGNED_INT, {}, count, "n");
      Tensor d = g.addConstant(FLOAT, {}, 1.0001f, "d");
      Tensor x = g.addVariable(FLOAT, {}, "x");
      g.setTileMapping(n, tile);
      g.setTileMapping(d, tile);
      g.setTileMapping(x, tile);
      g.setInitialValue(x, 3.0f);
      g.setTileMapping(g.addVertex(cs, "DivLoop", {{"n", n}, {"d", d}, {"x", x}}), tile);
    };
    for (unsigned c : tile0)
      addDiv(0, c);
    for (unsigned c : tile1)
      addDiv(1, c);
    Tensor data = g.addVariable(FLOAT, {scaled}, "data");
    g.setTileMapping(data, 1);
    g.setTileMapping(g.addVertex(cs, "ScaleScalar", {{"data", data}}), 1);
    for (unsigned c : tile2)
      addDiv(2, c);
    prog.add(Execute(cs));
  };
  auto d = [](unsigned n) { return divLoopCycles(n); };
  const std::uint64_t scale = runGraph(1, [&](Graph &g, Sequence &prog) {
                                ComputeSet cs = g.addComputeSet("one");
                                Tensor data = g.addVariable(FLOAT, {scaled}, "data");
                                g.setTileMapping(data, 0);
                                g.setTileMapping(g.addVertex(cs, "ScaleScalar", {{"data", data}}), 0);
                                prog.add(Execute(cs));
                              }).typeCycles.at("ScaleScalar");
  std::vector<std::uint64_t> workers0(6, 0);
  for (unsigned i = 0; i < tile0.size(); ++i)
    workers0[i < 6 ? i : i - 6] += d(tile0[i]);
  std::map<unsigned, std::uint64_t> expected;
  expected[0] = 6 * *std::max_element(workers0.begin(), workers0.end());
  expected[1] = 6 * std::max({d(tile1[0]), d(tile1[1]), scale});
  expected[2] = 6 * std::max({d(tile2[0]), d(tile2[1]), d(tile2[2])});
  std::uint64_t divTotal = 0;
  for (const auto *counts : {&tile0, &tile1, &tile2})
    for (unsigned c : *counts)
      divTotal += d(c);
  for (unsigned threads : {1u, 2u}) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
    const Run r = runGraph(3, build);
    INFO(threads << " host threads");
    REQUIRE(r.tileCycles.size() == 1);
    REQUIRE(r.tileCycles[0] == expected);
    REQUIRE(r.computeCycles == std::max({expected[0], expected[1], expected[2]}));
    REQUIRE(r.typeCycles.at("DivLoop") == divTotal);
    REQUIRE(r.typeCycles.at("ScaleScalar") == scale);
  }
}

TEST_CASE("Tiles whose vertices are dealt to the workers in turn cost their busiest worker's cycles",
          "[counted][profile]") {
  // Step 0: on 128 tiles, 13, 7, 6 or 1 DivLoops of one static estimate, so the packing deals
  // the j-th to worker j mod 6 (the executor's loop for such tiles keeps no cleared loads).
  // Step 1: one DivLoop on each of 512 tiles (its loop for a vertex a tile). Every vertex
  // counts what it does alone on a tile; the steps are cut into chunks by their work.
  const std::vector<unsigned> values = {100, 400, 900, 1600, 2500};
  std::map<unsigned, std::uint64_t> alone;
  for (unsigned n : values)
    alone[n] = divLoopCycles(n);
  const std::vector<unsigned> perTile = {13, 7, 6, 1};
  constexpr unsigned dealtTiles = 128, singleTiles = 512;
  auto count = [&](unsigned t, unsigned j) { return values[(t + 3 * j) % values.size()]; };
  auto build = [&](Graph &g, Sequence &prog) {
    auto addDiv = [&](ComputeSet &cs, unsigned tile, unsigned n) {
      Tensor nt = g.addConstant(UNSIGNED_INT, {}, n, "n");
      Tensor d = g.addConstant(FLOAT, {}, 1.0001f, "d");
      Tensor x = g.addVariable(FLOAT, {}, "x");
      g.setTileMapping(nt, tile);
      g.setTileMapping(d, tile);
      g.setTileMapping(x, tile);
      g.setInitialValue(x, 3.0f);
      g.setTileMapping(g.addVertex(cs, "DivLoop", {{"n", nt}, {"d", d}, {"x", x}}), tile);
    };
    ComputeSet dealt = g.addComputeSet("dealt");
    for (unsigned t = 0; t < dealtTiles; ++t)
      for (unsigned j = 0; j < perTile[t % perTile.size()]; ++j)
        addDiv(dealt, t, count(t, j));
    ComputeSet single = g.addComputeSet("single");
    for (unsigned t = 0; t < singleTiles; ++t)
      addDiv(single, t, count(t, 0));
    prog.add(Execute(dealt));
    prog.add(Execute(single));
  };
  std::map<unsigned, std::uint64_t> expectedDealt, expectedSingle;
  std::uint64_t divTotal = 0;
  for (unsigned t = 0; t < dealtTiles; ++t) {
    std::vector<std::uint64_t> workers(6, 0);
    for (unsigned j = 0; j < perTile[t % perTile.size()]; ++j) {
      workers[j % 6] += alone[count(t, j)];
      divTotal += alone[count(t, j)];
    }
    expectedDealt[t] = 6 * *std::max_element(workers.begin(), workers.end());
  }
  for (unsigned t = 0; t < singleTiles; ++t) {
    expectedSingle[t] = 6 * alone[count(t, 0)];
    divTotal += alone[count(t, 0)];
  }
  auto slowest = [](const std::map<unsigned, std::uint64_t> &m) {
    std::uint64_t w = 0;
    for (const auto &[tile, c] : m)
      w = std::max(w, c);
    return w;
  };
  for (unsigned threads : {1u, 2u}) {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, threads);
    const Run r = runGraph(singleTiles, build);
    INFO(threads << " host threads");
    REQUIRE(r.tileCycles.size() == 2);
    REQUIRE(r.tileCyclesCounted == std::vector<bool>{true, true});
    REQUIRE(r.tileCycles[0] == expectedDealt);
    REQUIRE(r.tileCycles[1] == expectedSingle);
    REQUIRE(r.computeCycles == slowest(expectedDealt) + slowest(expectedSingle));
    REQUIRE(r.typeCycles.at("DivLoop") == divTotal);
  }
}

TEST_CASE("Steps whose vertices have estimates keep static per-tile figures", "[counted][profile]") {
  const Run r = runGraph(2, divLoops({5000, 7000}, 1000));
  REQUIRE(r.tileCyclesCounted == std::vector<bool>{false});
  REQUIRE(r.tileCycles[0] == std::map<unsigned, std::uint64_t>{{0, 6000}, {1, 6000}});
}
