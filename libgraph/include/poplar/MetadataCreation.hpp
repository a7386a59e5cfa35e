// Copyright (c) Aspen contributors. Poplar-compatible public API.
// QUARTER_METADATA tensors for QUARTER (fp8) tensors; see docs/fp8.md.
#ifndef POPLAR_METADATACREATION_HPP
#define POPLAR_METADATACREATION_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/Tensor.hpp>

namespace poplar {

/// A constant scalar QUARTER_METADATA tensor holding `fp8Format` and `fp8Scale`
/// (-32..31; poplar_error otherwise), mapped to the graph's first tile.
/// Example: `auto md = createConstantMetadataTensor(graph, QuarterMetadata::Format::F152, 3);`
Tensor createConstantMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, int fp8Scale,
                                    const DebugContext &debugContext = {});

/// A scalar QUARTER_METADATA variable whose initial value is `fp8Format` and
/// `fp8Scale`, mapped to the graph's first tile (programs may overwrite it).
Tensor createVariableMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, int fp8Scale,
                                    const DebugContext &debugContext = {});

/// A scalar QUARTER_METADATA variable written by `prog` from `fp8Format` and the
/// scale held by `fp8Scale` (a one-element INT tensor, read when `prog` runs; a scale
/// outside -32..31 saturates to that range), mapped to the graph's first tile.
/// Example: `auto md = createVariableMetadataTensor(graph, QuarterMetadata::Format::F143, scale, prog);`
Tensor createVariableMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, const Tensor &fp8Scale,
                                    program::Sequence &prog, const DebugContext &debugContext = {});

/// Adds to `prog` the writing of `fp8Format` and the scale held by `fp8Scale` (as
/// above) into the existing QUARTER_METADATA tensor `metadataOut`.
void setMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, const Tensor &fp8Scale,
                       const Tensor &metadataOut, program::Sequence &prog,
                       const DebugContext &debugContext = {});

} // namespace poplar

#endif
