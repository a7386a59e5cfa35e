// Copyright (c) Aspen contributors.
// Issue 10 item 3: every engine/compile option key of Poplar 3.x's tables is accepted by
// Engine and compileGraph (the keys real programs pass, and every row of Aspen's one
// option table); an unknown key throws invalid_option naming it; debug.loweredVarDumpFile
// writes every variable with its tile, address and size.
#include "OptionTable.hpp"

#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct OptionsGraph {
  poplar::Device device;
  poplar::Graph graph;
  poplar::Tensor a, b, c;
  poplar::program::Sequence prog;
  OptionsGraph() : device(makeDevice()), graph(device.getTarget()) {
    a = graph.addVariable(poplar::FLOAT, {8}, "a");
    b = graph.addVariable(poplar::INT, {2, 3}, "b");
    c = graph.addConstant<float>(poplar::FLOAT, {2}, {1.0f, 2.0f}, "c");
    graph.setTileMapping(a.slice(0, 5), 0);
    graph.setTileMapping(a.slice(5, 8), 2);
    graph.setTileMapping(b, 1);
    graph.setTileMapping(c, 2);
    graph.createHostRead("a-read", a);
    graph.createHostRead("b-read", b);
    prog.add(poplar::program::Copy(c, a.slice(0, 2)));
  }
  static poplar::Device makeDevice() {
    poplar::IPUModel model;
    model.tilesPerIPU = 4;
    return model.createDevice();
  }
};

std::string tempPath(const std::string &name) {
  return "/tmp/aspen-compat-" + std::to_string(::getpid()) + "-" + name;
}

/// A value of the row's kind; a key for a family row.
std::pair<std::string, std::string> sample(const aspen::compiler::OptionRow &row) {
  std::string key = row.key;
  if (key.back() == '*')
    key = key.substr(0, key.size() - 1) + (key[key.size() - 2] == '.' ? "someSetting" : "Compute");
  switch (row.kind) {
  case aspen::compiler::OptionKind::Bool:
    return {key, "false"};
  case aspen::compiler::OptionKind::Unsigned:
    return {key, "1"};
  case aspen::compiler::OptionKind::Choice:
    return {key, row.choices.front()};
  case aspen::compiler::OptionKind::Text:
    break;
  }
  return {key, key == "autoReport.directory" ? tempPath("reports") : "x"};
}

} // namespace

TEST_CASE("The option keys Poplar programs pass are accepted", "[compat][options]") {
  // Keys as real Poplar programs and tools spell them (engine options of Poplar 3.x).
  const poplar::OptionFlags poplarKeys{
      {"target.saveArchive", tempPath("archive.a")},
      {"debug.instrument", "true"},
      {"debug.instrumentCompute", "true"},
      {"debug.instrumentControlFlow", "true"},
      {"debug.instrumentExternalExchange", "true"},
      {"debug.computeInstrumentationLevel", "tile"},
      {"debug.outputAllSymbols", "true"},
      {"debug.retainDebugInformation", "true"},
      {"debug.verify", "true"},
      {"debug.runtimeVerify", "true"},
      {"debug.allowOutOfMemory", "true"},
      {"debug.loweredVarDumpFile", tempPath("vars.json")},
      {"autoReport.outputSerializedGraph", "true"},
      {"autoReport.outputLoweredVars", "true"},
      {"target.extendedMemory", "true"},
      {"target.syncReplicasIndependently", "true"},
      {"target.deterministicWorkers", "portable"},
      {"opt.maxCopyMergeSize", "8388608"},
      {"opt.enableSwSyncs", "true"},
      {"opt.internalExchangeOptimisationTarget", "cycles"},
      {"exchange.streamBufferOverlap", "hostRearrangeOnly"},
      {"exchange.enablePrefetch", "true"},
      {"profiler.format", "v3"},
      {"profiler.includeFlopEstimates", "true"},
      {"streamCallbacks.multiThreadMode", "collaborative"},
      {"autoReport.directory", tempPath("report")},
  };
  OptionsGraph g;
  CHECK_NOTHROW(poplar::Engine(g.graph, g.prog, poplarKeys));
  CHECK_NOTHROW(poplar::compileGraph(g.graph, {g.prog}, poplarKeys));
  std::remove(tempPath("vars.json").c_str());
  std::remove(tempPath("archive.a").c_str());

  // autoReport.outputSerializedGraph and outputLoweredVars write their files to the directory.
  std::ifstream graphFile(tempPath("report") + "/serialized_graph.json");
  REQUIRE(graphFile.good());
  const nlohmann::json graphDoc = nlohmann::json::parse(graphFile);
  CHECK(graphDoc["format"] == "aspen-graph");
  CHECK(graphDoc["programs"].size() == 1);
  std::ifstream varsFile(tempPath("report") + "/vars.json");
  CHECK_FALSE(varsFile.good()); // debug.loweredVarDumpFile, given, wins over the directory
  std::remove((tempPath("report") + "/serialized_graph.json").c_str());
  ::rmdir(tempPath("report").c_str());
}

TEST_CASE("autoReport.outputLoweredVars writes vars.json to the report directory", "[compat][options]") {
  OptionsGraph g;
  const std::string dir = tempPath("lowered-report");
  poplar::compileGraph(g.graph, {g.prog},
                       {{"autoReport.outputLoweredVars", "true"}, {"autoReport.directory", dir}});
  std::ifstream in(dir + "/vars.json");
  REQUIRE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  CHECK(doc["format"] == "aspen-lowered-vars");
  CHECK(doc["variables"].size() == 3);
  std::remove((dir + "/vars.json").c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("Every row of the option table is accepted", "[compat][options]") {
  poplar::OptionFlags all;
  for (const auto &row : aspen::compiler::optionTable()) {
    const auto kv = sample(row);
    if (kv.first.rfind("aspen.", 0) == 0)
      continue; // Aspen's own family is checked by its own keys (docs/compiler.md)
    all.set(kv.first, kv.second);
  }
  all.set("debug.loweredVarDumpFile", tempPath("all-vars.json"));
  all.set("target.saveArchive", tempPath("all-archive.a"));
  INFO("options: " << all);
  OptionsGraph g;
  CHECK_NOTHROW(poplar::Engine(g.graph, g.prog, all));
  CHECK_NOTHROW(poplar::compileGraph(g.graph, {g.prog}, all));
  std::remove(tempPath("all-vars.json").c_str());
  std::remove(tempPath("all-archive.a").c_str());
}

TEST_CASE("The options Aspen implements have their own rows ahead of the families", "[compat][options]") {
  // Lightweight profiling (docs/lightweight-profiling.md) and the profile's host times: the first
  // matching row of the table describes what the option does, not "no effect".
  const auto &table = aspen::compiler::optionTable();
  for (const std::string key : {"profiler.blocks.filter", "profiler.programs.filter", "profiler.blocks.tile",
                                "debug.instrumentExternalExchange", "aspen.profileHostComputeTime"}) {
    INFO(key);
    const auto row = std::find_if(table.begin(), table.end(), [&](const auto &r) { return key == r.key; });
    REQUIRE(row != table.end());
    for (auto earlier = table.begin(); earlier != row; ++earlier) {
      const std::string pattern = earlier->key;
      CHECK_FALSE((pattern.back() == '*' && key.rfind(pattern.substr(0, pattern.size() - 1), 0) == 0));
    }
    const std::string description = row->effect;
    CHECK(description.find("no effect") == std::string::npos);
    CHECK(description.find("always counted") == std::string::npos);
  }
  const auto tile = std::find_if(table.begin(), table.end(),
                                 [](const auto &r) { return std::string(r.key) == "profiler.blocks.tile"; });
  CHECK(tile->kind == aspen::compiler::OptionKind::Unsigned);
}

TEST_CASE("An unknown option key throws invalid_option naming it", "[compat][options]") {
  OptionsGraph g;
  for (const char *key : {"debug.instrumnet", "targets.saveArchive", "nonsense"}) {
    try {
      poplar::Engine e(g.graph, g.prog, {{key, "true"}});
      FAIL("Engine accepted " << key);
    } catch (const poplar::invalid_option &e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
    try {
      poplar::compileGraph(g.graph, {g.prog}, {{key, "true"}});
      FAIL("compileGraph accepted " << key);
    } catch (const poplar::invalid_option &e) {
      CHECK(std::string(e.what()).find(key) != std::string::npos);
    }
  }
}

TEST_CASE("debug.loweredVarDumpFile writes every variable's tile, address and size", "[compat][options]") {
  OptionsGraph g;
  const std::string path = tempPath("lowered.json");
  poplar::compileGraph(g.graph, {g.prog}, {{"debug.loweredVarDumpFile", path}});
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::remove(path.c_str());
  const std::uint64_t bytesPerTile = doc["bytesPerTile"];
  CHECK(bytesPerTile == g.device.getTarget().getBytesPerTile());

  std::map<std::string, nlohmann::json> byName;
  for (const auto &v : doc["variables"])
    byName[v["name"]] = v;
  REQUIRE(byName.count("a"));
  REQUIRE(byName.count("b"));
  REQUIRE(byName.count("c"));
  // a: elements 0..4 on tile 0 (20 bytes), 5..7 on tile 2 (12 bytes).
  const auto &a = byName["a"]["pieces"];
  REQUIRE(a.size() == 2);
  CHECK(a[0]["tile"] == 0);
  CHECK(a[0]["size"] == 20);
  CHECK(a[0]["offset"] == 0);
  CHECK(a[1]["tile"] == 2);
  CHECK(a[1]["size"] == 12);
  CHECK(a[1]["offset"] == 20);
  CHECK(byName["b"]["pieces"][0]["tile"] == 1);
  CHECK(byName["b"]["pieces"][0]["size"] == 24);
  CHECK(byName["c"]["constant"] == true);

  // Every piece lies in its tile's memory, and pieces of always-live variables on one
  // tile do not overlap.
  std::map<std::uint64_t, std::vector<std::pair<std::uint64_t, std::uint64_t>>> perTile;
  for (const auto &v : doc["variables"])
    for (const auto &p : v["pieces"]) {
      const std::uint64_t addr = p["address"], size = p["size"], tile = p["tile"];
      CHECK(addr + size <= bytesPerTile);
      if (v["alwaysLive"] == true)
        perTile[tile].emplace_back(addr, addr + size);
    }
  for (auto &t : perTile) {
    std::sort(t.second.begin(), t.second.end());
    for (std::size_t i = 1; i < t.second.size(); ++i)
      CHECK(t.second[i - 1].second <= t.second[i].first);
  }
}
