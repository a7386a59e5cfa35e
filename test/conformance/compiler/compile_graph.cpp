// Copyright (c) Aspen contributors.
// Conformance of poplar::compileGraph and poplar::Executable (poplar_api.md
// §"poplar/Engine.hpp, Executable.hpp"): graphs with exchange, 2-D fields, state
// arrays, MultiVertex and control flow compiled, run and checked against host
// loops; executables serialised, reloaded in this process and in a fresh one;
// the compile cache; registered perf estimators; allowOutOfMemory.
#include "exe/ExecutableData.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace poplar;
using namespace poplar::program;
namespace fs = std::filesystem;

namespace {

std::string codeletPath() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  return std::string(root ? root : ASPEN_COMPILER_TEST_SOURCE_DIR) +
         "/test/conformance/compiler/compiler_codelets.cpp";
}

constexpr unsigned kTiles = 4;
constexpr unsigned kRows = 8, kCols = 16;

Device makeDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = kTiles;
  return model.createDevice();
}

/// The test program:
///   program 0: y = x * k (per row, on a tile other than the row's); sums = rowsums(y) + offsets;
///              repeat `counter` times: x += 1 (MultiVertex), then count down.
///   program 1: while (counter > 0) { x += 1; counter -= 1 }
struct TestProgram {
  Graph graph;
  std::vector<Program> programs;

  explicit TestProgram(const Target &target) : graph(target) {
    graph.addCodelets(codeletPath(), CodeletFileType::Auto, "-O1");
    Tensor x = graph.addVariable(FLOAT, {kRows, kCols}, "x");
    Tensor y = graph.addVariable(FLOAT, {kRows, kCols}, "y");
    Tensor sums = graph.addVariable(FLOAT, {kRows}, "sums");
    Tensor counter = graph.addVariable(INT, {}, "counter");
    Tensor more = graph.addVariable(INT, {}, "more");
    graph.setTileMapping(sums, 3);
    graph.setTileMapping(counter, 1);
    graph.setTileMapping(more, 2);
    ComputeSet scale = graph.addComputeSet("scale");
    ComputeSet rows = graph.addComputeSet("rowSums");
    ComputeSet add = graph.addComputeSet("addOne");
    ComputeSet down = graph.addComputeSet("countDown");
    for (unsigned r = 0; r < kRows; ++r) {
      graph.setTileMapping(x[r], r % kTiles);
      graph.setTileMapping(y[r], (r + 1) % kTiles);
      VertexRef v = graph.addVertex(scale, "Scale", {{"in", x[r]}, {"out", y[r]}});
      graph.setInitialValue(v["k"], float(r + 1));
      graph.setTileMapping(v, (r + 2) % kTiles); // both edges come from other tiles
      VertexRef a = graph.addVertex(add, "AddOneMulti", {{"data", x[r]}});
      graph.setTileMapping(a, r % kTiles);
    }
    std::vector<Tensor> rowList;
    for (unsigned r = 0; r < kRows; ++r)
      rowList.push_back(y[r]);
    VertexRef s = graph.addVertex(rows, "RowSums", {{"rows", rowList}, {"sums", sums}});
    std::vector<float> offsets(kRows);
    for (unsigned r = 0; r < kRows; ++r)
      offsets[r] = 0.5f * float(r);
    graph.setInitialValue(s["offsets"], offsets);
    graph.setTileMapping(s, 0);
    VertexRef c = graph.addVertex(down, "CountDown", {{"x", counter}, {"more", more}});
    graph.setTileMapping(c, 1);
    graph.setInitialValue(counter, 0);

    graph.createHostWrite("x", x);
    graph.createHostRead("x", x);
    graph.createHostRead("y", y);
    graph.createHostRead("sums", sums);
    graph.createHostWrite("counter", counter);
    graph.createHostRead("counter", counter);

    Sequence p0({Execute(scale), Execute(rows), Repeat(2, Sequence({Execute(add), Execute(down)}))});
    Sequence cond({Copy(counter, more)});
    Sequence body({Execute(add), Execute(down)});
    programs = {p0, RepeatWhileTrue(cond, more, body)};
  }
};

/// Runs both programs on `engine` and checks the results against host loops.
void runAndCheck(Engine &engine) {
  Device device = makeDevice();
  engine.load(device);
  std::vector<float> x(kRows * kCols);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = 0.25f * float(i) - 3.0f;
  engine.writeTensor("x", x.data(), x.data() + x.size());
  const int start = 5;
  engine.writeTensor("counter", &start, &start + 1);
  engine.run(0);
  std::vector<float> y(kRows * kCols), sums(kRows), x2(kRows * kCols);
  engine.readTensor("y", y.data(), y.data() + y.size());
  engine.readTensor("sums", sums.data(), sums.data() + sums.size());
  engine.readTensor("x", x2.data(), x2.data() + x2.size());
  int counter = 0;
  engine.readTensor("counter", &counter, &counter + 1);
  for (unsigned r = 0; r < kRows; ++r) {
    float sum = 0.5f * float(r);
    for (unsigned c = 0; c < kCols; ++c) {
      const float expect = x[r * kCols + c] * float(r + 1);
      CHECK(y[r * kCols + c] == Approx(expect));
      sum += expect;
      CHECK(x2[r * kCols + c] == Approx(x[r * kCols + c] + 2.0f));
    }
    CHECK(sums[r] == Approx(sum));
  }
  CHECK(counter == start - 2);
  engine.run(1); // x += 1 while counter > 0
  engine.readTensor("counter", &counter, &counter + 1);
  engine.readTensor("x", x2.data(), x2.data() + x2.size());
  CHECK(counter == 0);
  CHECK(x2[0] == Approx(x[0] + 2.0f + float(start - 2)));
}

std::vector<char> serialise(const Executable &exe) {
  std::stringstream ss;
  exe.serialize(ss);
  const std::string s = ss.str();
  return {s.begin(), s.end()};
}

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/aspen-compiler-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

} // namespace

TEST_CASE("compileGraph: an executable runs and gives the host's results", "[conformance][compiler]") {
  Device device = makeDevice();
  TestProgram t(device.getTarget());
  std::vector<std::pair<int, int>> progress;
  Executable exe = compileGraph(t.graph, t.programs, {}, [&](int step, int total) {
    progress.push_back({step, total});
  });
  REQUIRE_FALSE(progress.empty());
  for (std::size_t i = 1; i < progress.size(); ++i)
    CHECK(progress[i].first > progress[i - 1].first);
  CHECK(progress.back().first == progress.back().second);
  const aspen::exe::ExecutableData &data = exe.getImpl();
  CHECK(data.programEntry.size() == 2);
  CHECK(data.codeletLibraries.size() == 1);
  CHECK_FALSE(data.codeletLibraries[0].bytes.empty());
  Engine engine(std::move(exe));
  runAndCheck(engine);
}

TEST_CASE("Executable: serialised, reloaded and run; identical inputs give identical bytes",
          "[conformance][compiler]") {
  Device device = makeDevice();
  TestProgram t(device.getTarget());
  Executable exe = compileGraph(t.graph, t.programs);
  const auto bytes = serialise(exe);
  CHECK(serialise(compileGraph(t.graph, t.programs)) == bytes);

  TempDir dir;
  const std::string path = dir.path + "/test.aspenexe";
  {
    std::ofstream out(path, std::ios::binary);
    exe.serialize(out);
  }
  std::ifstream in(path, std::ios::binary);
  Executable loaded = Executable::deserialize(in);
  CHECK(serialise(loaded) == bytes);
  Engine engine(std::move(loaded));
  runAndCheck(engine);

  // A fresh process that never builds the graph loads and runs the file.
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string cmd = "ASPEN_COMPILER_TEST_EXE='" + path + "' '" + self + "' '[.load-only]' > '" +
                          dir.path + "/child.log' 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream log(dir.path + "/child.log");
  const std::string childOutput((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  INFO(childOutput);
  CHECK(status == 0);
  CHECK(childOutput.find("All tests passed") != std::string::npos);
}

TEST_CASE("Executable: loaded in a fresh process", "[.load-only]") {
  const char *path = std::getenv("ASPEN_COMPILER_TEST_EXE");
  REQUIRE(path != nullptr);
  std::unique_ptr<std::istream> in = std::make_unique<std::ifstream>(path, std::ios::binary);
  Engine engine(Executable::deserialize(std::move(in)));
  runAndCheck(engine);
}

TEST_CASE("compileGraph: the compile cache hits with the option and misses when the graph changes",
          "[conformance][compiler]") {
  TempDir dir;
  // Point the cache at a scratch directory for this case only, and put the
  // suite's own setting back afterwards (even when a check throws).
  struct RestoreCacheDir {
    bool had;
    std::string value;
    RestoreCacheDir() : had(std::getenv("ASPEN_CACHE_DIR") != nullptr) {
      if (had)
        value = std::getenv("ASPEN_CACHE_DIR");
    }
    ~RestoreCacheDir() {
      if (had)
        ::setenv("ASPEN_CACHE_DIR", value.c_str(), 1);
      else
        ::unsetenv("ASPEN_CACHE_DIR");
    }
  } restore;
  ::setenv("ASPEN_CACHE_DIR", dir.path.c_str(), 1);
  Device device = makeDevice();
  TestProgram t(device.getTarget());
  const OptionFlags cached{{"aspen.compileCache", "true"}};
  Executable first = compileGraph(t.graph, t.programs, cached);
  std::size_t entries = 0;
  for (const auto &e : fs::directory_iterator(fs::path(dir.path) / "executables"))
    entries += e.path().extension() == ".aspenexe";
  CHECK(entries == 1);
  std::vector<std::pair<int, int>> progress;
  Executable second = compileGraph(t.graph, t.programs, cached, [&](int s, int n) {
    progress.push_back({s, n});
  });
  CHECK(serialise(second) == serialise(first));
  CHECK(progress == std::vector<std::pair<int, int>>{{1, 1}}); // a hit runs no pass
  Engine engine(std::move(second));
  runAndCheck(engine);

  Tensor extra = t.graph.addVariable(FLOAT, {4}, "extra");
  t.graph.setTileMapping(extra, 2);
  compileGraph(t.graph, t.programs, cached);
  entries = 0;
  for (const auto &e : fs::directory_iterator(fs::path(dir.path) / "executables"))
    entries += e.path().extension() == ".aspenexe";
  CHECK(entries == 2);
}

TEST_CASE("compileGraph: registered perf estimators price vertices through the introspector",
          "[conformance][compiler]") {
  Device device = makeDevice();
  TestProgram t(device.getTarget());
  unsigned calls = 0;
  t.graph.registerPerfEstimator("Scale", [&](const VertexIntrospector &v, const Target &target) {
    ++calls;
    return VertexPerfEstimate(100 + v.getFieldInfo("in").size() * target.getNumWorkerContexts());
  });
  Executable exe = compileGraph(t.graph, t.programs);
  CHECK(calls == kRows);
  const aspen::exe::ExecutableData &data = exe.getImpl();
  bool found = false;
  for (const auto &cs : data.computeSteps) {
    if (cs.name != "scale")
      continue;
    found = true;
    for (const auto &v : cs.vertices)
      CHECK(v.cycles == 100 + kCols * 6);
    // Two 100 + 96 cycle vertices per tile on six workers: one per worker.
    CHECK(cs.computeCycles == (100 + kCols * 6) * 6);
  }
  CHECK(found);
}

TEST_CASE("compileGraph: debug.allowOutOfMemory finishes a graph that does not fit",
          "[conformance][compiler]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 2;
  model.memoryBytesPerTile = 64 * 1024;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor big = graph.addVariable(FLOAT, {20000}, "big");
  graph.setTileMapping(big, 1);
  graph.createHostWrite("big", big);
  CHECK_THROWS_AS(compileGraph(graph, {Sequence()}), graph_memory_allocation_error);
  CHECK_THROWS_WITH(compileGraph(graph, {Sequence()}),
                    Catch::StartsWith("Out of memory on tile 1: ") &&
                        Catch::Contains("bytes used but tiles only have 65536 bytes of memory") &&
                        Catch::Contains("'big'"));
  Executable exe = compileGraph(graph, {Sequence()}, {{"debug.allowOutOfMemory", "true"}});
  CHECK(exe.getImpl().outOfMemory);
  CHECK_THROWS_AS(compileGraph(graph, {Sequence()}, {{"aspen.compileCacheTypo", "true"}}), invalid_option);
}
