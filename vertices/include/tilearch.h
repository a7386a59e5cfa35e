/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * The control and status register (CSR) names that code written for IPU hardware passes to
 * __builtin_ipu_get/uget/put/uput (docs/codelets.md, "Control and status registers").
 * The names are Graphcore's; the numbers are Aspen's own (the IPU's register encodings are
 * not published): an index names a register for the builtins, and a field's mask and shift
 * take it out of the value __builtin_ipu_get returns. The worker status register is the one
 * with a host meaning: its CTXTID_M1 field is the running worker context's index (0..5),
 * as __builtin_ipu_get_worker_id returns it. Reading any other register, and writing any,
 * is refused when compiled, naming the file and line. */
#ifndef ASPEN_TILEARCH_H
#define ASPEN_TILEARCH_H

/* Register indices (all below CSR_UPPER_MASK + 1, so `index & CSR_UPPER_MASK` is the index). */
#define CSR_UPPER_MASK 0x3ffu
#define CSR_W_WSR__INDEX 0x101u          /* worker status: the worker context */
#define CSR_W_FP_CTL__INDEX 0x102u       /* worker floating-point control */
#define CSR_W_FP_CLR__INDEX 0x103u       /* accumulator clear (AMP) */
#define CSR_W_FP_SCL__INDEX 0x104u       /* fp8 scale */
#define CSR_W_FP_NFMT__INDEX 0x105u      /* fp8 number format */
#define CSR_W_REPEAT_COUNT__INDEX 0x106u /* repeat count */
#define CSR_S_FP_ICTL__INDEX 0x201u      /* supervisor floating-point control (workers' initial) */
#define CSR_S_FP_ISCL__INDEX 0x202u      /* supervisor fp8 scale (workers' initial) */
#define CSR_S_FP_INFMT__INDEX 0x203u     /* supervisor fp8 format (workers' initial) */
#define CSR_S_CCCSLOAD__INDEX 0x204u     /* convolution unit weights load */

/* Fields. */
#define CSR_W_WSR__CTXTID_M1__SHIFT 0u
#define CSR_W_WSR__CTXTID_M1__MASK 0x7u
#define CSR_W_FP_CLR__ZAACC__SHIFT 1u
#define CSR_W_FP_CLR__ZAACC__MASK 0x1u
#define CSR_S_FP_ICTL__INV__SHIFT 0u
#define CSR_S_FP_ICTL__INV__MASK 0x1u
#define CSR_S_FP_ICTL__DIV0__SHIFT 1u
#define CSR_S_FP_ICTL__DIV0__MASK 0x1u
#define CSR_S_FP_ICTL__OFLO__SHIFT 2u
#define CSR_S_FP_ICTL__OFLO__MASK 0x1u
#define CSR_S_FP_ICTL__ESR__SHIFT 3u
#define CSR_S_FP_ICTL__ESR__MASK 0x1u
#define CSR_S_FP_ICTL__NANOO__SHIFT 4u
#define CSR_S_FP_ICTL__NANOO__MASK 0x1u
/* The largest repeat count (Target::getRptCountMax(), 4095): masking a count that fits
 * leaves it unchanged. */
#define CSR_W_REPEAT_COUNT__VALUE__SHIFT 0u
#define CSR_W_REPEAT_COUNT__VALUE__MASK 0xfffu

#endif
