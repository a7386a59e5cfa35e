// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// Random numbers: uniform, normal, truncated normal, Bernoulli, log-uniform and dropout.
///
/// Every function takes `seed`: either null, in which case the graph's random
/// state (set by setSeed, advanced by every call that uses it) seeds the
/// numbers, or a pointer to an UNSIGNED_INT tensor of 2 elements, in which
/// case the numbers depend only on that seed, `seedModifier`, the operation
/// and each element's position (the same seed gives the same numbers every
/// time). Numbers come from a counter-based generator (Philox-4x32-10) keyed
/// by the seed, so they differ between elements and tiles and do not depend on
/// how many host threads run the simulation.
#ifndef POPRAND_RANDOMGEN_HPP
#define POPRAND_RANDOMGEN_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>

#include <cstdint>

namespace poprand {

/// Multiplies each element of `input` by `scale` with probability
/// `keepProbability`, otherwise sets it to zero. The result is laid out like
/// `reference` (same shape as `input`).
///
/// Example: `Tensor y = poprand::dropout(graph, &seed, 0, x, x, 0.9, 1 / 0.9, seq);`
poplar::Tensor dropout(poplar::Graph &graph, const poplar::Tensor *seed, const uint32_t seedModifier,
                       const poplar::Tensor &input, const poplar::Tensor &reference, double keepProbability,
                       double scale, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {});

/// As above; the result is laid out like `reference` when `outputClonesRef`,
/// otherwise like `input`.
poplar::Tensor dropout(poplar::Graph &graph, const poplar::Tensor *seed, const uint32_t seedModifier,
                       const poplar::Tensor &input, const poplar::Tensor &reference, double keepProbability,
                       double scale, bool outputClonesRef, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {});

/// Uniformly distributed values in [minVal, maxVal], laid out like
/// `reference`. `outType` FLOAT, HALF or INT (for INT, integers in
/// [minVal, maxVal]).
///
/// Example: `Tensor u = poprand::uniform(graph, nullptr, 0, ref, FLOAT, -1.0, 1.0, seq);`
poplar::Tensor uniform(poplar::Graph &graph, const poplar::Tensor *seed, uint32_t seedModifier,
                       const poplar::Tensor &reference, const poplar::Type &outType, double minVal,
                       double maxVal, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {});

/// Log-uniformly distributed values in [minVal, maxVal] (minVal >= 1):
/// `base ^ uniform(log_base(minVal), log_base(maxVal))`. FLOAT, HALF or INT.
poplar::Tensor logUniform(poplar::Graph &graph, const poplar::Tensor *seed, uint32_t seedModifier,
                          const poplar::Tensor &reference, const poplar::Type &outType, double minVal,
                          double maxVal, poplar::program::Sequence &prog, double base = 2.718281828459045,
                          const poplar::DebugContext &debugContext = {});

/// 1 with probability `prob`, else 0. FLOAT, HALF or INT.
poplar::Tensor bernoulli(poplar::Graph &graph, const poplar::Tensor *seed, uint32_t seedModifier,
                         const poplar::Tensor &reference, const poplar::Type &outType, double prob,
                         poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// Normally distributed values with mean `mean` and standard deviation `stdDev`. FLOAT or HALF.
///
/// Example: `Tensor w = poprand::normal(graph, &seed, 1, w0, FLOAT, 0.0, 0.02, seq);`
poplar::Tensor normal(poplar::Graph &graph, const poplar::Tensor *seed, uint32_t seedModifier,
                      const poplar::Tensor &reference, const poplar::Type &outType, double mean,
                      double stdDev, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {});

/// Normal values truncated to [mean - alpha * stdDev, mean + alpha * stdDev]
/// (values outside are drawn again). FLOAT or HALF.
poplar::Tensor truncatedNormal(poplar::Graph &graph, const poplar::Tensor *seed, uint32_t seedModifier,
                               const poplar::Tensor &reference, const poplar::Type &outType, double mean,
                               double stdDev, double alpha, poplar::program::Sequence &prog,
                               const poplar::DebugContext &debugContext = {});

/// Sets the graph's random state from `masterSeed` (UNSIGNED_INT {2}) and
/// `seedModifier`; later calls with a null seed start from it.
///
/// Example: `poprand::setSeed(graph, seed, 0, seq);`
void setSeed(poplar::Graph &graph, const poplar::Tensor &masterSeed, uint32_t seedModifier,
             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

} // namespace poprand

#endif
