// Copyright (c) Aspen contributors.
// The simulated IPU's hardware random number generators (docs/codelets.md, "IPU builtins
// backed by the runtime"): one xoroshiro128aox state per (tile, worker context), 128 bits held
// as four uint32 words {s0 low, s0 high, s1 low, s1 high} — the layout of a row of
// poplar::getHwSeeds' {tiles, workers, 4} tensor. Shared by the graph (the seeds' initial
// value) and the runtime (the states of a graph that has no seeds variable).
#pragma once

#include <cstdint>

namespace aspen::ir {

/// splitmix64 (S. Vigna), the generator's usual seeder: advances `x` and returns its output.
inline std::uint64_t splitmix64(std::uint64_t &x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// The state of generator (tile, worker) before anything sets it: two outputs of splitmix64
/// started at tile * workerContexts + worker.
inline void defaultHwSeedState(std::uint32_t tile, std::uint32_t worker, std::uint32_t workerContexts,
                               std::uint64_t state[2]) {
  std::uint64_t x = std::uint64_t(tile) * workerContexts + worker;
  state[0] = splitmix64(x);
  state[1] = splitmix64(x);
}

} // namespace aspen::ir
