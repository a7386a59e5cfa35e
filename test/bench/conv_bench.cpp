// Copyright (c) Aspen contributors.
// Benchmark: a ResNet-style 3x3 "same" convolution (default batch 4, 64 -> 64 channels,
// 56 x 56) with poplin::convolution on the 1,472-tile IPUModel, beside a native baseline in
// the same run: im2col into an Eigen matrix and one Eigen product (the usual CPU method).
// Reports both wall times, their ratio, the simulated IPU cycles and the largest difference.
// Usage: conv_bench [batch] [channels] [size] [repeats] [threads]
#include <poplar/CycleCount.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>

#include "BenchSupport.hpp"

#include <Eigen/Dense>
#include <tbb/global_control.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

using namespace poplar;

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using aspen::bench::Clock;
using aspen::bench::median;
using aspen::bench::secondsSince;

// im2col (rows: (ky, kx, ci); columns: (b, y, x)) and one product: out {Co, B*H*W}.
void nativeConv(const std::vector<float> &in, const RowMatrix &w, std::size_t B, std::size_t C, std::size_t S,
                RowMatrix &cols, RowMatrix &out) {
  const long HW = long(S * S);
  for (std::size_t ky = 0; ky < 3; ++ky)
    for (std::size_t kx = 0; kx < 3; ++kx)
      for (std::size_t ci = 0; ci < C; ++ci) {
        float *row = &cols((ky * 3 + kx) * C + ci, 0);
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t y = 0; y < S; ++y) {
            const long iy = long(y + ky) - 1;
            for (std::size_t x = 0; x < S; ++x) {
              const long ix = long(x + kx) - 1;
              row[long(b) * HW + long(y * S + x)] = iy < 0 || ix < 0 || iy >= long(S) || ix >= long(S)
                                                        ? 0.0f
                                                        : in[((b * C + ci) * S + iy) * S + ix];
            }
          }
      }
  out.noalias() = w * cols;
}

} // namespace

int main(int argc, char **argv) {
  const std::size_t B = argc > 1 ? std::size_t(std::atoi(argv[1])) : 4;
  const std::size_t C = argc > 2 ? std::size_t(std::atoi(argv[2])) : 64;
  const std::size_t S = argc > 3 ? std::size_t(std::atoi(argv[3])) : 56;
  const unsigned repeats = argc > 4 ? unsigned(std::atoi(argv[4])) : 3;
  const unsigned cores =
      argc > 5 ? unsigned(std::atoi(argv[5])) : std::max(1u, std::thread::hardware_concurrency());
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, cores);

  IPUModel model("ipu2");
  model.tilesPerIPU = 1472;
  Device device = model.createDevice();
  const auto buildStart = Clock::now();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  poplin::ConvParams params(FLOAT, B, {S, S}, {3, 3}, C, C, 1);
  params.inputTransform.paddingLower = {1, 1};
  params.inputTransform.paddingUpper = {1, 1};
  poplin::PlanningCache cache;
  Tensor in = poplin::createInput(graph, params, "in", {}, &cache);
  Tensor w = poplin::createWeights(graph, params, "w", {}, &cache);
  program::Sequence conv;
  Tensor out = poplin::convolution(graph, in, w, params, false, conv, "conv", {}, &cache);
  program::Sequence prog;
  prog.add(conv);
  Tensor cycles = cycleCount(graph, prog, 0, SyncType::INTERNAL, "cycles");
  graph.createHostWrite("in", in);
  graph.createHostWrite("w", w);
  graph.createHostRead("out", out);
  graph.createHostRead("cycles", cycles);
  const double buildSeconds = secondsSince(buildStart);

  const auto compileStart = Clock::now();
  Engine engine(graph, prog);
  engine.load(device);
  const double compileSeconds = secondsSince(compileStart);

  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> hIn(in.numElements()), hW(w.numElements());
  for (auto &x : hIn)
    x = dist(gen);
  for (auto &x : hW)
    x = dist(gen);
  engine.writeTensor("in", hIn.data(), hIn.data() + hIn.size());
  engine.writeTensor("w", hW.data(), hW.data() + hW.size());
  engine.run(0); // warm-up
  std::vector<double> aspenTimes;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    engine.run(0);
    aspenTimes.push_back(secondsSince(t0));
  }
  std::vector<float> got(out.numElements());
  engine.readTensor("out", got.data(), got.data() + got.size());
  std::uint32_t cycleWords[2];
  engine.readTensor("cycles", cycleWords, cycleWords + 2);
  const std::uint64_t simulatedCycles = (std::uint64_t(cycleWords[1]) << 32) | cycleWords[0];

  // native: weights {Co, (ky, kx, ci)}
  Eigen::setNbThreads(int(cores));
  RowMatrix wm(long(C), long(9 * C));
  for (std::size_t co = 0; co < C; ++co)
    for (std::size_t ci = 0; ci < C; ++ci)
      for (std::size_t k = 0; k < 9; ++k)
        wm(long(co), long(k * C + ci)) = hW[(co * C + ci) * 9 + k];
  RowMatrix cols(long(9 * C), long(B * S * S)), ref(long(C), long(B * S * S));
  nativeConv(hIn, wm, B, C, S, cols, ref); // warm-up
  std::vector<double> nativeTimes;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    nativeConv(hIn, wm, B, C, S, cols, ref);
    nativeTimes.push_back(secondsSince(t0));
  }
  double maxError = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t co = 0; co < C; ++co)
      for (std::size_t i = 0; i < S * S; ++i)
        maxError = std::max<double>(
            maxError, std::fabs(got[(b * C + co) * S * S + i] - ref(long(co), long(b * S * S + i))));

  const double flops = 2.0 * double(B) * double(C) * double(C) * 9.0 * double(S * S);
  const double aspen = median(aspenTimes), native = median(nativeTimes);
  const double clock = device.getTarget().getTileClockFrequency();
  const double ipuSeconds = double(simulatedCycles) / clock;
  std::printf("convolution 3x3, batch %zu, %zu -> %zu channels, %zu x %zu, float, 1472-tile IPUModel, %u "
              "host cores\n",
              B, C, C, S, S, cores);
  std::printf("  graph construction:        %.2f s\n", buildSeconds);
  std::printf("  graph compile + load:      %.2f s\n", compileSeconds);
  std::printf("  Aspen wall time (median):  %.2f ms  (%.1f GFLOP/s on the host)\n", aspen * 1e3,
              flops / aspen / 1e9);
  std::printf("  im2col + Eigen (median):   %.2f ms  (%.1f GFLOP/s, %d threads)\n", native * 1e3,
              flops / native / 1e9, Eigen::nbThreads());
  std::printf("  Aspen / native time:       %.2f\n", aspen / native);
  std::printf("  simulated IPU cycles:      %llu (%.1f us at %.2f GHz, implied %.1f TFLOP/s)\n",
              (unsigned long long)simulatedCycles, ipuSeconds * 1e6, clock / 1e9, flops / ipuSeconds / 1e12);
  std::printf("  max |Aspen - native|:      %.3g\n", maxError);
  return maxError < 1e-2 ? 0 : 1;
}
