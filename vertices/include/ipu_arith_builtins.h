/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 *
 * The IPU builtins of Graphcore's toolchain that have a meaning on the host without
 * the tile's runtime state: bitwise operations on float registers, the float and half
 * vector min/max/absmax/absadd/clamp/compare instructions, the half transcendental
 * instructions, lateral sums and maxima, byte permutations, and the class tests. Each
 * has the name and signature Graphcore's clang gives it (the typed forms such as
 * `__builtin_ipu_f32v2max`, and the overloaded forms `<ipu_builtins.h>` declares, such
 * as `__builtin_ipu_max`), computed lane by lane with host arithmetic.
 *
 * Results: a comparison gives a lane of all ones (true) or all zeros (false) in the
 * operand's own type, as the IPU's compare instructions do (a true float lane is the
 * bit pattern 0xffffffff). max/min/absmax/clamp return one of their operands (a NaN
 * operand yields the other, as `ipu::fmax`/`fmin`); absadd rounds once to the lane's
 * type (round to nearest, ties to even); the half transcendental forms compute in
 * float with the host's functions and round once to half, which is not the IPU's
 * hardware approximation (docs/codelets.md). The class tests give 1 or 0 per lane.
 *
 * Builtins that need the tile's state (tile id, cycle counters, random numbers, the
 * accumulators, control registers) are in <ipu_tile_builtins.h>, or not provided
 * (docs/codelets.md lists them). popc includes this header in every C++ codelet
 * build, so code written for hardware may call the typed builtins without including
 * anything, as with Graphcore's compiler. */
#ifndef ASPEN_IPU_ARITH_BUILTINS_H
#define ASPEN_IPU_ARITH_BUILTINS_H

#include <ipudef.h>

#ifdef __cplusplus
#define ASPEN_IPU_FN inline __attribute__((always_inline))
#else
#define ASPEN_IPU_FN static inline __attribute__((always_inline))
#endif

#if defined(__cplusplus) || defined(ASPEN_HALF_BUILTIN)
#define ASPEN_IPU_HAS_HALF 1
#endif

/* ---- element helpers ------------------------------------------------------------ */

ASPEN_IPU_FN unsigned __aspen_ipu_fbits(float x) {
  unsigned b;
  __builtin_memcpy(&b, &x, sizeof b);
  return b;
}
ASPEN_IPU_FN float __aspen_ipu_ffrom(unsigned b) {
  float x;
  __builtin_memcpy(&x, &b, sizeof x);
  return x;
}
ASPEN_IPU_FN float __aspen_ipu_toF_F(float x) {
  return x;
}
ASPEN_IPU_FN float __aspen_ipu_fromF_F(float x) {
  return x;
}
ASPEN_IPU_FN float __aspen_ipu_mask_F(int c) {
  return __aspen_ipu_ffrom(c ? 0xffffffffu : 0u);
}
ASPEN_IPU_FN unsigned __aspen_ipu_ebits_F(float x) {
  return __aspen_ipu_fbits(x);
}

#ifdef ASPEN_IPU_HAS_HALF
ASPEN_IPU_FN float __aspen_ipu_toF_H(half x) {
  return (float)x;
}
ASPEN_IPU_FN half __aspen_ipu_fromF_H(float x) {
  return (half)x;
}
ASPEN_IPU_FN half __aspen_ipu_mask_H(int c) {
  const unsigned short b = c ? 0xffffu : 0u;
  half x;
  __builtin_memcpy((void *)&x, &b, sizeof x);
  return x;
}
ASPEN_IPU_FN unsigned __aspen_ipu_ebits_H(half x) {
  unsigned short b;
  __builtin_memcpy(&b, (const void *)&x, sizeof b);
  return b;
}
#endif

/* Operations on float values (a half lane is converted exactly, the result rounded once). */
#define __aspen_ipu_op_max(a, b) __builtin_fmaxf((a), (b))
#define __aspen_ipu_op_min(a, b) __builtin_fminf((a), (b))
#define __aspen_ipu_op_absmax(a, b) __builtin_fmaxf(__builtin_fabsf(a), __builtin_fabsf(b))
#define __aspen_ipu_op_absadd(a, b) (__builtin_fabsf(a) + __builtin_fabsf(b))
#define __aspen_ipu_cmp_eq(a, b) ((a) == (b))
#define __aspen_ipu_cmp_ne(a, b) ((a) != (b))
#define __aspen_ipu_cmp_lt(a, b) ((a) < (b))
#define __aspen_ipu_cmp_le(a, b) ((a) <= (b))
#define __aspen_ipu_cmp_gt(a, b) ((a) > (b))
#define __aspen_ipu_cmp_ge(a, b) ((a) >= (b))
#define __aspen_ipu_fn_exp(x) __builtin_expf(x)
#define __aspen_ipu_fn_exp2(x) __builtin_exp2f(x)
#define __aspen_ipu_fn_ln(x) __builtin_logf(x)
#define __aspen_ipu_fn_log2(x) __builtin_log2f(x)
#define __aspen_ipu_fn_tanh(x) __builtin_tanhf(x)
#define __aspen_ipu_fn_sigm(x) (1.0f / (1.0f + __builtin_expf(-(x))))

/* Lane-by-lane definitions. K: F (float lanes) or H (half lanes). */
#define ASPEN_IPU_BINARY(NAME, VT, K, N, OP)                                                                 \
  ASPEN_IPU_FN VT NAME(VT a, VT b) {                                                                         \
    VT r = a;                                                                                                \
    for (int i = 0; i < (N); ++i)                                                                            \
      r[i] = __aspen_ipu_fromF_##K(OP(__aspen_ipu_toF_##K(a[i]), __aspen_ipu_toF_##K(b[i])));                \
    return r;                                                                                                \
  }
#define ASPEN_IPU_COMPARE(NAME, VT, K, N, CMP)                                                               \
  ASPEN_IPU_FN VT NAME(VT a, VT b) {                                                                         \
    VT r = a;                                                                                                \
    for (int i = 0; i < (N); ++i)                                                                            \
      r[i] = __aspen_ipu_mask_##K(CMP(__aspen_ipu_toF_##K(a[i]), __aspen_ipu_toF_##K(b[i])));                \
    return r;                                                                                                \
  }
#define ASPEN_IPU_UNARY(NAME, VT, K, N, FN)                                                                  \
  ASPEN_IPU_FN VT NAME(VT a) {                                                                               \
    VT r = a;                                                                                                \
    for (int i = 0; i < (N); ++i)                                                                            \
      r[i] = __aspen_ipu_fromF_##K(FN(__aspen_ipu_toF_##K(a[i])));                                           \
    return r;                                                                                                \
  }
/* Class tests on the bits: E exponent mask, M mantissa mask. */
#define ASPEN_IPU_CLASS(NAME, RT, VT, K, N, TEST)                                                            \
  ASPEN_IPU_FN RT NAME(VT a) {                                                                               \
    RT r = {0};                                                                                              \
    for (int i = 0; i < (N); ++i)                                                                            \
      r[i] = TEST(__aspen_ipu_ebits_##K(a[i]), __aspen_ipu_exp_##K, __aspen_ipu_mant_##K);                   \
    return r;                                                                                                \
  }
#define __aspen_ipu_exp_F 0x7f800000u
#define __aspen_ipu_mant_F 0x007fffffu
#define __aspen_ipu_exp_H 0x7c00u
#define __aspen_ipu_mant_H 0x03ffu
#define __aspen_ipu_isnan_bits(b, e, m) (((b) & (e)) == (e) && ((b) & (m)) != 0)
#define __aspen_ipu_isinf_bits(b, e, m) (((b) & (e)) == (e) && ((b) & (m)) == 0)
#define __aspen_ipu_isfinite_bits(b, e, m) (((b) & (e)) != (e))

/* ---- float scalars ------------------------------------------------------------------ */

#define ASPEN_IPU_SCALAR_BINARY(NAME, OP)                                                                    \
  ASPEN_IPU_FN float NAME(float a, float b) {                                                                \
    return OP(a, b);                                                                                         \
  }
#define ASPEN_IPU_SCALAR_COMPARE(NAME, CMP)                                                                  \
  ASPEN_IPU_FN float NAME(float a, float b) {                                                                \
    return __aspen_ipu_mask_F(CMP(a, b));                                                                    \
  }
ASPEN_IPU_SCALAR_BINARY(__builtin_ipu_f32max, __aspen_ipu_op_max)
ASPEN_IPU_SCALAR_BINARY(__builtin_ipu_f32min, __aspen_ipu_op_min)
ASPEN_IPU_SCALAR_BINARY(__builtin_ipu_f32absmax, __aspen_ipu_op_absmax)
ASPEN_IPU_SCALAR_BINARY(__builtin_ipu_f32absadd, __aspen_ipu_op_absadd)
ASPEN_IPU_SCALAR_COMPARE(__builtin_ipu_f32cmpeq, __aspen_ipu_cmp_eq)
ASPEN_IPU_SCALAR_COMPARE(__builtin_ipu_f32cmpne, __aspen_ipu_cmp_ne)
ASPEN_IPU_SCALAR_COMPARE(__builtin_ipu_f32cmplt, __aspen_ipu_cmp_lt)
ASPEN_IPU_SCALAR_COMPARE(__builtin_ipu_f32cmple, __aspen_ipu_cmp_le)
ASPEN_IPU_SCALAR_COMPARE(__builtin_ipu_f32cmpgt, __aspen_ipu_cmp_gt)
ASPEN_IPU_SCALAR_COMPARE(__builtin_ipu_f32cmpge, __aspen_ipu_cmp_ge)
ASPEN_IPU_FN float __builtin_ipu_f32sigm(float x) {
  return __aspen_ipu_fn_sigm(x);
}
/* f32clamp(x, {lower, upper}): min(max(x, lower), upper). */
ASPEN_IPU_FN float __builtin_ipu_f32clamp(float x, float2 limits) {
  return __builtin_fminf(__builtin_fmaxf(x, limits[0]), limits[1]);
}
ASPEN_IPU_FN int __builtin_ipu_isnan_f32(float x) {
  return __aspen_ipu_isnan_bits(__aspen_ipu_fbits(x), __aspen_ipu_exp_F, __aspen_ipu_mant_F);
}
ASPEN_IPU_FN int __builtin_ipu_isinf_f32(float x) {
  return __aspen_ipu_isinf_bits(__aspen_ipu_fbits(x), __aspen_ipu_exp_F, __aspen_ipu_mant_F);
}
ASPEN_IPU_FN int __builtin_ipu_isfinite_f32(float x) {
  return __aspen_ipu_isfinite_bits(__aspen_ipu_fbits(x), __aspen_ipu_exp_F, __aspen_ipu_mant_F);
}

/* ---- float2 -------------------------------------------------------------------------- */

ASPEN_IPU_BINARY(__builtin_ipu_f32v2max, float2, F, 2, __aspen_ipu_op_max)
ASPEN_IPU_BINARY(__builtin_ipu_f32v2min, float2, F, 2, __aspen_ipu_op_min)
ASPEN_IPU_BINARY(__builtin_ipu_f32v2absmax, float2, F, 2, __aspen_ipu_op_absmax)
ASPEN_IPU_BINARY(__builtin_ipu_f32v2absadd, float2, F, 2, __aspen_ipu_op_absadd)
ASPEN_IPU_COMPARE(__builtin_ipu_f32v2cmpeq, float2, F, 2, __aspen_ipu_cmp_eq)
ASPEN_IPU_COMPARE(__builtin_ipu_f32v2cmpne, float2, F, 2, __aspen_ipu_cmp_ne)
ASPEN_IPU_COMPARE(__builtin_ipu_f32v2cmplt, float2, F, 2, __aspen_ipu_cmp_lt)
ASPEN_IPU_COMPARE(__builtin_ipu_f32v2cmple, float2, F, 2, __aspen_ipu_cmp_le)
ASPEN_IPU_COMPARE(__builtin_ipu_f32v2cmpgt, float2, F, 2, __aspen_ipu_cmp_gt)
ASPEN_IPU_COMPARE(__builtin_ipu_f32v2cmpge, float2, F, 2, __aspen_ipu_cmp_ge)
/* f32v2clamp(x, {lower, upper}): each lane clamped to the same limits. */
ASPEN_IPU_FN float2 __builtin_ipu_f32v2clamp(float2 x, float2 limits) {
  float2 r = x;
  for (int i = 0; i < 2; ++i)
    r[i] = __builtin_fminf(__builtin_fmaxf(x[i], limits[0]), limits[1]);
  return r;
}
ASPEN_IPU_CLASS(__builtin_ipu_isnan_v2f32, int2, float2, F, 2, __aspen_ipu_isnan_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isinf_v2f32, int2, float2, F, 2, __aspen_ipu_isinf_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isfinite_v2f32, int2, float2, F, 2, __aspen_ipu_isfinite_bits)

/* ---- half2 and half4 ----------------------------------------------------------------- */

#ifdef ASPEN_IPU_HAS_HALF
#define ASPEN_IPU_HALF_VECTOR(P, VT, N)                                                                      \
  ASPEN_IPU_BINARY(__builtin_ipu_##P##max, VT, H, N, __aspen_ipu_op_max)                                     \
  ASPEN_IPU_BINARY(__builtin_ipu_##P##min, VT, H, N, __aspen_ipu_op_min)                                     \
  ASPEN_IPU_BINARY(__builtin_ipu_##P##absmax, VT, H, N, __aspen_ipu_op_absmax)                               \
  ASPEN_IPU_BINARY(__builtin_ipu_##P##absadd, VT, H, N, __aspen_ipu_op_absadd)                               \
  ASPEN_IPU_COMPARE(__builtin_ipu_##P##cmpeq, VT, H, N, __aspen_ipu_cmp_eq)                                  \
  ASPEN_IPU_COMPARE(__builtin_ipu_##P##cmpne, VT, H, N, __aspen_ipu_cmp_ne)                                  \
  ASPEN_IPU_COMPARE(__builtin_ipu_##P##cmplt, VT, H, N, __aspen_ipu_cmp_lt)                                  \
  ASPEN_IPU_COMPARE(__builtin_ipu_##P##cmple, VT, H, N, __aspen_ipu_cmp_le)                                  \
  ASPEN_IPU_COMPARE(__builtin_ipu_##P##cmpgt, VT, H, N, __aspen_ipu_cmp_gt)                                  \
  ASPEN_IPU_COMPARE(__builtin_ipu_##P##cmpge, VT, H, N, __aspen_ipu_cmp_ge)
ASPEN_IPU_HALF_VECTOR(f16v2, half2, 2)
ASPEN_IPU_HALF_VECTOR(f16v4, half4, 4)
#undef ASPEN_IPU_HALF_VECTOR

ASPEN_IPU_UNARY(__builtin_ipu_f16v2exp, half2, H, 2, __aspen_ipu_fn_exp)
ASPEN_IPU_UNARY(__builtin_ipu_f16v2exp2, half2, H, 2, __aspen_ipu_fn_exp2)
ASPEN_IPU_UNARY(__builtin_ipu_f16v2ln, half2, H, 2, __aspen_ipu_fn_ln)
ASPEN_IPU_UNARY(__builtin_ipu_f16v2log2, half2, H, 2, __aspen_ipu_fn_log2)
ASPEN_IPU_UNARY(__builtin_ipu_f16v2tanh, half2, H, 2, __aspen_ipu_fn_tanh)
ASPEN_IPU_UNARY(__builtin_ipu_f16v2sigm, half2, H, 2, __aspen_ipu_fn_sigm)

/* f16v2clamp(x, {lower, upper}), f16v4clamp(x, {lower, upper}). */
ASPEN_IPU_FN half2 __builtin_ipu_f16v2clamp(half2 x, half2 limits) {
  half2 r = x;
  for (int i = 0; i < 2; ++i)
    r[i] = (half)__builtin_fminf(__builtin_fmaxf((float)x[i], (float)limits[0]), (float)limits[1]);
  return r;
}
ASPEN_IPU_FN half4 __builtin_ipu_f16v4clamp(half4 x, half2 limits) {
  half4 r = x;
  for (int i = 0; i < 4; ++i)
    r[i] = (half)__builtin_fminf(__builtin_fmaxf((float)x[i], (float)limits[0]), (float)limits[1]);
  return r;
}
/* Lateral (within a register) sums, to float, and maxima: adjacent lanes pair up. */
ASPEN_IPU_FN float __builtin_ipu_f16v2sum(half2 x) {
  return (float)x[0] + (float)x[1];
}
ASPEN_IPU_FN float2 __builtin_ipu_f16v4sum(half4 x) {
  float2 r = {0};
  r[0] = (float)x[0] + (float)x[1];
  r[1] = (float)x[2] + (float)x[3];
  return r;
}
ASPEN_IPU_FN half __builtin_ipu_f16v2maxc(half2 x) {
  return (half)__builtin_fmaxf((float)x[0], (float)x[1]);
}
ASPEN_IPU_FN half2 __builtin_ipu_f16v4maxc(half4 x) {
  half2 r = {0};
  r[0] = (half)__builtin_fmaxf((float)x[0], (float)x[1]);
  r[1] = (half)__builtin_fmaxf((float)x[2], (float)x[3]);
  return r;
}
ASPEN_IPU_CLASS(__builtin_ipu_isnan_v2f16, short2, half2, H, 2, __aspen_ipu_isnan_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isinf_v2f16, short2, half2, H, 2, __aspen_ipu_isinf_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isfinite_v2f16, short2, half2, H, 2, __aspen_ipu_isfinite_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isnan_v4f16, short4, half4, H, 4, __aspen_ipu_isnan_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isinf_v4f16, short4, half4, H, 4, __aspen_ipu_isinf_bits)
ASPEN_IPU_CLASS(__builtin_ipu_isfinite_v4f16, short4, half4, H, 4, __aspen_ipu_isfinite_bits)
#endif /* ASPEN_IPU_HAS_HALF */

/* ---- bitwise operations and permutations ---------------------------------------------- */

ASPEN_IPU_FN int __builtin_ipu_and_i32(int a, int b) {
  return a & b;
}
ASPEN_IPU_FN int __builtin_ipu_andc_i32(int a, int b) {
  return a & ~b;
}
ASPEN_IPU_FN int __builtin_ipu_or_i32(int a, int b) {
  return a | b;
}
ASPEN_IPU_FN float __builtin_ipu_and_f32(float a, float b) {
  return __aspen_ipu_ffrom(__aspen_ipu_fbits(a) & __aspen_ipu_fbits(b));
}
ASPEN_IPU_FN float __builtin_ipu_andc_f32(float a, float b) {
  return __aspen_ipu_ffrom(__aspen_ipu_fbits(a) & ~__aspen_ipu_fbits(b));
}
ASPEN_IPU_FN float __builtin_ipu_or_f32(float a, float b) {
  return __aspen_ipu_ffrom(__aspen_ipu_fbits(a) | __aspen_ipu_fbits(b));
}
ASPEN_IPU_FN float __builtin_ipu_not_f32(float a) {
  return __aspen_ipu_ffrom(~__aspen_ipu_fbits(a));
}
ASPEN_IPU_FN float2 __builtin_ipu_and_v2f32(float2 a, float2 b) {
  float2 r = a;
  for (int i = 0; i < 2; ++i)
    r[i] = __builtin_ipu_and_f32(a[i], b[i]);
  return r;
}
ASPEN_IPU_FN float2 __builtin_ipu_andc_v2f32(float2 a, float2 b) {
  float2 r = a;
  for (int i = 0; i < 2; ++i)
    r[i] = __builtin_ipu_andc_f32(a[i], b[i]);
  return r;
}
ASPEN_IPU_FN float2 __builtin_ipu_or_v2f32(float2 a, float2 b) {
  float2 r = a;
  for (int i = 0; i < 2; ++i)
    r[i] = __builtin_ipu_or_f32(a[i], b[i]);
  return r;
}
ASPEN_IPU_FN float2 __builtin_ipu_not_v2f32(float2 a) {
  float2 r = a;
  for (int i = 0; i < 2; ++i)
    r[i] = __builtin_ipu_not_f32(a[i]);
  return r;
}
/* The bits of each byte in reverse order. */
ASPEN_IPU_FN unsigned __builtin_ipu_bitrev8(unsigned x) {
  unsigned r = 0;
  for (int bit = 0; bit < 8; ++bit)
    r |= ((x >> bit) & 0x01010101u) << (7 - bit);
  return r;
}
/* The number of bits below bit 31 that, from bit 30 down, equal the sign bit (0..31). */
ASPEN_IPU_FN unsigned __builtin_ipu_cms(int x) {
  return (unsigned)__builtin_clrsb(x);
}
/* Bytes a0..a3 and b0..b3 (a0 the least significant) interleaved: lo = a0 b0 a1 b1,
 * hi = a2 b2 a3 b3. */
ASPEN_IPU_FN unsigned __builtin_ipu_shuf8x8lo(unsigned a, unsigned b) {
  return (a & 0xffu) | (b & 0xffu) << 8 | (a & 0xff00u) << 8 | (b & 0xff00u) << 16;
}
ASPEN_IPU_FN unsigned __builtin_ipu_shuf8x8hi(unsigned a, unsigned b) {
  return (a >> 16 & 0xffu) | (b >> 16 & 0xffu) << 8 | (a >> 24) << 16 | (b >> 24) << 24;
}
/* Lanes a0 a1 and b0 b1 sorted even lanes first: lo = {a0, b0}, hi = {a1, b1}. */
ASPEN_IPU_FN float2 __builtin_ipu_sort4x32lo(float2 a, float2 b) {
  float2 r = a;
  r[1] = b[0];
  return r;
}
ASPEN_IPU_FN float2 __builtin_ipu_sort4x32hi(float2 a, float2 b) {
  float2 r = b;
  r[0] = a[1];
  return r;
}

/* ---- the overloaded forms (<ipu_builtins.h> in Graphcore's SDK) ------------------------ */

#if defined(__clang__) || defined(__cplusplus)
#if defined(__clang__)
#define ASPEN_IPU_OVERLOAD(NAME) NAME
#ifdef __cplusplus
#define ASPEN_IPU_OFN inline __attribute__((always_inline))
#else
#define ASPEN_IPU_OFN static inline __attribute__((always_inline, overloadable))
#endif
#else
/* GCC treats every `__builtin_` name as one C function: the overloaded forms are
 * macros naming overloads in a namespace. */
#define ASPEN_IPU_OVERLOAD(NAME) aspen_##NAME
#define ASPEN_IPU_OFN inline __attribute__((always_inline))
namespace aspen_ipu_overloads {
#endif

#define ASPEN_IPU_O1(NAME, RT, T1, TARGET)                                                                   \
  ASPEN_IPU_OFN RT ASPEN_IPU_OVERLOAD(NAME)(T1 a) {                                                          \
    return TARGET(a);                                                                                        \
  }
#define ASPEN_IPU_O2(NAME, RT, T1, T2, TARGET)                                                               \
  ASPEN_IPU_OFN RT ASPEN_IPU_OVERLOAD(NAME)(T1 a, T2 b) {                                                    \
    return TARGET(a, b);                                                                                     \
  }
#define ASPEN_IPU_O_VEC(NAME, OP)                                                                            \
  ASPEN_IPU_O2(NAME, float2, float2, float2, __builtin_ipu_f32v2##OP)                                        \
  ASPEN_IPU_O2(NAME, float, float, float, __builtin_ipu_f32##OP)                                             \
  ASPEN_IPU_O_VEC_HALF(NAME, OP)
#ifdef ASPEN_IPU_HAS_HALF
#define ASPEN_IPU_O_VEC_HALF(NAME, OP)                                                                       \
  ASPEN_IPU_O2(NAME, half2, half2, half2, __builtin_ipu_f16v2##OP)                                           \
  ASPEN_IPU_O2(NAME, half4, half4, half4, __builtin_ipu_f16v4##OP)
#else
#define ASPEN_IPU_O_VEC_HALF(NAME, OP)
#endif

ASPEN_IPU_O_VEC(__builtin_ipu_max, max)
ASPEN_IPU_O_VEC(__builtin_ipu_min, min)
ASPEN_IPU_O_VEC(__builtin_ipu_absmax, absmax)
ASPEN_IPU_O_VEC(__builtin_ipu_absadd, absadd)
ASPEN_IPU_O_VEC(__builtin_ipu_cmpeq, cmpeq)
ASPEN_IPU_O_VEC(__builtin_ipu_cmpne, cmpne)
ASPEN_IPU_O_VEC(__builtin_ipu_cmplt, cmplt)
ASPEN_IPU_O_VEC(__builtin_ipu_cmple, cmple)
ASPEN_IPU_O_VEC(__builtin_ipu_cmpgt, cmpgt)
ASPEN_IPU_O_VEC(__builtin_ipu_cmpge, cmpge)
ASPEN_IPU_O2(__builtin_ipu_clamp, float2, float2, float2, __builtin_ipu_f32v2clamp)
ASPEN_IPU_O2(__builtin_ipu_clamp, float, float, float2, __builtin_ipu_f32clamp)
ASPEN_IPU_O2(__builtin_ipu_and, int, int, int, __builtin_ipu_and_i32)
ASPEN_IPU_O2(__builtin_ipu_and, int, unsigned, int, __builtin_ipu_and_i32)
ASPEN_IPU_O2(__builtin_ipu_and, float, float, float, __builtin_ipu_and_f32)
ASPEN_IPU_O2(__builtin_ipu_and, float2, float2, float2, __builtin_ipu_and_v2f32)
ASPEN_IPU_O2(__builtin_ipu_andc, int, int, int, __builtin_ipu_andc_i32)
ASPEN_IPU_O2(__builtin_ipu_andc, int, unsigned, int, __builtin_ipu_andc_i32)
ASPEN_IPU_O2(__builtin_ipu_andc, float, float, float, __builtin_ipu_andc_f32)
ASPEN_IPU_O2(__builtin_ipu_andc, float2, float2, float2, __builtin_ipu_andc_v2f32)
ASPEN_IPU_O2(__builtin_ipu_or, int, int, int, __builtin_ipu_or_i32)
ASPEN_IPU_O2(__builtin_ipu_or, int, unsigned, int, __builtin_ipu_or_i32)
ASPEN_IPU_O2(__builtin_ipu_or, float, float, float, __builtin_ipu_or_f32)
ASPEN_IPU_O2(__builtin_ipu_or, float2, float2, float2, __builtin_ipu_or_v2f32)
ASPEN_IPU_O1(__builtin_ipu_not, float, float, __builtin_ipu_not_f32)
ASPEN_IPU_O1(__builtin_ipu_not, float2, float2, __builtin_ipu_not_v2f32)
ASPEN_IPU_O1(__builtin_ipu_isnan, int, float, __builtin_ipu_isnan_f32)
ASPEN_IPU_O1(__builtin_ipu_isnan, int2, float2, __builtin_ipu_isnan_v2f32)
ASPEN_IPU_O1(__builtin_ipu_isinf, int, float, __builtin_ipu_isinf_f32)
ASPEN_IPU_O1(__builtin_ipu_isinf, int2, float2, __builtin_ipu_isinf_v2f32)
ASPEN_IPU_O1(__builtin_ipu_isfinite, int, float, __builtin_ipu_isfinite_f32)
ASPEN_IPU_O1(__builtin_ipu_isfinite, int2, float2, __builtin_ipu_isfinite_v2f32)
ASPEN_IPU_O1(__builtin_ipu_exp, float, float, __builtin_expf)
ASPEN_IPU_O1(__builtin_ipu_exp2, float, float, __builtin_exp2f)
ASPEN_IPU_O1(__builtin_ipu_ln, float, float, __builtin_logf)
ASPEN_IPU_O1(__builtin_ipu_log2, float, float, __builtin_log2f)
ASPEN_IPU_O1(__builtin_ipu_tanh, float, float, __builtin_tanhf)
ASPEN_IPU_O1(__builtin_ipu_sigm, float, float, __builtin_ipu_f32sigm)
#ifdef ASPEN_IPU_HAS_HALF
ASPEN_IPU_O2(__builtin_ipu_clamp, half2, half2, half2, __builtin_ipu_f16v2clamp)
ASPEN_IPU_O2(__builtin_ipu_clamp, half4, half4, half2, __builtin_ipu_f16v4clamp)
ASPEN_IPU_O1(__builtin_ipu_isnan, short2, half2, __builtin_ipu_isnan_v2f16)
ASPEN_IPU_O1(__builtin_ipu_isnan, short4, half4, __builtin_ipu_isnan_v4f16)
ASPEN_IPU_O1(__builtin_ipu_isinf, short2, half2, __builtin_ipu_isinf_v2f16)
ASPEN_IPU_O1(__builtin_ipu_isinf, short4, half4, __builtin_ipu_isinf_v4f16)
ASPEN_IPU_O1(__builtin_ipu_isfinite, short2, half2, __builtin_ipu_isfinite_v2f16)
ASPEN_IPU_O1(__builtin_ipu_isfinite, short4, half4, __builtin_ipu_isfinite_v4f16)
ASPEN_IPU_O1(__builtin_ipu_exp, half2, half2, __builtin_ipu_f16v2exp)
ASPEN_IPU_O1(__builtin_ipu_exp2, half2, half2, __builtin_ipu_f16v2exp2)
ASPEN_IPU_O1(__builtin_ipu_ln, half2, half2, __builtin_ipu_f16v2ln)
ASPEN_IPU_O1(__builtin_ipu_log2, half2, half2, __builtin_ipu_f16v2log2)
ASPEN_IPU_O1(__builtin_ipu_tanh, half2, half2, __builtin_ipu_f16v2tanh)
ASPEN_IPU_O1(__builtin_ipu_sigm, half2, half2, __builtin_ipu_f16v2sigm)
ASPEN_IPU_O1(__builtin_ipu_sum, float, half2, __builtin_ipu_f16v2sum)
ASPEN_IPU_O1(__builtin_ipu_sum, float2, half4, __builtin_ipu_f16v4sum)
#endif

#if !defined(__clang__)
} /* namespace aspen_ipu_overloads */
#define __builtin_ipu_max(...) ::aspen_ipu_overloads::aspen___builtin_ipu_max(__VA_ARGS__)
#define __builtin_ipu_min(...) ::aspen_ipu_overloads::aspen___builtin_ipu_min(__VA_ARGS__)
#define __builtin_ipu_absmax(...) ::aspen_ipu_overloads::aspen___builtin_ipu_absmax(__VA_ARGS__)
#define __builtin_ipu_absadd(...) ::aspen_ipu_overloads::aspen___builtin_ipu_absadd(__VA_ARGS__)
#define __builtin_ipu_cmpeq(...) ::aspen_ipu_overloads::aspen___builtin_ipu_cmpeq(__VA_ARGS__)
#define __builtin_ipu_cmpne(...) ::aspen_ipu_overloads::aspen___builtin_ipu_cmpne(__VA_ARGS__)
#define __builtin_ipu_cmplt(...) ::aspen_ipu_overloads::aspen___builtin_ipu_cmplt(__VA_ARGS__)
#define __builtin_ipu_cmple(...) ::aspen_ipu_overloads::aspen___builtin_ipu_cmple(__VA_ARGS__)
#define __builtin_ipu_cmpgt(...) ::aspen_ipu_overloads::aspen___builtin_ipu_cmpgt(__VA_ARGS__)
#define __builtin_ipu_cmpge(...) ::aspen_ipu_overloads::aspen___builtin_ipu_cmpge(__VA_ARGS__)
#define __builtin_ipu_clamp(...) ::aspen_ipu_overloads::aspen___builtin_ipu_clamp(__VA_ARGS__)
#define __builtin_ipu_and(...) ::aspen_ipu_overloads::aspen___builtin_ipu_and(__VA_ARGS__)
#define __builtin_ipu_andc(...) ::aspen_ipu_overloads::aspen___builtin_ipu_andc(__VA_ARGS__)
#define __builtin_ipu_or(...) ::aspen_ipu_overloads::aspen___builtin_ipu_or(__VA_ARGS__)
#define __builtin_ipu_not(...) ::aspen_ipu_overloads::aspen___builtin_ipu_not(__VA_ARGS__)
#define __builtin_ipu_isnan(...) ::aspen_ipu_overloads::aspen___builtin_ipu_isnan(__VA_ARGS__)
#define __builtin_ipu_isinf(...) ::aspen_ipu_overloads::aspen___builtin_ipu_isinf(__VA_ARGS__)
#define __builtin_ipu_isfinite(...) ::aspen_ipu_overloads::aspen___builtin_ipu_isfinite(__VA_ARGS__)
#define __builtin_ipu_exp(...) ::aspen_ipu_overloads::aspen___builtin_ipu_exp(__VA_ARGS__)
#define __builtin_ipu_exp2(...) ::aspen_ipu_overloads::aspen___builtin_ipu_exp2(__VA_ARGS__)
#define __builtin_ipu_ln(...) ::aspen_ipu_overloads::aspen___builtin_ipu_ln(__VA_ARGS__)
#define __builtin_ipu_log2(...) ::aspen_ipu_overloads::aspen___builtin_ipu_log2(__VA_ARGS__)
#define __builtin_ipu_tanh(...) ::aspen_ipu_overloads::aspen___builtin_ipu_tanh(__VA_ARGS__)
#define __builtin_ipu_sigm(...) ::aspen_ipu_overloads::aspen___builtin_ipu_sigm(__VA_ARGS__)
#define __builtin_ipu_sum(...) ::aspen_ipu_overloads::aspen___builtin_ipu_sum(__VA_ARGS__)
#endif
#undef ASPEN_IPU_O1
#undef ASPEN_IPU_O2
#undef ASPEN_IPU_O_VEC
#undef ASPEN_IPU_O_VEC_HALF
#undef ASPEN_IPU_OVERLOAD
#undef ASPEN_IPU_OFN
#endif /* overloaded forms */

#undef ASPEN_IPU_BINARY
#undef ASPEN_IPU_COMPARE
#undef ASPEN_IPU_UNARY
#undef ASPEN_IPU_CLASS
#undef ASPEN_IPU_SCALAR_BINARY
#undef ASPEN_IPU_SCALAR_COMPARE
#undef ASPEN_IPU_FN

#endif
