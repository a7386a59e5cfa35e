// Copyright (c) Aspen contributors.
// Issue 25, item 4: only Poplar's exceptions cross the API. Names are bytes: a debug name that
// is not UTF-8 neither breaks the Engine constructor (compile, compile cache, profile, report
// writing) nor reading the report back; a malformed .pvti beside the report is skipped;
// libpva refuses absurd tile counts and deep nesting with pva::Exception naming the file.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poplar/exceptions.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
namespace fs = std::filesystem;

namespace {

fs::path freshDir(const std::string &name) {
  const fs::path d = fs::temp_directory_path() / ("aspen_foreign_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string readText(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const fs::path &p, const std::string &text) {
  std::ofstream(p, std::ios::binary) << text;
}

const std::string kLatin1 = "caf\xe9";           // not UTF-8
const std::string kReplaced = "caf\xef\xbf\xbd"; // as JSON text shows it (U+FFFD)

/// Builds, compiles and runs a graph whose names are not UTF-8, reporting into `dir`.
float runLatin1Names(const fs::path &dir, bool compileCache) {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(FLOAT, {4}, kLatin1 + " x");
  Tensor c = g.addConstant<float>(FLOAT, {4}, 1.5f, {kLatin1 + " c"});
  g.setTileMapping(x, 0);
  g.setTileMapping(c, 1);
  g.createHostRead("x", x);
  Sequence seq{{Copy(c, x, false, {kLatin1 + " copy"})}, {kLatin1 + " program"}};
  float got = 0;
  {
    Engine engine(g, seq,
                  {{"autoReport.all", "true"},
                   {"autoReport.directory", dir.string()},
                   {"aspen.compileCache", compileCache ? "true" : "false"}});
    engine.load(device);
    engine.run(0);
    std::vector<float> out(4);
    engine.readTensor("x", out.data(), out.data() + 4);
    got = out[0];
  }
  return got;
}

std::string openError(const fs::path &path) {
  try {
    pva::openReport(path.string());
  } catch (const pva::Exception &e) {
    return e.what();
  }
  return "no exception";
}

} // namespace

TEST_CASE("foreign_exceptions: names that are not UTF-8 are bytes, not a json::type_error",
          "[security][profile]") {
  const fs::path dir = freshDir("latin1");
  const fs::path cache = freshDir("latin1_cache");
  ::setenv("ASPEN_CACHE_DIR", cache.string().c_str(), 1);
  for (bool compileCache : {false, true, true}) { // the second cached run is a hit
    float got = 0;
    REQUIRE_NOTHROW(got = runLatin1Names(dir, compileCache));
    CHECK(got == 1.5f);
  }
  // The report shows the names, invalid bytes replaced; it reads back as written.
  const std::string text = readText(dir / "profile.json");
  CHECK(text.find(kReplaced + " ") != std::string::npos);
  CHECK(text.find(kLatin1) == std::string::npos);
  const pva::Report report = pva::openReport(dir.string());
  bool found = false;
  for (const auto &p : report.compilation().programs())
    found = found || p->name().find(kReplaced) != std::string::npos;
  CHECK(found);
  CHECK(fs::exists(dir / "report.html"));
  fs::remove_all(dir);
  fs::remove_all(cache);
}

TEST_CASE("foreign_exceptions: a malformed .pvti in autoReport.directory is skipped", "[security][profile]") {
  const fs::path dir = freshDir("pvti");
  writeText(dir / "bad.pvti", "{\"ph\":1}\n"
                              "{\"ph\":\"B\",\"tid\":\"x\",\"ch\":3,\"name\":4,\"ts\":\"t\"}\n"
                              "{\"ph\":\"E\",\"tid\":\"x\",\"ch\":3,\"ts\":[]}\n" +
                                  std::string(100000, '[') + "\nnot json\n\xff\xfe\n");
  writeText(dir / "good.pvti", "{\"ph\":\"B\",\"tid\":0,\"ch\":\"c\",\"name\":\"ok\",\"ts\":1}\n"
                               "{\"ph\":\"E\",\"tid\":0,\"ch\":\"c\",\"ts\":2}\n");
  float got = 0;
  REQUIRE_NOTHROW(got = runLatin1Names(dir, false));
  CHECK(got == 1.5f);
  const std::string page = readText(dir / "report.html");
  CHECK(page.find("good.pvti") != std::string::npos); // the good trace is still shown
  fs::remove_all(dir);
}

TEST_CASE("foreign_exceptions: libpva refuses absurd sizes and deep nesting with pva::Exception",
          "[security][pva]") {
  const fs::path dir = freshDir("pva");
  // 1e15 tiles: refused when opened (never truncated to 32 bits, never std::bad_alloc).
  writeText(dir / "tiles.json",
            R"({"format":"aspen-profile","version":2,"target":{"numTiles":1000000000000000}})");
  CHECK_THAT(openError(dir / "tiles.json"),
             Catch::Contains("tiles.json") && Catch::Contains("\"numTiles\" is 1000000000000000, more than"));
  writeText(dir / "negative.json", R"({"format":"aspen-profile","version":2,"target":{"numTiles":-4}})");
  CHECK_THAT(openError(dir / "negative.json"), Catch::Contains("is not an unsigned integer"));
  // 100,000 levels of JSON and of CBOR: a named refusal, not a stack overflow.
  writeText(dir / "deep.json", std::string(100000, '[') + std::string(100000, ']'));
  CHECK_THAT(openError(dir / "deep.json"), Catch::Contains("deep.json") && Catch::Contains("nests deeper"));
  writeText(dir / "deep.pop", std::string(100000, '\x81') + std::string(1, '\0'));
  CHECK_THAT(openError(dir / "deep.pop"), Catch::Contains("deep.pop") && Catch::Contains("nests deeper"));
  std::string deepMap = "{\"format\":\"aspen-profile\",\"version\":2,\"x\":";
  deepMap += std::string(100000, '[') + std::string(100000, ']') + "}";
  writeText(dir / "deepmember.json", deepMap);
  CHECK_THAT(openError(dir / "deepmember.json"), Catch::Contains("nests deeper"));
  // An array is not a report, and not "truncated".
  writeText(dir / "array.json", "[1,2,3]");
  CHECK_THAT(openError(dir / "array.json"), Catch::Contains("array.json") &&
                                                Catch::Contains("not a JSON object") &&
                                                !Catch::Contains("truncated"));
  // Fields of the wrong types are defaults, not a JSON library's exception, in every accessor.
  writeText(
      dir / "odd.json",
      R"({"format":"aspen-profile","version":2,"target":{"numTiles":2,"type":5,"arch":[],)"
      R"("tileClockFrequency":"fast"},"poplarVersion":7,"steps":[{"kind":3,"name":{},"cycles":"x"}],)"
      R"("programs":[{"entry":"zero"}],"memory":{"outOfMemory":"no","tiles":{"byCategory":{"code":["a",1]}}},)"
      R"("execution":{"steps":[{"step":"0","tiles":["a"],"tileComputeCycles":[{}]}],"trace":[[0,0,0,1]]}})");
  REQUIRE_NOTHROW(pva::openReport((dir / "odd.json").string()));
  const pva::Report odd = pva::openReport((dir / "odd.json").string());
  CHECK_NOTHROW(odd.compilation().target().type());
  CHECK_NOTHROW(odd.compilation().target().architecture());
  CHECK_NOTHROW(odd.compilation().target().clockFrequency());
  CHECK_NOTHROW(odd.poplarVersion());
  CHECK_NOTHROW(odd.compilation().outOfMemory());
  CHECK_NOTHROW(odd.compilation().programs());
  for (const auto &tile : odd.compilation().tiles())
    CHECK_NOTHROW(tile.memory().category().get("code"));
  for (const auto &step : odd.execution().steps())
    CHECK_NOTHROW(step.cyclesByTile());
  // A trace entry with a negative or fractional number is named, not a type_error.
  writeText(
      dir / "badtrace.json",
      R"({"format":"aspen-profile","version":2,"target":{"numTiles":2},"execution":{"trace":[[0,"a",0,1]]}})");
  CHECK_THAT(openError(dir / "badtrace.json"), Catch::Contains("execution.trace entry"));
  fs::remove_all(dir);
}
