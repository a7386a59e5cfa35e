// Copyright (c) Aspen contributors.
// Issue 15 items 6 and 9, bad input: the 1.x profile values of an engine that was moved
// from, a key the profile does not have, and an op's debug information for an invalid
// tensor argument (recorded, not a crash).
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poputil/DebugInfo.hpp>

#include <catch2/catch.hpp>

#include <string>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

TEST_CASE("libapi errors: profile values of a moved-from engine, an absent key", "[error][profile]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {4}, "x");
  graph.setTileMapping(x, 0);
  poplar::Engine engine(graph, poplar::program::Sequence{poplar::program::WriteUndef(x)});
  engine.load(device);
  engine.run(0);
  const poplar::ProfileValue exec = engine.getExecutionProfile();
  try {
    (void)exec["simulation"]["tileCycles"];
    FAIL("an absent key was found");
  } catch (const poplar::poplar_error &e) {
    CHECK(std::string(e.what()).find("tileCycles") != std::string::npos);
  }
  CHECK_THROWS_AS(exec["simulation"]["cycles"].asString(), poplar::poplar_error);

  poplar::Engine moved(std::move(engine));
  CHECK(moved.getGraphProfile()["target"]["numTiles"].asUint() == 2);
  for (int which = 0; which < 2; ++which) {
    try {
      if (which == 0)
        (void)engine.getGraphProfile();
      else
        (void)engine.getExecutionProfile();
      FAIL("a moved-from engine gave a profile");
    } catch (const poplar::poplar_error &e) {
      CHECK(std::string(e.what()).find("moved from") != std::string::npos);
    }
  }
}

TEST_CASE("libapi errors: an invalid tensor as an op argument is recorded as such", "[error][debuginfo]") {
  const poplar::Tensor invalid;
  poputil::PoplibsOpDebugInfo di("op", DI_ARGS(invalid));
  CHECK(di.getValues().at("args")["invalid"]["shape"].asString() == "<invalid>");
}

#pragma GCC diagnostic pop
