// Copyright (c) Aspen contributors.
// Benchmark: poplin::matMul of two 1024 x 1024 float matrices on the full
// 1,472-tile IPUModel against Eigen on the same host cores, in the same run.
// Reports both wall times, their ratio, the simulated IPU cycles and the FLOP
// rate they imply on a 1.33 GHz ipu2.
//
// Usage: matmul_bench [size] [repeats] [host threads (default: every core)]
#include <poplar/CycleCount.hpp>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>

#include <Eigen/Dense>
#include <tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

using namespace poplar;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  const std::size_t n = argc > 1 ? std::size_t(std::atoi(argv[1])) : 1024;
  const unsigned repeats = argc > 2 ? unsigned(std::atoi(argv[2])) : 5;
  const unsigned cores =
      argc > 3 ? unsigned(std::atoi(argv[3])) : std::max(1u, std::thread::hardware_concurrency());
  // Both Aspen (TBB) and Eigen (OpenMP) use the same number of host threads.
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, cores);

  IPUModel model("ipu2");
  model.tilesPerIPU = 1472;
  Device device = model.createDevice();
  const auto buildStart = Clock::now();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  Tensor a = poplin::createMatMulInputLHS(graph, FLOAT, {n, n}, {n, n}, "a");
  Tensor b = poplin::createMatMulInputRHS(graph, FLOAT, {n, n}, {n, n}, "b");
  program::Sequence mm;
  Tensor c = poplin::matMul(graph, a, b, mm, "matMul");
  program::Sequence prog;
  prog.add(mm);
  Tensor cycles = cycleCount(graph, prog, 0, SyncType::INTERNAL, "cycles");
  graph.createHostWrite("a", a);
  graph.createHostWrite("b", b);
  graph.createHostRead("c", c);
  graph.createHostRead("cycles", cycles);
  const double buildSeconds = seconds(buildStart, Clock::now());

  const auto compileStart = Clock::now();
  Engine engine(graph, prog);
  engine.load(device);
  const double compileSeconds = seconds(compileStart, Clock::now());

  const auto size = Eigen::Index(n);
  RowMatrix A = RowMatrix::Random(size, size);
  RowMatrix B = RowMatrix::Random(size, size);
  engine.writeTensor("a", A.data(), A.data() + A.size());
  engine.writeTensor("b", B.data(), B.data() + B.size());

  engine.run(0); // warm-up: pages of tile memory touched, caches filled
  std::vector<double> aspenTimes;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    engine.run(0);
    aspenTimes.push_back(seconds(t0, Clock::now()));
  }
  RowMatrix C(size, size);
  engine.readTensor("c", C.data(), C.data() + C.size());
  std::uint32_t cycleWords[2];
  engine.readTensor("cycles", cycleWords, cycleWords + 2);
  const std::uint64_t simulatedCycles = (std::uint64_t(cycleWords[1]) << 32) | cycleWords[0];

  Eigen::setNbThreads(int(cores));
  RowMatrix reference(size, size);
  reference.noalias() = A * B; // warm-up
  std::vector<double> eigenTimes;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    reference.noalias() = A * B;
    eigenTimes.push_back(seconds(t0, Clock::now()));
  }
  const double maxError = (C - reference).cwiseAbs().maxCoeff();

  const double flops = 2.0 * double(n) * double(n) * double(n);
  const double aspen = median(aspenTimes), eigen = median(eigenTimes);
  const double clock = device.getTarget().getTileClockFrequency();
  const double ipuSeconds = double(simulatedCycles) / clock;
  std::printf("matMul %zu x %zu x %zu float, 1472-tile IPUModel, %u host cores\n", n, n, n, cores);
  std::printf("  graph construction:       %.2f s\n", buildSeconds);
  std::printf("  graph compile + load:     %.2f s\n", compileSeconds);
  std::printf("  Aspen wall time (median): %.2f ms  (%.1f GFLOP/s on the host)\n", aspen * 1e3,
              flops / aspen / 1e9);
  std::printf("  Eigen wall time (median): %.2f ms  (%.1f GFLOP/s, %d threads)\n", eigen * 1e3,
              flops / eigen / 1e9, Eigen::nbThreads());
  std::printf("  Aspen / Eigen time:       %.2f (Aspen reaches %.0f%% of Eigen's speed)\n", aspen / eigen,
              100.0 * eigen / aspen);
  std::printf("  simulated IPU cycles:     %llu (%.1f us at %.2f GHz, implied %.1f TFLOP/s)\n",
              (unsigned long long)simulatedCycles, ipuSeconds * 1e6, clock / 1e9, flops / ipuSeconds / 1e12);
  std::printf("  max |Aspen - Eigen|:      %.3g\n", maxError);
  return maxError < 1e-2 ? 0 : 1;
}
