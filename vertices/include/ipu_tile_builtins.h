/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * The IPU builtins whose host meaning needs Aspen's runtime (docs/codelets.md, "IPU
 * builtins backed by the runtime"): the running tile's id, its worker context, its cycle
 * counter, and the worker context's hardware random number generator. Code written for
 * IPU hardware calls them unguarded; they are available in every build popc makes, and
 * run on the IPUModel and on DeviceManager IPU devices alike.
 *
 * Each builtin is a macro naming an inline function here, which calls the table the
 * runtime gives each vertex library it loads (AspenCodeletRuntime, CodeletAbi.h).
 * Generator: xoroshiro128aox per (tile, worker context); see docs/codelets.md. */
#ifndef ASPEN_IPU_TILE_BUILTINS_H
#define ASPEN_IPU_TILE_BUILTINS_H

#include <ipudef.h>

#ifdef __cplusplus
#include <cstdint>
#define ASPEN_TB_INLINE inline __attribute__((noinline))
/* C linkage keeps the names the cycle-counting pass prices unmangled; half2 is a C++ class, so
 * clang warns that a C caller could not use the f16 builtin: none does (it is C++ only). */
#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wreturn-type-c-linkage"
#endif
extern "C" {
#else
#include <stdint.h>
#define ASPEN_TB_INLINE static inline __attribute__((noinline))
#endif

#if defined(__has_include) && __has_include(<aspen/CodeletAbi.h>)
#include <aspen/CodeletAbi.h> /* AspenCodeletRuntime: codelets as popc compiles them */
#elif !defined(ASPEN_CODELET_ABI_H)
/* The header on its own (the SDK's include directory): the same table as CodeletAbi.h's. */
typedef struct AspenCodeletRuntime {
  uint32_t size;
  uint32_t (*tileId)(void);
  uint32_t (*workerId)(void);
  uint64_t (*scount)(void);
  uint64_t (*urand64)(void);
} AspenCodeletRuntime;
#endif

/* Defined by the entry unit of every vertex library (one per library, hidden). */
__attribute__((visibility("hidden"))) extern const AspenCodeletRuntime *aspen_codelet_runtime;
/* The tile's cycle counter: a call the cycle-counting pass recognises by name. */
__attribute__((visibility("hidden"))) uint64_t aspen_codelet_scount(void);

/* Each builtin is a function of its own, never inlined: the cycle-counting pass prices a call to
 * it as the IPU's instruction(s) for it and does not count its body, the runtime's call
 * (docs/cost-model.md, "Cycles from the code"; CostTable.hpp, kBuiltinCosts). */
ASPEN_TB_INLINE unsigned aspen_ipu_get_tile_id(void) {
  return aspen_codelet_runtime->tileId();
}
ASPEN_TB_INLINE unsigned aspen_ipu_get_worker_id(void) {
  return aspen_codelet_runtime->workerId();
}
/* __builtin_ipu_get of the worker status register: its CTXTID_M1 field, the worker's index. */
ASPEN_TB_INLINE unsigned aspen_ipu_get_wsr(void) {
  return aspen_codelet_runtime->workerId();
}
ASPEN_TB_INLINE unsigned aspen_ipu_get_scount_l(void) {
  return (unsigned)aspen_codelet_scount();
}
ASPEN_TB_INLINE unsigned aspen_ipu_get_scount_h(void) {
  return (unsigned)(aspen_codelet_scount() >> 32);
}
ASPEN_TB_INLINE unsigned long long aspen_ipu_urand64(void) {
  return aspen_codelet_runtime->urand64();
}
/* The upper half of one output. */
ASPEN_TB_INLINE unsigned aspen_ipu_urand32(void) {
  return (unsigned)(aspen_codelet_runtime->urand64() >> 32);
}
/* Uniform on [-0.5, 0.5) in steps of 2^-24, as the IPU's urand_f32 (centred on zero). */
ASPEN_TB_INLINE float aspen_ipu_urand_f32(void) {
  return (float)(aspen_codelet_runtime->urand64() >> 40) * 5.9604644775390625e-08f - 0.5f;
}
/* Two independent standard normal samples (Box-Muller over two 53-bit uniforms on (0, 1]). */
ASPEN_TB_INLINE float2 aspen_ipu_f32v2grand(void) {
  const double u1 =
      (double)((aspen_codelet_runtime->urand64() >> 11) + 1) * 1.1102230246251565404236316680908203125e-16;
  const double u2 =
      (double)(aspen_codelet_runtime->urand64() >> 11) * 1.1102230246251565404236316680908203125e-16;
  const double r = __builtin_sqrt(-2.0 * __builtin_log(u1)), a = 6.283185307179586476925 * u2;
  float2 v = {(float)(r * __builtin_cos(a)), (float)(r * __builtin_sin(a))};
  return v;
}
#if defined(__cplusplus) || defined(ASPEN_HALF_BUILTIN) /* C with GCC has no half */
/* Uniform on [-0.5, 0.5) in steps of 2^-11 (each value exact in half). */
ASPEN_TB_INLINE half aspen_ipu_urand_f16(void) {
  return (half)((float)(aspen_codelet_runtime->urand64() >> 53) * 4.8828125e-04f - 0.5f);
}
ASPEN_TB_INLINE half2 aspen_ipu_f16v2grand(void) {
  const float2 g = aspen_ipu_f32v2grand();
  half2 v = {(half)g[0], (half)g[1]};
  return v;
}
#endif
#undef ASPEN_TB_INLINE
#ifdef __cplusplus
}
#ifdef __clang__
#pragma clang diagnostic pop
#endif
#endif
#if defined(__cplusplus) || defined(ASPEN_HALF_BUILTIN)
#define __builtin_ipu_urand_f16 aspen_ipu_urand_f16
#define __builtin_ipu_f16v2grand aspen_ipu_f16v2grand
#endif

#define __builtin_ipu_get_tile_id aspen_ipu_get_tile_id
#define __builtin_ipu_get_worker_id aspen_ipu_get_worker_id
#define __builtin_ipu_get_scount_l aspen_ipu_get_scount_l
#define __builtin_ipu_get_scount_h aspen_ipu_get_scount_h
#define __builtin_ipu_get_scount_u aspen_ipu_get_scount_h
#define __builtin_ipu_urand32 aspen_ipu_urand32
#define __builtin_ipu_urand64 aspen_ipu_urand64
#define __builtin_ipu_urand_f32 aspen_ipu_urand_f32
#define __builtin_ipu_f32v2grand aspen_ipu_f32v2grand

/* Control and status registers (<tilearch.h> names them). Reading the worker status register
 * (CSR_W_WSR__INDEX, 0x101 in Aspen's numbering) gives the running worker context's index in
 * its CTXTID_M1 field (bits 0..2), as __builtin_ipu_get_worker_id; the other registers
 * (floating-point control, the PRNG seeds, the AMP unit's, ...) have no counterpart in the
 * simulator's host code, and a call that reads or writes one is refused when it is compiled,
 * naming the builtin (clang and GCC: the `error` attribute; with a constant register index,
 * as code always passes it, the branch not taken is not compiled). */
#ifdef __cplusplus
extern "C" {
#endif
__attribute__((
    error("__builtin_ipu_get: this IPU control and status register has no host meaning in Aspen's "
          "simulator; only the worker status register (CSR_W_WSR__INDEX, a constant) has one "
          "(docs/codelets.md, \"Control and status registers\"); use __builtin_ipu_get_tile_id, "
          "__builtin_ipu_get_worker_id or __builtin_ipu_get_scount_l for what the others hold"))) unsigned
aspen_ipu_refused_get(unsigned csr);
__attribute__((error("__builtin_ipu_put: IPU control and status registers have no host meaning in "
                     "Aspen's simulator (docs/codelets.md, \"Control and status registers\"); seed "
                     "the generators with poplar::setHwSeeds"))) void
aspen_ipu_refused_put(unsigned value, unsigned csr);
#ifdef __cplusplus
}
#endif
#define ASPEN_CSR_W_WSR_INDEX 0x101u
#define __builtin_ipu_get(csr)                                                                               \
  ((unsigned)(csr) == ASPEN_CSR_W_WSR_INDEX ? aspen_ipu_get_wsr() : aspen_ipu_refused_get((unsigned)(csr)))
#define __builtin_ipu_uget(csr) aspen_ipu_refused_get((unsigned)(csr))
#define __builtin_ipu_put(value, csr) aspen_ipu_refused_put((unsigned)(value), (unsigned)(csr))
#define __builtin_ipu_uput(value, csr) aspen_ipu_refused_put((unsigned)(value), (unsigned)(csr))

#endif
