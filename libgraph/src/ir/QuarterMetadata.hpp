// Copyright (c) Aspen contributors.
// Metadata of QUARTER variables (docs/fp8.md): checking a metadata tensor and
// attaching one to a new variable.
#pragma once

#include "ir/GraphData.hpp"
#include "poplar/Graph.hpp"

#include <string>

namespace aspen::ir {

/// Throws (naming `name`, the tensor being made) unless `metadata` may be the
/// metadata of a new tensor of `type`: `type` requires metadata, and `metadata`
/// is a one-element QUARTER_METADATA tensor of this graph.
void checkQuarterMetadata(const GraphData &data, const poplar::Type &type, const poplar::Tensor &metadata,
                          const std::string &name);

/// Gives new variable `var` its metadata when its type requires one: `metadata`
/// when given (already checked), else a new scalar QUARTER_METADATA variable
/// (F143, scale 0) mapped to the graph's first tile.
void attachQuarterMetadata(poplar::Graph &graph, GraphData &data, VarId var, const poplar::Tensor *metadata);

/// The metadata's value when it is known while the graph is built (a constant or
/// an initial value); throws naming `name` otherwise or when it is not a valid binary.
poplar::QuarterMetadata knownQuarterMetadata(const GraphData &data, const poplar::Tensor &metadata,
                                             const std::string &name);

/// `t.getMetadata()` when `t` has one metadata tensor; an invalid tensor when it
/// has none or its elements carry different ones (never throws).
poplar::Tensor uniqueMetadataOf(const poplar::Tensor &t);

/// The hidden host handle that createHostWrite/createHostRead of a tensor with
/// metadata add for its metadata tensor (Engine::writeTensor/readTensor with a
/// QuarterMetadata use it).
inline std::string metadataHandleName(const std::string &handle) {
  return "<metadata of " + handle + ">";
}

} // namespace aspen::ir
