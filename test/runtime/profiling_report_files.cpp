// Copyright (c) Aspen contributors.
// What autoReport writes (docs/profile-format.md): profile.json, profile.pop
// (the same object in CBOR) and report.html; autoReport.outputHtml=false; the
// version 2 tables checked against the graph the test built.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

using namespace poplar;
using namespace poplar::program;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path &p) {
  std::ifstream is(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
}

void runWithReport(const fs::path &dir, OptionFlags extra = {}) {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor a = graph.addVariable(FLOAT, {96}, "activations");
  Tensor w = graph.addConstant(FLOAT, {32}, 2.0f, "weights");
  graph.setTileMapping(a.slice(0, 64), 1);  // 256 bytes on tile 1
  graph.setTileMapping(a.slice(64, 96), 2); // 128 bytes on tile 2
  graph.setTileMapping(w, 2);
  Sequence prog;
  popops::mulInPlace(graph, a.slice(64, 96), w, prog, "scale");
  OptionFlags options{{"autoReport.all", "true"}, {"autoReport.directory", dir.string()}};
  for (const auto &[k, v] : extra)
    options.set(k, v);
  Engine engine(graph, prog, options);
  engine.load(device);
  engine.run(0);
}

} // namespace

TEST_CASE("autoReport writes profile.json, profile.pop and report.html", "[profile]") {
  const fs::path dir = fs::temp_directory_path() / ("aspen_report_files_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  runWithReport(dir);
  REQUIRE(fs::exists(dir / "profile.json"));
  REQUIRE(fs::exists(dir / "profile.pop"));
  REQUIRE(fs::exists(dir / "report.html"));
  const nlohmann::json json = nlohmann::json::parse(slurp(dir / "profile.json"));
  const std::string pop = slurp(dir / "profile.pop");
  CHECK(nlohmann::json::from_cbor(pop) == json);
  CHECK(json["version"] == 2);
  CHECK(json["poplarVersion"].get<std::string>().rfind("3.", 0) == 0);

  // The variables table: names, bytes per tile as mapped above.
  const nlohmann::json *act = nullptr, *weights = nullptr;
  for (const auto &v : json["variables"]) {
    if (v["name"] == "activations")
      act = &v;
    if (v["name"] == "weights")
      weights = &v;
  }
  REQUIRE(act);
  REQUIRE(weights);
  CHECK((*act)["bytes"] == 384);
  CHECK((*act)["tiles"] == nlohmann::json::array({1, 256, 2, 128}));
  CHECK((*act)["shape"] == nlohmann::json::array({96}));
  CHECK((*weights)["constant"] == true);
  CHECK((*weights)["tiles"] == nlohmann::json::array({2, 128}));
  // The one vertex type ran on tile 2 only; the program starts at step 0.
  bool sawTile2 = false;
  for (const auto &t : json["vertexTypes"])
    if (t["instances"] > 0)
      sawTile2 = t["tiles"].size() >= 2 && t["tiles"][0] == 2;
  CHECK(sawTile2);
  CHECK(json["programs"] == nlohmann::json::parse(R"([{"entry":0}])"));
  bool executeHasComputeSet = false;
  for (const auto &s : json["steps"])
    if (s["kind"] == "Execute")
      executeHasComputeSet = s.contains("computeSet") && s["computeSet"] < json["computeSets"].size();
  CHECK(executeHasComputeSet);

  // The page embeds the report: the variable names are in it, and nothing is fetched from a network.
  const std::string html = slurp(dir / "report.html");
  CHECK(html.find("\"activations\"") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("autoReport.outputHtml=false leaves the page out", "[profile]") {
  const fs::path dir = fs::temp_directory_path() / ("aspen_report_nohtml_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  runWithReport(dir, {{"autoReport.outputHtml", "false"}});
  CHECK(fs::exists(dir / "profile.json"));
  CHECK(fs::exists(dir / "profile.pop"));
  CHECK_FALSE(fs::exists(dir / "report.html"));
  fs::remove_all(dir);
}

TEST_CASE("autoReport never writes through a file or link planted at a temporary name",
          "[profile][security]") {
  // A shared report directory: another user plants symbolic links at the names the old writer
  // used (<file>.tmp) pointing at a file of the victim's; the report must not reach it.
  const fs::path dir = fs::temp_directory_path() / ("aspen_report_planted_" + std::to_string(::getpid()));
  const fs::path victim = fs::temp_directory_path() / ("aspen_report_victim_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  { std::ofstream(victim) << "precious"; }
  for (const char *name : {"profile.json.tmp", "profile.pop.tmp", "report.html.tmp"})
    fs::create_symlink(victim, dir / name);
  runWithReport(dir);
  CHECK(slurp(victim) == "precious");
  for (const char *name : {"profile.json", "profile.pop", "report.html"}) {
    INFO(name);
    CHECK(fs::is_regular_file(fs::symlink_status(dir / name)));
  }
  CHECK(nlohmann::json::parse(slurp(dir / "profile.json"))["version"] == 2);
  fs::remove(victim);
  fs::remove_all(dir);
}
