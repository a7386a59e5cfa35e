// Copyright (c) Aspen contributors.
// Every block-product kernel this host runs (vertices/poplin/MatMulKernels.hpp: AVX-512,
// AVX2, the plain loop, as cpuid allows), called directly in one process, against the
// portable plain loop and an independent fma chain, bit for bit: rows 1..13 (whole
// register tiles of 5 and 6 rows and every leftover), columns across the 8-, 16-, 64- and
// 80-float panels with partial last vectors, depths up to 300, float and half outputs;
// and the same with the inner dimension walked in short chunks (the running sums carried
// in float between them), which a host with a small cache takes for deep blocks; and with
// half B, which the AVX-512 kernel converts as it loads it.
// (poplin_matmul_kernels checks the MatMulBlock vertex itself, once per kernel cap.)
#include "MatMulKernels.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

using namespace poplin::matmul_detail;

namespace {

std::vector<std::uint8_t> bytesOf(const std::vector<float> &v) {
  std::vector<std::uint8_t> bytes(v.size() * 4);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}
std::vector<std::uint8_t> bytesOf(const std::vector<half> &v) {
  std::vector<std::uint8_t> bytes(v.size() * 2);
  std::memcpy(bytes.data(), v.data(), bytes.size());
  return bytes;
}

/// C = A * B (leading dimensions lda, ldb), each element one float fma chain from zero in p order.
std::vector<float> chain(const std::vector<float> &a, std::size_t lda, const std::vector<float> &b,
                         std::size_t ldb, unsigned rows, unsigned depth, unsigned cols) {
  std::vector<float> c(std::size_t(rows) * cols);
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (unsigned p = 0; p < depth; ++p)
        sum = std::fma(a[r * lda + p], b[p * ldb + j], sum);
      c[std::size_t(r) * cols + j] = sum;
    }
  return c;
}

/// C by `config` and by the plain loop, compared bit for bit (and the float one with `want`).
template <typename OutType>
void checkKernel(const KernelConfig &config, const std::vector<float> &a, std::size_t lda,
                 const std::vector<float> &b, std::size_t ldb, unsigned rows, unsigned depth, unsigned cols,
                 const std::vector<float> &want) {
  std::vector<OutType> got(std::size_t(rows) * cols, OutType(-7.0f)), portable(got.size());
  std::vector<float> acc(got.size(), -3.0f);
  product(config, a.data(), lda, b.data(), ldb, rows, depth, cols, got.data(), cols, acc.data());
  productGeneric(a.data(), lda, b.data(), ldb, rows, depth, cols, portable.data(), cols);
  REQUIRE(bytesOf(got) == bytesOf(portable));
  if constexpr (std::is_same_v<OutType, float>)
    REQUIRE(bytesOf(got) == bytesOf(want));
}

/// C with half B (read as half by the AVX-512 kernel, converted as loaded) against the plain
/// loop on B's values as floats, bit for bit.
template <typename OutType>
void checkHalfB(const KernelConfig &config, const std::vector<float> &a, std::size_t lda,
                const std::vector<float> &b, std::size_t ldb, unsigned rows, unsigned depth, unsigned cols) {
  std::vector<half> bHalf(b.size());
  std::vector<float> bValues(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    bHalf[i] = half(b[i]);
    bValues[i] = float(bHalf[i]);
  }
  std::vector<OutType> got(std::size_t(rows) * cols, OutType(-7.0f)), portable(got.size());
  std::vector<float> acc(got.size(), -3.0f);
  productHalfB(config, a.data(), lda, bHalf.data(), ldb, rows, depth, cols, got.data(), cols, acc.data());
  productGeneric(a.data(), lda, bValues.data(), ldb, rows, depth, cols, portable.data(), cols);
  REQUIRE(bytesOf(got) == bytesOf(portable));
}

} // namespace

TEST_CASE("poplin_matmul_kernel_variants: every kernel the host runs equals the plain loop bit for bit",
          "[poplin]") {
  const std::vector<Isa> isas = availableIsas();
  REQUIRE(isas.back() == Isa::Generic);
  std::string names;
  for (Isa isa : isas)
    names += std::string(names.empty() ? "" : ", ") + isaName(isa);
  WARN("kernels on this host: " << names);

  const std::vector<unsigned> rowCounts = {1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13};
  const std::vector<unsigned> colCounts = {1,  5,  8,  9,  15, 16, 17, 31, 32,  33, 48,
                                           63, 64, 65, 79, 80, 81, 96, 97, 130, 144};
  const std::vector<unsigned> depths = {1, 2, 7, 64, 128, 147, 300};
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  unsigned n = 0;
  for (Isa isa : isas) {
    // The host's configuration, then the inner dimension in chunks of 16 and of 7 rows of B.
    std::vector<KernelConfig> configs = {configFor(isa)};
    REQUIRE((configs[0].depthChunk == 0 || configs[0].depthChunk >= 16));
    for (unsigned chunk : {16u, 7u}) {
      KernelConfig c = configs[0];
      c.depthChunk = chunk;
      configs.push_back(c);
    }
    // Float C written by non-temporal stores (blocks of every size; the AVX-512 kernel).
    if (isa == Isa::Avx512)
      for (unsigned chunk : {configs[0].depthChunk, 7u}) {
        KernelConfig c = configs[0];
        c.depthChunk = chunk;
        c.streamBytes = 1;
        configs.push_back(c);
      }
    for (const KernelConfig &config : configs)
      for (unsigned rows : rowCounts)
        for (unsigned cols : colCounts) {
          const unsigned depth = depths[n++ % depths.size()];
          // Leading dimensions wider than the block: the kernels read only the block.
          const std::size_t lda = depth + 3, ldb = cols + 5;
          std::vector<float> a(rows * lda), b(depth * ldb);
          for (float &x : a)
            x = dist(gen);
          for (float &x : b)
            x = dist(gen);
          INFO(isaName(isa) << " kernel, depth chunk " << config.depthChunk << ", streamed from "
                            << config.streamBytes << " bytes: " << rows << " x " << depth << " x " << cols);
          const std::vector<float> want = chain(a, lda, b, ldb, rows, depth, cols);
          checkKernel<float>(config, a, lda, b, ldb, rows, depth, cols, want);
          checkKernel<half>(config, a, lda, b, ldb, rows, depth, cols, want);
          checkHalfB<float>(config, a, lda, b, ldb, rows, depth, cols);
          checkHalfB<half>(config, a, lda, b, ldb, rows, depth, cols);
        }
  }
}

TEST_CASE("poplin_matmul_kernel_variants: register tiles fit the vector registers", "[poplin]") {
  // AVX-512: R rows x V vectors of accumulators + V rows of B + 1 broadcast <= 32 zmm.
  for (unsigned cols : {1u, 16u, 64u, 65u, 79u, 80u, 81u, 130u}) {
    const unsigned rt = rowTile(Isa::Avx512, cols);
    unsigned widest = 0;
    for (unsigned j = 0; j < cols;) {
      const unsigned panel = panelAvx512(cols, cols - j);
      REQUIRE(panel > 0);
      widest = std::max(widest, (panel + 15) / 16);
      j += panel;
    }
    INFO(cols << " columns");
    REQUIRE(rt * widest + widest + 1 <= 32);
  }
}
