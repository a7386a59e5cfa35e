// Copyright (c) Aspen contributors.
// The internal representation of a tensor view.
#pragma once

#include "poplar/Type.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace aspen::ir {

using VarId = std::uint32_t;

/// A strided run of `count` elements of one variable, in the view's row-major order:
/// element k of the run is variable element `start + k * stride` (in units of the
/// view's element type; see TensorView). `stride` may be 0 (broadcast) or negative
/// (reverse). A run with count == 1 always has stride 1.
struct Segment {
  VarId var;
  std::int64_t start;
  std::int64_t stride;
  std::uint64_t count;
};

class SegmentGatherer;

/// What a poplar::Tensor points at: a shape, an element type and the segments
/// that list its elements in row-major order. Views are immutable and shared.
///
/// Units: a segment indexes its variable in units of `elementType.size()` bytes.
/// Normally that is the variable's own type; after `reinterpret` it differs, and
/// the byte offset of element k is `(start + k*stride) * elementType.size()`.
struct TensorView {
  std::weak_ptr<struct GraphData> graph; // for debug names in error messages
  poplar::Type elementType;
  std::vector<std::size_t> shape;
  std::shared_ptr<const std::vector<Segment>> segments;
  /// The index that finds a position among many segments (a SegmentGatherer,
  /// see TensorAlgebra.hpp gathererOf), built on first use.
  mutable std::once_flag gathererBuilt;
  mutable std::shared_ptr<const SegmentGatherer> gatherer;

  std::size_t numElements() const;
  /// A short description used in error messages: `'name' {2,3} float`.
  std::string describe() const;
};

} // namespace aspen::ir
