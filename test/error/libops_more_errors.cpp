// Copyright (c) Aspen contributors.
// The functions added for issue 10 items 8 and 9 reject wrong shapes, types and parameters with
// poputil::poplibs_error (or poplar::invalid_option for options) naming the tensor or parameter.
#include <poplin/Convolution.hpp>
#include <popnn/BatchNorm.hpp>
#include <popnn/GroupNorm.hpp>
#include <popops/AllTrue.hpp>
#include <popops/CircBuf.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWiseUtil.hpp>
#include <popops/Encoding.hpp>
#include <popops/Gather.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <popops/Scatter.hpp>
#include <poputil/VarStructure.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

using namespace poplar;
using aspen::test::requireError;

namespace {
struct Fixture {
  Graph graph{Target::createIPUTarget(1, 4, "ipu2")};
  program::Sequence prog;
  Tensor var(const Type &t, std::vector<std::size_t> shape, const std::string &name = "v") {
    Tensor v = graph.addVariable(t, shape, name);
    graph.setTileMapping(v, 0);
    return v;
  }
};
} // namespace

TEST_CASE("item-8 functions name the argument at fault", "[popops][error]") {
  Fixture f;
  requireError<poputil::poplibs_error>([&] { popops::allTrue(f.graph, f.var(FLOAT, {3}, "flags"), f.prog); },
                                       {"popops::allTrue", "'flags'", "bool"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::encodeOneHot(f.graph, f.var(UNSIGNED_INT, {3}, "labels"), f.var(FLOAT, {4, 5}, "enc"),
                             f.prog);
      },
      {"popops::encodeOneHot", "'labels'", "'enc'", "rows"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::encodeOneHot(f.graph, f.var(FLOAT, {4}, "labels"), f.var(FLOAT, {4, 5}, "enc"), f.prog);
      },
      {"popops::encodeOneHot", "'labels'", "int"});
  requireError<poputil::poplibs_error>(
      [&] { popops::countedLoop(f.graph, 0, 5, 0, [](const Tensor &) { return program::Sequence(); }); },
      {"popops::countedLoop", "step"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::countedForLoop(f.graph, f.var(INT, {}, "count"), 0, f.var(UNSIGNED_INT, {}, "limit"), 1,
                               program::Sequence());
      },
      {"popops::countedForLoop", "'count'", "'limit'", "same type"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::CircBuf buf(f.graph, FLOAT, 2, {4});
        buf.add(f.var(FLOAT, {5}, "entry"), f.prog);
      },
      {"popops::CircBuf::add", "'entry'"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::CircBuf buf(f.graph, FLOAT, 2, {4});
        buf.prev(2, f.prog);
      },
      {"popops::CircBuf::prev", "out of range"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::gather(f.graph, f.var(FLOAT, {3, 4}, "in"), f.var(UNSIGNED_INT, {2}), 2, f.prog, {});
      },
      {"popops::gather", "axis 2", "'in'"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::multiSlice(f.graph, f.var(FLOAT, {3, 4, 5}, "table"), f.var(UNSIGNED_INT, {2, 3}, "offsets"),
                           {0, 2}, {1, 1}, f.prog, {}, {});
      },
      {"popops::multiSlice", "'offsets'", "{numOffsets, 2}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::groupedMultiSlice(f.graph, f.var(FLOAT, {2, 4, 5}, "table"),
                                  f.var(UNSIGNED_INT, {3, 2, 1}, "offsets"), {0}, {1}, f.prog, {}, {});
      },
      {"popops::groupedMultiSlice", "'offsets'", "{groups, numOffsets, 1}"});
  requireError<poputil::poplibs_error>(
      [&] {
        std::vector<Tensor> outs;
        popops::reduceMany(f.graph,
                           {popops::SingleReduceOp(f.var(FLOAT, {3}), {0}, {popops::Operation::ADD, true})},
                           outs, f.prog);
      },
      {"popops::reduceMany", "reduction 0", "outputs must be given"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::createOutputForElementWiseOp(f.graph, {f.var(FLOAT, {3}, "a"), f.var(FLOAT, {4}, "b")},
                                             FLOAT);
      },
      {"popops::createOutputForElementWiseOp", "'b'", "'a'"});
  requireError<poputil::poplibs_error>(
      [&] {
        poputil::createPartitionableTensor(f.graph, FLOAT, {4, 4}, {2});
      },
      {"poputil::createPartitionableTensor", "{4,4}", "{2}"});
  requireError<poputil::poplibs_error>(
      [&] {
        poputil::iterateTensorPartitions(f.var(FLOAT, {4, 4}, "t"), {2}, [](auto &, auto &) {});
      },
      {"poputil::iterateTensorPartitions", "'t'", "rank 2"});
}

TEST_CASE("scatter names the argument that does not fit", "[popops][error]") {
  Fixture f;
  requireError<poputil::poplibs_error>(
      [&] {
        popops::scatter(f.graph, f.var(FLOAT, {4, 3}, "operand"), f.var(INT, {2}, "idx"),
                        f.var(FLOAT, {3, 3}, "upd"), 1, {1}, {0}, {0}, f.prog);
      },
      {"popops::scatter", "'upd'", "3 scatter positions", "'idx'", "2"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::scatter(f.graph, f.var(FLOAT, {4, 3}, "operand"), f.var(FLOAT, {2}, "idx"),
                        f.var(FLOAT, {2, 3}, "upd"), 1, {1}, {0}, {0}, f.prog);
      },
      {"popops::scatter", "'idx'", "int"});
  requireError<poputil::poplibs_error>(
      [&] {
        popops::scatter(f.graph, f.var(FLOAT, {4, 3}, "operand"), f.var(INT, {2}, "idx"),
                        f.var(FLOAT, {2, 3}, "upd"), 1, {1}, {0}, {5}, f.prog);
      },
      {"popops::scatter", "scatterDimsToOperandDims", "dimension 5", "'operand'"});
}

TEST_CASE("convolution names the parameter or tensor that does not fit", "[poplin][error]") {
  Fixture f;
  poplin::ConvParams p(FLOAT, 2, {6, 6}, {3, 3}, 3, 4, 1);
  requireError<poputil::poplibs_error>(
      [&] {
        poplin::convolution(f.graph, f.var(FLOAT, {2, 5, 6, 6}, "acts"), f.var(FLOAT, {1, 4, 3, 3, 3}, "w"),
                            p, false, f.prog);
      },
      {"poplin::convolution", "the input", "'acts'", "{2,3,6,6}"});
  requireError<poputil::poplibs_error>(
      [&] {
        poplin::convolution(f.graph, f.var(FLOAT, {2, 3, 6, 6}, "acts"), f.var(HALF, {1, 4, 3, 3, 3}, "w"), p,
                            false, f.prog);
      },
      {"poplin::convolution", "the weights", "'w'", "float"});
  poplin::ConvParams bad = p;
  bad.outputTransform.stride = {1, 0};
  requireError<poputil::poplibs_error>([&] { poplin::createInput(f.graph, bad, "in"); },
                                       {"poplin::createInput", "outputTransform.stride", "{1,0}"});
  bad = p;
  bad.kernelShape = {9, 3};
  requireError<poputil::poplibs_error>([&] { bad.validate(); },
                                       {"kernel", "larger than the transformed input"});
  bad = p;
  bad.inputTransform.paddingLower = {1};
  requireError<poputil::poplibs_error>([&] { poplin::createWeights(f.graph, bad, "w"); },
                                       {"inputTransform.paddingLower", "2 entries"});
  requireError<poplar::invalid_option>(
      [&] {
        poplin::convolutionValidateOptions({{"noSuchOption", "1"}});
      },
      {"noSuchOption"});
  requireError<poputil::poplibs_error>(
      [&] {
        poplin::addBias(f.graph, f.var(FLOAT, {2, 4, 3}, "acts"), f.var(FLOAT, {3}, "biases"), f.prog);
      },
      {"poplin::addBias", "'biases'", "'acts'"});
}

TEST_CASE("normalisations name the tensor at fault", "[popnn][error]") {
  Fixture f;
  requireError<poputil::poplibs_error>(
      [&] { popnn::bn::batchNormStatistics(f.graph, f.var(FLOAT, {8}, "acts"), 1e-5f, f.prog, false); },
      {"popnn::bn::batchNormStatistics", "'acts'", "{N, C, ...}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::gn::groupNormStatistics(f.graph, f.var(FLOAT, {2, 6, 3}, "acts"), 1e-5f, f.prog, 4, false);
      },
      {"popnn::gn::groupNormStatistics", "numGroups (4)", "'acts'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor acts = f.var(FLOAT, {2, 4, 3}, "acts");
        popnn::bn::batchNormalise(f.graph, acts, f.var(FLOAT, {3}, "gamma"), f.var(FLOAT, {4}, "beta"),
                                  f.var(FLOAT, {4}, "mean"), f.var(FLOAT, {4}, "isd"), f.prog);
      },
      {"popnn::bn::batchNormalise", "gamma", "'gamma'", "4 elements"});
  requireError<poplar::invalid_option>(
      [&] {
        popnn::gn::groupNormStatistics(f.graph, f.var(FLOAT, {2, 4, 3}, "acts"), 1e-5f, f.prog, 2, false,
                                       false, FLOAT, {}, {{"groupNormStridedChannelGrouping", "maybe"}});
      },
      {"groupNormStridedChannelGrouping"});
}
