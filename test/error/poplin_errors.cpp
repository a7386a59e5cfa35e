// Copyright (c) Aspen contributors.
// poplin rejects bad operands and options (PopLibs <poplin/MatMul.hpp>) with
// poputil::poplibs_error or poplar::invalid_option, naming the operation, the
// tensors' shapes and the option at fault.
#include <poplin/MatMul.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace poplar;
using Catch::Matchers::Contains;

namespace {

/// The message of the `E` that `f` throws ("<no exception>" if none).
template <class E, class F> std::string messageOf(F f) {
  try {
    f();
  } catch (const E &e) {
    return e.what();
  }
  return "<no exception>";
}
} // namespace

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
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               poplin::matMul(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {5, 2}), f.prog, "mm");
             }),
             Contains("poplin::matMul(mm)") && Contains("inner dimensions disagree") && Contains("{3,4}") &&
                 Contains("{5,2}"));
}

TEST_CASE("poplin_errors: operands that are not matrices", "[poplin]") {
  Fixture f;
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               poplin::matMul(f.graph, f.var(FLOAT, {3, 4, 2}), f.var(FLOAT, {2, 2}), f.prog);
             }),
             Contains("A must have rank 2") && Contains("{3,4,2}"));
  CHECK_THAT(
      messageOf<poputil::poplibs_error>([&] {
        poplin::matMulGrouped(f.graph, f.var(FLOAT, {2, 3, 4}), f.var(FLOAT, {3, 4, 2}), f.prog, FLOAT);
      }),
      Contains("group dimensions disagree"));
}

TEST_CASE("poplin_errors: unsupported and mismatched element types", "[poplin]") {
  Fixture f;
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               poplin::matMul(f.graph, f.var(INT, {2, 2}), f.var(INT, {2, 2}), f.prog);
             }),
             Contains("int") && Contains("only float and half"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               poplin::matMul(f.graph, f.var(FLOAT, {2, 2}), f.var(HALF, {2, 2}), f.prog);
             }),
             Contains("same element type"));
}

TEST_CASE("poplin_errors: outputs and accumulators of the wrong shape", "[poplin]") {
  Fixture f;
  Tensor out = f.var(FLOAT, {3, 3});
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               poplin::matMulWithOutput(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {4, 2}), out, f.prog);
             }),
             Contains("{3,3}") && Contains("{3,2}"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               poplin::matMulAcc(f.graph, f.var(FLOAT, {3, 2}), f.var(FLOAT, {2}), f.var(FLOAT, {3, 4}),
                                 f.var(FLOAT, {4, 2}), f.prog);
             }),
             Contains("scale k must have one element"));
}

TEST_CASE("poplin_errors: outputs that cannot be written", "[poplin]") {
  Fixture f;
  Tensor row = f.var(FLOAT, {1, 2});
  Tensor broadcast = row.broadcast(3, 0); // {3, 2}, each row the same elements
  CHECK_THAT(
      messageOf<poputil::poplibs_error>([&] {
        poplin::matMulWithOutput(f.graph, f.var(FLOAT, {3, 4}), f.var(FLOAT, {4, 2}), broadcast, f.prog);
      }),
      Contains("cannot be written") && Contains("{3,2}"));
}

TEST_CASE("poplin_errors: unknown option keys and bad option values", "[poplin]") {
  Fixture f;
  Tensor a = f.var(FLOAT, {2, 2}), b = f.var(FLOAT, {2, 2});
  CHECK_THAT(messageOf<invalid_option>([&] {
               poplin::matMul(f.graph, a, b, f.prog, "", {{"availableMemoryProportions", "0.5"}});
             }),
             Contains("availableMemoryProportions"));
  CHECK_THAT(messageOf<invalid_option>([&] {
               poplin::matMul(f.graph, a, b, f.prog, "", {{"availableMemoryProportion", "1.5"}});
             }),
             Contains("availableMemoryProportion") && Contains("1.5"));
  CHECK_THAT(messageOf<invalid_option>([&] {
               poplin::matMul(f.graph, a, b, f.prog, "", {{"partialsType", "double"}});
             }),
             Contains("partialsType") && Contains("double"));
  CHECK_THAT(messageOf<invalid_option>([&] {
               poplin::matmulValidateOptions({{"fullyConnectedPass", "TRAINING"}});
             }),
             Contains("fullyConnectedPass") && Contains("TRAINING"));
  CHECK_NOTHROW(poplin::matmulValidateOptions({{"fullyConnectedPass", "TRAINING_BWD"},
                                               {"partialsType", "half"},
                                               {"availableMemoryProportion", "0.2"}}));
}
