// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_PERFESTIMATEFUNC_HPP
#define POPLAR_PERFESTIMATEFUNC_HPP

#include <poplar/VertexIntrospector.hpp>

#include <cstdint>
#include <functional>

namespace poplar {

class Target;

/// A vertex's cost: cycles (thread cycles for a worker vertex, machine cycles
/// for a MultiVertex/SupervisorVertex) and floating-point operations.
struct VertexPerfEstimate {
  VertexPerfEstimate() = default;
  VertexPerfEstimate(std::uint64_t cycles, std::uint64_t flops = 0) : cycles(cycles), flops(flops) {}
  std::uint64_t cycles = 0;
  std::uint64_t flops = 0;
};

/// Computes the cost of one vertex from its fields, for `Graph::registerPerfEstimator`.
using PerfEstimateFunc = std::function<VertexPerfEstimate(const VertexIntrospector &v, const Target &target)>;

} // namespace poplar

#endif
