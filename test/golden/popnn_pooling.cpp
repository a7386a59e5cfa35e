// Copyright (c) Aspen contributors.
// Golden tests of popnn pooling (PopLibs <popnn/Pooling.hpp>): MAX, AVG and SUM
// pooling of {batch, channels, height, width} tensors with strides, padding and
// truncation, and their input gradients, against host loops written from the
// PopLibs definitions (padding never contributes; AVG divides by the number of
// non-padding inputs; the MAX gradient goes to every input equal to the maximum).
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using aspen::test::TestTarget;
using popnn::PoolingType;
using popnn::pooling::PoolParams;

namespace {

struct Field {
  std::size_t planes, inH, inW, outH, outW;
};

Field fieldOf(const PoolParams &p) {
  const auto out = p.getOutputFieldShape();
  return {p.batchSize * p.numChannels, p.inputFieldShape[0], p.inputFieldShape[1], out[0], out[1]};
}

/// Calls f(inputIndexInPlane) for the non-padding inputs of window (oy, ox).
template <class F> void forWindow(const PoolParams &p, std::size_t oy, std::size_t ox, F f) {
  for (std::size_t ky = 0; ky < p.kernelShape[0]; ++ky)
    for (std::size_t kx = 0; kx < p.kernelShape[1]; ++kx) {
      const long y = long(oy * p.stride[0] + ky) - p.inputTruncationOrPaddingLower[0];
      const long x = long(ox * p.stride[1] + kx) - p.inputTruncationOrPaddingLower[1];
      if (y >= 0 && x >= 0 && y < long(p.inputFieldShape[0]) && x < long(p.inputFieldShape[1]))
        f(std::size_t(y) * p.inputFieldShape[1] + std::size_t(x));
    }
}

std::vector<double> poolReference(const PoolParams &p, const std::vector<float> &in) {
  const Field f = fieldOf(p);
  std::vector<double> out(f.planes * f.outH * f.outW);
  for (std::size_t pl = 0; pl < f.planes; ++pl)
    for (std::size_t oy = 0; oy < f.outH; ++oy)
      for (std::size_t ox = 0; ox < f.outW; ++ox) {
        double acc = p.poolingType == PoolingType::MAX ? -std::numeric_limits<double>::infinity() : 0.0;
        unsigned count = 0;
        forWindow(p, oy, ox, [&](std::size_t i) {
          const double v = in[pl * f.inH * f.inW + i];
          acc = p.poolingType == PoolingType::MAX ? std::max(acc, v) : acc + v;
          ++count;
        });
        if (p.poolingType == PoolingType::AVG)
          acc /= count;
        out[(pl * f.outH + oy) * f.outW + ox] = acc;
      }
  return out;
}

std::vector<double> gradReference(const PoolParams &p, const std::vector<float> &in,
                                  const std::vector<double> &pooled, const std::vector<float> &grad,
                                  bool scaled) {
  const Field f = fieldOf(p);
  std::vector<double> result(in.size(), 0.0);
  for (std::size_t pl = 0; pl < f.planes; ++pl)
    for (std::size_t oy = 0; oy < f.outH; ++oy)
      for (std::size_t ox = 0; ox < f.outW; ++ox) {
        const std::size_t o = (pl * f.outH + oy) * f.outW + ox;
        std::vector<std::size_t> targets;
        forWindow(p, oy, ox, [&](std::size_t i) {
          if (p.poolingType != PoolingType::MAX || in[pl * f.inH * f.inW + i] == pooled[o])
            targets.push_back(i);
        });
        double g = grad[o];
        if (p.poolingType == PoolingType::AVG || (p.poolingType == PoolingType::MAX && scaled))
          g /= double(targets.size());
        for (std::size_t i : targets)
          result[pl * f.inH * f.inW + i] += g;
      }
  return result;
}

std::vector<float> randomValues(std::size_t n, unsigned seed, const Type &type, const Target &target,
                                bool withTies) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (auto &x : v)
    x = aspen::test::roundTo(type, target, withTies ? std::round(dist(gen) * 2.0f) / 2.0f : dist(gen));
  return v;
}

} // namespace

TEST_CASE("popnn_pooling: pool and poolInputGradient match host loops", "[popnn]") {
  // {type, kernel, stride, padding lower, padding upper}: plain, strided with
  // padding, and truncated (negative padding).
  struct Config {
    PoolingType type;
    std::vector<std::size_t> kernel;
    std::vector<unsigned> stride;
    std::vector<int> lower, upper;
  };
  const std::vector<Config> configs = {
      {PoolingType::MAX, {2, 2}, {2, 2}, {0, 0}, {0, 0}},
      {PoolingType::MAX, {3, 3}, {2, 1}, {1, 1}, {1, 0}},
      {PoolingType::AVG, {3, 2}, {1, 2}, {1, 0}, {1, 1}},
      {PoolingType::SUM, {2, 3}, {2, 2}, {0, 1}, {-1, 1}},
  };
  const std::size_t batch = 2, channels = 3, height = 9, width = 8;
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      popnn::addCodelets(graph);
      const Target &target = graph.getTarget();
      program::Sequence prog;
      std::vector<PoolParams> params;
      for (const Type &type : {FLOAT, HALF}) {
        for (std::size_t c = 0; c < configs.size(); ++c) {
          const Config &cfg = configs[c];
          params.emplace_back(cfg.type, std::vector<std::size_t>{height, width}, cfg.kernel, cfg.stride,
                              cfg.lower, cfg.upper, channels, batch, type);
          const PoolParams &p = params.back();
          const std::string id = std::to_string(params.size() - 1);
          Tensor in = graph.addVariable(type, {batch, channels, height, width}, "in" + id);
          poputil::mapTensorLinearly(graph, in);
          Tensor out = popnn::pooling::pool(graph, p, in, prog, "pool" + id);
          const auto outField = p.getOutputFieldShape();
          REQUIRE(out.shape() == std::vector<std::size_t>{batch, channels, outField[0], outField[1]});
          Tensor grad = graph.addVariable(type, out.shape(), "grad" + id);
          poputil::mapTensorLinearly(graph, grad);
          Tensor inGrad =
              cfg.type == PoolingType::MAX
                  ? popnn::pooling::poolInputGradient(graph, p, in, out, grad, c == 1, prog, "poolGrad" + id)
                  : popnn::pooling::poolInputGradient(graph, p, 1u, grad, prog, "poolGrad" + id);
          graph.createHostWrite("in" + id, in);
          graph.createHostWrite("grad" + id, grad);
          graph.createHostRead("out" + id, out);
          graph.createHostRead("inGrad" + id, inGrad);
        }
      }
      auto engine = dev.createEngine(graph, {prog});
      std::vector<std::vector<float>> ins, grads;
      for (std::size_t i = 0; i < params.size(); ++i) {
        const PoolParams &p = params[i];
        const Field f = fieldOf(p);
        // Values on a 0.5 grid make equal maxima (ties) common.
        ins.push_back(randomValues(f.planes * f.inH * f.inW, 7 + unsigned(i), p.dType, target, true));
        grads.push_back(randomValues(f.planes * f.outH * f.outW, 70 + unsigned(i), p.dType, target, false));
        aspen::test::writeFloats(*engine, "in" + std::to_string(i), p.dType, target, ins.back());
        aspen::test::writeFloats(*engine, "grad" + std::to_string(i), p.dType, target, grads.back());
      }
      engine->run(0);
      for (std::size_t i = 0; i < params.size(); ++i) {
        const PoolParams &p = params[i];
        const Field f = fieldOf(p);
        const std::string id = std::to_string(i);
        const double tolerance = p.dType == HALF ? 1e-3 : 1e-6;
        const auto expected = poolReference(p, ins[i]);
        requireClose(aspen::test::readFloats(*engine, "out" + id, p.dType, target, expected.size()), expected,
                     tolerance, tolerance,
                     std::string("pool ") + popnn::pooling::asString(p.poolingType) + " " + id);
        const auto expectedGrad = gradReference(p, ins[i], expected, grads[i], i % configs.size() == 1);
        requireClose(
            aspen::test::readFloats(*engine, "inGrad" + id, p.dType, target, f.planes * f.inH * f.inW),
            expectedGrad, tolerance, tolerance,
            std::string("gradient ") + popnn::pooling::asString(p.poolingType) + " " + id);
      }
    }
  }
}

TEST_CASE("popnn_pooling: output shapes and flop counts follow the PoolParams", "[popnn]") {
  PoolParams p(PoolingType::AVG, {10, 7}, {3, 2}, {2, 2}, {1, 0}, {0, -1}, 4, 2, FLOAT);
  // (10 + 1 + 0 - 3) / 2 + 1 = 5 rows, (7 + 0 - 1 - 2) / 2 + 1 = 3 columns.
  CHECK(p.getOutputFieldShape() == std::vector<std::size_t>{5, 3});
  CHECK(popnn::pooling::getFwdFlops(p) == 2u * 4u * 5u * 3u * 6u);
  CHECK(std::string(popnn::pooling::asString(PoolingType::SUM)) == "SUM");
}
