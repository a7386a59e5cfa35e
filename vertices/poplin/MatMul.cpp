// Copyright (c) Aspen contributors.
// poplin's matrix-multiply vertices: a block product C = A * B on one tile
// (the six workers split the rows of C) and the reduction of partial sums when
// the inner dimension is split over tiles.
//
// The block product runs a register-tile kernel on float operands: A {rows,
// depth} and B {depth, cols} are contiguous row-major blocks (half blocks are
// first converted to float, once per worker), and a tile of up to 6 rows of C
// by 2 (AVX2) or 4 (AVX-512) vectors of columns is accumulated in registers
// while walking the depth, one row of B at a time. Each element of C is the
// fused multiply-add chain c = fma(a[p], b[p], c) for p = 0, 1, ... from 0, in
// every kernel, so the result is the same bits whichever kernel runs.
//
// Which kernel runs is decided once per process: AVX-512 when the host CPU has
// it (the function is compiled for it by a target attribute, so the library
// still loads on any AVX2 host), else AVX2 (popc compiles codelets with -mavx2
// -mfma -mf16c), else a plain loop. ASPEN_CODELET_ISA=avx2 or =generic caps
// the choice (docs/matmul.md).
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) &&               \
    defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && !defined(__IPU__)
#define POPLIN_X86_KERNELS 1
#include <immintrin.h>
#endif

#if defined(__clang__)
#define POPLIN_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define POPLIN_UNROLL _Pragma("GCC unroll 8")
#else
#define POPLIN_UNROLL
#endif

namespace poplin {
namespace matmul_detail {

/// Rows of C that one register tile computes: they share each loaded row of B.
constexpr unsigned kRowTile = 6;

inline float toFloat(float x) {
  return x;
}
inline float toFloat(half x) {
  return float(x);
}

// ---- the instruction set --------------------------------------------------------

enum class Isa { Generic, Avx2, Avx512 };

/// The best kernel this host runs, capped by ASPEN_CODELET_ISA (avx512, avx2, generic).
inline Isa detectIsa() {
#ifdef POPLIN_X86_KERNELS
  Isa best = Isa::Avx2;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    best = Isa::Avx512;
#else
  Isa best = Isa::Generic;
#endif
  const char *cap = std::getenv("ASPEN_CODELET_ISA");
  if (cap && std::strcmp(cap, "generic") == 0)
    return Isa::Generic;
  if (cap && std::strcmp(cap, "avx2") == 0 && best == Isa::Avx512)
    return Isa::Avx2;
  return best;
}

// The host's, not a tile's: the same on every tile and set once. In a namespace whose name
// marks Aspen's own objects (docs/tile-model.md), so it is not per-tile data that every matmul
// vertex would pay to swap in. Not thread_local: LeakSanitizer's tracer (clang 14's runtime)
// faults scanning the dynamic TLS of a dlopen'ed library at exit.
namespace aspen_codelet_host {
inline Isa hostIsa() {
  static const Isa isa = detectIsa();
  return isa;
}
} // namespace aspen_codelet_host
using aspen_codelet_host::hostIsa;

// ---- the plain loop (any host) ----------------------------------------------------

template <typename OutType> inline void storeValue(OutType *dst, float v) {
  *dst = OutType(v);
}

/// C[0:rows, 0:cols] = A * B with float operands, one fused multiply-add chain per element.
template <typename OutType>
void productGeneric(const float *a, std::size_t lda, const float *b, std::size_t ldb, unsigned rows,
                    unsigned depth, unsigned cols, OutType *c, std::size_t ldc) {
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (unsigned p = 0; p < depth; ++p)
        sum = std::fma(a[r * lda + p], b[p * ldb + j], sum);
      storeValue(c + r * ldc + j, sum);
    }
}

#ifdef POPLIN_X86_KERNELS

/// The `n` (< vector width) first values of `tile` stored to `dst`.
template <typename OutType> inline void storePartial(OutType *dst, const float *tile, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    storeValue(dst + i, tile[i]);
}

// ---- AVX2: 8-float vectors, tiles of R rows x V vectors -----------------------------

inline void store8(float *dst, __m256 v) {
  _mm256_storeu_ps(dst, v);
}
inline void store8(half *dst, __m256 v) {
  const __m128i bits = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(static_cast<void *>(dst)), bits);
}

/// C[0:R, 0:8V) = A[0:R, :] * B[:, 0:8V), the last vector holding only `lastCols`
/// columns when `Masked` (B is read no further than its last column).
template <unsigned R, unsigned V, bool Masked, typename OutType>
void tileAvx2(const float *a, std::size_t lda, const float *b, std::size_t ldb, unsigned depth, OutType *c,
              std::size_t ldc, unsigned lastCols) {
  __m256i mask = _mm256_setzero_si256();
  if (Masked)
    mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(lastCols)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[R][V];
  POPLIN_UNROLL
  for (unsigned r = 0; r < R; ++r)
    POPLIN_UNROLL
  for (unsigned v = 0; v < V; ++v)
    acc[r][v] = _mm256_setzero_ps();
  for (unsigned p = 0; p < depth; ++p) {
    const float *bRow = b + std::size_t(p) * ldb;
    __m256 bv[V];
    POPLIN_UNROLL
    for (unsigned v = 0; v < V; ++v)
      bv[v] = Masked && v + 1 == V ? _mm256_maskload_ps(bRow + 8 * v, mask) : _mm256_loadu_ps(bRow + 8 * v);
    POPLIN_UNROLL
    for (unsigned r = 0; r < R; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + p);
      POPLIN_UNROLL
      for (unsigned v = 0; v < V; ++v)
        acc[r][v] = _mm256_fmadd_ps(x, bv[v], acc[r][v]);
    }
  }
  POPLIN_UNROLL
  for (unsigned r = 0; r < R; ++r)
    POPLIN_UNROLL
  for (unsigned v = 0; v < V; ++v) {
    OutType *dst = c + r * ldc + 8 * v;
    if (Masked && v + 1 == V) {
      alignas(32) float tile[8];
      _mm256_store_ps(tile, acc[r][v]);
      storePartial(dst, tile, lastCols);
    } else {
      store8(dst, acc[r][v]);
    }
  }
}

template <typename OutType>
using TileFn = void (*)(const float *, std::size_t, const float *, std::size_t, unsigned, OutType *,
                        std::size_t, unsigned);

template <unsigned R, typename OutType> TileFn<OutType> pickAvx2(unsigned vectors, bool masked) {
  if (vectors == 1)
    return masked ? tileAvx2<R, 1, true, OutType> : tileAvx2<R, 1, false, OutType>;
  return masked ? tileAvx2<R, 2, true, OutType> : tileAvx2<R, 2, false, OutType>;
}

template <typename OutType>
void productAvx2(const float *a, std::size_t lda, const float *b, std::size_t ldb, unsigned rows,
                 unsigned depth, unsigned cols, OutType *c, std::size_t ldc) {
  constexpr unsigned panel = 16;
  for (unsigned r = 0; r < rows; r += kRowTile) {
    const unsigned R = rows - r < kRowTile ? rows - r : kRowTile;
    for (unsigned j = 0; j < cols; j += panel) {
      const unsigned n = cols - j < panel ? cols - j : panel;
      const unsigned vectors = (n + 7) / 8, last = n - 8 * (vectors - 1);
      const bool masked = last != 8;
      TileFn<OutType> f = nullptr;
      switch (R) {
      case 1:
        f = pickAvx2<1, OutType>(vectors, masked);
        break;
      case 2:
        f = pickAvx2<2, OutType>(vectors, masked);
        break;
      case 3:
        f = pickAvx2<3, OutType>(vectors, masked);
        break;
      case 4:
        f = pickAvx2<4, OutType>(vectors, masked);
        break;
      case 5:
        f = pickAvx2<5, OutType>(vectors, masked);
        break;
      default:
        f = pickAvx2<6, OutType>(vectors, masked);
        break;
      }
      f(a + r * lda, lda, b + j, ldb, depth, c + r * ldc + j, ldc, last);
    }
  }
}

// ---- AVX-512: 16-float vectors, tiles of R rows x V vectors (compiled for AVX-512 by attribute) ----

#define POPLIN_AVX512 __attribute__((target("avx512f")))

POPLIN_AVX512 inline void store16(float *dst, __m512 v) {
  _mm512_storeu_ps(dst, v);
}
POPLIN_AVX512 inline void store16(half *dst, __m512 v) {
  // The zero-masked form: GCC 12 warns about the undefined source of the plain one.
  const __m256i bits =
      _mm512_maskz_cvtps_ph(__mmask16(0xffff), v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(static_cast<void *>(dst)), bits);
}

/// C[0:R, 0:16V) = A[0:R, :] * B[:, 0:16V), the last vector holding `lastCols`
/// (1..16) columns (masked loads: B is read no further than its last column).
template <unsigned R, unsigned V, typename OutType>
POPLIN_AVX512 void tileAvx512(const float *a, std::size_t lda, const float *b, std::size_t ldb,
                              unsigned depth, OutType *c, std::size_t ldc, unsigned lastCols) {
  const __mmask16 mask = __mmask16((1u << lastCols) - 1u);
  __m512 acc[R][V];
  POPLIN_UNROLL
  for (unsigned r = 0; r < R; ++r)
    POPLIN_UNROLL
  for (unsigned v = 0; v < V; ++v)
    acc[r][v] = _mm512_setzero_ps();
  for (unsigned p = 0; p < depth; ++p) {
    const float *bRow = b + std::size_t(p) * ldb;
    __m512 bv[V];
    POPLIN_UNROLL
    for (unsigned v = 0; v < V; ++v)
      bv[v] = v + 1 == V ? _mm512_maskz_loadu_ps(mask, bRow + 16 * v) : _mm512_loadu_ps(bRow + 16 * v);
    POPLIN_UNROLL
    for (unsigned r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + p]);
      POPLIN_UNROLL
      for (unsigned v = 0; v < V; ++v)
        acc[r][v] = _mm512_fmadd_ps(x, bv[v], acc[r][v]);
    }
  }
  POPLIN_UNROLL
  for (unsigned r = 0; r < R; ++r)
    POPLIN_UNROLL
  for (unsigned v = 0; v < V; ++v) {
    OutType *dst = c + r * ldc + 16 * v;
    if (v + 1 == V && lastCols != 16) {
      alignas(64) float tile[16];
      _mm512_store_ps(tile, acc[r][v]);
      storePartial(dst, tile, lastCols);
    } else {
      store16(dst, acc[r][v]);
    }
  }
}

template <unsigned R, typename OutType> TileFn<OutType> pickAvx512(unsigned vectors) {
  switch (vectors) {
  case 1:
    return tileAvx512<R, 1, OutType>;
  case 2:
    return tileAvx512<R, 2, OutType>;
  case 3:
    return tileAvx512<R, 3, OutType>;
  default:
    return tileAvx512<R, 4, OutType>;
  }
}

template <typename OutType>
POPLIN_AVX512 void productAvx512(const float *a, std::size_t lda, const float *b, std::size_t ldb,
                                 unsigned rows, unsigned depth, unsigned cols, OutType *c, std::size_t ldc) {
  constexpr unsigned panel = 64;
  for (unsigned r = 0; r < rows; r += kRowTile) {
    const unsigned R = rows - r < kRowTile ? rows - r : kRowTile;
    for (unsigned j = 0; j < cols; j += panel) {
      const unsigned n = cols - j < panel ? cols - j : panel;
      const unsigned vectors = (n + 15) / 16, last = n - 16 * (vectors - 1);
      TileFn<OutType> f = nullptr;
      switch (R) {
      case 1:
        f = pickAvx512<1, OutType>(vectors);
        break;
      case 2:
        f = pickAvx512<2, OutType>(vectors);
        break;
      case 3:
        f = pickAvx512<3, OutType>(vectors);
        break;
      case 4:
        f = pickAvx512<4, OutType>(vectors);
        break;
      case 5:
        f = pickAvx512<5, OutType>(vectors);
        break;
      default:
        f = pickAvx512<6, OutType>(vectors);
        break;
      }
      f(a + r * lda, lda, b + j, ldb, depth, c + r * ldc + j, ldc, last);
    }
  }
}

#undef POPLIN_AVX512

#endif // POPLIN_X86_KERNELS

/// C[0:rows, 0:cols] = A * B with float operands, by the host's best kernel.
template <typename OutType>
void product(const float *a, std::size_t lda, const float *b, std::size_t ldb, unsigned rows, unsigned depth,
             unsigned cols, OutType *c, std::size_t ldc) {
  switch (hostIsa()) {
#ifdef POPLIN_X86_KERNELS
  case Isa::Avx512:
    productAvx512(a, lda, b, ldb, rows, depth, cols, c, ldc);
    return;
  case Isa::Avx2:
    productAvx2(a, lda, b, ldb, rows, depth, cols, c, ldc);
    return;
#endif
  default:
    productGeneric(a, lda, b, ldb, rows, depth, cols, c, ldc);
    return;
  }
}

// ---- operands in float ----------------------------------------------------------

/// dst[0:n] = src[0:n] as floats.
inline void toFloats(const half *src, std::size_t n, float *dst) {
  std::size_t i = 0;
#ifdef POPLIN_X86_KERNELS
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

/// Rows [rowBegin, rowEnd) of C {rows, cols} = A {rows, depth} * B {depth, cols}.
template <typename OutType>
void blockProduct(const float *a, const float *b, OutType *c, unsigned rowBegin, unsigned rowEnd,
                  unsigned depth, unsigned cols) {
  product(a + std::size_t(rowBegin) * depth, depth, b, cols, rowEnd - rowBegin, depth, cols,
          c + std::size_t(rowBegin) * cols, cols);
}
/// The same with half operands, converted to float first: the worker's rows of A and all of B.
template <typename OutType>
void blockProduct(const half *a, const half *b, OutType *c, unsigned rowBegin, unsigned rowEnd,
                  unsigned depth, unsigned cols) {
  const std::size_t aElements = std::size_t(rowEnd - rowBegin) * depth, bElements = std::size_t(depth) * cols;
  float *aFloat = scratch(aElements + bElements);
  float *bFloat = aFloat + aElements;
  toFloats(a + std::size_t(rowBegin) * depth, aElements, aFloat);
  toFloats(b, bElements, bFloat);
  product(aFloat, depth, bFloat, cols, rowEnd - rowBegin, depth, cols, c + std::size_t(rowBegin) * cols,
          cols);
}

/// The rows of a block that worker `workerId` of `numWorkers` computes: whole
/// register tiles, shared out as evenly as possible.
inline void workerRows(unsigned rows, unsigned workerId, unsigned numWorkers, unsigned &begin,
                       unsigned &end) {
  const unsigned tiles = (rows + kRowTile - 1) / kRowTile;
  const unsigned tileBegin = tiles * workerId / numWorkers;
  const unsigned tileEnd = tiles * (workerId + 1) / numWorkers;
  begin = tileBegin * kRowTile;
  end = tileEnd * kRowTile;
  if (begin > rows)
    begin = rows;
  if (end > rows)
    end = rows;
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
    if (a.size() != std::size_t(rows) * depth || b.size() != std::size_t(depth) * cols ||
        c.size() != std::size_t(rows) * cols)
      return false;
    unsigned begin, end;
    matmul_detail::workerRows(rows, workerId, numWorkers(), begin, end);
    if (begin < end)
      matmul_detail::blockProduct(a.data(), b.data(), c.data(), begin, end, depth, cols);
    return true;
  }
};

template class MatMulBlock<float, float>;
template class MatMulBlock<float, half>;
template class MatMulBlock<half, float>;
template class MatMulBlock<half, half>;

namespace matmul_detail {

/// Elements summed together: a run the compiler can vectorise along.
constexpr unsigned kSumChunk = 64;

#ifdef POPLIN_X86_KERNELS
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
#ifdef POPLIN_X86_KERNELS
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
