// Copyright (c) Aspen contributors.
// poplin's matrix-multiply vertices: a block product C = A * B on one tile
// (the six workers split the rows of C) and the reduction of partial sums when
// the inner dimension is split over tiles.
//
// The block product is written for the host compiler to vectorise: A {rows,
// depth} and B {depth, cols} are contiguous row-major blocks, and a register
// tile of 6 rows x 16 columns of C is accumulated in float while walking the
// depth, one row of B (two 8-float vectors) at a time.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cstddef>
#include <cstring>

// Host builds with F16C (popc passes -mf16c) convert eight halves at once;
// other hosts use the scalar conversions of HalfFloat.hpp.
#if defined(__F16C__) && defined(__AVX__) && !defined(__IPU__)
#define POPLIN_HAVE_F16C 1
#include <immintrin.h>
#endif

namespace poplin {
namespace matmul_detail {

// 8-float vectors need AVX registers (popc compiles with -mavx2 -mfma); other
// hosts take the plain loops below.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__AVX__)
#define POPLIN_HAVE_VECTOR_EXTENSIONS 1
typedef float Float8 __attribute__((vector_size(32)));
#endif

/// Rows of C computed together: they share each loaded row of B.
constexpr unsigned kRowTile = 6;
/// Columns of C computed together: two 8-float vectors.
constexpr unsigned kColTile = 16;

inline float toFloat(float x) {
  return x;
}
inline float toFloat(half x) {
  return float(x);
}

template <typename OutType> inline void storeValue(OutType *dst, float v) {
  *dst = OutType(v);
}

#ifdef POPLIN_HAVE_VECTOR_EXTENSIONS
/// Eight consecutive elements of a row of B as floats.
inline Float8 load8(const float *p) {
  Float8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline Float8 load8(const half *p) {
#ifdef POPLIN_HAVE_F16C
  // The host's packed half conversion: one instruction for eight values.
  __m128i bits;
  std::memcpy(&bits, p, sizeof bits);
  const __m256 v = _mm256_cvtph_ps(bits);
  Float8 out;
  std::memcpy(&out, &v, sizeof out);
  return out;
#else
  Float8 v;
  for (unsigned i = 0; i < 8; ++i)
    v[i] = float(p[i]);
  return v;
#endif
}

inline void store8(float *dst, Float8 v) {
  std::memcpy(dst, &v, sizeof v);
}
inline void store8(half *dst, Float8 v) {
#ifdef POPLIN_HAVE_F16C
  __m256 f;
  std::memcpy(&f, &v, sizeof f);
  const __m128i bits = _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  std::memcpy(static_cast<void *>(dst), &bits, sizeof bits);
#else
  for (unsigned i = 0; i < 8; ++i)
    dst[i] = half(v[i]);
#endif
}

/// C[0:6, 0:16] (+)= A[0:6, :] * B[:, 0:16]: the register tile, with row r of
/// A at `aRows[r]` and row r of C at `c + r * ldc`. The twelve accumulators are
/// named variables so that the compiler keeps them in registers at any
/// optimisation level. With `accumulate` the tile is added to C.
template <typename AType, typename BType, typename OutType>
inline void registerTile(const AType *const *aRows, const BType *__restrict b, unsigned ldb, unsigned depth,
                         OutType *__restrict c, unsigned ldc, bool accumulate) {
  const Float8 zero = {0, 0, 0, 0, 0, 0, 0, 0};
  Float8 c00 = zero, c01 = zero, c10 = zero, c11 = zero, c20 = zero, c21 = zero;
  Float8 c30 = zero, c31 = zero, c40 = zero, c41 = zero, c50 = zero, c51 = zero;
  if (accumulate) {
    c00 = load8(c), c01 = load8(c + 8), c10 = load8(c + ldc), c11 = load8(c + ldc + 8);
    c20 = load8(c + 2 * ldc), c21 = load8(c + 2 * ldc + 8), c30 = load8(c + 3 * ldc);
    c31 = load8(c + 3 * ldc + 8), c40 = load8(c + 4 * ldc), c41 = load8(c + 4 * ldc + 8);
    c50 = load8(c + 5 * ldc), c51 = load8(c + 5 * ldc + 8);
  }
  const AType *a0 = aRows[0], *a1 = aRows[1], *a2 = aRows[2], *a3 = aRows[3], *a4 = aRows[4], *a5 = aRows[5];
  for (unsigned p = 0; p < depth; ++p) {
    const BType *bRow = b + std::size_t(p) * ldb;
    const Float8 b0 = load8(bRow), b1 = load8(bRow + 8);
    float x = toFloat(a0[p]);
    c00 += x * b0;
    c01 += x * b1;
    x = toFloat(a1[p]);
    c10 += x * b0;
    c11 += x * b1;
    x = toFloat(a2[p]);
    c20 += x * b0;
    c21 += x * b1;
    x = toFloat(a3[p]);
    c30 += x * b0;
    c31 += x * b1;
    x = toFloat(a4[p]);
    c40 += x * b0;
    c41 += x * b1;
    x = toFloat(a5[p]);
    c50 += x * b0;
    c51 += x * b1;
  }
  store8(c, c00);
  store8(c + 8, c01);
  store8(c + ldc, c10);
  store8(c + ldc + 8, c11);
  store8(c + 2 * ldc, c20);
  store8(c + 2 * ldc + 8, c21);
  store8(c + 3 * ldc, c30);
  store8(c + 3 * ldc + 8, c31);
  store8(c + 4 * ldc, c40);
  store8(c + 4 * ldc + 8, c41);
  store8(c + 5 * ldc, c50);
  store8(c + 5 * ldc + 8, c51);
}

/// Inner elements of B padded per step on the right edge of a block (bounds the stack).
constexpr unsigned kDepthChunk = 256;

/// C[0:rows, 0:cols] = A[0:rows, :] * B[:, 0:cols] for an edge tile (rows <= 6,
/// cols <= 16) through a float tile: missing rows of A repeat its last row
/// (their results are dropped), missing columns of B are zero-padded copies.
template <typename InType, typename OutType>
inline void edgeTile(const InType *a, unsigned lda, const InType *b, unsigned ldb, unsigned depth, OutType *c,
                     unsigned ldc, unsigned rows, unsigned cols) {
  float cTile[kRowTile * kColTile];
  const InType *aRows[kRowTile];
  for (unsigned r = 0; r < kRowTile; ++r)
    aRows[r] = a + std::size_t(r < rows ? r : rows - 1) * lda;
  if (cols == kColTile) {
    registerTile(aRows, b, ldb, depth, cTile, kColTile, false);
  } else {
    float bPad[kDepthChunk * kColTile];
    for (unsigned k0 = 0; k0 < depth || k0 == 0; k0 += kDepthChunk) {
      const unsigned kc = depth - k0 < kDepthChunk ? depth - k0 : kDepthChunk;
      for (unsigned p = 0; p < kc; ++p)
        for (unsigned j = 0; j < kColTile; ++j)
          bPad[p * kColTile + j] = j < cols ? toFloat(b[std::size_t(k0 + p) * ldb + j]) : 0.0f;
      const InType *chunkRows[kRowTile];
      for (unsigned r = 0; r < kRowTile; ++r)
        chunkRows[r] = aRows[r] + k0;
      registerTile(chunkRows, bPad, kColTile, kc, cTile, kColTile, k0 != 0);
      if (depth == 0)
        break;
    }
  }
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned j = 0; j < cols; ++j)
      storeValue(c + std::size_t(r) * ldc + j, cTile[r * kColTile + j]);
}
#endif

/// Rows [rowBegin, rowEnd) of C = A * B: whole register tiles straight from
/// A and B, edge tiles through padded copies.
template <typename InType, typename OutType>
inline void blockProduct(const InType *a, const InType *b, OutType *c, unsigned rowBegin, unsigned rowEnd,
                         unsigned depth, unsigned cols) {
#ifdef POPLIN_HAVE_VECTOR_EXTENSIONS
  for (unsigned r = rowBegin; r < rowEnd; r += kRowTile) {
    const unsigned rows = rowEnd - r < kRowTile ? rowEnd - r : kRowTile;
    const InType *aRows = a + std::size_t(r) * depth;
    OutType *cRows = c + std::size_t(r) * cols;
    for (unsigned j = 0; j < cols; j += kColTile) {
      const unsigned n = cols - j < kColTile ? cols - j : kColTile;
      if (rows == kRowTile && n == kColTile) {
        const InType *rowPtrs[kRowTile];
        for (unsigned k = 0; k < kRowTile; ++k)
          rowPtrs[k] = aRows + std::size_t(k) * depth;
        registerTile(rowPtrs, b + j, cols, depth, cRows + j, cols, false);
      } else
        edgeTile(aRows, depth, b + j, cols, depth, cRows + j, cols, rows, n);
    }
  }
#else
  for (unsigned r = rowBegin; r < rowEnd; ++r)
    for (unsigned j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (unsigned p = 0; p < depth; ++p)
        sum += toFloat(a[std::size_t(r) * depth + p]) * toFloat(b[std::size_t(p) * cols + j]);
      storeValue(c + std::size_t(r) * cols + j, sum);
    }
#endif
}

/// Asks for `bytes` at `p` to be brought into the cache, so that the misses of
/// a whole operand overlap instead of stalling the register tiles one by one
/// (the exchange wrote the operands long before this vertex runs).
inline void prefetchRange(const void *p, std::size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
  const char *c = static_cast<const char *>(p);
  for (std::size_t i = 0; i < bytes; i += 64)
    __builtin_prefetch(c + i);
#else
  (void)p;
  (void)bytes;
#endif
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
    matmul_detail::prefetchRange(a.data() + std::size_t(begin) * depth,
                                 std::size_t(end - begin) * depth * sizeof(InType));
    if (workerId == 0)
      matmul_detail::prefetchRange(b.data(), b.size() * sizeof(InType));
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

/// sums[0:n] = sum over p of partials[p * stride + begin : ... + n], in float (n <= kSumChunk).
template <typename PartialsType>
inline void sumPartials(const PartialsType *partials, std::size_t stride, unsigned numPartials,
                        std::size_t begin, unsigned n, float *sums) {
  for (unsigned i = 0; i < n; ++i)
    sums[i] = 0.0f;
  for (unsigned p = 0; p < numPartials; ++p) {
    const PartialsType *row = partials + p * stride + begin;
    for (unsigned i = 0; i < n; ++i)
      sums[i] += toFloat(row[i]);
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
