// Copyright (c) Aspen contributors.
// Issue 26 item 5: the profile summary's parts add up to its totals (a tut4-style chain of
// matrix multiplications, whose edge buffers and not-always-live temporaries share memory),
// and target.saveArchive writes the executable's code (its .gp vertex libraries) as an `ar`
// archive that `ar` itself reads.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace poplar;

namespace {

/// tut4's shape, chained: v1 = m1 * v0, v2 = m2 * v1, ... (matrices on all tiles).
struct MatMulChain {
  Device device;
  Graph graph;
  program::Sequence prog;

  explicit MatMulChain(unsigned tiles) : device(makeDevice(tiles)), graph(device.getTarget()) {
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    const std::size_t n = 96;
    Tensor v = graph.addVariable(FLOAT, {n, 1}, "v0");
    poputil::mapTensorLinearly(graph, v);
    for (int layer = 0; layer < 4; ++layer) {
      Tensor m = poplin::createMatMulInputLHS(graph, FLOAT, {n, n}, {n, 1}, "m" + std::to_string(layer));
      v = poplin::matMul(graph, m, v, prog, "layer" + std::to_string(layer));
    }
    graph.createHostRead("out", v);
  }
  static Device makeDevice(unsigned tiles) {
    IPUModel model;
    model.tilesPerIPU = tiles;
    return model.createDevice();
  }
};

/// The number after `label:` in the summary's first line holding it ("1,234 (1.2 KB)" -> 1234).
std::uint64_t bytesAfter(const std::string &text, const std::string &label, std::size_t from = 0) {
  const std::size_t at = text.find(label + ":", from);
  REQUIRE(at != std::string::npos);
  std::size_t i = at + label.size() + 1;
  while (i < text.size() && text[i] == ' ')
    ++i;
  std::string digits;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == ','); ++i)
    if (text[i] != ',')
      digits += text[i];
  REQUIRE_FALSE(digits.empty());
  return std::stoull(digits);
}

std::string tempPath(const std::string &name) {
  return "/tmp/aspen-reports-" + std::to_string(::getpid()) + "-" + name;
}

std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

TEST_CASE("printProfileSummary: memory by data type adds up to the total excluding gaps",
          "[compat][profile]") {
  MatMulChain chain(16);
  Engine engine(chain.graph, chain.prog, {{"debug.instrument", "true"}});
  engine.load(chain.device);
  engine.run(0);
  std::ostringstream summary;
  engine.printProfileSummary(summary, {{"showExecutionSteps", "false"}});
  const std::string text = summary.str();
  INFO(text);
  const std::size_t total = text.find("  Total:");
  REQUIRE(total != std::string::npos);
  const std::uint64_t including = bytesAfter(text, "Including Gaps", total);
  const std::uint64_t excluding = bytesAfter(text, "Excluding Gaps", total);
  CHECK(excluding <= including);
  const std::size_t byType = text.find("By Data Type:");
  REQUIRE(byType != std::string::npos);
  const std::size_t byTile = text.find("By Tile", byType);
  REQUIRE(byTile != std::string::npos);
  // Every line between "By Data Type:" and "By Tile" is a part.
  std::uint64_t sum = 0;
  std::map<std::string, std::uint64_t> parts;
  std::istringstream lines(text.substr(byType, byTile - byType));
  std::string line;
  std::getline(lines, line); // the heading
  while (std::getline(lines, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    std::string label = line.substr(0, colon);
    label.erase(0, label.find_first_not_of(' '));
    const std::uint64_t b = bytesAfter(line, label);
    parts[label] = b;
    sum += b;
  }
  CHECK(parts.count("Edge Buffers") == 1);
  CHECK(parts.count("Variables") == 1);
  CHECK(parts.count("Stack and Control Code") == 1);
  CHECK(sum == excluding);
  // And libpva's view of the same report: per tile, each category's non-overlapped bytes and the
  // control code add up to the tile's bytes excluding gaps; total = nonOverlapped + overlapped.
  const std::string dir = tempPath("report");
  {
    Engine reported(
        chain.graph, chain.prog,
        {{"autoReport.all", "true"}, {"autoReport.directory", dir}, {"debug.instrument", "true"}});
    reported.load(chain.device);
    reported.run(0);
  } // the report is complete when the engine goes
  pva::Report report = pva::openReport(dir + "/profile.pop");
  std::uint64_t pvaExcluding = 0, pvaParts = 0;
  for (const pva::Tile &tile : report.compilation().tiles()) {
    const auto memory = tile.memory();
    const auto c = memory.category();
    for (const pva::MemoryCategory &m : {c.variable(), c.constant(), c.vertexInstanceState(),
                                         c.vertexFieldData(), c.vectorListDescriptor(), c.message()}) {
      CHECK(m.nonInterleaved().nonOverlapped() + m.nonInterleaved().overlapped() == m.total());
      pvaParts += m.nonInterleaved().nonOverlapped();
    }
    pvaParts += c.controlCode().total();
    pvaExcluding += memory.total().excludingGaps();
  }
  CHECK(pvaParts == pvaExcluding);
  CHECK(pvaParts == excluding);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("target.saveArchive writes the executable's .gp libraries as an ar archive", "[compat][archive]") {
  MatMulChain chain(4);
  const std::string path = tempPath("archive.a");
  Executable exe = compileGraph(chain.graph, {chain.prog}, {{"target.saveArchive", path}});
  const std::vector<char> archive = readFile(path);
  REQUIRE(archive.size() > 8);
  CHECK(std::string(archive.begin(), archive.begin() + 8) == "!<arch>\n");
  // Walk the members: each a 60-byte header, then its bytes (padded to even).
  std::vector<std::vector<char>> members;
  std::size_t at = 8;
  while (at + 60 <= archive.size()) {
    const std::string header(archive.begin() + at, archive.begin() + at + 60);
    CHECK(header.substr(58, 2) == "`\n");
    const std::size_t size = std::stoull(header.substr(48, 10));
    REQUIRE(at + 60 + size <= archive.size());
    members.emplace_back(archive.begin() + at + 60, archive.begin() + at + 60 + size);
    at += 60 + size + (size % 2);
  }
  CHECK(at == archive.size());
  // Each member is one of the vertex libraries the SDK ships, byte for byte; the chain runs
  // poplin's multiplication vertices, so poplin.gp is one of them.
  const char *sdk = std::getenv("ASPEN_SDK_DIR");
  REQUIRE(sdk);
  REQUIRE_FALSE(members.empty());
  std::map<std::string, std::vector<char>> shipped;
  for (const char *lib : {"popops.gp", "poplin.gp", "popnn.gp", "poprand.gp"})
    shipped[lib] = readFile(std::string(sdk) + "/lib/" + lib);
  REQUIRE_FALSE(shipped["poplin.gp"].empty());
  bool hasPoplin = false;
  for (const auto &m : members) {
    std::string which;
    for (const auto &[name, bytes] : shipped)
      if (m == bytes)
        which = name;
    CHECK_FALSE(which.empty());
    hasPoplin = hasPoplin || which == "poplin.gp";
  }
  CHECK(hasPoplin);
  // `ar t` lists the members (binutils reads the archive).
  if (std::system("command -v ar > /dev/null 2>&1") == 0) {
    FILE *p = popen(("ar t '" + path + "'").c_str(), "r");
    REQUIRE(p);
    std::string listing;
    char buf[256];
    while (std::fgets(buf, sizeof buf, p))
      listing += buf;
    CHECK(pclose(p) == 0);
    std::size_t lines = 0;
    for (char ch : listing)
      lines += ch == '\n';
    CHECK(lines == members.size());
    CHECK(listing.find(".gp") != std::string::npos);
  }
  std::remove(path.c_str());
  // The executable still runs.
  Engine engine(std::move(exe));
  engine.load(chain.device);
  engine.run(0);
}
