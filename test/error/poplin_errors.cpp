// Copyright (c) Aspen contributors.
// poplin rejects bad operands and options (PopLibs <poplin/MatMul.hpp>) with
// poputil::poplibs_error or poplar::invalid_option, naming the operation, the
// tensors' shapes and the option at fault.
#include <poplin/Convolution.hpp>
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

TEST_CASE("poplin_errors: planConstraints that are malformed or cannot be met name the key",
          "[poplin][planConstraints]") {
  Fixture f; // 4 tiles
  Tensor a = f.var(FLOAT, {6, 8}), b = f.var(FLOAT, {8, 5});
  const auto matMulWith = [&](const std::string &constraints) {
    return [&f, a, b, constraints] {
      poplin::matMul(f.graph, a, b, f.prog, "", {{"planConstraints", constraints}});
    };
  };
  using aspen::test::requireError;
  // As PopLibs validates the option.
  requireError<invalid_option>(matMulWith("{\"0\": "), {"planConstraints", "not valid JSON"});
  requireError<invalid_option>(matMulWith("[1, 2]"), {"planConstraints", "must be an object"});
  requireError<invalid_option>(matMulWith(R"({"0": {"partition": {"rowSplit": 2}}})"),
                               {"planConstraints", "'0.partition.rowSplit'", "not currently handled"});
  requireError<invalid_option>(matMulWith(R"({"0": {"partition": {"batchSplit": -1}}})"),
                               {"planConstraints", "'0.partition.batchSplit'", "unsigned"});
  requireError<invalid_option>(matMulWith(R"({"0": {"partition": {"outChanSplit": {"both": 2}}}})"),
                               {"'0.partition.outChanSplit.both'", "'parallel' or 'serial'"});
  requireError<invalid_option>(matMulWith(R"({"0": {"plan": {}}})"),
                               {"'0.plan'", "'transform' or 'partition'"});
  requireError<invalid_option>(matMulWith(R"({"tiles": 4})"), {"'tiles'", "index"});
  requireError<invalid_option>(matMulWith(R"({"2": {}})"), {"'2'", "level"});
  requireError<invalid_option>(matMulWith(R"({"method": {"type": "FAST"}})"), {"'method.type'", "FAST"});
  requireError<invalid_option>(matMulWith(R"({"0": {"transform": {"swapOperands": 3}}})"),
                               {"'0.transform.swapOperands'", "boolean"});
  // Constraints Aspen's plan cannot meet.
  requireError<invalid_option>(matMulWith(R"({"0": {"partition": {"batchSplit": 7}}})"),
                               {"planConstraints", "'0.partition.batchSplit'", "split of 7", "6 elements"});
  requireError<invalid_option>(matMulWith(R"({"0": {"partition": {"batchSplit": 0}}})"),
                               {"'0.partition.batchSplit'", "split of 0"});
  requireError<invalid_option>(
      matMulWith(R"({"0": {"partition": {"batchSplit": 3, "outChanSplit": {"parallel": 2}}}})"),
      {"planConstraints", "0.partition.batchSplit", "0.partition.outChanSplit.parallel", "6 tiles",
       "target has 4"});
  requireError<invalid_option>(
      matMulWith(R"({"0": {"partition": {"inChanSplit": {"serial": 9}}}})"),
      {"'0.partition.inChanSplit.serial'", "split of 9", "the inner dimension has 8 elements"});
  requireError<invalid_option>(
      matMulWith(R"({"0": {"partition": {"inChanSplit": {"serial": 2}, "outChanSplit": {"serial": 2}}}})"),
      {"0.partition.outChanSplit.serial", "0.partition.inChanSplit.serial", "one dimension at a time"});
  requireError<invalid_option>(
      matMulWith(R"({"0": {"partition": {"inChanSplit": {"serial": 3, "parallel": 4}}}})"),
      {"0.partition.inChanSplit.parallel", "0.partition.inChanSplit.serial", "3 serial passes over 8"});
  requireError<invalid_option>(matMulWith(R"({"0": {"partition": {"fieldSplit": {"0": 2}}}})"),
                               {"'0.partition.fieldSplit.0'", "field has one element"});
  requireError<invalid_option>(
      matMulWith(R"({"0": {"partition": {"outChanSplit": {"serial": 5, "parallel": 2}}}})"),
      {"0.partition.outChanSplit.parallel", "0.partition.outChanSplit.serial", "5 serial passes"});
  requireError<invalid_option>(
      matMulWith(
          R"({"0": {"transform": {"swapOperands": true}, "partition": {"outChanSplit": {"serial": 7}}}})"),
      {"'0.partition.outChanSplit.serial'", "split of 7", "the rows of the result has 6 elements"});
  // Accepted: keys PopLibs knows that name what Aspen's planner does not choose.
  CHECK_NOTHROW(poplin::matmulValidateOptions(
      {{"planConstraints",
        R"({"method": {"type": "AMP"}, "partialChansPerGroup": 8, "1": {"transform": {}}})"}}));

  // A convolution names its own keys.
  poplin::ConvParams p(FLOAT, 2, {4, 4}, {3, 3}, 3, 4, 1);
  const auto convWith = [&](const std::string &constraints) {
    return [&f, p, constraints] {
      poplin::createWeights(f.graph, p, "w", {{"planConstraints", constraints}});
    };
  };
  requireError<invalid_option>(
      convWith(R"({"0": {"partition": {"outChanSplit": {"parallel": 5}}}})"),
      {"poplin::createWeights", "'0.partition.outChanSplit.parallel'", "output channels"});
  requireError<invalid_option>(convWith(R"({"0": {"partition": {"fieldSplit": {"2": 1}}}})"),
                               {"'0.partition.fieldSplit.2'", "2 field dimensions"});
  requireError<invalid_option>(convWith(R"({"0": {"partition": {"kernelSplit": {"0": 4}}}})"),
                               {"'0.partition.kernelSplit.0'", "kernel dimension 0"});
  requireError<invalid_option>(
      convWith(
          R"({"0": {"partition": {"outChanSplit": {"parallel": 2}, "batchSplit": 2, "fieldSplit": {"1": 2}}}})"),
      {"poplin::createWeights",
       "0.partition.outChanSplit.parallel x 0.partition.batchSplit x 0.partition.fieldSplit.1", "8 tiles",
       "target has 4"});
  // swapOperands: the keys name the swapped convolution (batch and output channels exchanged, the
  // input field its kernel).
  requireError<invalid_option>(
      convWith(R"({"0": {"transform": {"swapOperands": true}, "partition": {"batchSplit": 5}}})"),
      {"'0.partition.batchSplit'", "split of 5", "the output channels has 4"});
  requireError<invalid_option>(
      convWith(
          R"({"0": {"transform": {"swapOperands": true}, "partition": {"outChanSplit": {"serial": 3}}}})"),
      {"'0.partition.outChanSplit.serial'", "split of 3", "the batch"});
  requireError<invalid_option>(
      convWith(R"({"0": {"transform": {"swapOperands": true}, "partition": {"kernelSplit": {"0": 5}}}})"),
      {"'0.partition.kernelSplit.0'", "split of 5", "input field dimension 0 has 4"});
  CHECK_NOTHROW(
      convWith(R"({"0": {"transform": {"swapOperands": true}, "partition": {"kernelSplit": {"0": 4}}}})")());
  requireError<invalid_option>(convWith(R"({"0": {"partition": {"outChanSplit": {"serial": 5}}}})"),
                               {"'0.partition.outChanSplit.serial'", "split of 5", "output channels"});
  requireError<invalid_option>(convWith(R"({"0": {"partition": {"inChanSplit": {"serial": 4}}}})"),
                               {"'0.partition.inChanSplit.serial'", "split of 4", "input channels"});
  requireError<invalid_option>(
      convWith(R"({"0": {"partition": {"inChanSplit": {"serial": 2}, "outChanSplit": {"serial": 2}}}})"),
      {"poplin::createWeights", "0.partition.inChanSplit.serial, 0.partition.outChanSplit.serial",
       "one dimension at a time"});
  requireError<invalid_option>(
      convWith(R"({"0": {"partition": {"outChanSplit": {"serial": 4, "parallel": 2}}}})"),
      {"0.partition.outChanSplit.parallel, 0.partition.outChanSplit.serial",
       "4 serial passes over 4 output"});
  // planConstraintsOutputFilename naming a file that cannot be written: the option and the file.
  aspen::test::requireError<invalid_option>(
      [&f, p] {
        poplar::program::Sequence prog;
        poplin::ConvParams q = p;
        Tensor in = poplin::createInput(f.graph, q, "in");
        Tensor w = poplin::createWeights(f.graph, q, "w");
        poplin::convolution(
            f.graph, in, w, q, false, prog, "conv",
            {{"pass", "TRAINING_FWD"}, {"planConstraintsOutputFilename", "/nonexistent-aspen-dir/plan"}});
      },
      {"poplin::convolution", "planConstraintsOutputFilename", "/nonexistent-aspen-dir/plan_FWD.json"});
  CHECK_NOTHROW(convWith(R"({"0": {"partition": {"outChanSplit": {"serial": 2}}}})")());
  CHECK_NOTHROW(convWith(R"({"0": {"partition": {"inChanSplit": {"serial": 3}}}})")());
  requireError<invalid_option>(
      [] {
        poplin::convolutionValidateOptions({{"planConstraints", R"({"0": {"partition": {"x": 1}}})"}});
      },
      {"planConstraints", "'0.partition.x'"});
}
