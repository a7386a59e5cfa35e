// Copyright (c) Aspen contributors.
// A client of popops/NaN.hpp written as a Poplar 3.x user writes one (a training loop's check
// for a diverged loss): hasNaN and hasNaNOrInf over float and half tensors, run on the
// IPUModel, each result checked against std::isnan / std::isfinite over the same values. (Its
// errors are in test/error/popops_errors.cpp.)
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/NaN.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace poplar;

namespace {

struct Case {
  std::string name;
  std::vector<float> values;
};

std::vector<Case> cases() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> plain(300);
  for (std::size_t i = 0; i < plain.size(); ++i)
    plain[i] = static_cast<float>(i) * 0.5f - 40.0f;
  std::vector<Case> out{{"finite", plain}};
  auto withNaN = plain;
  withNaN[217] = nan;
  out.push_back({"one NaN", withNaN});
  auto withInf = plain;
  withInf[3] = -inf;
  out.push_back({"one -inf", withInf});
  auto both = plain;
  both[0] = inf;
  both[299] = nan;
  out.push_back({"inf and NaN", both});
  return out;
}

} // namespace

TEST_CASE("popops::hasNaN and hasNaNOrInf match std::isnan and std::isfinite", "[compat][popops]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 16;
  Device device = model.createDevice();
  for (const Type &type : {FLOAT, HALF}) {
    for (const Case &c : cases()) {
      INFO(type.toString().str() << ", " << c.name);
      Graph graph(device.getTarget());
      popops::addCodelets(graph);
      Tensor x = graph.addVariable(type, {3, 100}, "x");
      poputil::mapTensorLinearly(graph, x);
      program::Sequence prog;
      Tensor anyNaN = popops::hasNaN(graph, x, prog, "check");
      Tensor anyNonFinite = popops::hasNaNOrInf(graph, x, prog, "checkInf");
      REQUIRE(anyNaN.elementType() == BOOL);
      REQUIRE(anyNaN.rank() == 0);
      graph.createHostWrite("x", x);
      graph.createHostRead("nan", anyNaN);
      graph.createHostRead("nonFinite", anyNonFinite);
      Engine engine(graph, prog);
      engine.load(device);
      if (type == HALF) {
        std::vector<std::uint16_t> halves(c.values.size());
        copyFloatToDeviceHalf(device.getTarget(), c.values.data(), halves.data(), halves.size());
        engine.writeTensor("x", halves.data(), halves.data() + halves.size());
      } else {
        engine.writeTensor("x", c.values.data(), c.values.data() + c.values.size());
      }
      engine.run(0);
      bool gotNaN = true, gotNonFinite = true;
      engine.readTensor("nan", &gotNaN, &gotNaN + 1);
      engine.readTensor("nonFinite", &gotNonFinite, &gotNonFinite + 1);
      bool expectNaN = false, expectNonFinite = false;
      for (float v : c.values) {
        expectNaN = expectNaN || std::isnan(v);
        expectNonFinite = expectNonFinite || !std::isfinite(v);
      }
      CHECK(gotNaN == expectNaN);
      CHECK(gotNonFinite == expectNonFinite);
    }
  }
}

TEST_CASE("popops::hasNaN of an empty tensor is false", "[compat][popops]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  program::Sequence prog;
  Tensor empty = graph.addVariable(FLOAT, {0, 5}, "empty");
  Tensor none = popops::hasNaN(graph, empty, prog);
  graph.createHostRead("none", none);
  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  bool got = true;
  engine.readTensor("none", &got, &got + 1);
  CHECK_FALSE(got);
}
