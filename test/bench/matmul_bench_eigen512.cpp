// Copyright (c) Aspen contributors.
// Eigen's matrix product compiled for AVX-512, for matmul_bench's comparison
// instruction set for instruction set. Built as a library of its own with hidden
// symbols (test/ops.cmake), so that its Eigen instantiations never stand in for the
// AVX2 ones of the benchmark (and the reverse). Called only on a host with AVX-512.
#include <Eigen/Dense>

#include <algorithm>
#include <chrono>
#include <vector>

extern "C" __attribute__((visibility("default"))) double
aspenBenchEigen512(const float *a, const float *b, float *c, long n, unsigned repeats, int threads) {
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMatrix> A(a, n, n), B(b, n, n);
  Eigen::Map<RowMatrix> C(c, n, n);
  Eigen::setNbThreads(threads);
  C.noalias() = A * B; // warm-up
  std::vector<double> times;
  for (unsigned r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    C.noalias() = A * B;
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
