// Copyright (c) Aspen contributors.
// popnn rejects bad arguments (PopLibs <popnn/NonLinearity.hpp>, <popnn/Loss.hpp>,
// <popnn/Pooling.hpp>) with poputil::poplibs_error naming the operation and shapes.
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>

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

TEST_CASE("popnn_errors: non-linearities of unsupported types or mismatched gradients", "[popnn]") {
  Fixture f;
  aspen::test::requireError<poputil::poplibs_error>([&] { popnn::relu(f.graph, f.var(INT, {4}), f.prog); },
                                                    {"popnn::nonLinearity(RELU", "int"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::nonLinearityInputGradient(f.graph, popnn::NonLinearityType::TANH, f.var(FLOAT, {4}),
                                         f.var(FLOAT, {5}), f.prog);
      },
      {"{4}", "{5}"});
  Tensor constant = f.graph.addConstant(FLOAT, {4}, 1.0f, "c");
  f.graph.setTileMapping(constant, 0);
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popnn::nonLinearityInPlace(f.graph, popnn::NonLinearityType::RELU, constant, f.prog); },
      {"cannot be written in place"});
  ComputeSet cs = f.graph.addComputeSet();
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popnn::nonLinearityInPlace(f.graph, popnn::NonLinearityType::SOFTMAX, f.var(FLOAT, {4}), cs); },
      {"softmax"});
}

TEST_CASE("popnn_errors: calcLoss with mismatched shapes and label types", "[popnn]") {
  Fixture f;
  Tensor probs = f.var(FLOAT, {4, 10});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::calcLoss(f.graph, probs, f.var(UNSIGNED_INT, {3}), f.var(FLOAT, {4}), f.var(FLOAT, {4, 10}),
                        popnn::CROSS_ENTROPY_LOSS, "ce");
      },
      {"popnn::calcLoss(ce)", "{3}", "{4,10}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::calcLoss(f.graph, probs, f.var(FLOAT, {4}), f.var(FLOAT, {4}), f.var(FLOAT, {4, 10}),
                        popnn::SUM_SQUARED_LOSS);
      },
      {"labels"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::calcLoss(f.graph, probs, f.var(INT, {4}), f.var(FLOAT, {4}), f.var(FLOAT, {4, 9}),
                        f.var(UNSIGNED_INT, {1}), popnn::SUM_SQUARED_LOSS);
      },
      {"deltas", "{4,9}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popnn::calcAccuracy(f.graph, probs, f.var(INT, {4}), f.var(FLOAT, {1})); }, {"numCorrect"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { popnn::argMax(f.graph, f.var(FLOAT, {8}), f.prog); }, {"popnn::argMax", "{8}"});
}

TEST_CASE("popnn_errors: pooling parameters that do not fit the input", "[popnn]") {
  Fixture f;
  using popnn::PoolingType;
  popnn::pooling::PoolParams params(PoolingType::MAX, {8, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, 3, 2, FLOAT);
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::pooling::pool(f.graph, params, f.var(FLOAT, {2, 4, 8, 8}), f.prog, "p");
      },
      {"popnn::pooling::pool(p)", "{2,4,8,8}", "{2,3,8,8}"});
  popnn::pooling::PoolParams tooBig(PoolingType::AVG, {3, 3}, {5, 1}, {1, 1}, {0, 0}, {0, 0}, 1, 1, FLOAT);
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::pooling::pool(f.graph, tooBig, f.var(FLOAT, {1, 1, 3, 3}), f.prog);
      },
      {"larger than the padded input"});
  popnn::pooling::PoolParams threeD(PoolingType::SUM, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0},
                                    1, 1, FLOAT);
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::pooling::pool(f.graph, threeD, f.var(FLOAT, {1, 1, 2, 2, 2}), f.prog);
      },
      {"only 1-D and 2-D"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] {
        popnn::pooling::poolInputGradient(f.graph, params, 1u, f.var(FLOAT, {2, 3, 4, 4}), f.prog);
      },
      {"MAX"});
}
