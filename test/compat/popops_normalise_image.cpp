// Copyright (c) Aspen contributors.
// A client of popops/NormaliseImage.hpp written as a Poplar 3.x user writes one (the input
// stage of an image model): unsigned char, half and float images of shape {2, 5, 3} are
// normalised and padded to 4 channels on the IPUModel and checked against a host loop
// ((x * inScale - offset[c]) * scale[c], channel 3 zero). (Errors: test/error/popops_errors.cpp.)
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/NormaliseImage.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include "OpsTestUtil.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace poplar;

namespace {

constexpr std::size_t kPixels = 10; // {2, 5} pixels of 3 channels

} // namespace

TEST_CASE("popops::normaliseImage normalises three channels and pads a fourth", "[compat][popops]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  const Target &target = device.getTarget();
  const float inScale = 1.0f / 255.0f;
  const std::vector<float> offsets = {0.485f, 0.456f, 0.406f}, scales = {4.37f, 4.46f, 4.44f};
  std::vector<float> pixels(kPixels * 3);
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<float>((i * 37) % 256); // whole numbers 0..255: exact in every type

  for (const Type &type : {UNSIGNED_CHAR, HALF, FLOAT}) {
    INFO(type.toString().str());
    const Type outType = type == UNSIGNED_CHAR ? HALF : type;
    Graph graph(target);
    popops::addCodelets(graph);
    Tensor image = popops::createNormaliseImageInput(graph, type, {2, 5, 3}, "image");
    REQUIRE(image.shape() == std::vector<std::size_t>{2, 5, 3});
    Tensor off = graph.addVariable(outType, {3}, "offsets"), sc = graph.addVariable(outType, {3}, "scales");
    graph.setTileMapping(off, 0);
    graph.setTileMapping(sc, 0);
    program::Sequence prog;
    Tensor out = popops::normaliseImage(graph, prog, image, inScale, off, sc, "normalise");
    REQUIRE(out.shape() == std::vector<std::size_t>{2, 5, 4});
    REQUIRE(out.elementType() == outType);
    graph.createHostWrite("image", image);
    graph.createHostWrite("offsets", off);
    graph.createHostWrite("scales", sc);
    graph.createHostRead("out", out);
    Engine engine(graph, prog);
    engine.load(device);
    if (type == UNSIGNED_CHAR) {
      std::vector<std::uint8_t> bytes(pixels.begin(), pixels.end());
      engine.writeTensor("image", bytes.data(), bytes.data() + bytes.size());
    } else {
      aspen::test::writeFloats(engine, "image", type, target, pixels);
    }
    aspen::test::writeFloats(engine, "offsets", outType, target, offsets);
    aspen::test::writeFloats(engine, "scales", outType, target, scales);
    engine.run(0);
    const std::vector<float> got = aspen::test::readFloats(engine, "out", outType, target, kPixels * 4);
    // Half rounds each operand and result to 11 significant bits: allow a few of its ulps.
    const double tolerance = outType == HALF ? 3e-3 : 1e-6;
    for (std::size_t p = 0; p < kPixels; ++p) {
      for (std::size_t c = 0; c < 3; ++c) {
        const double expected = (double(pixels[p * 3 + c]) * inScale - offsets[c]) * scales[c];
        INFO("pixel " << p << " channel " << c);
        CHECK(std::fabs(got[p * 4 + c] - expected) <= tolerance * std::max(1.0, std::fabs(expected)));
      }
      CHECK(got[p * 4 + 3] == 0.0f);
    }
  }
}
