// Copyright (c) Aspen contributors.
// Walking a tensor view as byte runs of its variables, and those runs as
// pieces of tile memory. Shared by the passes; costs O(segments), not
// O(elements), except for strided segments (one run per element).
#pragma once

#include "ir/TensorView.hpp"
#include "ir/Vertices.hpp"
#include "passes/PassData.hpp"

#include <algorithm>
#include <cstdint>

namespace aspen::compiler {

/// Calls `f(var, byteBegin, bytes)` for each maximal run of consecutive bytes
/// of one variable among the view's elements [first, last), in row-major
/// order. Returns false as soon as `f` does. `View` is an ir::TensorView or an
/// ir::Edge (anything with `segments` and `elementType`).
template <class View, class F>
bool forEachByteRun(const View &view, std::uint64_t first, std::uint64_t last, F &&f) {
  const std::uint64_t elemBytes = view.elementType.size();
  if (!view.segments || first >= last)
    return true;
  bool open = false;
  std::uint32_t runVar = 0;
  std::uint64_t runBegin = 0, runBytes = 0;
  auto emit = [&](std::uint32_t var, std::uint64_t begin, std::uint64_t bytes) {
    if (open && var == runVar && runBegin + runBytes == begin) {
      runBytes += bytes;
      return true;
    }
    if (open && !f(runVar, runBegin, runBytes))
      return false;
    open = true;
    runVar = var;
    runBegin = begin;
    runBytes = bytes;
    return true;
  };
  std::uint64_t pos = 0; // view element index at the start of the segment
  for (const ir::Segment &s : *view.segments) {
    const std::uint64_t segEnd = pos + s.count;
    if (segEnd <= first) {
      pos = segEnd;
      continue;
    }
    if (pos >= last)
      break;
    const std::uint64_t k0 = first > pos ? first - pos : 0;
    const std::uint64_t k1 = std::min<std::uint64_t>(s.count, last - pos);
    if (s.stride == 1 || k1 - k0 == 1) {
      const std::uint64_t e = static_cast<std::uint64_t>(s.start + static_cast<std::int64_t>(k0) * s.stride);
      if (!emit(s.var, e * elemBytes, (k1 - k0) * elemBytes))
        return false;
    } else {
      for (std::uint64_t k = k0; k < k1; ++k) {
        const std::uint64_t e = static_cast<std::uint64_t>(s.start + static_cast<std::int64_t>(k) * s.stride);
        if (!emit(s.var, e * elemBytes, elemBytes))
          return false;
      }
    }
    pos = segEnd;
  }
  if (open)
    return f(runVar, runBegin, runBytes);
  return true;
}

/// All elements of the view.
template <class View, class F> bool forEachByteRun(const View &view, F &&f) {
  return forEachByteRun(view, 0, view.numElements(), std::forward<F>(f));
}

/// Splits bytes [byteBegin, byteBegin + bytes) of `var` at tile-piece borders:
/// calls `f(piece, offsetInPiece, bytes)`; a byte outside every piece (an
/// unmapped element) gives `f(kNoObject, byteOffsetInVar, bytes)`.
template <class F>
void forEachPieceRun(const MemoryObjects &memory, std::uint32_t var, std::uint64_t byteBegin,
                     std::uint64_t bytes, F &&f) {
  const MemObject *first = memory.objects.data() + memory.firstPiece[var];
  const MemObject *last = memory.objects.data() + memory.firstPiece[var + 1];
  const MemObject *p = std::upper_bound(first, last, byteBegin,
                                        [](std::uint64_t b, const MemObject &o) { return b < o.ownerEnd(); });
  std::uint64_t at = byteBegin, end = byteBegin + bytes;
  while (at < end) {
    if (p == last || p->ownerOffset >= end) {
      f(kNoObject, at, end - at);
      return;
    }
    if (p->ownerOffset > at) {
      f(kNoObject, at, p->ownerOffset - at);
      at = p->ownerOffset;
    }
    const std::uint64_t stop = std::min(end, p->ownerEnd());
    f(static_cast<std::uint32_t>(p - memory.objects.data()), at - p->ownerOffset, stop - at);
    at = stop;
    ++p;
  }
}

} // namespace aspen::compiler
