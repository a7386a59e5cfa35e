// Copyright (c) Aspen contributors.
// popnn rejects bad arguments (PopLibs <popnn/NonLinearity.hpp>, <popnn/Loss.hpp>,
// <popnn/Pooling.hpp>) with poputil::poplibs_error naming the operation and shapes.
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>

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

TEST_CASE("popnn_errors: non-linearities of unsupported types or mismatched gradients", "[popnn]") {
  Fixture f;
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] { popnn::relu(f.graph, f.var(INT, {4}), f.prog); }),
             Contains("popnn::nonLinearity(RELU") && Contains("int"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::nonLinearityInputGradient(f.graph, popnn::NonLinearityType::TANH, f.var(FLOAT, {4}),
                                                f.var(FLOAT, {5}), f.prog);
             }),
             Contains("{4}") && Contains("{5}"));
  Tensor constant = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
  f.graph.setTileMapping(constant, 0);
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::nonLinearityInPlace(f.graph, popnn::NonLinearityType::RELU, constant, f.prog);
             }),
             Contains("cannot be written in place"));
  ComputeSet cs = f.graph.addComputeSet();
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::nonLinearityInPlace(f.graph, popnn::NonLinearityType::SOFTMAX, f.var(FLOAT, {4}), cs);
             }),
             Contains("softmax"));
}

TEST_CASE("popnn_errors: calcLoss with mismatched shapes and label types", "[popnn]") {
  Fixture f;
  Tensor probs = f.var(FLOAT, {4, 10});
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::calcLoss(f.graph, probs, f.var(UNSIGNED_INT, {3}), f.var(FLOAT, {4}),
                               f.var(FLOAT, {4, 10}), popnn::CROSS_ENTROPY_LOSS, "ce");
             }),
             Contains("popnn::calcLoss(ce)") && Contains("{3}") && Contains("{4,10}"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::calcLoss(f.graph, probs, f.var(FLOAT, {4}), f.var(FLOAT, {4}), f.var(FLOAT, {4, 10}),
                               popnn::SUM_SQUARED_LOSS);
             }),
             Contains("labels"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::calcLoss(f.graph, probs, f.var(INT, {4}), f.var(FLOAT, {4}), f.var(FLOAT, {4, 9}),
                               f.var(UNSIGNED_INT, {1}), popnn::SUM_SQUARED_LOSS);
             }),
             Contains("deltas {4,9}"));
  CHECK_THAT(messageOf<poputil::poplibs_error>(
                 [&] { popnn::calcAccuracy(f.graph, probs, f.var(INT, {4}), f.var(FLOAT, {1})); }),
             Contains("numCorrect"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] { popnn::argMax(f.graph, f.var(FLOAT, {8}), f.prog); }),
             Contains("popnn::argMax") && Contains("{8}"));
}

TEST_CASE("popnn_errors: pooling parameters that do not fit the input", "[popnn]") {
  Fixture f;
  using popnn::PoolingType;
  popnn::pooling::PoolParams params(PoolingType::MAX, {8, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, 3, 2, FLOAT);
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::pooling::pool(f.graph, params, f.var(FLOAT, {2, 4, 8, 8}), f.prog, "p");
             }),
             Contains("popnn::pooling::pool(p)") && Contains("{2,4,8,8}") && Contains("{2,3,8,8}"));
  popnn::pooling::PoolParams tooBig(PoolingType::AVG, {3, 3}, {5, 1}, {1, 1}, {0, 0}, {0, 0}, 1, 1, FLOAT);
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::pooling::pool(f.graph, tooBig, f.var(FLOAT, {1, 1, 3, 3}), f.prog);
             }),
             Contains("larger than the padded input"));
  popnn::pooling::PoolParams threeD(PoolingType::SUM, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0},
                                    1, 1, FLOAT);
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::pooling::pool(f.graph, threeD, f.var(FLOAT, {1, 1, 2, 2, 2}), f.prog);
             }),
             Contains("only 1-D and 2-D"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] {
               popnn::pooling::poolInputGradient(f.graph, params, 1u, f.var(FLOAT, {2, 3, 4, 4}), f.prog);
             }),
             Contains("MAX"));
}
