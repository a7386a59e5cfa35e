// Copyright (c) Aspen contributors.
// popops::pad (Pad.hpp) against a host loop: constant padding (float, int and tensor values)
// with truncation, one-dimension forms, edge and reflect padding, float and half, on every
// test target; and where MappingMethod puts the padding.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popops/Pad.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <vector>

using namespace poplar;
using aspen::test::inputs;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using popops::padding::MappingMethod;

namespace {

enum class Mode { Constant, Edge, Reflect };

// Reference: `in` of `shape` padded (negative: truncated) per dimension, row-major.
std::vector<float> hostPad(const std::vector<float> &in, const std::vector<std::size_t> &shape,
                           const std::vector<std::ptrdiff_t> &lower, const std::vector<std::ptrdiff_t> &upper,
                           Mode mode, float value) {
  const std::size_t rank = shape.size();
  std::vector<std::size_t> outShape = shape, idx = shape;
  std::size_t outN = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    outShape[d] = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(shape[d]) + lower[d] + upper[d]);
    outN *= outShape[d];
    idx[d] = 0;
  }
  std::vector<float> out(outN);
  for (std::size_t o = 0; o < outN; ++o) {
    std::size_t src = 0;
    bool isPadding = false;
    for (std::size_t d = 0; d < rank; ++d) {
      // The coordinate in the input: truncation and padding both shift by `lower`.
      std::ptrdiff_t i = static_cast<std::ptrdiff_t>(idx[d]) - lower[d];
      const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(shape[d]);
      // The input region that survives truncation.
      const std::ptrdiff_t first = lower[d] < 0 ? -lower[d] : 0,
                           last = n - 1 - (upper[d] < 0 ? -upper[d] : 0);
      if (i < first || i > last) {
        if (mode == Mode::Constant)
          isPadding = true;
        else if (mode == Mode::Edge)
          i = i < first ? first : last;
        else
          i = i < first ? 2 * first - i : 2 * last - i;
      }
      src = src * shape[d] + static_cast<std::size_t>(i < 0 ? 0 : i);
    }
    out[o] = isPadding ? value : in[src];
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < outShape[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

} // namespace

TEST_CASE("popops::pad matches a host loop", "[popops][pad]") {
  const std::vector<std::size_t> shape{5, 6};
  const std::size_t n = 30;
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const auto x = inputs(n, -4.0f, 4.0f, 11);
      Tensor X = mappedVariable(graph, type, shape, "X");
      Tensor I = mappedVariable(graph, INT, shape, "I");
      Tensor value = graph.addConstant(type, {}, -2.5f, "value");
      graph.setTileMapping(value, 1);
      struct Case {
        Tensor padded;
        std::vector<std::ptrdiff_t> lower, upper;
        Mode mode;
        float value;
        const char *what;
      };
      std::vector<Case> cases{
          {popops::pad(graph, X, {1, -1}, {2, 1}, 0.5f), {1, -1}, {2, 1}, Mode::Constant, 0.5f, "constant"},
          {popops::pad(graph, X, {0, 2}, {-2, 0}, value),
           {0, 2},
           {-2, 0},
           Mode::Constant,
           -2.5f,
           "tensor value"},
          {popops::pad(graph, X, 3, 1, 1, 0.0f, MappingMethod::EDGE),
           {0, 3},
           {0, 1},
           Mode::Constant,
           0.0f,
           "one dimension, edge mapping"},
          {popops::pad(X, {2, 1}, {1, 3}, popops::padding::Type::EDGE),
           {2, 1},
           {1, 3},
           Mode::Edge,
           0,
           "edge"},
          {popops::pad(X, {2, -1}, {-1, 3}, popops::padding::Type::REFLECT),
           {2, -1},
           {-1, 3},
           Mode::Reflect,
           0,
           "reflect with truncation"},
          {popops::pad(X, 4, 4, 0, popops::padding::Type::REFLECT),
           {4, 0},
           {4, 0},
           Mode::Reflect,
           0,
           "reflect one dimension"},
      };
      program::Sequence prog;
      std::vector<std::vector<float>> got(cases.size());
      for (std::size_t c = 0; c < cases.size(); ++c) {
        // Read through a copy: the padded tensor is a view holding constants.
        Tensor out = mappedVariable(graph, type, cases[c].padded.shape(), "out");
        prog.add(program::Copy(cases[c].padded, out));
        dev.read(graph, out, got[c]);
      }
      Tensor intPadded = popops::pad(graph, I, {1, 0}, {0, 2}, -7);
      Tensor intOut = mappedVariable(graph, INT, intPadded.shape(), "intOut");
      prog.add(program::Copy(intPadded, intOut));
      std::vector<int> gotInt;
      dev.read(graph, intOut, gotInt);
      std::vector<int> ints(n);
      for (std::size_t k = 0; k < n; ++k)
        ints[k] = static_cast<int>(k) - 10;
      dev.write(graph, X, x);
      dev.write(graph, I, ints);
      dev.run(graph, prog);
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const auto &tc = cases[c];
        requireClose(got[c], hostPad(x, shape, tc.lower, tc.upper, tc.mode, tc.value), 0, 0, tc.what);
      }
      const auto wantInt =
          hostPad(std::vector<float>(ints.begin(), ints.end()), shape, {1, 0}, {0, 2}, Mode::Constant, -7);
      REQUIRE(gotInt == std::vector<int>(wantInt.begin(), wantInt.end()));
    });
  }
}

TEST_CASE("popops::pad maps constant padding as MappingMethod says", "[popops][pad]") {
  Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
  Tensor X = graph.addVariable(FLOAT, {4, 3}, "X");
  for (unsigned row = 0; row < 4; ++row)
    graph.setTileMapping(X[row], row);
  // EDGE: the column beside each row lives with that row.
  Tensor edge = popops::pad(graph, X, 0, 2, 1, 0.0f, MappingMethod::EDGE);
  for (unsigned row = 0; row < 4; ++row) {
    const auto mapping = graph.getTileMapping(edge[row].slice(3, 5));
    REQUIRE(mapping.size() > row);
    CHECK(mapping[row].size() == 1);
    CHECK(mapping[row][0].size() == 2);
  }
  // ZERO: tile 0; NONE: not mapped.
  Tensor zero = popops::pad(graph, X, {1, 0}, {0, 0}, 0.0f, MappingMethod::ZERO);
  CHECK(graph.getTileMapping(zero[0])[0].size() == 1);
  Tensor none = popops::pad(graph, X, {1, 0}, {0, 0}, 0.0f, MappingMethod::NONE);
  bool complete = true;
  graph.getTileMapping(none[0], &complete);
  CHECK(!complete);
}
