// Copyright (c) Aspen contributors.
// pva::openReport on reports it cannot read: pva::Exception naming the file and the fault.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace fs = std::filesystem;

namespace {

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("aspen_pva_errors_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path &file, const std::string &text) {
  std::ofstream(file, std::ios::binary) << text;
}

std::string openError(const std::string &path) {
  try {
    pva::openReport(path);
  } catch (const pva::Exception &e) {
    return e.what();
  }
  return "no exception";
}

} // namespace

TEST_CASE("pva::openReport names the file and what is wrong with it", "[error][pva]") {
  const fs::path dir = scratch();
  const std::string good = R"({"format":"aspen-profile","version":2,"target":{"numTiles":4}})";
  write(dir / "truncated.pop", good.substr(0, 30));
  write(dir / "foreign.pop", R"({"traceEvents":[]})");
  write(dir / "newer.pop", R"({"format":"aspen-profile","version":99,"target":{"numTiles":4}})");
  fs::create_directories(dir / "empty");

  CHECK_THAT(openError((dir / "truncated.pop").string()),
             Catch::Contains((dir / "truncated.pop").string()) && Catch::Contains("the file is truncated"));
  CHECK_THAT(openError((dir / "foreign.pop").string()),
             Catch::Contains("foreign.pop") && Catch::Contains("not an Aspen profile"));
  CHECK_THAT(openError((dir / "newer.pop").string()),
             Catch::Contains("newer.pop") && Catch::Contains("format version 99 is newer"));
  CHECK_THAT(openError((dir / "empty").string()),
             Catch::Contains("empty") && Catch::Contains("holds no profile.json or profile.pop"));
  CHECK_THAT(openError((dir / "absent.pop").string()), Catch::Contains("absent.pop': no such file"));

  // A report whose trace is not what the format says.
  write(dir / "badtrace.pop",
        R"({"format":"aspen-profile","version":2,"target":{"numTiles":4},"execution":{"trace":[[1,2]]}})");
  CHECK_THAT(openError((dir / "badtrace.pop").string()),
             Catch::Contains("badtrace.pop") && Catch::Contains("execution.trace entry"));
  // profile.pop as the engine writes it (CBOR), cut short.
  const std::vector<std::uint8_t> cbor = nlohmann::json::to_cbor(nlohmann::json::parse(good));
  write(dir / "cut.pop", std::string(cbor.begin(), cbor.begin() + cbor.size() / 2));
  CHECK_THAT(openError((dir / "cut.pop").string()),
             Catch::Contains("cut.pop") && Catch::Contains("the file is truncated"));
  write(dir / "whole.pop", std::string(cbor.begin(), cbor.end()));
  CHECK(pva::openReport((dir / "whole.pop").string()).compilation().target().numTiles() == 4);
  // The good one opens.
  write(dir / "good.pop", good);
  CHECK(pva::openReport((dir / "good.pop").string()).compilation().target().numTiles() == 4);
  fs::remove_all(dir);
}

TEST_CASE("libpva's vertex and compute-set views of odd content: out-of-range entries left out",
          "[error][pva]") {
  const fs::path dir = scratch();
  // A compute set naming vertex type 7 of 1, a tile beyond the target's 2, a count of 0 and
  // an odd-length pair list; a step naming compute set 5 of 1.
  write(dir / "odd.json", R"({"format":"aspen-profile","version":2,"target":{"numTiles":2},
    "vertexTypes":[{"name":"V","tiles":[0,2,9,1,1,0,1]}],
    "computeSets":[{"name":"cs","vertexTypeCounts":[0,3,7,1,0],"tileList":[1,5],
                    "tileEstimatedCycles":[30,40]}],
    "steps":[{"kind":"Execute","name":"cs","computeSet":5}],
    "execution":{"steps":[{"step":0,"kind":"Execute","tiles":[1],"tileComputeCycles":[31]}],
                 "trace":[[0,0,0,31]]}})");
  const pva::Report r = pva::openReport((dir / "odd.json").string());
  const std::vector<pva::Tile> tiles = r.compilation().tiles();
  REQUIRE(tiles.size() == 2);
  REQUIRE(tiles[0].memory().vertices().size() == 1);
  CHECK(tiles[0].memory().vertices()[0].count() == 2);
  CHECK(tiles[0].memory().vertices()[0].type().name() == "V");
  CHECK(tiles[1].memory().vertices().empty()); // a count of 0 is no vertex
  const std::vector<pva::ComputeSet> css = r.compilation().computeSets();
  REQUIRE(css.size() == 1);
  REQUIRE(css[0].vertices().size() == 1);
  CHECK(css[0].vertices()[0].count() == 3);
  CHECK(css[0].estimatedCyclesByTile() == std::vector<std::uint64_t>{0, 30});
  // The step's compute set index is out of range: named from the execution part, no vertices.
  const std::vector<pva::ExecutionStep> steps = r.execution().steps();
  REQUIRE(steps.size() == 1);
  const std::vector<pva::ComputeSet> ran = steps[0].computeSets();
  REQUIRE(ran.size() == 1);
  CHECK(ran[0].name() == "cs");
  CHECK(ran[0].vertices().empty());
  CHECK(ran[0].cyclesByTile() == std::vector<std::uint64_t>{0, 31});
  fs::remove_all(dir);
}

TEST_CASE("Engine::getReport of a moved-from engine throws poplar_error", "[error][pva]") {
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  poplar::Engine engine(graph, poplar::program::Sequence{});
  poplar::Engine moved(std::move(engine));
  CHECK_THROWS_WITH(engine.getReport(), Catch::Contains("moved from"));
  CHECK_THROWS_AS(engine.getReport(false), poplar::poplar_error);
  CHECK(moved.getReport().compilation().target().numTiles() == 2);
}
