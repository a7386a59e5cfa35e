// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TENSORCLONEMETHOD_HPP
#define POPLAR_TENSORCLONEMETHOD_HPP

namespace poplar {

/// How `Graph::clone` orders the new variable's elements (Aspen keeps the
/// source's order and mapping for every method).
enum class TensorCloneMethod {
  PRESERVE_ORDER_AND_ALIASES,
  CREATE_NEW_ORDER,
  PRESERVE_ORDER_UNLESS_ALIASES,
  GATHER_AND_PRESERVE_TILE_ORDER_AND_ALIASES,
};

/// How `Graph::cloneN` lays out its N copies.
enum class TensorCloneDuplicationMethod { DUPLICATE_BY_OUTER_DIMENSION, DUPLICATE_BY_TILE_CONTIGUOUS_REGION };

} // namespace poplar

#endif
