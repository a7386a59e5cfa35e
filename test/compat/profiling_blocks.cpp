// Copyright (c) Aspen contributors.
// Lightweight profiling as Graphcore's PopVision tutorial uses it (docs/lightweight-profiling.md):
// `Block` programs picked by `profiler.blocks.filter`, other programs by
// `profiler.programs.filter`, stream copies with `debug.instrumentExternalExchange`, read back
// with libpva's Execution::blocks(tile). The expected intervals are worked out here from the
// program the test builds: the vertices' set estimates under the cost model's rule for one
// vertex alone on a tile (docs/cost-model.md: its estimate times the number of workers), the
// internal sync that ends each compute set (`S`, 30 cycles on ipu2 there), and the order in which
// the program runs its parts.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

using namespace poplar;
using namespace poplar::program;

namespace {

constexpr unsigned kTilesPerIpu = 4;
constexpr std::uint64_t kSync = 30; // docs/cost-model.md, S = syncCycles + minIPUSyncDelay on ipu2

std::string vertexSource() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/vertices/report_vertices.cpp";
}

struct Pipeline {
  Device device;
  Graph graph;
  Tensor x;
  Program prog;
  explicit Pipeline(Device d) : device(std::move(d)), graph(device.getTarget()) {}
};

// A two-stage pipeline run three times: stage1 = Block{op1 (100 on IPU 0's tile 0), Block op2
// (30 on IPU 0's tile 1)}, stage2 = Block{op3 (50 on IPU 1's first tile)}.
void buildPipeline(Pipeline &p) {
  Graph &g = p.graph;
  g.addCodelets(vertexSource());
  p.x = g.addVariable(FLOAT, {3, 2}, "x");
  const unsigned tiles[3] = {0, 1, kTilesPerIpu};
  const std::uint64_t estimates[3] = {100, 30, 50};
  std::vector<Program> ops;
  for (unsigned i = 0; i < 3; ++i) {
    g.setTileMapping(p.x[i], tiles[i]);
    ComputeSet cs = g.addComputeSet("op" + std::to_string(i + 1));
    VertexRef v = g.addVertex(cs, "AddOne", {{"data", p.x[i]}});
    g.setTileMapping(v, tiles[i]);
    g.setPerfEstimate(v, estimates[i]);
    ops.push_back(Execute(cs, "op" + std::to_string(i + 1)));
  }
  Program stage1 = Block(Sequence{ops[0], Block(ops[1], "op2")}, "stage1");
  Program stage2 = Block(ops[2], "stage2");
  p.prog = Repeat(3, Sequence{stage1, stage2});
}

Device twoIpus() {
  IPUModel model;
  model.numIPUs = 2;
  model.tilesPerIPU = kTilesPerIpu;
  return model.createDevice();
}

pva::Report runPipeline(const OptionFlags &options) {
  Pipeline p(twoIpus());
  buildPipeline(p);
  Engine engine(p.graph, p.prog, options);
  engine.load(p.device);
  engine.run(0);
  return engine.getReport();
}

std::vector<std::string> names(const std::vector<pva::Block> &blocks) {
  std::vector<std::string> out;
  for (const pva::Block &b : blocks)
    out.push_back(b.program()->name());
  return out;
}

} // namespace

TEST_CASE("profiler.blocks.filter picks Block programs by name, on tile 0 of the IPUs they run on",
          "[compat][profiling]") {
  const pva::Report report = runPipeline({{"profiler.blocks.filter", "stage.|op2"}});
  const unsigned workers = IPUModel().createDevice().getTarget().getNumWorkerContexts();
  const std::uint64_t op1 = 100 * workers + kSync, op2 = 30 * workers + kSync, op3 = 50 * workers + kSync;

  // IPU 0 runs stage1 (op1, then the block op2); IPU 1 runs stage2 (op3). In the order they
  // began: stage1 before the op2 it holds.
  const std::vector<pva::Block> first = report.execution().blocks(0);
  REQUIRE(names(first) == std::vector<std::string>{"stage1", "op2", "stage1", "op2", "stage1", "op2"});
  const std::vector<pva::Block> second = report.execution().blocks(kTilesPerIpu);
  REQUIRE(names(second) == std::vector<std::string>{"stage2", "stage2", "stage2"});
  for (const std::vector<pva::Block> *blocks : {&first, &second})
    for (const pva::Block &b : *blocks) {
      CHECK(b.tile() == (blocks == &first ? 0u : kTilesPerIpu));
      CHECK(b.isCommon());
      CHECK_FALSE(b.isStreamCopy());
      CHECK_FALSE(b.isBlockFlush());
      CHECK_FALSE(b.isOverflow());
      CHECK(b.program()->type() == pva::Program::Type::Sequence);
      const std::uint64_t length = b.cyclesTo() - b.cyclesFrom();
      const std::string name = b.program()->name();
      CHECK(length == (name == "stage1" ? op1 + op2 : name == "op2" ? op2 : op3));
    }
  // op2 is the last thing stage1 does; each stage2 runs after its stage1 and before the next.
  for (std::size_t k = 0; k < 3; ++k) {
    const pva::Block &stage1 = first[2 * k], &inner = first[2 * k + 1], &stage2 = second[k];
    CHECK(inner.cyclesFrom() == stage1.cyclesFrom() + op1);
    CHECK(inner.cyclesTo() == stage1.cyclesTo());
    CHECK(stage2.cyclesFrom() >= stage1.cyclesTo());
    if (k < 2)
      CHECK(first[2 * k + 2].cyclesFrom() >= stage2.cyclesTo());
  }
  // Only the first tile of each IPU records blocks.
  CHECK(report.execution().blocks(1).empty());
  CHECK(report.execution().blocks(kTilesPerIpu + 3).empty());
  CHECK(report.execution().blocks(2 * kTilesPerIpu).empty()); // no such tile
}

TEST_CASE("profiler.programs.filter picks other programs by name", "[compat][profiling]") {
  const pva::Report report = runPipeline({{"profiler.programs.filter", "op[13]"}});
  const unsigned workers = IPUModel().createDevice().getTarget().getNumWorkerContexts();
  const std::vector<pva::Block> first = report.execution().blocks(0);
  const std::vector<pva::Block> second = report.execution().blocks(kTilesPerIpu);
  REQUIRE(names(first) == std::vector<std::string>{"op1", "op1", "op1"});
  REQUIRE(names(second) == std::vector<std::string>{"op3", "op3", "op3"});
  for (const std::vector<pva::Block> *blocks : {&first, &second})
    for (const pva::Block &b : *blocks) {
      CHECK(b.isCommon());
      CHECK(b.program()->type() == pva::Program::Type::OnTileExecute);
      CHECK(b.cyclesTo() - b.cyclesFrom() == (blocks == &first ? 100u : 50u) * workers + kSync);
    }
}

TEST_CASE("profiler.blocks.tile moves the recording tile; no filter records nothing", "[compat][profiling]") {
  const pva::Report moved =
      runPipeline({{"profiler.blocks.filter", "stage1"}, {"profiler.blocks.tile", "2"}});
  CHECK(moved.execution().blocks(0).empty());
  CHECK(names(moved.execution().blocks(2)) == std::vector<std::string>{"stage1", "stage1", "stage1"});
  CHECK(moved.execution().blocks(kTilesPerIpu + 2).empty()); // stage1 runs on IPU 0 only

  const pva::Report none = runPipeline({});
  for (unsigned tile = 0; tile < 2 * kTilesPerIpu; ++tile)
    CHECK(none.execution().blocks(tile).empty());
}

TEST_CASE("debug.instrumentExternalExchange records stream copies on the tiles they write",
          "[compat][profiling]") {
  auto run = [](bool instrument) {
    IPUModel model;
    model.tilesPerIPU = kTilesPerIpu;
    Device device = model.createDevice();
    Graph g(device.getTarget());
    Tensor in = g.addVariable(INT, {2}, "in");
    g.setTileMapping(in, 2);
    DataStream stream = g.addHostToDeviceFIFO("in", INT, 2);
    Program prog = Repeat(4, Copy(stream, in));
    Engine engine(g, prog, {{"debug.instrumentExternalExchange", instrument ? "true" : "false"}});
    std::vector<int> host(8, 7);
    engine.connectStream("in", host.data(), host.data() + host.size());
    engine.load(device);
    engine.run(0);
    return engine.getReport();
  };
  const pva::Report on = run(true);
  const std::vector<pva::Block> copies = on.execution().blocks(2);
  REQUIRE(copies.size() == 4);
  std::uint64_t previousEnd = 0;
  for (const pva::Block &b : copies) {
    CHECK(b.isStreamCopy());
    CHECK_FALSE(b.isCommon());
    CHECK(b.tile() == 2);
    CHECK(b.program()->type() == pva::Program::Type::StreamCopyMid);
    CHECK(b.cyclesTo() > b.cyclesFrom());
    CHECK(b.cyclesFrom() >= previousEnd);
    previousEnd = b.cyclesTo();
  }
  CHECK(on.execution().blocks(0).empty()); // no block filter, and the copy does not touch tile 0
  CHECK(on.execution().blocks(3).empty());
  CHECK(run(false).execution().blocks(2).empty());
}

TEST_CASE("A report written by autoReport and opened later gives the same blocks", "[compat][profiling]") {
  const std::string dir = std::filesystem::temp_directory_path().string() + "/aspen_profiling_blocks_" +
                          std::to_string(::getpid());
  const OptionFlags options{{"profiler.blocks.filter", "stage.|op2"},
                            {"autoReport.outputGraphProfile", "true"},
                            {"autoReport.outputExecutionProfile", "true"},
                            {"autoReport.outputHtml", "false"},
                            {"autoReport.directory", dir}};
  std::vector<std::string> live;
  std::vector<std::uint64_t> liveCycles;
  {
    Pipeline p(twoIpus());
    buildPipeline(p);
    Engine engine(p.graph, p.prog, options);
    engine.load(p.device);
    engine.run(0);
    for (const pva::Block &b : engine.getReport().execution().blocks(0)) {
      live.push_back(b.program()->name());
      liveCycles.push_back(b.cyclesTo() - b.cyclesFrom());
    }
  } // the engine writes the report when it is destroyed
  const pva::Report opened = pva::openReport(dir + "/profile.pop");
  const std::vector<pva::Block> blocks = opened.execution().blocks(0);
  CHECK(names(blocks) == live);
  REQUIRE(blocks.size() == liveCycles.size());
  for (std::size_t i = 0; i < blocks.size(); ++i)
    CHECK(blocks[i].cyclesTo() - blocks[i].cyclesFrom() == liveCycles[i]);
  CHECK(live.size() == 6);
  std::filesystem::remove_all(dir);
}
