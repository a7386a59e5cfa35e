// Copyright (c) Aspen contributors.
// Benchmark: poplin::matMul of two 1024 x 1024 float matrices on the full
// 1,472-tile IPUModel against Eigen on the same host cores, in the same run.
// Reports both wall times, their ratio, the simulated IPU cycles and the FLOP
// rate they imply on a 1.33 GHz ipu2; then the same product in half (half
// inputs and output, float partials) against the float one.
//
// Eigen is built with the project's flags (-O2 -mavx2 -mfma). poplin's block
// product picks its kernel when it first runs, from cpuid: AVX-512 on a host that
// has it, else AVX2 (ASPEN_CODELET_ISA=avx2 caps it; docs/matmul.md). So that
// Aspen is also compared with Eigen at its fastest on the host, a host with AVX-512
// also times Eigen built for AVX-512 (-mavx512f -mavx512dq -mavx512vl -mavx512bw,
// matmul_bench_eigen512.cpp).
//
// On an AVX-512 host the bench then runs itself again with ASPEN_CODELET_ISA=avx2
// (the kernel is fixed once per process) and prints Aspen's float time with its AVX2
// kernel against the AVX2 Eigen: what a host without AVX-512 gets. With
// ASPEN_BENCH_ASPEN_ONLY=1 it times only Aspen's float product (for that run, or perf).
//
// Usage: matmul_bench [size] [repeats] [host threads (default: every core)]
#include <poplar/CycleCount.hpp>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>

#include "BenchSupport.hpp"

#include <Eigen/Dense>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace poplar;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using aspen::bench::Clock;
using aspen::bench::median;
using aspen::bench::secondsSince;

#ifdef ASPEN_BENCH_EIGEN512
// matmul_bench_eigen512.cpp: the median time of `repeats` Eigen products C = A * B
// (row-major n x n) compiled for AVX-512, in a library of its own (hidden symbols).
extern "C" double aspenBenchEigen512(const float *a, const float *b, float *c, long n, unsigned repeats,
                                     int threads);
#endif

namespace {

/// The vector instructions this file (and so its Eigen product) is compiled for.
#if defined(__AVX512F__)
const char *const eigenIsa = "AVX-512";
#elif defined(__AVX2__) && defined(__FMA__)
const char *const eigenIsa = "AVX2 + FMA: -mavx2 -mfma";
#elif defined(__AVX__)
const char *const eigenIsa = "AVX";
#else
const char *const eigenIsa = "the default vector instructions";
#endif

/// The kernel poplin's block product runs on this host (as vertices/poplin/MatMul.cpp picks it).
const char *codeletKernel() {
  const char *cap = std::getenv("ASPEN_CODELET_ISA");
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl");
#else
  const bool avx512 = false;
#endif
  if (cap && std::strcmp(cap, "generic") == 0)
    return "plain loop (ASPEN_CODELET_ISA=generic)";
  if (cap && std::strcmp(cap, "avx2") == 0)
    return "AVX2 (ASPEN_CODELET_ISA=avx2)";
  return avx512 ? "AVX-512 (tiles of 6 rows x 64 columns, 5 x 80 for blocks 65-80 wide)"
                : "AVX2 (tiles of 6 rows x 16 columns)";
}

struct AspenRun {
  double buildSeconds = 0, compileSeconds = 0, runSeconds = 0, clock = 0;
  std::uint64_t cycles = 0;
  RowMatrix c;
};

/// matMul of `a` by `b` (given as floats) in `type` on the 1,472-tile model.
AspenRun runAspen(const Type &type, const RowMatrix &a, const RowMatrix &b, unsigned repeats) {
  const std::size_t n = std::size_t(a.rows());
  AspenRun result;
  IPUModel model("ipu2");
  model.tilesPerIPU = 1472;
  Device device = model.createDevice();
  const auto buildStart = Clock::now();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  Tensor ta = poplin::createMatMulInputLHS(graph, type, {n, n}, {n, n}, "a");
  Tensor tb = poplin::createMatMulInputRHS(graph, type, {n, n}, {n, n}, "b");
  program::Sequence mm;
  Tensor tc = poplin::matMul(graph, ta, tb, mm, "matMul");
  program::Sequence prog;
  prog.add(mm);
  Tensor cycles = cycleCount(graph, prog, 0, SyncType::INTERNAL, "cycles");
  graph.createHostWrite("a", ta);
  graph.createHostWrite("b", tb);
  graph.createHostRead("c", tc);
  graph.createHostRead("cycles", cycles);
  result.buildSeconds = secondsSince(buildStart);

  const auto compileStart = Clock::now();
  Engine engine(graph, prog);
  engine.load(device);
  result.compileSeconds = secondsSince(compileStart);

  const Target &target = graph.getTarget();
  result.clock = target.getTileClockFrequency();
  auto write = [&](const char *handle, const RowMatrix &m) {
    if (type == HALF) {
      std::vector<std::uint16_t> bits(std::size_t(m.size()));
      copyFloatToDeviceHalf(target, m.data(), bits.data(), bits.size());
      engine.writeTensor(handle, bits.data(), bits.data() + bits.size());
    } else {
      engine.writeTensor(handle, m.data(), m.data() + m.size());
    }
  };
  write("a", a);
  write("b", b);

  engine.run(0); // warm-up: pages of tile memory touched, caches filled
  std::vector<double> times;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    engine.run(0);
    times.push_back(secondsSince(t0));
  }
  result.runSeconds = median(times);
  result.c.resize(a.rows(), b.cols());
  if (type == HALF) {
    std::vector<std::uint16_t> bits(std::size_t(result.c.size()));
    engine.readTensor("c", bits.data(), bits.data() + bits.size());
    copyDeviceHalfToFloat(target, bits.data(), result.c.data(), bits.size());
  } else {
    engine.readTensor("c", result.c.data(), result.c.data() + result.c.size());
  }
  std::uint32_t cycleWords[2];
  engine.readTensor("cycles", cycleWords, cycleWords + 2);
  result.cycles = (std::uint64_t(cycleWords[1]) << 32) | cycleWords[0];
  return result;
}

} // namespace

int main(int argc, char **argv) {
  const std::size_t n = argc > 1 ? std::size_t(std::atoi(argv[1])) : 1024;
  const unsigned repeats = argc > 2 ? unsigned(std::atoi(argv[2])) : 5;
  const unsigned cores =
      argc > 3 ? unsigned(std::atoi(argv[3])) : std::max(1u, std::thread::hardware_concurrency());
  // Both Aspen (TBB) and Eigen (OpenMP) use the same number of host threads.
  tbb::global_control threads(tbb::global_control::max_allowed_parallelism, cores);

  const auto size = Eigen::Index(n);
  RowMatrix A = RowMatrix::Random(size, size);
  RowMatrix B = RowMatrix::Random(size, size);
  const AspenRun aspen = runAspen(FLOAT, A, B, repeats);
  if (const char *only = std::getenv("ASPEN_BENCH_ASPEN_ONLY"); only && std::strcmp(only, "1") == 0) {
    std::printf("aspen-only float: %.3f ms, %s\n", aspen.runSeconds * 1e3, codeletKernel());
    return 0;
  }

  Eigen::setNbThreads(int(cores));
  RowMatrix reference(size, size);
  reference.noalias() = A * B; // warm-up
  std::vector<double> eigenTimes;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    reference.noalias() = A * B;
    eigenTimes.push_back(secondsSince(t0));
  }
  const double maxError = (aspen.c - reference).cwiseAbs().maxCoeff();

  // Half: inputs rounded to half, so the reference sees the device's inputs.
  auto toHalfValues = [](const RowMatrix &m) {
    RowMatrix h(m.rows(), m.cols());
    for (Eigen::Index i = 0; i < m.size(); ++i)
      h.data()[i] = float(Eigen::half(m.data()[i]));
    return h;
  };
  const RowMatrix AHalf = toHalfValues(A), BHalf = toHalfValues(B);
  const AspenRun aspenHalf = runAspen(HALF, AHalf, BHalf, repeats);
  const RowMatrix referenceHalf = AHalf * BHalf;
  // Relative to the largest result: the half output keeps 11 significant bits.
  const double halfError =
      (aspenHalf.c - referenceHalf).cwiseAbs().maxCoeff() / referenceHalf.cwiseAbs().maxCoeff();

  const double flops = 2.0 * double(n) * double(n) * double(n);
  const double aspenSeconds = aspen.runSeconds, eigen = median(eigenTimes);
  const double clock = aspen.clock;
  const double ipuSeconds = double(aspen.cycles) / clock;
  std::printf("matMul %zu x %zu x %zu float, 1472-tile IPUModel, %u host cores\n", n, n, n, cores);
  std::printf("  graph construction:       %.2f s\n", aspen.buildSeconds);
  std::printf("  graph compile + load:     %.2f s\n", aspen.compileSeconds);
  std::printf("  codelet kernel:           %s\n", codeletKernel());
  std::printf("  Aspen wall time (median): %.2f ms  (%.1f GFLOP/s on the host)\n", aspenSeconds * 1e3,
              flops / aspenSeconds / 1e9);
  std::printf("  Eigen wall time (median): %.2f ms  (%.1f GFLOP/s, %d threads, built for %s)\n", eigen * 1e3,
              flops / eigen / 1e9, Eigen::nbThreads(), eigenIsa);
  std::printf("  Aspen / Eigen time:       %.2f (Aspen reaches %.0f%% of Eigen's speed)\n",
              aspenSeconds / eigen, 100.0 * eigen / aspenSeconds);
#ifdef ASPEN_BENCH_EIGEN512
  if (__builtin_cpu_supports("avx512f")) {
    RowMatrix c512(size, size);
    const double eigen512 = aspenBenchEigen512(A.data(), B.data(), c512.data(), long(n), repeats, int(cores));
    std::printf("  Eigen built for AVX-512 (-mavx512f -mavx512dq -mavx512vl -mavx512bw): %.2f ms  (%.1f "
                "GFLOP/s); Aspen reaches %.0f%% of its speed\n",
                eigen512 * 1e3, flops / eigen512 / 1e9, 100.0 * eigen512 / aspenSeconds);
  }
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx512f") && std::getenv("ASPEN_CODELET_ISA") == nullptr) {
    // The same float product with Aspen's AVX2 kernel, in a process of its own.
    const std::string command = std::string("ASPEN_CODELET_ISA=avx2 ASPEN_BENCH_ASPEN_ONLY=1 '") + argv[0] +
                                "' " + std::to_string(n) + " " + std::to_string(repeats) + " " +
                                std::to_string(cores);
    double avx2Ms = 0;
    if (FILE *pipe = popen(command.c_str(), "r")) {
      char line[256];
      while (std::fgets(line, sizeof line, pipe))
        std::sscanf(line, "aspen-only float: %lf", &avx2Ms);
      pclose(pipe);
    }
    if (avx2Ms > 0)
      std::printf("  Aspen with its AVX2 kernel (ASPEN_CODELET_ISA=avx2, another process): %.2f ms; reaches "
                  "%.0f%% of the speed of Eigen built for %s\n",
                  avx2Ms, 100.0 * eigen * 1e3 / avx2Ms, eigenIsa);
  }
#endif
  std::printf("  simulated IPU cycles:     %llu (%.1f us at %.2f GHz, implied %.1f TFLOP/s)\n",
              (unsigned long long)aspen.cycles, ipuSeconds * 1e6, clock / 1e9, flops / ipuSeconds / 1e12);
  std::printf("  max |Aspen - Eigen|:      %.3g\n", maxError);
  std::printf("matMul %zu x %zu x %zu half (float partials)\n", n, n, n);
  std::printf("  Aspen wall time (median): %.2f ms  (%.2f x the float matMul's time)\n",
              aspenHalf.runSeconds * 1e3, aspenHalf.runSeconds / aspenSeconds);
  std::printf("  simulated IPU cycles:     %llu\n", (unsigned long long)aspenHalf.cycles);
  std::printf("  max |Aspen - Eigen| / max |C|: %.3g\n", halfError);
  return maxError < 1e-2 && halfError < 1e-2 ? 0 : 1;
}
