// Copyright (c) Aspen contributors.
// The cost table of counted cycles (docs/cost-model.md, "Cycles from the code"):
// what one operation of a codelet's optimised LLVM IR costs an IPU worker, in
// thread cycles. Every figure has its source (or "assumption") in
// docs/cost-model.md; change a figure there and here together, and bump
// kCostTableVersion so that cached codelets are compiled again.
//
// Plain C++ (no LLVM types), so the table can be printed and tested on its own.
#pragma once

#include <cstdint>
#include <cstring>

namespace aspen::cyclecount {

/// Part of every codelet cache key: a new table recompiles the codelets.
inline constexpr unsigned kCostTableVersion = 3;
// (Integer casts between 32 and 64 bits are free: host indices and pointers; CycleCountPass.cpp.)

/// Bits the IPU's worker data path moves or computes in one instruction (64:
/// float2, half4). A vector operation costs ceil(bits / kDataPathBits) instructions.
inline constexpr unsigned kDataPathBits = 64;

// One instruction, one thread cycle (ALU, compare, select, conversion, load, store).
inline constexpr unsigned kInstruction = 1;
// A conditional branch; an unconditional one is free (fall-through or a hardware loop).
inline constexpr unsigned kCondBranch = 1;
inline constexpr unsigned kSwitch = 2;
// A call and its return, not counting the callee (which counts itself when it is codelet code).
inline constexpr unsigned kCall = 3;
// Address arithmetic, per variable index of an address computation (a GEP). One variable index
// of an address only loads and stores use folds into them (the IPU's loads and stores add a
// base, a delta and a scaled offset register, or post-increment: ld32, ld32step), as a constant
// one does; each further variable index, and every index of an address used otherwise (compared,
// stored, passed), costs this (CycleCountPass.cpp, docs/cost-model.md).
inline constexpr unsigned kAddress = 1;
// A counted loop's control: the latch's increment, compare and branch are one `brnzdec`
// (decrement a counter register and branch while it is not zero), when the induction variable
// is used only to address memory (strength-reduced into post-incremented addresses) and to
// count; the branch's kCondBranch is then the whole cost (CycleCountPass.cpp).

// Floating point, per element (thread cycles). Divide: PopLibs prices its `f32div` instruction at
// 3 cycles ("1 or 3 cycles depending on input", vectorInnerDivCoreCycles_float); half divides in
// f32 (f32div after f16v2tof32, f32v2tof16 after: one conversion each per two elements). Remainder
// from PopLibs' element-wise tables.
inline constexpr unsigned kF32Divide = 3, kF16Divide = 4;
inline constexpr unsigned kF32Remainder = 67, kF16Remainder = 75;
// Double precision: software on the IPU (no f64 unit), per element.
inline constexpr unsigned kF64Arith = 10, kF64Divide = 50;

// Integer division and remainder (software on the IPU), per element.
inline constexpr unsigned kUDiv32 = 265, kSDiv32 = 277, kURem32 = 282, kSRem32 = 292;
inline constexpr unsigned kUDiv64 = 115, kSDiv64 = 130, kURem64 = 149, kSRem64 = 166;
// Division by a constant that is not a power of two: multiply-high and shifts.
inline constexpr unsigned kDivByConstant = 3;

/// Math functions (C library names, float and double forms, LLVM intrinsics),
/// per element: f32 and f16 thread cycles. A name not listed costs kCall.
struct MathCost {
  const char *name; // float form without the suffix: "exp" covers exp, expf, llvm.exp.*
  unsigned f32, f16;
};
inline constexpr MathCost kMathCosts[] = {
    {"sqrt", 5, 6},      {"exp", 3, 1},         {"exp2", 3, 1},      {"expm1", 4, 2},     {"log", 6, 1},
    {"log2", 6, 1},      {"log10", 6, 1},       {"log1p", 180, 180}, {"sin", 2300, 26},   {"cos", 2300, 26},
    {"tan", 5100, 5700}, {"asin", 102, 102},    {"acos", 102, 102},  {"atan", 102, 102},  {"atan2", 136, 145},
    {"pow", 312, 325},   {"tanh", 6, 1},        {"erf", 18, 16},     {"erfc", 18, 16},    {"cbrt", 14, 5},
    {"fmod", 67, 75},    {"remainder", 67, 75}, {"sinh", 12, 12},    {"cosh", 12, 12},    {"floor", 1, 1},
    {"ceil", 1, 1},      {"trunc", 1, 1},       {"round", 1, 1},     {"rint", 1, 1},      {"nearbyint", 1, 1},
    {"fabs", 1, 1},      {"copysign", 1, 1},    {"fmin", 1, 1},      {"fmax", 1, 1},      {"minnum", 1, 1},
    {"maxnum", 1, 1},    {"fma", 1, 1},         {"fmuladd", 1, 1},   {"roundeven", 1, 1},
};

/// The IPU builtins that are single instructions on the IPU (<ipu_tile_builtins.h> makes each a
/// function of this name, not inlined, whose body calls Aspen's runtime): a call costs these
/// thread cycles and the function's own body is not counted.
struct BuiltinCost {
  const char *name;
  unsigned cycles;
};
inline constexpr BuiltinCost kBuiltinCosts[] = {
    {"aspen_ipu_get_scount_l", 1},  // get $COUNT_L
    {"aspen_ipu_get_scount_h", 1},  // get $COUNT_U
    {"aspen_codelet_scount", 1},    // (the reading itself, should code call it)
    {"aspen_ipu_get_tile_id", 1},   // one get (assumption: as the counter's)
    {"aspen_ipu_get_wsr", 1},       // get $WSR (__builtin_ipu_get(CSR_W_WSR__INDEX))
    {"aspen_ipu_get_worker_id", 2}, // get $WSR; and CTXTID_M1 mask (PopLibs' assembly)
    {"aspen_ipu_urand32", 1},       // urand32
    {"aspen_ipu_urand64", 1},       // urand64
    {"aspen_ipu_urand_f32", 2},     // urand32; f32v2sufromui
    {"aspen_ipu_urand_f16", 2},     // urand32; f16v4sufromui
    {"aspen_ipu_f32v2grand", 1},    // f32v2grand
    {"aspen_ipu_f16v2grand", 1},    // f16v2grand
};

/// The entry for a builtin function's name, or null.
inline const BuiltinCost *findBuiltinCost(const char *name, std::size_t length) {
  for (const BuiltinCost &b : kBuiltinCosts)
    if (std::strlen(b.name) == length && std::memcmp(b.name, name, length) == 0)
      return &b;
  return nullptr;
}

/// The entry for a math function `base` (the name without "f"/"l" suffix or
/// "llvm." prefix and type suffix), or null.
inline const MathCost *findMathCost(const char *base, std::size_t length) {
  for (const MathCost &m : kMathCosts)
    if (std::strlen(m.name) == length && std::memcmp(m.name, base, length) == 0)
      return &m;
  return nullptr;
}

} // namespace aspen::cyclecount
