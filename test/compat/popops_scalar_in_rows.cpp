// Copyright (c) Aspen contributors.
// A client of popops/SelectScalarFromRows.hpp and popops/UpdateScalarInRows.hpp written as a
// Poplar 3.x user writes one (the label-indexed pieces of a sparse softmax cross-entropy):
// float and half params, indices in range, MASKED_LABEL_CODE and out of range, run on the
// IPUModel and checked against a plain host loop. (Errors: test/error/popops_errors.cpp.)
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/EncodingConstants.hpp>
#include <popops/SelectScalarFromRows.hpp>
#include <popops/UpdateScalarInRows.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include "OpsTestUtil.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace poplar;

namespace {

constexpr std::size_t kRows = 9, kCols = 13;

std::vector<float> paramsValues() {
  std::vector<float> v(kRows * kCols);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 7) % 23) * 0.25f - 2.0f; // exact in half too
  return v;
}

std::vector<unsigned> indexValues() {
  // In range, first and last column, masked, just out of range, far out of range.
  return {0, 12, 5, MASKED_LABEL_CODE, 13, 7, 1000, 3, MASKED_LABEL_CODE};
}

bool same(float got, float expected) {
  return std::isnan(expected) ? std::isnan(got) : got == expected;
}

} // namespace

TEST_CASE("popops::selectScalarFromRows and updateScalarInRows match a host loop", "[compat][popops]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 8;
  Device device = model.createDevice();
  const Target &target = device.getTarget();
  const std::vector<float> params = paramsValues();
  const std::vector<unsigned> indices = indexValues();
  const float nan = std::nanf("");

  // The host reference, as PopLibs documents both ops.
  std::vector<float> selected(kRows), updated = params;
  for (std::size_t r = 0; r < kRows; ++r) {
    const unsigned i = indices[r];
    if (i == MASKED_LABEL_CODE) {
      selected[r] = 0;
    } else if (i >= kCols) {
      selected[r] = nan;
      for (std::size_t c = 0; c < kCols; ++c)
        updated[r * kCols + c] = nan;
    } else {
      selected[r] = params[r * kCols + i];
      updated[r * kCols + i] -= 1.0f;
    }
  }

  for (const Type &type : {FLOAT, HALF}) {
    INFO(type.toString().str());
    Graph graph(target);
    popops::addCodelets(graph);
    Tensor p = graph.addVariable(type, {kRows, kCols}, "logits");
    Tensor idx = graph.addVariable(UNSIGNED_INT, {kRows}, "labels");
    poputil::mapTensorLinearly(graph, p);
    poputil::mapTensorLinearly(graph, idx);
    program::Sequence prog;
    Tensor picked = popops::selectScalarFromRows(graph, p, idx, prog, "select");
    REQUIRE(picked.shape() == std::vector<std::size_t>{kRows});
    REQUIRE(picked.elementType() == type);
    popops::updateScalarInRows(graph, p, idx, prog, "update");
    graph.createHostWrite("p", p);
    graph.createHostWrite("idx", idx);
    graph.createHostRead("p", p);
    graph.createHostRead("picked", picked);
    Engine engine(graph, prog);
    engine.load(device);
    aspen::test::writeFloats(engine, "p", type, target, params);
    engine.writeTensor("idx", indices.data(), indices.data() + indices.size());
    engine.run(0);
    const std::vector<float> gotPicked = aspen::test::readFloats(engine, "picked", type, target, kRows);
    const std::vector<float> gotUpdated = aspen::test::readFloats(engine, "p", type, target, kRows * kCols);
    for (std::size_t r = 0; r < kRows; ++r) {
      INFO("row " << r << ", index " << indices[r]);
      CHECK(same(gotPicked[r], selected[r]));
      for (std::size_t c = 0; c < kCols; ++c)
        CHECK(same(gotUpdated[r * kCols + c], updated[r * kCols + c]));
    }
  }
}
