// Copyright (c) Aspen contributors.
// The PopLibs functions added for Poplar 3.x programs (popnn/InstanceNorm.hpp, ...) reject wrong
// ranks, types and mismatched shapes with poputil::poplibs_error (poplar::invalid_option for
// options) naming the op and the tensor at fault.
#include <poplin/Convolution.hpp>
#include <poplin/MultiConvolution.hpp>
#include <poplin/codelets.hpp>
#include <popnn/InstanceNorm.hpp>
#include <popops/codelets.hpp>
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
  Tensor var(const Type &t, std::vector<std::size_t> shape, const std::string &name) {
    Tensor v = graph.addVariable(t, shape, name);
    graph.setTileMapping(v, 0);
    return v;
  }
};
} // namespace

TEST_CASE("popnn::in names the op and the tensor at fault", "[popnn][error]") {
  Fixture f;
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::in::instanceNormStatistics(f.graph, f.var(FLOAT, {8}, "acts"), 1e-5f, f.prog, false, false);
      },
      {"popnn::in::instanceNormStatistics", "'acts'", "{N, C, ...}"});
  requireError<poputil::poplibs_error>(
      [&] {
        popnn::in::instanceNormStatistics(f.graph, f.var(INT, {2, 3, 4}, "acts"), 1e-5f, f.prog, false,
                                          false);
      },
      {"popnn::in::instanceNormStatistics", "'acts'", "float or half"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor acts = f.var(FLOAT, {2, 3, 4}, "acts");
        // per-channel statistics ({C}) where instance norm has one per (n, c) ({N * C})
        popnn::in::instanceNormWhiten(f.graph, acts, f.var(FLOAT, {3}, "mean"), f.var(FLOAT, {6}, "isd"),
                                      f.prog);
      },
      {"popnn::in::instanceNormWhiten", "mean", "'mean'", "6 elements"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor acts = f.var(FLOAT, {2, 3, 4}, "acts");
        popnn::in::instanceNormalise(f.graph, acts, f.var(FLOAT, {4}, "gamma"), f.var(FLOAT, {3}, "beta"),
                                     f.var(FLOAT, {6}, "mean"), f.var(FLOAT, {6}, "isd"), f.prog);
      },
      {"popnn::in::instanceNormalise", "gamma", "'gamma'", "3 elements"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor acts = f.var(FLOAT, {2, 3, 4}, "acts");
        popnn::in::instanceNormParamGradients(f.graph, acts, f.var(FLOAT, {2, 3, 5}, "gradsIn"), f.prog);
      },
      {"popnn::in::instanceNormParamGradients", "gradsIn", "'gradsIn'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor acts = f.var(FLOAT, {2, 3, 4}, "acts");
        popnn::in::instanceNormGradients(f.graph, acts, f.var(FLOAT, {2, 3, 4}, "gradsIn"),
                                         f.var(FLOAT, {6}, "mean"), f.var(FLOAT, {2}, "isd"),
                                         f.var(FLOAT, {3}, "gamma"), f.prog);
      },
      {"popnn::in::instanceNormGradients", "inverse standard deviation", "'isd'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor white = f.var(FLOAT, {2, 3, 4}, "whitened");
        popnn::in::instanceNormGradients(f.graph, white, f.var(FLOAT, {2, 3, 4}, "gradsIn"),
                                         f.var(FLOAT, {6}, "isd"), f.var(FLOAT, {2}, "gamma"), f.prog);
      },
      {"popnn::in::instanceNormGradients", "gamma", "'gamma'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor gamma = f.var(FLOAT, {3}, "gamma"), beta = f.var(FLOAT, {3}, "beta");
        popnn::in::instanceNormParamUpdate(f.graph, f.var(FLOAT, {4}, "gammaDelta"),
                                           f.var(FLOAT, {3}, "betaDelta"), 0.1f, gamma, beta, f.prog);
      },
      {"popnn::in::instanceNormParamUpdate", "gammaDelta", "'gammaDelta'"});
  requireError<poputil::poplibs_error>(
      [&] {
        Tensor gamma = f.var(FLOAT, {3}, "gamma"), beta = f.var(FLOAT, {3}, "beta");
        popnn::in::instanceNormParamUpdate(f.graph, f.var(FLOAT, {3}, "gammaDelta"),
                                           f.var(FLOAT, {3}, "betaDelta"), f.var(FLOAT, {2}, "scale"), gamma,
                                           beta, f.prog);
      },
      {"popnn::in::instanceNormParamUpdate", "scale", "'scale'"});
  requireError<poplar::invalid_option>(
      [&] {
        popnn::in::instanceNormStatistics(f.graph, f.var(FLOAT, {2, 4, 3}, "acts"), 1e-5f, f.prog, false,
                                          false, FLOAT, {}, {{"groupNormStridedChannelGrouping", "maybe"}});
      },
      {"popnn::in::instanceNormStatistics", "groupNormStridedChannelGrouping"});
}

TEST_CASE("poplin::fullyConnectedWeightTranspose names the parameter or tensor at fault", "[poplin][error]") {
  Fixture f;
  const poplin::ConvParams bwd(FLOAT, 3, {1}, {1}, 4, 5, 2);
  requireError<poputil::poplibs_error>(
      [&] {
        const poplin::ConvParams twoD(FLOAT, 3, {1, 1}, {1, 1}, 4, 5, 2);
        poplin::fullyConnectedWeightTranspose(f.graph, f.var(FLOAT, {2, 5, 4, 1, 1}, "weights"), twoD, f.prog,
                                              {}, {});
      },
      {"poplin::fullyConnectedWeightTranspose", "params", "2 field dimensions"});
  requireError<poputil::poplibs_error>(
      [&] {
        // already in the backward layout {G, Co, Ci, k} rather than the forward one {G, Ci, Co, k}
        poplin::fullyConnectedWeightTranspose(f.graph, f.var(FLOAT, {2, 5, 4, 1}, "weights"), bwd, f.prog, {},
                                              {});
      },
      {"poplin::fullyConnectedWeightTranspose", "'weights'", "{2,4,5,1}"});
  requireError<poputil::poplibs_error>(
      [&] {
        poplin::fullyConnectedWeightTranspose(f.graph, f.var(HALF, {2, 4, 5, 1}, "weights"), bwd, f.prog, {},
                                              {});
      },
      {"poplin::fullyConnectedWeightTranspose", "'weights'", "element type"});
  requireError<poplar::invalid_option>(
      [&] {
        poplin::fullyConnectedWeightTranspose(f.graph, f.var(FLOAT, {2, 4, 5, 1}, "weights"), bwd, f.prog, {},
                                              {{"pass", "SIDEWAYS"}});
      },
      {"pass"});
}

TEST_CASE("poplin::multiconv names the op, the convolution and the argument at fault", "[poplin][error]") {
  Fixture f;
  const poplin::ConvParams p0(FLOAT, 2, {5}, {3}, 3, 4, 1), p1(FLOAT, 2, {6}, {2}, 2, 3, 1);
  const std::vector<poplin::multiconv::CreateTensorArgs> create{{p0, {}, "a"}, {p1, {}, "b"}};
  requireError<poputil::poplibs_error>(
      [&] { poplin::multiconv::createWeights(f.graph, create, 2); },
      {"poplin::multiconv::createWeights", "weightsIndex 2", "2 convolutions"});
  requireError<poputil::poplibs_error>([&] { poplin::multiconv::createInput(f.graph, create, 5); },
                                       {"poplin::multiconv::createInput", "inputIndex 5"});
  requireError<poputil::poplibs_error>(
      [&] {
        // the second convolution's weights are those of the first (the first is built)
        popops::addCodelets(f.graph);
        poplin::addCodelets(f.graph);
        std::vector<poplin::multiconv::ConvolutionArgs> args{
            {f.var(FLOAT, {2, 3, 5}, "in0"), f.var(FLOAT, {1, 4, 3, 3}, "w0"), p0, {}},
            {f.var(FLOAT, {2, 2, 6}, "in1"), f.var(FLOAT, {1, 4, 3, 3}, "w1"), p1, {}}};
        poplin::multiconv::convolution(f.graph, args, false, f.prog);
      },
      {"poplin::multiconv::convolution", "convolution 1", "'w1'"});
  requireError<poplar::invalid_option>(
      [&] {
        poplin::multiconv::createInput(f.graph, create, 0, {{"planType", "diagonal"}});
      },
      {"poplin::multiconv::createInput", "planType"});
  requireError<poplar::invalid_option>(
      [&] {
        poplin::multiconv::convolution(f.graph, {}, false, f.prog, {}, {{"cycleBackOff", "2"}});
      },
      {"poplin::multiconv::convolution", "cycleBackOff"});
  requireError<poputil::poplibs_error>(
      [&] {
        std::vector<poplin::multiconv::ConvolutionArgs> args{
            {Tensor(), f.var(FLOAT, {1, 3, 4, 3}, "bwd0"), p0, {}}};
        poplin::multiconv::weightsTransposeChansFlipXY(f.graph, args, {}, f.prog, {}, {}, nullptr);
      },
      {"poplin::multiconv::weightsTransposeChansFlipXY", "weightsIn", "1 convolutions"});
}
