// Copyright (c) Aspen contributors.
// poplin's matrix-multiply vertices: a block product C = A * B on one tile
// (the six workers split the rows of C) and the reduction of partial sums when
// the inner dimension is split over tiles.
//
// The block product runs a register-tile kernel (MatMulKernels.hpp) on float operands:
// A {rows, depth} and B {depth, cols} are contiguous row-major blocks (half blocks are
// first converted to float, once per worker), and a tile of rows of C by vectors of
// columns is accumulated in registers while walking the depth, one row of B at a time.
// Each element of C is the fused multiply-add chain c = fma(a[p], b[p], c) for p = 0,
// 1, ... from 0, in every kernel, so the result is the same bits whichever kernel runs.
//
// Which kernel runs is decided once per process from the host CPU (cpuid) and its cache
// sizes: AVX-512 (F, BW, VL) when the CPU has it, else AVX2 (with FMA and F16C), else a plain loop.
// The x86 kernels are compiled by target attributes, so the library loads on any x86-64
// host. ASPEN_CODELET_ISA=avx2 or =generic caps the choice (docs/matmul.md).
#include "MatMulKernels.hpp"

#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

// The half conversions and the reduction use AVX2 and F16C where the codelets are compiled
// for them (popc's baseline); they add in a fixed order, so they need no choice of kernel.
#if defined(POPLIN_X86_KERNELS) && defined(__AVX2__) && defined(__F16C__)
#define POPLIN_X86_AVX2_BUILD 1
#endif

namespace poplin {
namespace matmul_detail {

// ---- operands in float ----------------------------------------------------------

/// dst[0:n] = src[0:n] as floats.
inline void toFloats(const half *src, std::size_t n, float *dst) {
  std::size_t i = 0;
#ifdef POPLIN_X86_AVX2_BUILD
  for (; i + 8 <= n; i += 8) {
    const __m128i bits =
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(static_cast<const void *>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(bits));
  }
#endif
  for (; i < n; ++i)
    dst[i] = float(src[i]);
}

/// Host scratch memory of the calling thread for operands converted to float
/// (not tile memory: what the simulated tile holds is unchanged).
inline float *scratch(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats)
    buffer.resize(floats);
  return buffer.data();
}

/// Floats of host scratch the depth chunks of a worker's `rows` x `cols` product carry
/// their sums in (none when the whole depth is walked at once).
inline std::size_t chainFloats(const KernelConfig &config, unsigned rows, unsigned depth, unsigned cols) {
  return config.depthChunk != 0 && depth > config.depthChunk ? std::size_t(rows) * cols : 0;
}

/// The host's kernel for a block product whose whole C (all workers' rows) is `blockBytes`
/// long in tile memory (0: C is host scratch read back at once): streamed stores only for
/// blocks as large as KernelConfig::streamBytes says.
inline KernelConfig blockKernel(std::size_t blockBytes) {
  KernelConfig config = hostKernel();
  if (blockBytes < config.streamBytes)
    config.streamBytes = 0;
  return config;
}

/// Rows [rowBegin, rowEnd) of C {rows, cols} = A {rows, depth} * B {depth, cols}; C's
/// whole block `blockBytes` long (0: scratch).
template <typename OutType>
void blockProduct(const float *a, const float *b, OutType *c, unsigned rowBegin, unsigned rowEnd,
                  unsigned depth, unsigned cols, std::size_t blockBytes) {
  const KernelConfig config = blockKernel(blockBytes);
  const std::size_t accFloats = chainFloats(config, rowEnd - rowBegin, depth, cols);
  product(config, a + std::size_t(rowBegin) * depth, depth, b, cols, rowEnd - rowBegin, depth, cols,
          c + std::size_t(rowBegin) * cols, cols, accFloats ? scratch(accFloats) : nullptr);
}
/// The same with half operands, converted to float first: the worker's rows of A, and all of
/// B unless the kernel converts B as it loads it (AVX-512).
template <typename OutType>
void blockProduct(const half *a, const half *b, OutType *c, unsigned rowBegin, unsigned rowEnd,
                  unsigned depth, unsigned cols, std::size_t blockBytes) {
  const KernelConfig config = blockKernel(blockBytes);
  const std::size_t aElements = std::size_t(rowEnd - rowBegin) * depth;
  const std::size_t accFloats = chainFloats(config, rowEnd - rowBegin, depth, cols);
  if (takesHalfB(config)) { // B converted as the kernel loads it: not once per worker
    float *aFloat = scratch(aElements + accFloats);
    toFloats(a + std::size_t(rowBegin) * depth, aElements, aFloat);
    productHalfB(config, aFloat, depth, b, cols, rowEnd - rowBegin, depth, cols,
                 c + std::size_t(rowBegin) * cols, cols, accFloats ? aFloat + aElements : nullptr);
    return;
  }
  const std::size_t bElements = std::size_t(depth) * cols;
  float *aFloat = scratch(aElements + bElements + accFloats);
  float *bFloat = aFloat + aElements;
  toFloats(a + std::size_t(rowBegin) * depth, aElements, aFloat);
  toFloats(b, bElements, bFloat);
  product(config, aFloat, depth, bFloat, cols, rowEnd - rowBegin, depth, cols,
          c + std::size_t(rowBegin) * cols, cols, accFloats ? bFloat + bElements : nullptr);
}

/// The rows of a block `cols` wide that worker `workerId` of `numWorkers` computes:
/// whole register tiles of the host's kernel, shared out as evenly as possible.
inline void workerRows(unsigned rows, unsigned cols, unsigned workerId, unsigned numWorkers, unsigned &begin,
                       unsigned &end) {
  const unsigned rowTileSize = rowTile(hostKernel().isa, cols);
  const unsigned tiles = (rows + rowTileSize - 1) / rowTileSize;
  const unsigned tileBegin = tiles * workerId / numWorkers;
  const unsigned tileEnd = tiles * (workerId + 1) / numWorkers;
  begin = tileBegin * rowTileSize;
  end = tileEnd * rowTileSize;
  if (begin > rows)
    begin = rows;
  if (end > rows)
    end = rows;
}

/// The rows worker `workerId` computes of a block product whose fields hold the shapes its
/// sizes say; false when they do not (the vertex then fails, as a bad connection should).
template <typename AField, typename BField, typename CField>
bool blockWorkerRows(const AField &a, const BField &b, const CField &c, unsigned rows, unsigned depth,
                     unsigned cols, unsigned workerId, unsigned numWorkers, unsigned &begin, unsigned &end) {
  if (a.size() != std::size_t(rows) * depth || b.size() != std::size_t(depth) * cols ||
      c.size() != std::size_t(rows) * cols)
    return false;
  workerRows(rows, cols, workerId, numWorkers, begin, end);
  return true;
}
} // namespace matmul_detail

/// C {rows, cols} = A {rows, depth} * B {depth, cols}, all row-major; partial
/// sums in float. The workers split the rows of C.
template <typename InType, typename OutType> class MatMulBlock : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<InType>> a;
  poplar::Input<poplar::Vector<InType>> b;
  poplar::Output<poplar::Vector<OutType>> c;
  unsigned rows;
  unsigned depth;
  unsigned cols;

  bool compute(unsigned workerId) {
    unsigned begin, end;
    if (!matmul_detail::blockWorkerRows(a, b, c, rows, depth, cols, workerId, numWorkers(), begin, end))
      return false;
    if (begin < end)
      matmul_detail::blockProduct(a.data(), b.data(), c.data(), begin, end, depth, cols,
                                  std::size_t(rows) * cols * sizeof(OutType));
    return true;
  }
};

template class MatMulBlock<float, float>;
template class MatMulBlock<float, half>;
template class MatMulBlock<half, float>;
template class MatMulBlock<half, half>;

/// C {rows, cols} += A {rows, depth} * B {depth, cols}: a block product added to the partial
/// sums an earlier serial pass over the inner dimension left in C (the product in float, as
/// MatMulBlock's, then added to C's value in float). The workers split the rows of C.
template <typename InType, typename OutType> class MatMulBlockAcc : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<InType>> a;
  poplar::Input<poplar::Vector<InType>> b;
  poplar::InOut<poplar::Vector<OutType>> c;
  unsigned rows;
  unsigned depth;
  unsigned cols;

  bool compute(unsigned workerId) {
    unsigned begin, end;
    if (!matmul_detail::blockWorkerRows(a, b, c, rows, depth, cols, workerId, numWorkers(), begin, end))
      return false;
    if (begin >= end)
      return true;
    // Host scratch for the worker's rows of the product (not tile memory).
    thread_local std::vector<float> product;
    const std::size_t n = std::size_t(end - begin) * cols;
    if (product.size() < n)
      product.resize(n);
    matmul_detail::blockProduct(a.data() + std::size_t(begin) * depth, b.data(), product.data(), 0,
                                end - begin, depth, cols, 0);
    OutType *out = c.data() + std::size_t(begin) * cols;
    for (std::size_t i = 0; i < n; ++i)
      out[i] = OutType(matmul_detail::toFloat(out[i]) + product[i]);
    return true;
  }
};

template class MatMulBlockAcc<float, float>;
template class MatMulBlockAcc<float, half>;
template class MatMulBlockAcc<half, float>;
template class MatMulBlockAcc<half, half>;

namespace matmul_detail {

/// Elements summed together: a run the compiler can vectorise along.
constexpr unsigned kSumChunk = 64;

#ifdef POPLIN_X86_AVX2_BUILD
/// Eight consecutive values as floats.
inline __m256 load8(const float *p) {
  return _mm256_loadu_ps(p);
}
inline __m256 load8(const half *p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(static_cast<const void *>(p))));
}
#endif

/// sums[0:n] = sum over p of partials[p * stride + begin : ... + n], in float (n <= kSumChunk).
template <typename PartialsType>
inline void sumPartials(const PartialsType *partials, std::size_t stride, unsigned numPartials,
                        std::size_t begin, unsigned n, float *sums) {
  unsigned i = 0;
#ifdef POPLIN_X86_AVX2_BUILD
  // Four vectors of 8 at a time, each added up over the partials in order
  // (the same float additions as the loop below).
  for (; i + 32 <= n; i += 32) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    for (unsigned p = 0; p < numPartials; ++p) {
      const PartialsType *row = partials + p * stride + begin + i;
      s0 = _mm256_add_ps(s0, load8(row));
      s1 = _mm256_add_ps(s1, load8(row + 8));
      s2 = _mm256_add_ps(s2, load8(row + 16));
      s3 = _mm256_add_ps(s3, load8(row + 24));
    }
    _mm256_storeu_ps(sums + i, s0);
    _mm256_storeu_ps(sums + i + 8, s1);
    _mm256_storeu_ps(sums + i + 16, s2);
    _mm256_storeu_ps(sums + i + 24, s3);
  }
  for (; i + 8 <= n; i += 8) {
    __m256 s0 = _mm256_setzero_ps();
    for (unsigned p = 0; p < numPartials; ++p)
      s0 = _mm256_add_ps(s0, load8(partials + p * stride + begin + i));
    _mm256_storeu_ps(sums + i, s0);
  }
#endif
  for (unsigned j = i; j < n; ++j)
    sums[j] = 0.0f;
  for (unsigned p = 0; p < numPartials; ++p) {
    const PartialsType *row = partials + p * stride + begin;
    for (unsigned j = i; j < n; ++j)
      sums[j] += toFloat(row[j]);
  }
}

} // namespace matmul_detail

/// out[i] = sum over p of partials[p * size + i], size = out.size(): the
/// numPartials partial sums of each output element, added in float.
template <typename PartialsType, typename OutType> class MatMulReduce : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<PartialsType>> partials;
  poplar::Output<poplar::Vector<OutType>> out;
  unsigned numPartials;

  bool compute(unsigned workerId) {
    const std::size_t size = out.size();
    if (partials.size() != size * numPartials)
      return false;
    const std::size_t begin = size * workerId / numWorkers();
    const std::size_t end = size * (workerId + 1) / numWorkers();
    float sums[matmul_detail::kSumChunk];
    for (std::size_t i = begin; i < end; i += matmul_detail::kSumChunk) {
      const unsigned n = unsigned(end - i < matmul_detail::kSumChunk ? end - i : matmul_detail::kSumChunk);
      matmul_detail::sumPartials(partials.data(), size, numPartials, i, n, sums);
      for (unsigned j = 0; j < n; ++j)
        out[i + j] = OutType(sums[j]);
    }
    return true;
  }
};

template class MatMulReduce<float, float>;
template class MatMulReduce<float, half>;
template class MatMulReduce<half, float>;
template class MatMulReduce<half, half>;

/// out[i] += scale * (sum over p of partials[p * size + i]), in float.
template <typename PartialsType, typename OutType, typename ScaleType>
class MatMulReduceAcc : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<PartialsType>> partials;
  poplar::InOut<poplar::Vector<OutType>> out;
  poplar::Input<ScaleType> scale;
  unsigned numPartials;

  bool compute(unsigned workerId) {
    const std::size_t size = out.size();
    if (partials.size() != size * numPartials)
      return false;
    const float k = float(*scale);
    const std::size_t begin = size * workerId / numWorkers();
    const std::size_t end = size * (workerId + 1) / numWorkers();
    float sums[matmul_detail::kSumChunk];
    for (std::size_t i = begin; i < end; i += matmul_detail::kSumChunk) {
      const unsigned n = unsigned(end - i < matmul_detail::kSumChunk ? end - i : matmul_detail::kSumChunk);
      matmul_detail::sumPartials(partials.data(), size, numPartials, i, n, sums);
      for (unsigned j = 0; j < n; ++j)
        out[i + j] = OutType(float(out[i + j]) + k * sums[j]);
    }
    return true;
  }
};

template class MatMulReduceAcc<float, float, float>;
template class MatMulReduceAcc<float, float, half>;
template class MatMulReduceAcc<float, half, float>;
template class MatMulReduceAcc<float, half, half>;
template class MatMulReduceAcc<half, float, float>;
template class MatMulReduceAcc<half, float, half>;
template class MatMulReduceAcc<half, half, float>;
template class MatMulReduceAcc<half, half, half>;

} // namespace poplin
