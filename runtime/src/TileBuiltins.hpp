// Copyright (c) Aspen contributors.
// The IPU builtins backed by the runtime (<ipu_tile_builtins.h>, docs/codelets.md, "IPU
// builtins backed by the runtime"): what the running vertex's __builtin_ipu_get_tile_id,
// get_worker_id, get_scount_l/_h and the random number builtins read. The executor
// describes the running compute step once (BuiltinStep, on its stack), and each thread's
// VertexThread records the running tile and compute() call; the functions the codelet
// libraries call (codeletRuntimeTable) read them. No state lives in the codelet libraries.
#pragma once

#include "exe/ExecutableData.hpp"

#include <cstdint>

namespace aspen::rt {

/// The running compute step, as the builtins see it.
struct BuiltinStep {
  const std::uint32_t *tiles = nullptr; // the step's tiles (replica tile ids)
  // Per vertex: the tile's time before it by the static estimates (a step without counted
  // vertices); a step with counted vertices gives it per call (VertexThread::builtinBefore).
  const std::uint64_t *staticBefore = nullptr;
  bool counted = false;
  std::uint32_t numWorkers = 1; // worker slots of the packing
  std::uint32_t tilesPerIpu = 1;
  std::uint32_t workerContexts = 1; // generator states per tile
  std::uint64_t computeStart = 0;   // the simulated clock when the step's compute phase begins
  // Each (tile, worker context)'s xoroshiro128aox state, 16 bytes (ir/HwSeeds.hpp): in tile memory
  // when the graph has hardware seeds, else the executor's own.
  std::uint8_t *const *generators = nullptr;
  static constexpr std::uint8_t kAlone = 0xff;
};

/// Each generator's state before anything set it (ir::defaultHwSeedState): xoroshiro128aox
/// seeded by splitmix64 from (replica tile, worker context), so every load of an executable
/// starts from the same states whatever the host's thread count. `states` holds
/// 2 * numTiles * workerContexts words.
void seedGenerators(std::uint64_t *states, std::uint32_t numTiles, std::uint32_t workerContexts);

/// One step of xoroshiro128aox, the IPU's generator as Graphcore published it (J. Hanlon et
/// al., "A fast hardware pseudorandom number generator based on xoroshiro128", IEEE
/// Transactions on Computers; arXiv:2203.04058): the xoroshiro128 linear
/// engine (Blackman and Vigna; shifts a = 55, b = 14, c = 36) with the "AOX" output function,
/// x ^ (rotl(a, 1) | rotl(a, 2)) of x = s0 ^ s1 and a = s0 & s1. Returns the output and
/// advances `s`.
inline std::uint64_t xoroshiro128aox(std::uint64_t *s) {
  auto rotl = [](std::uint64_t v, unsigned k) { return (v << k) | (v >> (64 - k)); };
  const std::uint64_t x = s[0] ^ s[1], a = s[0] & s[1];
  const std::uint64_t result = x ^ (rotl(a, 1) | rotl(a, 2));
  s[0] = rotl(s[0], 55) ^ x ^ (x << 14);
  s[1] = rotl(x, 36);
  return result;
}

/// Installs the builtins' table in every vertex library loaded from now on (once, at load
/// of libpoplar).
void installCodeletRuntime();

} // namespace aspen::rt
