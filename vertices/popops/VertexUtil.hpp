// Copyright (c) Aspen contributors.
// Helpers shared by popops' codelets: worker partitioning and the arithmetic type of half.
#pragma once

#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

namespace popops {
namespace vertexutil {

/// The elements `[begin, end)` worker `wid` of `numWorkers` handles out of `n`: contiguous
/// chunks of whole 4-element groups, so each worker's loop vectorises.
inline void workerRange(unsigned n, unsigned wid, unsigned numWorkers, unsigned &begin, unsigned &end) {
  const unsigned groups = (n + 3) / 4;
  const unsigned per = groups / numWorkers, extra = groups % numWorkers;
  const unsigned firstGroup = wid * per + (wid < extra ? wid : extra);
  const unsigned numGroups = per + (wid < extra ? 1 : 0);
  begin = firstGroup * 4 < n ? firstGroup * 4 : n;
  end = (firstGroup + numGroups) * 4 < n ? (firstGroup + numGroups) * 4 : n;
}

/// The type arithmetic on T is done in: float for half, T otherwise.
template <typename T> struct Compute { using type = T; };
template <> struct Compute<half> { using type = float; };

} // namespace vertexutil
} // namespace popops
