// Copyright (c) Aspen contributors.
// Bad arguments to poputil and popops operations are rejected with poputil::poplibs_error
// (poplar::invalid_option for options) naming the operation, tensors and shapes.
#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Encoding.hpp>
#include <popops/Fill.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <popops/codelets.hpp>
#include <poputil/Broadcast.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

using namespace poplar;
using Catch::Matchers::Contains;
using popops::expr::_1;
using popops::expr::_2;
using popops::expr::_3;

// Requires `expr` to throw `Type` whose what() satisfies `matcher`.
#define REQUIRE_ERROR(expr, Type, matcher)                                                                   \
  do {                                                                                                       \
    bool thrown = false;                                                                                     \
    try {                                                                                                    \
      expr;                                                                                                  \
    } catch (const Type &e) {                                                                                \
      thrown = true;                                                                                         \
      REQUIRE_THAT(std::string(e.what()), matcher);                                                          \
    }                                                                                                        \
    REQUIRE(thrown);                                                                                         \
  } while (0)

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
  REQUIRE_ERROR(popops::add(f.graph, a, b, f.prog), poputil::poplibs_error,
                Contains("do not broadcast") && Contains("'a' {2,3} float") && Contains("'b' {4} float"));
}

TEST_CASE("element-wise operands of different types", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(INT, {4}, "b");
  REQUIRE_ERROR(popops::mul(f.graph, a, b, f.prog), poputil::poplibs_error,
                Contains("MULTIPLY") && Contains("float and int"));
}

TEST_CASE("an operator on a type it does not support", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(INT, {4}, "a");
  REQUIRE_ERROR(popops::exp(f.graph, a, f.prog), poputil::poplibs_error,
                Contains("EXPONENT") && Contains("float or half"));
}

TEST_CASE("a map expression using a placeholder with no tensor", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(FLOAT, {4}, "b");
  REQUIRE_ERROR(popops::map(f.graph, _1 + _3, {a, b}, f.prog), poputil::poplibs_error,
                Contains("placeholder _3") && Contains("2 tensor"));
}

TEST_CASE("a map option that does not exist, or a bad value", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a");
  REQUIRE_ERROR(popops::map(f.graph, _1 * 2.0f, {a}, f.prog, "x", {{"fuseEverything", "true"}}),
                invalid_option, Contains("fuseEverything"));
  REQUIRE_ERROR(popops::map(f.graph, _1 * 2.0f, {a}, f.prog, "x", {{"enableGenerateCodelet", "maybe"}}),
                invalid_option, Contains("maybe"));
}

TEST_CASE("mapInPlace into a constant", "[popops][error]") {
  Fixture f;
  Tensor c = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
  f.graph.setTileMapping(c, 0);
  REQUIRE_ERROR(popops::addInPlace(f.graph, c, 1.0f, f.prog), poputil::poplibs_error,
                Contains("cannot be written"));
}

TEST_CASE("a constant operand of a different host type", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(INT, {4}, "a");
  REQUIRE_ERROR(popops::add(f.graph, a, 1.5f, f.prog), poputil::poplibs_error,
                Contains("add") && Contains("int"));
}

TEST_CASE("cast between different shapes", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(HALF, {5}, "b");
  REQUIRE_ERROR(popops::cast(f.graph, a, b, "c"), poputil::poplibs_error,
                Contains("different shapes") && Contains("{4}") && Contains("{5}"));
}

TEST_CASE("reduce over a dimension that does not exist", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a");
  REQUIRE_ERROR(popops::reduce(f.graph, a, {2}, popops::Operation::ADD, f.prog), poputil::poplibs_error,
                Contains("dimension 2") && Contains("'a' {3,4} float"));
}

TEST_CASE("reduce with an operation the type does not support", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a");
  REQUIRE_ERROR(popops::reduce(f.graph, a, {1}, popops::Operation::LOGICAL_AND, f.prog),
                poputil::poplibs_error, Contains("LOGICAL_AND") && Contains("float"));
}

TEST_CASE("reduce with a scale on MAX", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a"), out = f.var(FLOAT, {3}, "out");
  Tensor s = f.var(FLOAT, {}, "s");
  REQUIRE_ERROR(popops::reduceWithOutput(f.graph, a, out, {1},
                                         popops::ReduceParams(popops::Operation::MAX, false, s), f.prog),
                poputil::poplibs_error, Contains("scale and update"));
}

TEST_CASE("reduce option that does not exist", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 4}, "a");
  REQUIRE_ERROR(popops::reduce(f.graph, a, {1}, popops::Operation::ADD, f.prog, "r",
                               {{"accumType.interTile", "double"}}),
                invalid_option, Contains("double"));
}

TEST_CASE("scaledAddTo with operands of different shapes", "[popops][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {4}, "a"), b = f.var(FLOAT, {5}, "b");
  REQUIRE_ERROR(popops::scaledAddTo(f.graph, a, b, 2.0f, f.prog), poputil::poplibs_error,
                Contains("scaledAddTo") && Contains("same shape"));
}

TEST_CASE("dynamicSlice larger than the dimension", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t"), off = f.var(UNSIGNED_INT, {1}, "off");
  REQUIRE_ERROR(popops::dynamicSlice(f.graph, t, off, {1}, {6}, f.prog), poputil::poplibs_error,
                Contains("slice size 6") && Contains("'t' {4,5} float"));
}

TEST_CASE("multiSlice of two dimensions", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t"), off = f.var(UNSIGNED_INT, {3, 2}, "off");
  REQUIRE_ERROR(popops::multiSlice(f.graph, t, off, {0, 1}, {1, 1}, f.prog, popops::SlicePlan(), {}),
                poputil::poplibs_error, Contains("one sliced dimension"));
}

TEST_CASE("an embedding plan option that does not exist", "[popops][error]") {
  Fixture f;
  REQUIRE_ERROR(popops::embedding::plan(f.graph, FLOAT, 10, 4, {2}, {{"usedForSlicing", "true"}}),
                invalid_option, Contains("usedForSlicing"));
}

TEST_CASE("sort along a dimension that does not exist", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t");
  REQUIRE_ERROR(popops::sort(f.graph, t, 2, f.prog), poputil::poplibs_error,
                Contains("dimension 2") && Contains("{4,5}"));
}

TEST_CASE("topK with k larger than the rows", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4, 5}, "t");
  REQUIRE_ERROR(popops::topK(f.graph, f.prog, t, {6, true, popops::SortOrder::NONE}), poputil::poplibs_error,
                Contains("k = 6"));
}

TEST_CASE("fill of a constant", "[popops][error]") {
  Fixture f;
  Tensor c = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
  f.graph.setTileMapping(c, 0);
  REQUIRE_ERROR(popops::fill(f.graph, c, f.prog, 2.0f), poputil::poplibs_error,
                Contains("popops::fill") && Contains("cannot be written"));
}

TEST_CASE("iota into a float tensor", "[popops][error]") {
  Fixture f;
  Tensor t = f.var(FLOAT, {4}, "t");
  REQUIRE_ERROR(popops::iota(f.graph, t, 0u, f.prog), poputil::poplibs_error,
                Contains("iota") && Contains("unsigned int"));
}

TEST_CASE("poputil::broadcastToMatch with incompatible shapes", "[poputil][error]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {3, 2}, "a");
  REQUIRE_ERROR(poputil::broadcastToMatch(a, std::vector<std::size_t>{3, 4}), poputil::poplibs_error,
                Contains("{3,2}") && Contains("{3,4}"));
}
