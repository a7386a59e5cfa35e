// Copyright (c) Aspen contributors.
// Issue 15 item 9: the Poplar 1.x-era profile calls, used as old benchmark suites use
// them: Graph::setCycleEstimate on a custom vertex, Engine::getExecutionProfile() read
// for the cycles of one compute set ("simulation"/"steps", type OnTileExecute) and the
// total ("simulation"/"cycles"), Engine::getGraphProfile() printed with
// poplar::serializeToJSON and read back for per-tile memory. Both values come from the
// same report as profile.json, which the test reads to compare.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/ProfileValue.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

// The calls below are deprecated, as in Poplar; a benchmark suite still makes them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

const char *kCodelet = R"(
#include <poplar/Vertex.hpp>
class ScaleBy : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<float>> data;
  float k;
  bool compute() {
    for (unsigned i = 0; i < data.size(); ++i)
      data[i] *= k;
    return true;
  }
};
)";

struct BenchResult {
  std::uint64_t csCycles = 0;    // "simulation"/"steps": the OnTileExecute step named "scale"
  std::uint64_t totalCycles = 0; // "simulation"/"cycles"
  std::uint64_t stepsCycles = 0; // sum over "simulation"/"steps"
  nlohmann::json graphJson;      // getGraphProfile() through serializeToJSON
  nlohmann::json report;         // profile.json of the same engine
  std::vector<float> result;
};

BenchResult runBenchmark(std::uint64_t estimate, unsigned runs) {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  std::stringstream codelet(kCodelet);
  graph.addCodelets(codelet);
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {2, 8}, "x");
  graph.setTileMapping(x[0], 0);
  graph.setTileMapping(x[1], 1);
  poplar::ComputeSet cs = graph.addComputeSet("scale");
  for (unsigned t = 0; t < 2; ++t) {
    poplar::VertexRef v = graph.addVertex(cs, "ScaleBy", {{"data", x[t]}});
    graph.setInitialValue(v["k"], 2.0f);
    graph.setTileMapping(v, t);
    graph.setCycleEstimate(v, t == 1 ? estimate : 10);
  }
  poplar::DataStream in = graph.addHostToDeviceFIFO("in", poplar::FLOAT, 16);
  poplar::DataStream out = graph.addDeviceToHostFIFO("out", poplar::FLOAT, 16);
  poplar::program::Sequence prog{poplar::program::Copy(in, x), poplar::program::Execute(cs),
                                 poplar::program::Copy(x, out)};

  const std::string dir =
      "/tmp/aspen-libapi-bench-" + std::to_string(::getpid()) + "-" + std::to_string(estimate);
  BenchResult r;
  {
    poplar::Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
    engine.load(device);
    std::vector<float> input(16), output(16);
    for (unsigned i = 0; i < 16; ++i)
      input[i] = static_cast<float>(i);
    engine.connectStream("in", input.data(), input.data() + input.size());
    engine.connectStream("out", output.data(), output.data() + output.size());
    for (unsigned i = 0; i < runs; ++i)
      engine.run(0);
    r.result = output;

    // As benchmark suites read it.
    poplar::ProfileValue execProfile = engine.getExecutionProfile();
    for (const poplar::ProfileValue &s : execProfile["simulation"]["steps"].asVector()) {
      if (s["type"].asString() == "OnTileExecute" && s["name"].asString() == "scale")
        r.csCycles = s["cycles"].asUint();
      r.stepsCycles += s["cycles"].asUint();
    }
    r.totalCycles = execProfile["simulation"]["cycles"].asUint();

    std::ostringstream graphReport;
    poplar::serializeToJSON(graphReport, engine.getGraphProfile(), false);
    r.graphJson = nlohmann::json::parse(graphReport.str());
  }
  std::ifstream report(dir + "/profile.json");
  REQUIRE(report.good());
  r.report = nlohmann::json::parse(report);
  std::system(("rm -rf '" + dir + "'").c_str());
  return r;
}

} // namespace

TEST_CASE("getExecutionProfile/getGraphProfile as a Poplar 1.x benchmark reads them", "[compat][profile]") {
  const BenchResult small = runBenchmark(1000, 1);
  const BenchResult large = runBenchmark(5000, 1);
  for (unsigned i = 0; i < 16; ++i)
    CHECK(small.result[i] == 2.0f * static_cast<float>(i));

  // setCycleEstimate sets the vertex's thread cycles: the only vertex on tile 1 runs on
  // one worker, so the compute set costs 6 machine cycles per thread cycle more
  // (docs/cost-model.md: max worker load * W).
  REQUIRE(small.csCycles > 0);
  CHECK(large.csCycles - small.csCycles == 6 * (5000 - 1000));
  CHECK(small.csCycles >= 6 * 1000);

  // The totals are the engine's: the same as profile.json's execution part.
  CHECK(small.totalCycles == small.report["execution"]["totalCycles"].get<std::uint64_t>());
  CHECK(large.totalCycles == large.report["execution"]["totalCycles"].get<std::uint64_t>());
  CHECK(small.stepsCycles <= small.totalCycles);
  CHECK(large.totalCycles - small.totalCycles == 6 * (5000 - 1000));
  std::uint64_t executeCycles = 0;
  for (const auto &s : small.report["execution"]["steps"])
    if (s["kind"] == "Execute")
      executeCycles += s["cycles"].get<std::uint64_t>();
  CHECK(executeCycles == small.csCycles);

  // The graph profile, printed to JSON and read back.
  const nlohmann::json &g = small.graphJson;
  CHECK(g["target"]["numTiles"] == 4);
  CHECK(g["graph"]["numVertices"] == 2);
  CHECK(g["graph"]["numComputeSets"] == 1);
  const auto &gaps = g["memory"]["byTile"]["totalIncludingGaps"];
  REQUIRE(gaps.size() == 4);
  CHECK(gaps == small.report["memory"]["tiles"]["peakBytes"]);
  const auto &total = g["memory"]["byTile"]["total"];
  REQUIRE(total.size() == 4);
  for (std::size_t t = 0; t < 4; ++t)
    CHECK(total[t].get<std::uint64_t>() <= gaps[t].get<std::uint64_t>());
  // Tiles 0 and 1 hold 8 floats each and a vertex; tiles 2 and 3 only the overhead.
  CHECK(total[0].get<std::uint64_t>() > total[2].get<std::uint64_t>());
  CHECK(g["computeSets"]["names"][0] == "scale");
  CHECK(g["vertexTypes"]["names"][0] == "ScaleBy");
}

TEST_CASE("getExecutionProfile counts every run of the engine", "[compat][profile]") {
  const BenchResult once = runBenchmark(1000, 1);
  const BenchResult thrice = runBenchmark(1000, 3);
  CHECK(thrice.totalCycles == 3 * once.totalCycles);
  CHECK(thrice.report["execution"]["runs"] == 3);
}

#pragma GCC diagnostic pop
