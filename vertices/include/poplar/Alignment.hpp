// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Alignment helpers for codelets. Field alignment on the simulated IPU is
// whatever the Vector's MinAlign asks (the graph compiler honours it), so this
// header only offers the arithmetic codelets do on addresses and counts.
#ifndef POPLAR_ALIGNMENT_HPP
#define POPLAR_ALIGNMENT_HPP

#include <cstddef>
#include <cstdint>

namespace poplar {

/// `n` rounded up to a multiple of `alignment` (a power of two).
constexpr std::size_t alignUp(std::size_t n, std::size_t alignment) {
  return (n + alignment - 1) & ~(alignment - 1);
}

/// Whether pointer `p` is aligned to `alignment` bytes (a power of two).
inline bool isAligned(const void *p, std::size_t alignment) {
  return (reinterpret_cast<std::uintptr_t>(p) & (alignment - 1)) == 0;
}

} // namespace poplar

#endif
