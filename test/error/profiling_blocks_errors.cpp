// Copyright (c) Aspen contributors.
// The lightweight-profiling engine options given wrong (docs/lightweight-profiling.md):
// poplar::invalid_option naming the option and the value at fault.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace poplar;
using namespace poplar::program;
using Catch::Matchers::Contains;

namespace {

std::string engineError(const OptionFlags &options) {
  IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph g(device.getTarget());
  Tensor t = g.addVariable(FLOAT, {2}, "t");
  g.setTileMapping(t, 0);
  try {
    Engine engine(g, Block(Copy(t, t), "b"), options);
  } catch (const invalid_option &e) {
    return e.what();
  }
  return "no exception";
}

} // namespace

TEST_CASE("profiler.blocks.filter and profiler.programs.filter must be regular expressions",
          "[error][profiling]") {
  const std::string blocks = engineError({{"profiler.blocks.filter", "stage(1"}});
  CHECK_THAT(blocks, Contains("profiler.blocks.filter") && Contains("stage(1") &&
                         Contains("not a valid regular expression"));
  const std::string programs = engineError({{"profiler.programs.filter", "[op"}});
  CHECK_THAT(programs, Contains("profiler.programs.filter") && Contains("[op"));
}

TEST_CASE("profiler.blocks.tile must be a tile of one IPU", "[error][profiling]") {
  const std::string outside = engineError({{"profiler.blocks.tile", "4"}});
  CHECK_THAT(outside, Contains("profiler.blocks.tile") && Contains("is 4") && Contains("tiles 0 to 3"));
  const std::string text = engineError({{"profiler.blocks.tile", "first"}});
  CHECK_THAT(text, Contains("profiler.blocks.tile") && Contains("\"first\""));
  CHECK(engineError({{"profiler.blocks.tile", "3"}, {"profiler.blocks.filter", ".*"}}) == "no exception");
  // An unsigned option like the table's others: 0x hexadecimal too, and the table's number error.
  CHECK(engineError({{"profiler.blocks.tile", "0x3"}}) == "no exception");
  CHECK_THAT(engineError({{"profiler.blocks.tile", "0x4"}}), Contains("is 4") && Contains("tiles 0 to 3"));
  CHECK_THAT(engineError({{"profiler.blocks.tile", "-1"}}),
             Contains("profiler.blocks.tile") && Contains("unsigned integer") && Contains("\"-1\""));
  CHECK_THAT(engineError({{"profiler.blocks.tile", "4294967296"}}),
             Contains("profiler.blocks.tile") && Contains("too large") && Contains("4294967296"));
}

TEST_CASE("profiler.blocks.tile is checked against one replica's IPU, before any replica is built",
          "[error][profiling]") {
  // Two replicas of a 4-tile IPU on an 8-tile device: tile 4 exists on the device but not in
  // an IPU of the replica's target. The engine throws from its first statement (Engine.cpp),
  // before it builds the replicas and their collective transport.
  IPUModel model;
  model.numIPUs = 2;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph g(device.getTarget(), replication_factor(2));
  Tensor t = g.addVariable(FLOAT, {2}, "t");
  g.setTileMapping(t, 3);
  for (const char *tile : {"4", "7"}) {
    std::string what = "no exception";
    try {
      Engine engine(g, Block(Copy(t, t), "b"), {{"profiler.blocks.tile", tile}});
    } catch (const invalid_option &e) {
      what = e.what();
    }
    CHECK_THAT(what, Contains("profiler.blocks.tile") && Contains(std::string("is ") + tile) &&
                         Contains("tiles 0 to 3"));
  }
  Engine engine(g, Block(Copy(t, t), "b"), {{"profiler.blocks.tile", "3"}});
  engine.load(device);
  engine.run(0);
}
