// Copyright (c) Aspen contributors.
// poplin rejects bad operands and options (PopLibs <poplin/MatMul.hpp>) with
// poputil::poplibs_error or poplar::invalid_option, naming the operation, the
// tensors' shapes and the option at fault.
#include <poplin/MatMul.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace poplar;

namespace {
struct Fixture {
  Graph graph{Target::createIPUTarget(1, 4, "ipu2")};
  program::Sequence prog;
  Tensor var(const Type &t, std::vector<std::size_t> shape) {
    Tensor v = graph.addVariable(t, shape, "v");
    graph.setTileMapping(v, 0);
    return v;
  }
};
} // namespace

TEST_CASE("poplin_errors: inner dimensions that disagree name both shapes", "[poplin]") {
  Fixture f;
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMul(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {5, 2}), f.prog, "mm");
      },
      {"poplin::matMul(mm)", "inner dimensions disagree", "{3,4}", "{5,2}"});
}

TEST_CASE("poplin_errors: operands that are not matrices", "[poplin]") {
  Fixture f;
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMul(f.graph, f.var(FLOAT, {3, 4, 2}), f.var(FLOAT, {2, 2}), f.prog);
      },
      {"A must have rank 2", "{3,4,2}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMulGrouped(f.graph, f.var(FLOAT, {2, 3, 4}), f.var(FLOAT, {3, 4, 2}), f.prog, FLOAT);
      },
      {"group dimensions disagree"});
}

TEST_CASE("poplin_errors: unsupported and mismatched element types", "[poplin]") {
  Fixture f;
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMul(f.graph, f.var(INT, {2, 2}), f.var(INT, {2, 2}), f.prog);
      },
      {"int", "only float and half"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMul(f.graph, f.var(FLOAT, {2, 2}), f.var(HALF, {2, 2}), f.prog);
      },
      {"same element type"});
}

TEST_CASE("poplin_errors: outputs and accumulators of the wrong shape", "[poplin]") {
  Fixture f;
  Tensor out = f.var(FLOAT, {3, 3});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMulWithOutput(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {4, 2}), out, f.prog);
      },
      {"{3,3}", "{3,2}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMulAcc(f.graph, f.var(FLOAT, {3, 2}), f.var(FLOAT, {2}), f.var(FLOAT, {3, 4}),
                          f.var(FLOAT, {4, 2}), f.prog);
      },
      {"scale k must have one element"});
}

TEST_CASE("poplin_errors: outputs that cannot be written", "[poplin]") {
  Fixture f;
  Tensor row = f.var(FLOAT, {1, 2});
  Tensor broadcast = row.broadcast(3, 0); // {3, 2}, each row the same elements
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        poplin::matMulWithOutput(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {4, 2}), broadcast, f.prog);
      },
      {"cannot be written", "{3,2}"});
}

TEST_CASE("poplin_errors: unknown option keys and bad option values", "[poplin]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {2, 2}), b = f.var(FLOAT, {2, 2});
  aspen::test::requireError<invalid_option>(
      [&] {
        poplin::matMul(f.graph, a, b, f.prog, "", {{"availableMemoryProportions", "0.5"}});
      },
      {"availableMemoryProportions"});
  aspen::test::requireError<invalid_option>(
      [&] {
        poplin::matMul(f.graph, a, b, f.prog, "", {{"availableMemoryProportion", "1.5"}});
      },
      {"availableMemoryProportion", "1.5"});
  aspen::test::requireError<invalid_option>(
      [&] {
        poplin::matMul(f.graph, a, b, f.prog, "", {{"partialsType", "double"}});
      },
      {"partialsType", "double"});
  aspen::test::requireError<invalid_option>(
      [&] {
        poplin::matmulValidateOptions({{"fullyConnectedPass", "TRAINING"}});
      },
      {"fullyConnectedPass", "TRAINING"});
  CHECK_NOTHROW(poplin::matmulValidateOptions({{"fullyConnectedPass", "TRAINING_BWD"},
                                               {"partialsType", "half"},
                                               {"availableMemoryProportion", "0.2"}}));
}
