// Copyright (c) Aspen contributors.
// The host kernels of poplin's block product C = A * B (row-major float operands, float
// or half output), shared by the MatMulBlock vertex (vertices/poplin/MatMul.cpp) and the
// test that runs every kernel variant against the plain loop
// (test/unit/poplin_matmul_kernel_variants.cpp).
//
// Every kernel computes each element of C as the fused multiply-add chain
// c = fma(a[p], b[p], c) for p = 0, 1, ... from c = 0 and rounds it once to the output
// type, so the result is the same bits whichever kernel runs; the kernels differ only
// in how many elements they keep in registers at once and how they walk the operands.
//
// The x86 variants are compiled for their instruction sets by target attributes, not by
// the compiler's flags, so one codelet library holds them all and runs on any x86-64
// host; which one runs is decided once per process from the CPU (cpuid) and its data
// cache sizes (`hostKernel()`, docs/matmul.md).
#pragma once

#include <poplar/HalfFloat.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) &&               \
    !defined(__IPU__)
#define POPLIN_X86_KERNELS 1
#include <cpuid.h>
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

inline float toFloat(float x) {
  return x;
}
inline float toFloat(half x) {
  return float(x);
}

// ---- the host: instruction set and data caches ----------------------------------------

enum class Isa { Generic, Avx2, Avx512 };

inline const char *isaName(Isa isa) {
  return isa == Isa::Avx512 ? "avx512" : isa == Isa::Avx2 ? "avx2" : "generic";
}

/// How the block product runs on this host.
struct KernelConfig {
  Isa isa = Isa::Generic;
  /// Data cache sizes in bytes as the CPU reports them (cpuid), 0 when it does not.
  unsigned l1dBytes = 0, l2Bytes = 0;
  /// Rows of B (the inner dimension) one pass of register tiles walks: a panel of B's
  /// columns this many rows deep fits in half the L2 cache, so it stays there while every
  /// row tile of the worker passes over it (the kernels load one row of B per 20-25 fused
  /// multiply-adds, which L2 serves at full speed; chunks sized for L1 measured 4-6%
  /// slower). A longer inner dimension is walked in such chunks, each element's running
  /// sum kept in float between them (the same chain). 0: the whole depth at once.
  unsigned depthChunk = 0;
  unsigned l3Bytes = 0;
  /// Float blocks of C of at least this many bytes, whose register tiles cover whole rows
  /// (one AVX-512 panel), are written with non-temporal stores (0: never; the block product
  /// sets it to 0 for a smaller block, or one whose product it reads back at once). C is read again
  /// only in a later step; when one such block on each of an ipu2's 1,472 tiles would not
  /// fit in the L3 (the smallest block that does not: L3 / 1,472), those partial sums reach
  /// memory anyway, and writing them around the caches saves their read for ownership and
  /// keeps the operand blocks cached. Measured on Zen 5 (32 MiB L3: 22.8 KB): 74 x 79 float
  /// blocks (23.4 KB) 6-8% faster streamed, 57 x 64 (14.6 KB) 5% slower (their 21 MB of
  /// partials stay in the L3 for the reduction). ASPEN_CODELET_STREAM=0: plain stores.
  /// Limitation: 1,472 tiles whatever the target (docs/matmul.md): a smaller model streams
  /// blocks whose partial sums would all fit in the L3.
  std::size_t streamBytes = 0;
};

/// Widest column panel (in floats) each kernel walks: the depth chunk is sized for it.
inline unsigned panelFloats(Isa isa) {
  return isa == Isa::Avx512 ? 80 : isa == Isa::Avx2 ? 16 : 1;
}

/// The rows of B of a panel `panelWidth` floats wide that fit in half of a cache of
/// `cacheBytes` (at least 16; 0 = the whole depth at once when the size is unknown).
inline unsigned depthChunkFor(unsigned cacheBytes, unsigned panelWidth) {
  if (cacheBytes == 0)
    return 0;
  const unsigned rowsOfB = cacheBytes / 2 / (panelWidth * unsigned(sizeof(float)));
  return rowsOfB < 16 ? 16 : rowsOfB;
}

#ifdef POPLIN_X86_KERNELS
/// The size in bytes of the data cache at `level` (1 or 2) from cpuid's cache
/// descriptors (leaf 4 on Intel, 0x8000001D on AMD), or 0.
inline unsigned cpuidCacheBytes(unsigned level) {
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
    return 0;
  const bool intel = ebx == 0x756e6547; // "Genu"
  unsigned leaf = 4;
  if (!intel) {
    if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x8000001Du) // int in clang's cpuid.h
      return 0;
    leaf = 0x8000001Du;
  } else if (eax < 4) {
    return 0;
  }
  for (unsigned sub = 0; sub < 16; ++sub) {
    __cpuid_count(leaf, sub, eax, ebx, ecx, edx);
    const unsigned type = eax & 0x1f; // 0 none, 1 data, 2 instruction, 3 unified
    if (type == 0)
      break;
    if (((eax >> 5) & 7) != level || type == 2)
      continue;
    const unsigned ways = (ebx >> 22) + 1, partitions = ((ebx >> 12) & 0x3ff) + 1, line = (ebx & 0xfff) + 1;
    return ways * partitions * line * (ecx + 1);
  }
  return 0;
}

/// Whether the CPU has F16C (cpuid leaf 1, ecx bit 29): the AVX2 kernel's half stores.
inline bool cpuHasF16c() {
  unsigned eax, ebx, ecx, edx;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}
#endif

/// The instruction sets this host runs, best first: AVX-512 (F, BW and VL: masked 16-bit
/// loads), AVX2 (with FMA and F16C),
/// the plain loop (always).
inline std::vector<Isa> availableIsas() {
  std::vector<Isa> isas;
#ifdef POPLIN_X86_KERNELS
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpuHasF16c();
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    isas.push_back(Isa::Avx512);
  if (avx2)
    isas.push_back(Isa::Avx2);
#endif
  isas.push_back(Isa::Generic);
  return isas;
}

/// The configuration for `isa` on this host's caches.
inline KernelConfig configFor(Isa isa) {
  KernelConfig config;
  config.isa = isa;
#ifdef POPLIN_X86_KERNELS
  config.l1dBytes = cpuidCacheBytes(1);
  config.l2Bytes = cpuidCacheBytes(2);
  config.l3Bytes = cpuidCacheBytes(3);
#endif
  config.depthChunk = depthChunkFor(config.l2Bytes, panelFloats(isa));
  return config;
}

/// The best kernel this host runs, capped by ASPEN_CODELET_ISA (avx512, avx2, generic).
inline KernelConfig detectKernel() {
  const std::vector<Isa> isas = availableIsas();
  Isa best = isas.front();
  const char *cap = std::getenv("ASPEN_CODELET_ISA");
  if (cap && std::strcmp(cap, "generic") == 0)
    best = Isa::Generic;
  else if (cap && std::strcmp(cap, "avx2") == 0 && best == Isa::Avx512)
    best = Isa::Avx2;
  KernelConfig config = configFor(best);
  const char *stream = std::getenv("ASPEN_CODELET_STREAM");
  if (best == Isa::Avx512 && config.l3Bytes != 0 && !(stream && std::strcmp(stream, "0") == 0))
    config.streamBytes = config.l3Bytes / 1472 + 1;
  return config;
}

// The host's, not a tile's: the same on every tile and set once. In a namespace whose name
// marks Aspen's own objects (docs/tile-model.md), so it is not per-tile data that every matmul
// vertex would pay to swap in. Not thread_local: LeakSanitizer's tracer (clang 14's runtime)
// faults scanning the dynamic TLS of a dlopen'ed library at exit.
namespace aspen_codelet_host {
inline const KernelConfig &hostKernel() {
  static const KernelConfig config = detectKernel();
  return config;
}
} // namespace aspen_codelet_host
using aspen_codelet_host::hostKernel;

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

/// Where a register tile's sums start from and go to. The inner dimension is walked in
/// chunks (KernelConfig::depthChunk): the first chunk starts from zero, later ones from the
/// float sums the previous chunk left in `acc` (leading dimension `ldacc`), and every chunk
/// but the last leaves its sums there; the last rounds them to the output.
struct Chain {
  float *acc = nullptr;
  std::size_t ldacc = 0;
  bool first = true, last = true;
};

// ---- AVX2: 8-float vectors, tiles of up to 6 rows x 2 vectors -----------------------------

#define POPLIN_AVX2 __attribute__((target("avx2,fma,f16c")))

POPLIN_AVX2 inline void store8(float *dst, __m256 v) {
  _mm256_storeu_ps(dst, v);
}
POPLIN_AVX2 inline void store8(half *dst, __m256 v) {
  const __m128i bits = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(static_cast<void *>(dst)), bits);
}

/// C[0:R, 0:8V) (+)= A[0:R, 0:depth) * B[0:depth, 0:8V), the last vector holding only
/// `lastCols` columns when `Masked` (B is read no further than its last column).
template <unsigned R, unsigned V, bool Masked, typename OutType>
POPLIN_AVX2 void tileAvx2(const float *a, std::size_t lda, const float *b, std::size_t ldb, unsigned depth,
                          OutType *c, std::size_t ldc, unsigned lastCols, const Chain &chain) {
  __m256i mask = _mm256_setzero_si256();
  if (Masked)
    mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(int(lastCols)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[R][V];
  POPLIN_UNROLL
  for (unsigned r = 0; r < R; ++r)
    POPLIN_UNROLL
  for (unsigned v = 0; v < V; ++v)
    acc[r][v] = chain.first            ? _mm256_setzero_ps()
                : Masked && v + 1 == V ? _mm256_maskload_ps(chain.acc + r * chain.ldacc + 8 * v, mask)
                                       : _mm256_loadu_ps(chain.acc + r * chain.ldacc + 8 * v);
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
    if (!chain.last) { // the running sums, no further than the last column
      float *sums = chain.acc + r * chain.ldacc + 8 * v;
      if (Masked && v + 1 == V)
        _mm256_maskstore_ps(sums, mask, acc[r][v]);
      else
        _mm256_storeu_ps(sums, acc[r][v]);
      continue;
    }
    OutType *dst = c + r * ldc + 8 * v;
    // A float C's partial vector by a masked store (storePartial's copy loop would be compiled
    // to a memcpy call, one for each row of each register tile).
    if constexpr (std::is_same_v<OutType, float>) {
      if (Masked && v + 1 == V) {
        _mm256_maskstore_ps(dst, mask, acc[r][v]);
        continue;
      }
    }
    if (Masked && v + 1 == V) {
      alignas(32) float tile[8];
      _mm256_store_ps(tile, acc[r][v]);
      storePartial(dst, tile, lastCols);
    } else {
      store8(dst, acc[r][v]);
    }
  }
}

template <typename OutType, typename BType = float>
using TileFn = void (*)(const float *, std::size_t, const BType *, std::size_t, unsigned, OutType *,
                        std::size_t, unsigned, const Chain &);

template <unsigned R, typename OutType> TileFn<OutType> pickAvx2(unsigned vectors, bool masked) {
  if (vectors == 1)
    return masked ? tileAvx2<R, 1, true, OutType> : tileAvx2<R, 1, false, OutType>;
  return masked ? tileAvx2<R, 2, true, OutType> : tileAvx2<R, 2, false, OutType>;
}

template <typename OutType> TileFn<OutType> pickAvx2(unsigned rows, unsigned vectors, bool masked) {
  switch (rows) {
  case 1:
    return pickAvx2<1, OutType>(vectors, masked);
  case 2:
    return pickAvx2<2, OutType>(vectors, masked);
  case 3:
    return pickAvx2<3, OutType>(vectors, masked);
  case 4:
    return pickAvx2<4, OutType>(vectors, masked);
  case 5:
    return pickAvx2<5, OutType>(vectors, masked);
  default:
    return pickAvx2<6, OutType>(vectors, masked);
  }
}

/// The column panels of the AVX2 kernel: 16 floats (2 vectors), the last one what is left.
struct PanelsAvx2 {
  static constexpr unsigned rowTile = 6;
  static unsigned next(unsigned colsLeft) { return colsLeft < 16 ? colsLeft : 16; }
};

// ---- AVX-512: 16-float vectors, tiles of R rows x V vectors (R * V + V + 1 <= 32 registers) ----

#define POPLIN_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl")))

POPLIN_AVX512 inline void store16(float *dst, __m512 v) {
  _mm512_storeu_ps(dst, v);
}
POPLIN_AVX512 inline void store16(half *dst, __m512 v) {
  // The zero-masked form: GCC 12 warns about the undefined source of the plain one.
  const __m256i bits =
      _mm512_maskz_cvtps_ph(__mmask16(0xffff), v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  _mm256_storeu_si256(reinterpret_cast<__m256i *>(static_cast<void *>(dst)), bits);
}

/// 16 values of a row of B as floats, the first `n` of them when `partial` (no further).
POPLIN_AVX512 inline __m512 loadB16(const float *p, bool partial, __mmask16 mask, unsigned) {
  return partial ? _mm512_maskz_loadu_ps(mask, p) : _mm512_loadu_ps(p);
}
POPLIN_AVX512 inline __m512 loadB16(const half *p, bool partial, __mmask16 mask, unsigned) {
  // Half B converted as it is loaded (exact): no float copy of B per worker. The zero-masked
  // conversion: GCC 12 warns about the undefined source of the plain one. A partial vector
  // by a masked 16-bit load (AVX-512 BW and VL): a copy to a local buffer here was a
  // memcpy call for every row of B of every register tile.
  const void *bits = static_cast<const void *>(p);
  return _mm512_maskz_cvtph_ps(__mmask16(0xffff),
                               partial ? _mm256_maskz_loadu_epi16(mask, bits)
                                       : _mm256_loadu_si256(static_cast<const __m256i *>(bits)));
}

/// C[0:R, 0:16V) (+)= A[0:R, 0:depth) * B[0:depth, 0:16V), the last vector holding
/// `lastCols` (1..16) columns (masked loads: B is read no further than its last column).
template <unsigned R, unsigned V, typename OutType, typename BType>
POPLIN_AVX512 void tileAvx512(const float *a, std::size_t lda, const BType *b, std::size_t ldb,
                              unsigned depth, OutType *c, std::size_t ldc, unsigned lastCols,
                              const Chain &chain) {
  const __mmask16 mask = __mmask16((1u << lastCols) - 1u);
  __m512 acc[R][V];
  POPLIN_UNROLL
  for (unsigned r = 0; r < R; ++r)
    POPLIN_UNROLL
  for (unsigned v = 0; v < V; ++v)
    acc[r][v] = chain.first ? _mm512_setzero_ps()
                            : _mm512_maskz_loadu_ps(v + 1 == V ? mask : __mmask16(0xffff),
                                                    chain.acc + r * chain.ldacc + 16 * v);
  for (unsigned p = 0; p < depth; ++p) {
    const BType *bRow = b + std::size_t(p) * ldb;
    __m512 bv[V];
    POPLIN_UNROLL
    for (unsigned v = 0; v < V; ++v)
      bv[v] = loadB16(bRow + 16 * v, v + 1 == V && lastCols != 16, mask, lastCols);
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
    if (!chain.last) { // the running sums, no further than the last column
      _mm512_mask_storeu_ps(chain.acc + r * chain.ldacc + 16 * v, v + 1 == V ? mask : __mmask16(0xffff),
                            acc[r][v]);
      continue;
    }
    OutType *dst = c + r * ldc + 16 * v;
    // A float C's partial vector by a masked store (storePartial's copy loop would be compiled
    // to a memcpy call, one for each row of each register tile).
    if constexpr (std::is_same_v<OutType, float>) {
      if (v + 1 == V && lastCols != 16) {
        _mm512_mask_storeu_ps(dst, mask, acc[r][v]);
        continue;
      }
    }
    if (v + 1 == V && lastCols != 16) {
      alignas(64) float tile[16];
      _mm512_store_ps(tile, acc[r][v]);
      storePartial(dst, tile, lastCols);
    } else {
      store16(dst, acc[r][v]);
    }
  }
}

template <unsigned R, typename OutType, typename BType> TileFn<OutType, BType> pickAvx512(unsigned vectors) {
  switch (vectors) {
  case 1:
    return tileAvx512<R, 1, OutType, BType>;
  case 2:
    return tileAvx512<R, 2, OutType, BType>;
  case 3:
    return tileAvx512<R, 3, OutType, BType>;
  case 4:
    return tileAvx512<R, 4, OutType, BType>;
  default: // only with R <= 5 (rowTile)
    return tileAvx512<R, 5, OutType, BType>;
  }
}

template <typename OutType, typename BType>
TileFn<OutType, BType> pickAvx512(unsigned rows, unsigned vectors) {
  switch (rows) {
  case 1:
    return pickAvx512<1, OutType, BType>(vectors);
  case 2:
    return pickAvx512<2, OutType, BType>(vectors);
  case 3:
    return pickAvx512<3, OutType, BType>(vectors);
  case 4:
    return pickAvx512<4, OutType, BType>(vectors);
  case 5:
    return pickAvx512<5, OutType, BType>(vectors);
  default:
    return pickAvx512<6, OutType, BType>(vectors);
  }
}

#endif // POPLIN_X86_KERNELS

// ---- the register tiling of a block ---------------------------------------------

/// Rows of C one register tile of `isa` computes for a block `cols` wide: the workers
/// split the rows of C in whole tiles of this many rows.
inline unsigned rowTile(Isa isa, unsigned cols) {
  if (isa != Isa::Avx512)
    return 6;
  // One panel of 5 vectors (65..80 columns) takes 5 rows (25 accumulators); otherwise
  // panels of 4 vectors take 6 (24).
  return cols > 64 && cols <= 80 ? 5 : 6;
}

/// Columns of the next AVX-512 panel when `colsLeft` are left of a block `cols` wide:
/// the whole block when it is at most 5 vectors wide, else 4 vectors (the last what is left).
inline unsigned panelAvx512(unsigned cols, unsigned colsLeft) {
  if (cols <= 80)
    return colsLeft;
  return colsLeft < 64 ? colsLeft : 64;
}

#ifdef POPLIN_X86_KERNELS
/// dst[0:n] = src[0:n] (src 64-byte aligned scratch), the whole cache lines of dst by
/// non-temporal stores (the caller fences once it is done), the partial lines at either end
/// by plain stores.
POPLIN_AVX512 inline void streamFloats(float *dst, const float *src, std::size_t n) {
  std::size_t i = 0;
  const std::size_t head = (64 - reinterpret_cast<std::uintptr_t>(dst) % 64) % 64;
  if (head % sizeof(float) != 0) { // not float-aligned: plain copy
    std::memcpy(static_cast<void *>(dst), src, n * sizeof(float));
    return;
  }
  for (; i < n && i < head / sizeof(float); ++i)
    dst[i] = src[i];
  for (; i + 16 <= n; i += 16)
    _mm512_stream_ps(dst + i, _mm512_loadu_ps(src + i));
  for (; i < n; ++i)
    dst[i] = src[i];
}

/// C[0:rows, 0:cols] = A * B by register tiles of `isa`, the inner dimension walked in
/// chunks of `config.depthChunk` (sums carried in float in `accScratch`, rows * cols floats).
/// B is float, or half for the AVX-512 kernel (`takesHalfB`), converted as it is loaded.
template <typename OutType, typename BType>
void productTiled(const KernelConfig &config, const float *a, std::size_t lda, const BType *b,
                  std::size_t ldb, unsigned rows, unsigned depth, unsigned cols, OutType *c, std::size_t ldc,
                  float *accScratch) {
  const Isa isa = config.isa;
  const unsigned rt = rowTile(isa, cols);
  const unsigned chunk = config.depthChunk == 0 || accScratch == nullptr ? depth : config.depthChunk;
  bool streamed = false;
  alignas(64) float tile[6 * 80]; // a register tile's sums before they are streamed to C
  for (unsigned d = 0; d < depth; d += chunk) {
    const unsigned dn = depth - d < chunk ? depth - d : chunk;
    Chain chain;
    chain.acc = accScratch;
    chain.ldacc = cols;
    chain.first = d == 0;
    chain.last = d + dn == depth;
    for (unsigned j = 0; j < cols;) {
      const unsigned n = isa == Isa::Avx512 ? panelAvx512(cols, cols - j) : PanelsAvx2::next(cols - j);
      const unsigned width = isa == Isa::Avx512 ? 16 : 8;
      const unsigned vectors = (n + width - 1) / width, last = n - width * (vectors - 1);
      for (unsigned r = 0; r < rows; r += rt) {
        const unsigned R = rows - r < rt ? rows - r : rt;
        Chain at = chain;
        if (at.acc)
          at.acc += std::size_t(r) * cols + j;
        const float *aTile = a + r * lda + d;
        const BType *bTile = b + std::size_t(d) * ldb + j;
        OutType *cTile = c + r * ldc + j;
        if constexpr (std::is_same_v<OutType, float>) {
          if (isa == Isa::Avx512 && config.streamBytes != 0 && chain.last && n == cols && ldc == cols &&
              cols <= 80) {
            pickAvx512<float, BType>(R, vectors)(aTile, lda, bTile, ldb, dn, tile, cols, last, at);
            streamFloats(cTile, tile, std::size_t(R) * cols);
            streamed = true;
            continue;
          }
        }
        if (isa == Isa::Avx512)
          pickAvx512<OutType, BType>(R, vectors)(aTile, lda, bTile, ldb, dn, cTile, ldc, last, at);
        else if constexpr (std::is_same_v<BType, float>)
          pickAvx2<OutType>(R, vectors, last != 8)(aTile, lda, bTile, ldb, dn, cTile, ldc, last, at);
      }
      j += n;
    }
  }
  if (streamed) // the non-temporal stores ordered before anything the caller stores next
    _mm_sfence();
}
#endif

/// Whether `config`'s kernel reads half B directly (productHalfB), converting as it loads.
inline bool takesHalfB(const KernelConfig &config) {
  return config.isa == Isa::Avx512;
}

/// C = A * B with float A and half B, by a kernel that takesHalfB (AVX-512).
template <typename OutType>
void productHalfB(const KernelConfig &config, const float *a, std::size_t lda, const half *b, std::size_t ldb,
                  unsigned rows, unsigned depth, unsigned cols, OutType *c, std::size_t ldc,
                  float *accScratch) {
#ifdef POPLIN_X86_KERNELS
  if (takesHalfB(config) && depth > 0) {
    productTiled(config, a, lda, b, ldb, rows, depth, cols, c, ldc, accScratch);
    return;
  }
#endif
  for (unsigned r = 0; r < rows; ++r) // the plain loop (depth 0, or a kernel that does not take half B)
    for (unsigned j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (unsigned p = 0; p < depth; ++p)
        sum = std::fma(a[r * lda + p], toFloat(b[p * ldb + j]), sum);
      storeValue(c + r * ldc + j, sum);
    }
  (void)accScratch;
}

/// C[0:rows, 0:cols] = A * B with float operands, by `config`'s kernel. `accScratch` (rows *
/// cols floats, or null: the whole depth in one pass) carries sums between depth chunks.
template <typename OutType>
void product(const KernelConfig &config, const float *a, std::size_t lda, const float *b, std::size_t ldb,
             unsigned rows, unsigned depth, unsigned cols, OutType *c, std::size_t ldc, float *accScratch) {
#ifdef POPLIN_X86_KERNELS
  if (config.isa != Isa::Generic && depth > 0) {
    productTiled(config, a, lda, b, ldb, rows, depth, cols, c, ldc, accScratch);
    return;
  }
#else
  (void)accScratch;
#endif
  productGeneric(a, lda, b, ldb, rows, depth, cols, c, ldc);
}

#undef POPLIN_AVX2
#undef POPLIN_AVX512

} // namespace matmul_detail
} // namespace poplin
