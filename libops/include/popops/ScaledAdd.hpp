// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_SCALEDADD_HPP
#define POPOPS_SCALEDADD_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace popops {

enum class ScaledAddSpecialisation { DEFAULT, X_MINUS_AX_PLUS_BY };

/// `A += scaleB * B` (B cast to A's type; half is computed in float).
/// Options: `optimizeForSpeed` (true|false), `scaleFloatToHalfTolerance` (double).
///
/// Example: `popops::scaledAddTo(graph, weights, grads, -0.01f, prog, "sgd");`
void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                 const poplar::OptionFlags &options = {});

/// `A += scaleB * B` with a scalar tensor `scaleB`.
void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, poplar::Tensor scaleB,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                 const poplar::OptionFlags &options = {});

/// `A -= scaleB * B`.
void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, float scaleB,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {});

/// `A -= scaleB * B` with a scalar tensor `scaleB`.
void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor B, poplar::Tensor scaleB,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {});

/// `A = scaleA * A + scaleB * B` with scalar tensors.
void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                 poplar::Tensor scaleB, poplar::program::Sequence &prog,
                 const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// With `X_MINUS_AX_PLUS_BY`: `A = (1 - scaleA) * A + scaleB * B`.
void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                 poplar::Tensor scaleB, poplar::program::Sequence &prog,
                 const ScaledAddSpecialisation speciality, const poplar::DebugContext &debugContext = {},
                 const poplar::OptionFlags &options = {});

/// `A = scaleA * A + scaleB * B` with constants.
void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, float scaleA, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                 const poplar::OptionFlags &options = {});

/// With `X_MINUS_AX_PLUS_BY`: `A = (1 - scaleA) * A + scaleB * B`.
void scaledAddTo(poplar::Graph &graph, poplar::Tensor A, float scaleA, poplar::Tensor B, float scaleB,
                 poplar::program::Sequence &prog, const ScaledAddSpecialisation speciality,
                 const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// `A = scaleA * A - scaleB * B` with scalar tensors.
void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, poplar::Tensor scaleA, poplar::Tensor B,
                        poplar::Tensor scaleB, poplar::program::Sequence &prog,
                        const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {});

/// `A = scaleA * A - scaleB * B` with constants.
void scaledSubtractFrom(poplar::Graph &graph, poplar::Tensor A, float scaleA, poplar::Tensor B, float scaleB,
                        poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                        const poplar::OptionFlags &options = {});

} // namespace popops

#endif
