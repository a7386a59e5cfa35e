// Copyright (c) Aspen contributors.
// The block-product vertex poplin::MatMulBlock<In,Out> on every edge its register-tile
// kernels have: rows 1..13 (whole 6-row tiles and every leftover), columns 1..130 (whole
// vectors, partial last vectors of the 8- and 16-float kernels, several column panels) and
// depths 1..300, for float and half inputs and outputs. Every element must equal, bit for
// bit, a plain host loop computing the same fused multiply-add chain
// c = fma(a[p], b[p], c), p = 0, 1, ..., from c = 0 (rounded once to half for a half output).
//
// ctest runs this program three times: with the host's best kernel, and with
// ASPEN_CODELET_ISA=avx2 and =generic (docs/matmul.md), so that each kernel is checked.
#include "HalfReference.hpp"
#include "OpsTestUtil.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/codelets.hpp>
#include <poputil/VertexTemplates.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace poplar;

namespace {

struct Block {
  unsigned rows, depth, cols;
  std::vector<float> a, b; // inputs as the device holds them (rounded to the input type)
  std::string name;
};

/// The bits of `x` as a float or as the nearest half (the reference's own conversion).
std::vector<std::uint8_t> outputBytes(const std::vector<float> &values, const Type &type) {
  std::vector<std::uint8_t> bytes(values.size() * type.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (type == HALF) {
      const std::uint16_t h = aspen::test::softwareHalfBits(double(values[i]));
      std::memcpy(&bytes[2 * i], &h, 2);
    } else {
      std::memcpy(&bytes[4 * i], &values[i], 4);
    }
  }
  return bytes;
}

/// C = A * B, each element one float fma chain from zero, in p order.
std::vector<float> reference(const Block &blk) {
  std::vector<float> c(std::size_t(blk.rows) * blk.cols);
  for (unsigned r = 0; r < blk.rows; ++r)
    for (unsigned j = 0; j < blk.cols; ++j) {
      float sum = 0.0f;
      for (unsigned p = 0; p < blk.depth; ++p)
        sum = std::fma(blk.a[std::size_t(r) * blk.depth + p], blk.b[std::size_t(p) * blk.cols + j], sum);
      c[std::size_t(r) * blk.cols + j] = sum;
    }
  return c;
}

} // namespace

TEST_CASE("poplin_matmul_kernels: MatMulBlock equals the host's fma chain bit for bit on every edge",
          "[poplin]") {
  const char *isa = std::getenv("ASPEN_CODELET_ISA");
  INFO("ASPEN_CODELET_ISA=" << (isa ? isa : "(unset: the host's best kernel)"));
  const std::vector<unsigned> rowCounts = {1, 2, 3, 5, 6, 7, 11, 12, 13};
  const std::vector<unsigned> colCounts = {1,  5,  8,  9,  15, 16, 17, 24, 31,
                                           32, 33, 47, 48, 63, 64, 65, 80, 130};
  const std::vector<unsigned> depths = {1, 2, 7, 64, 147, 300};
  const std::vector<std::pair<Type, Type>> types = {
      {FLOAT, FLOAT}, {FLOAT, HALF}, {HALF, FLOAT}, {HALF, HALF}};

  IPUModel model("ipu2");
  model.tilesPerIPU = 1472;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  const Target &target = graph.getTarget();
  ComputeSet cs = graph.addComputeSet("blocks");
  std::vector<Block> blocks;
  std::vector<Type> outTypes;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  unsigned tile = 0;
  for (const auto &[inType, outType] : types)
    for (unsigned rows : rowCounts)
      for (unsigned cols : colCounts) {
        Block blk;
        blk.rows = rows;
        blk.cols = cols;
        blk.depth = depths[tile % depths.size()];
        blk.name = std::to_string(tile);
        for (std::size_t i = 0; i < std::size_t(rows) * blk.depth; ++i)
          blk.a.push_back(aspen::test::roundTo(inType, target, dist(gen)));
        for (std::size_t i = 0; i < std::size_t(blk.depth) * cols; ++i)
          blk.b.push_back(aspen::test::roundTo(inType, target, dist(gen)));
        Tensor a = graph.addVariable(inType, {std::size_t(rows) * blk.depth}, "a" + blk.name);
        Tensor b = graph.addVariable(inType, {std::size_t(blk.depth) * cols}, "b" + blk.name);
        Tensor c = graph.addVariable(outType, {std::size_t(rows) * cols}, "c" + blk.name);
        for (const Tensor &t : {a, b, c})
          graph.setTileMapping(t, tile);
        VertexRef v = graph.addVertex(cs, poputil::templateVertex("poplin::MatMulBlock", inType, outType),
                                      {{"a", a}, {"b", b}, {"c", c}});
        graph.setInitialValue(v["rows"], rows);
        graph.setInitialValue(v["depth"], blk.depth);
        graph.setInitialValue(v["cols"], cols);
        graph.setTileMapping(v, tile);
        graph.createHostWrite("a" + blk.name, a);
        graph.createHostWrite("b" + blk.name, b);
        graph.createHostRead("c" + blk.name, c);
        blocks.push_back(std::move(blk));
        outTypes.push_back(outType);
        ++tile;
      }
  REQUIRE(tile <= target.getNumTiles());

  Engine engine(graph, program::Execute(cs));
  engine.load(device);
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Type inType = types[k / (rowCounts.size() * colCounts.size())].first;
    aspen::test::writeFloats(engine, "a" + blocks[k].name, inType, target, blocks[k].a);
    aspen::test::writeFloats(engine, "b" + blocks[k].name, inType, target, blocks[k].b);
  }
  engine.run(0);

  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const Block &blk = blocks[k];
    const std::vector<std::uint8_t> want = outputBytes(reference(blk), outTypes[k]);
    std::vector<std::uint8_t> got(want.size());
    engine.readTensor("c" + blk.name, got.data(), got.data() + got.size());
    INFO("block " << blk.name << ": " << blk.rows << " x " << blk.depth << " x " << blk.cols << ", output "
                  << outTypes[k]);
    REQUIRE(got == want);
  }
}
