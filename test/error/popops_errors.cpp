// Copyright (c) Aspen contributors.
// Bad arguments to poputil and popops operations are rejected with poputil::poplibs_error
// (poplar::invalid_option for options) naming the operation, tensors and shapes.
#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Encoding.hpp>
#include <popops/Fill.hpp>
#include <popops/NaN.hpp>
#include <popops/NormaliseImage.hpp>
#include <popops/Pad.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/SelectScalarFromRows.hpp>
#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <popops/UpdateScalarInRows.hpp>
#include <popops/codelets.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace poplar;
using popops::expr::_1;
using popops::expr::_2;
using popops::expr::_3;

namespace {

struct Fixture {
  Graph graph{Target::createIPUTarget(1, 4, "ipu2")};
  program::Sequence prog;
  Fixture() { popops::addCodelets(graph); }
  Tensor var(const Type &t, std::vector<std::size_t> shape, const char *name) {
    Tensor x = graph.addVariable(t, shape, name);
    poputil::mapTensorLinearly(graph, x);
    return x;
  }
};

} // namespace

TEST_CASE("element-wise operands whose shapes do not broadcast", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {2, 3}, "a"), b = f.var(FLOAT, {4}, "b");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::add(f.graph, a, b, f.prog); },
                                                    {"do not broadcast", "'a' {2,3} float", "'b' {4} float"});
}

TEST_CASE("element-wise operands of different types", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(INT, {4}, "b");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::mul(f.graph, a, b, f.prog); },
                                                    {"MULTIPLY", "float and int"});
}

TEST_CASE("an operator on a type it does not support", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(INT, {4}, "a");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::exp(f.graph, a, f.prog); },
                                                    {"EXPONENT", "float or half"});
}

TEST_CASE("a map expression using a placeholder with no tensor", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(FLOAT, {4}, "b");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::map(f.graph, _1 + _3, {a, b}, f.prog);
      },
      {"placeholder _3", "2 tensor"});
}

TEST_CASE("a map option that does not exist, or a bad value", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a");
  aspen::test::requireError<invalid_option>(
      [&] {
        popops::map(f.graph, _1 * 2.0f, {a}, f.prog, "x", {{"fuseEverything", "true"}});
      },
      {"fuseEverything"});
  aspen::test::requireError<invalid_option>(
      [&] {
        popops::map(f.graph, _1 * 2.0f, {a}, f.prog, "x", {{"enableGenerateCodelet", "maybe"}});
      },
      {"maybe"});
}

TEST_CASE("mapInPlace into a constant", "[popops][error]") {
  Fixture f;
  Tensor c = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
  f.graph.setTileMapping(c, 0);
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::addInPlace(f.graph, c, 1.0f, f.prog); },
                                                    {"cannot be written"});
}

TEST_CASE("a constant operand of a different host type", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(INT, {4}, "a");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::add(f.graph, a, 1.5f, f.prog); },
                                                    {"add", "int"});
}

TEST_CASE("cast between different shapes", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(HALF, {5}, "b");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::cast(f.graph, a, b, "c"); },
                                                    {"different shapes", "{4}", "{5}"});
}

TEST_CASE("reduce over a dimension that does not exist", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::reduce(f.graph, a, {2}, popops::Operation::ADD, f.prog); },
      {"dimension 2", "'a' {3,4} float"});
}

TEST_CASE("reduce with an operation the type does not support", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::reduce(f.graph, a, {1}, popops::Operation::LOGICAL_AND, f.prog); },
      {"LOGICAL_AND", "float"});
}

TEST_CASE("reduce with a scale on MAX", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a"), out = f.var(FLOAT, {3}, "out");
  Tensor s = f.var(FLOAT, {}, "s");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::reduceWithOutput(f.graph, a, out, {1}, popops::ReduceParams(popops::Operation::MAX, false, s),
                                 f.prog);
      },
      {"scale and update"});
}

TEST_CASE("reduce option that does not exist", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a");
  aspen::test::requireError<invalid_option>(
      [&] {
        popops::reduce(f.graph, a, {1}, popops::Operation::ADD, f.prog, "r",
                       {{"accumType.interTile", "double"}});
      },
      {"double"});
}

TEST_CASE("scaledAddTo with operands of different shapes", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(FLOAT, {5}, "b");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::scaledAddTo(f.graph, a, b, 2.0f, f.prog); },
                                                    {"scaledAddTo", "same shape"});
}

TEST_CASE("dynamicSlice larger than the dimension", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t"), off = f.var(UNSIGNED_INT, {1}, "off");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::dynamicSlice(f.graph, t, off, {1}, {6}, f.prog); }, {"slice size 6", "'t' {4,5} float"});
}

TEST_CASE("multiSlice of two dimensions with a slice larger than 1", "[popops][error]") {
  // Several sliced dimensions are supported (golden/popops_more.cpp), with slices of size 1.
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t"), off = f.var(UNSIGNED_INT, {3, 2}, "off");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::multiSlice(f.graph, t, off, {0, 1}, {1, 2}, f.prog, popops::SlicePlan(), {});
      },
      {"popops::multiSlice", "slices of size 1", "{1,2}"});
}

TEST_CASE("an embedding plan option that does not exist", "[popops][error]") {
  Fixture f;
  aspen::test::requireError<invalid_option>(
      [&] {
        popops::embedding::plan(f.graph, FLOAT, 10, 4, {2}, {{"usedForSlicing", "true"}});
      },
      {"usedForSlicing"});
}

TEST_CASE("sort along a dimension that does not exist", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::sort(f.graph, t, 2, f.prog); },
                                                    {"dimension 2", "{4,5}"});
}

TEST_CASE("topK with k larger than the rows", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::topK(f.graph, f.prog, t, {6, true, popops::SortOrder::NONE});
      },
      {"k = 6"});
}

TEST_CASE("fill of a constant", "[popops][error]") {
  Fixture f;
  Tensor c = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
  f.graph.setTileMapping(c, 0);
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::fill(f.graph, c, f.prog, 2.0f); },
                                                    {"popops::fill", "cannot be written"});
}

TEST_CASE("iota into a float tensor", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4}, "t");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::iota(f.graph, t, 0u, f.prog); },
                                                    {"iota", "unsigned int"});
}

TEST_CASE("poputil::broadcastToMatch with incompatible shapes", "[poputil][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 2}, "a");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poputil::broadcastToMatch(a, std::vector<std::size_t>{3, 4});
      },
      {"{3,2}", "{3,4}"});
}

TEST_CASE("multi-output map with mismatched expressions, tensors or outputs", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(FLOAT, {4}, "b"), row = f.var(FLOAT, {3, 4}, "row");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::mapInPlace(f.graph, {_1 + _2, _1 * _2, _1 - _2}, {a, b}, f.prog);
      },
      {"popops::mapInPlace", "3 expressions", "2 were given"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::mapWithOutput(f.graph, {_1 + _2, _1 * _2}, {a, b}, {f.var(FLOAT, {4}, "o")}, f.prog);
      },
      {"popops::mapWithOutput", "2 expressions", "got 1"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::map(f.graph, {_1 + _2, _1 * _3}, {a, b, row}, f.prog);
      },
      {"popops::map", "different shapes", "{4}", "{3,4}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::mapWithOutput(f.graph, {_1 + _2, _1 * _2}, {a, b}, {a, a}, f.prog);
      },
      {"popops::mapWithOutput", "outputs overlap"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::map(f.graph, std::vector<popops::expr::Any>{}, {a}, f.prog); },
      {"popops::map", "no expressions"});
}

TEST_CASE("pad with the wrong number of amounts, too much truncation or too much reflection",
          "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::pad(f.graph, t, {1}, {1}); },
                                                    {"popops::pad", "one entry per dimension", "'t' {4,5}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::pad(f.graph, t, {-3, 0}, {-2, 0});
      },
      {"popops::pad", "truncating 5", "dimension 0"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::pad(t, {0, 5}, {0, 0}, popops::padding::Type::REFLECT);
      },
      {"popops::pad", "reflecting 5", "dimension 1"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::pad(f.graph, t, {0, 1}, {0, 0}, f.var(HALF, {}, "v"));
      },
      {"popops::pad", "padding value"});
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::pad(f.graph, t, 1, 1, 2); },
                                                    {"popops::pad", "dimension 2"});
}

TEST_CASE("a scalar constant with no integer equivalent for an integer tensor", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(INT, {4}, "counts"), b = f.var(INT, {4}, "deltas");
  // NaN, infinity and values beyond 64 bits cannot become an int; converting them would be
  // undefined behaviour, so the op refuses and names the value and the type.
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::scaledAddTo(f.graph, a, b, std::numeric_limits<float>::quiet_NaN(), f.prog); },
      {"nan", "no equivalent of type int"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::scaledAddTo(f.graph, a, b, 1e30f, f.prog); }, {"1000000", "no equivalent of type int"});
  Tensor u = f.var(UNSIGNED_INT, {4}, "mask");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::map(f.graph,
                    popops::expr::Add(_1, popops::expr::Const(std::numeric_limits<float>::infinity())), {u},
                    f.prog);
      },
      {"inf", "no equivalent of type unsigned int"});
}

TEST_CASE("a single-tensor connection whose tensors a program emptied", "[graph][error]") {
  Fixture f;
  Tensor out = f.var(FLOAT, {4}, "out");
  ComputeSet cs = f.graph.addComputeSet("fill");
  // ConnectionDesc's members are public, as in Poplar: a program can edit them.
  Graph::ConnectionDesc desc{"out", out};
  REQUIRE(desc.tensors.size() == 1);
  desc.tensors.clear();
  aspen::test::requireError<graph_connection_error>(
      [&] { f.graph.addVertex(cs, "popops::Fill<float>", {desc}); },
      {"popops::Fill<float>", "field 'out'", "0 tensors"});
}

TEST_CASE("hasNaN and hasNaNOrInf of a tensor that is not float or half, or not valid", "[popops][error]") {
  Fixture f;
  Tensor counts = f.var(INT, {4}, "counts");
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::hasNaNOrInf(f.graph, counts, f.prog); },
                                                    {"popops::hasNaNOrInf", "'counts'", "float or half"});
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::hasNaN(f.graph, counts, f.prog); },
                                                    {"popops::hasNaN", "'counts'", "float or half"});
  aspen::test::requireError<poputil::poplibs_error>([&] { popops::hasNaN(f.graph, Tensor(), f.prog); },
                                                    {"popops::hasNaN", "src"});
}

TEST_CASE("selectScalarFromRows and updateScalarInRows with mismatched or mistyped tensors",
          "[popops][error]") {
  Fixture f;
  Tensor logits = f.var(FLOAT, {4, 6}, "logits");
  Tensor labels = f.var(UNSIGNED_INT, {4}, "labels");
  Tensor shortLabels = f.var(UNSIGNED_INT, {3}, "shortLabels");
  Tensor intLabels = f.var(INT, {4}, "intLabels");
  Tensor flat = f.var(FLOAT, {24}, "flat");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::selectScalarFromRows(f.graph, logits, shortLabels, f.prog); },
      {"popops::selectScalarFromRows", "'shortLabels'", "3 entries", "'logits'", "4 rows"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::updateScalarInRows(f.graph, logits, intLabels, f.prog); },
      {"popops::updateScalarInRows", "'intLabels'", "unsigned int"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::selectScalarFromRows(f.graph, flat, labels, f.prog); },
      {"popops::selectScalarFromRows", "'flat'", "2-D float or half"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::updateScalarInRows(f.graph, Tensor(), labels, f.prog); },
      {"popops::updateScalarInRows", "params"});
}

TEST_CASE("normaliseImage and its input with the wrong channels or types", "[popops][error]") {
  Fixture f;
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::createNormaliseImageInput(f.graph, FLOAT, {4, 4}, "img");
      },
      {"popops::createNormaliseImageInput", "{4,4}", "3 channels"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popops::createNormaliseImageInput(f.graph, INT, {4, 3}, "img");
      },
      {"popops::createNormaliseImageInput", "unsigned char, half or float", "int"});
  Tensor pixels = f.var(UNSIGNED_CHAR, {2, 3}, "pixels");
  Tensor halfOffsets = f.var(HALF, {3}, "halfOffsets"), floatScales = f.var(FLOAT, {3}, "floatScales");
  Tensor wide = f.var(FLOAT, {2, 4}, "wide");
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::normaliseImage(f.graph, f.prog, pixels, 1.0f, halfOffsets, floatScales); },
      {"popops::normaliseImage", "scales", "'floatScales'", "{3} half"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popops::normaliseImage(f.graph, f.prog, wide, 1.0f, floatScales, floatScales); },
      {"popops::normaliseImage", "'wide'", "3 channels"});
}
