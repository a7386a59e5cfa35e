// Copyright (c) Aspen contributors.
// A client of PopLibs 3.x's poplin/MultiConvolution.hpp written as a Poplar user writes one: two
// different convolutions (a padded 2-d one and a grouped, strided 1-d one) given at once to
// multiconv::createInput/createWeights, convolution, calculateWeightDeltas, both forms of
// convolutionWeightUpdate and weightsTransposeChansFlipXY, run on an IPUModel through an Engine
// and checked against host loops.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MultiConvolution.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>

#include "OpsTestUtil.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

// A convolution with a field of one or two dimensions, seen as two ({1, W} for one).
struct HostConv {
  std::size_t G, B, Ci, Co, H, W, KH, KW, padY, padX, strideY, strideX;

  std::size_t outH() const { return (H + 2 * padY - KH) / strideY + 1; }
  std::size_t outW() const { return (W + 2 * padX - KW) / strideX + 1; }
  double in(const std::vector<float> &x, std::size_t b, std::size_t c, long y, long xx) const {
    if (y < 0 || xx < 0 || y >= long(H) || xx >= long(W))
      return 0.0;
    return x[((b * G * Ci + c) * H + std::size_t(y)) * W + std::size_t(xx)];
  }
  double w(const std::vector<float> &k, std::size_t g, std::size_t co, std::size_t ci, std::size_t ky,
           std::size_t kx) const {
    return k[(((g * Co + co) * Ci + ci) * KH + ky) * KW + kx];
  }
  long iy(std::size_t oy, std::size_t ky) const { return long(oy * strideY + ky) - long(padY); }
  long ix(std::size_t ox, std::size_t kx) const { return long(ox * strideX + kx) - long(padX); }

  std::vector<double> forward(const std::vector<float> &x, const std::vector<float> &k) const {
    std::vector<double> out(B * G * Co * outH() * outW());
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t g = 0; g < G; ++g)
        for (std::size_t co = 0; co < Co; ++co)
          for (std::size_t oy = 0; oy < outH(); ++oy)
            for (std::size_t ox = 0; ox < outW(); ++ox) {
              double s = 0;
              for (std::size_t ci = 0; ci < Ci; ++ci)
                for (std::size_t ky = 0; ky < KH; ++ky)
                  for (std::size_t kx = 0; kx < KW; ++kx)
                    s += in(x, b, g * Ci + ci, iy(oy, ky), ix(ox, kx)) * w(k, g, co, ci, ky, kx);
              out[((b * G * Co + g * Co + co) * outH() + oy) * outW() + ox] = s;
            }
    return out;
  }
  // dW[g][co][ci][ky][kx] = sum over b, oy, ox of zDeltas[b][g*Co+co][oy][ox] * in(...).
  std::vector<double> weightDeltas(const std::vector<float> &x, const std::vector<float> &dz) const {
    std::vector<double> dw(G * Co * Ci * KH * KW);
    for (std::size_t g = 0; g < G; ++g)
      for (std::size_t co = 0; co < Co; ++co)
        for (std::size_t ci = 0; ci < Ci; ++ci)
          for (std::size_t ky = 0; ky < KH; ++ky)
            for (std::size_t kx = 0; kx < KW; ++kx) {
              double s = 0;
              for (std::size_t b = 0; b < B; ++b)
                for (std::size_t oy = 0; oy < outH(); ++oy)
                  for (std::size_t ox = 0; ox < outW(); ++ox)
                    s += double(dz[((b * G * Co + g * Co + co) * outH() + oy) * outW() + ox]) *
                         in(x, b, g * Ci + ci, iy(oy, ky), ix(ox, kx));
              dw[(((g * Co + co) * Ci + ci) * KH + ky) * KW + kx] = s;
            }
    return dw;
  }
};

using aspen::test::sinePattern;

} // namespace

TEST_CASE("poplin::multiconv: two convolutions at once, forward and training passes", "[compat][poplin]") {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);

  // conv 0: 2-d, 3 -> 4 channels, 3x3 kernel, padding 1.
  poplin::ConvParams p0(FLOAT, 2, {5, 6}, {3, 3}, 3, 4, 1);
  p0.inputTransform.paddingLower = {1, 1};
  p0.inputTransform.paddingUpper = {1, 1};
  const HostConv h0{1, 2, 3, 4, 5, 6, 3, 3, 1, 1, 1, 1};
  // conv 1: 1-d, 2 groups of 2 -> 3 channels, kernel 2, stride 2.
  poplin::ConvParams p1(FLOAT, 2, {7}, {2}, 2, 3, 2);
  p1.outputTransform.stride = {2};
  const HostConv h1{2, 2, 2, 3, 1, 7, 1, 2, 0, 0, 1, 2};
  const HostConv host[] = {h0, h1};

  const OptionFlags multiOptions{
      {"planType", "parallel"}, {"perConvReservedTiles", "2"}, {"cycleBackOff", "0.2"}};
  const std::vector<poplin::multiconv::CreateTensorArgs> create{{p0, {{"partialsType", "float"}}, "in0"},
                                                                {p1, {}, "in1"}};
  std::vector<poplin::multiconv::CreateTensorArgs> createW = create;
  createW[0].name = "w0";
  createW[1].name = "w1";
  poplin::PlanningCache cache;
  std::vector<Tensor> ins, ws, wsA, wsB;
  for (unsigned i = 0; i < 2; ++i) {
    ins.push_back(poplin::multiconv::createInput(graph, create, i, multiOptions, &cache));
    ws.push_back(poplin::multiconv::createWeights(graph, createW, i, multiOptions, &cache));
    wsA.push_back(poplin::multiconv::createWeights(graph, createW, i, multiOptions, &cache));
    wsB.push_back(poplin::multiconv::createWeights(graph, createW, i, multiOptions, &cache));
  }
  REQUIRE(ins[0].shape() == std::vector<std::size_t>{2, 3, 5, 6});
  REQUIRE(ws[1].shape() == std::vector<std::size_t>{2, 3, 2, 2});

  Sequence prog;
  std::vector<poplin::multiconv::ConvolutionArgs> convs{{ins[0], ws[0], p0, create[0].options},
                                                        {ins[1], ws[1], p1, {}}};
  const auto outs = poplin::multiconv::convolution(graph, convs, false, prog, "multi", multiOptions, &cache);
  REQUIRE(outs.size() == 2);
  REQUIRE(outs[0].shape() == std::vector<std::size_t>{2, 4, h0.outH(), h0.outW()});
  REQUIRE(outs[1].shape() == std::vector<std::size_t>{2, 6, h1.outW()});

  std::vector<Tensor> zDeltas;
  for (unsigned i = 0; i < 2; ++i) {
    zDeltas.push_back(graph.clone(outs[i], "zDeltas" + std::to_string(i)));
    graph.createHostWrite("zDeltas" + std::to_string(i), zDeltas[i]);
  }
  const auto deltas = poplin::multiconv::calculateWeightDeltas(
      graph, {{zDeltas[0], ins[0], p0, {}}, {zDeltas[1], ins[1], p1, {}}}, prog, "wd", multiOptions, &cache);
  REQUIRE(deltas.size() == 2);
  Tensor scale = graph.addConstant(FLOAT, {}, -0.25f, "scale");
  graph.setTileMapping(scale, 0);
  poplin::multiconv::convolutionWeightUpdate(
      graph, {{zDeltas[0], wsA[0], ins[0], scale, p0, {}}, {zDeltas[1], wsA[1], ins[1], scale, p1, {}}}, prog,
      "wuT", multiOptions, &cache);
  poplin::multiconv::convolutionWeightUpdate(
      graph, {{zDeltas[0], wsB[0], ins[0], 0.5f, p0, {}}, {zDeltas[1], wsB[1], ins[1], 0.5f, p1, {}}}, prog,
      "wu", multiOptions, &cache);

  // Backward weights: the forward weights with channels swapped and the kernel flipped.
  std::vector<poplin::multiconv::ConvolutionArgs> bwd{
      {Tensor(), graph.addVariable(FLOAT, {1, 3, 4, 3, 3}, "bwd0"), p0, {}},
      {Tensor(), graph.addVariable(FLOAT, {2, 2, 3, 2}, "bwd1"), p1, {}}};
  for (auto &a : bwd)
    graph.setTileMapping(a.weights, 1);
  poplin::multiconv::weightsTransposeChansFlipXY(graph, bwd, ws, prog, multiOptions, "flip", &cache);

  for (unsigned i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    graph.createHostWrite("in" + n, ins[i]);
    for (const auto &t :
         {std::make_pair("w", ws[i]), std::make_pair("wA", wsA[i]), std::make_pair("wB", wsB[i])})
      graph.createHostWrite(t.first + n, t.second);
    graph.createHostRead("out" + n, outs[i]);
    graph.createHostRead("dw" + n, deltas[i]);
    graph.createHostRead("wA" + n, wsA[i]);
    graph.createHostRead("wB" + n, wsB[i]);
    graph.createHostRead("bwd" + n, bwd[i].weights);
  }

  std::vector<std::vector<float>> hIn, hW, hDz;
  for (unsigned i = 0; i < 2; ++i) {
    hIn.push_back(sinePattern(ins[i].numElements(), 0.31f + 0.1f * float(i), 0.2f));
    hW.push_back(sinePattern(ws[i].numElements(), 0.71f, 0.4f * float(i)));
    hDz.push_back(sinePattern(outs[i].numElements(), 0.23f, 1.0f + float(i)));
  }
  Engine engine(graph, prog);
  engine.load(device);
  for (unsigned i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    engine.writeTensor("in" + n, hIn[i].data(), hIn[i].data() + hIn[i].size());
    for (const char *w : {"w", "wA", "wB"})
      engine.writeTensor(w + n, hW[i].data(), hW[i].data() + hW[i].size());
    engine.writeTensor("zDeltas" + n, hDz[i].data(), hDz[i].data() + hDz[i].size());
  }
  engine.run(0);

  for (unsigned i = 0; i < 2; ++i) {
    const std::string n = std::to_string(i);
    const HostConv &h = host[i];
    INFO("convolution " << i);
    const auto want = h.forward(hIn[i], hW[i]);
    std::vector<float> got(want.size());
    engine.readTensor("out" + n, got.data(), got.data() + got.size());
    for (std::size_t j = 0; j < want.size(); ++j)
      CHECK(std::fabs(got[j] - want[j]) < 1e-4);

    const auto dw = h.weightDeltas(hIn[i], hDz[i]);
    std::vector<float> gdw(dw.size()), gA(dw.size()), gB(dw.size()), gBwd(dw.size());
    engine.readTensor("dw" + n, gdw.data(), gdw.data() + gdw.size());
    engine.readTensor("wA" + n, gA.data(), gA.data() + gA.size());
    engine.readTensor("wB" + n, gB.data(), gB.data() + gB.size());
    engine.readTensor("bwd" + n, gBwd.data(), gBwd.data() + gBwd.size());
    for (std::size_t j = 0; j < dw.size(); ++j) {
      CHECK(std::fabs(gdw[j] - dw[j]) < 1e-4);
      CHECK(std::fabs(gA[j] - (hW[i][j] - 0.25 * dw[j])) < 1e-4);
      CHECK(std::fabs(gB[j] - (hW[i][j] + 0.5 * dw[j])) < 1e-4);
    }
    // bwd[g][ci][co][ky][kx] == w[g][co][ci][KH-1-ky][KW-1-kx]
    for (std::size_t g = 0; g < h.G; ++g)
      for (std::size_t co = 0; co < h.Co; ++co)
        for (std::size_t ci = 0; ci < h.Ci; ++ci)
          for (std::size_t ky = 0; ky < h.KH; ++ky)
            for (std::size_t kx = 0; kx < h.KW; ++kx)
              CHECK(gBwd[(((g * h.Ci + ci) * h.Co + co) * h.KH + ky) * h.KW + kx] ==
                    float(h.w(hW[i], g, co, ci, h.KH - 1 - ky, h.KW - 1 - kx)));
  }
}
