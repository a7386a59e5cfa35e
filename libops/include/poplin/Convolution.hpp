// Copyright (c) Aspen contributors.
// poplin::convolution and its training passes.
#ifndef POPLIN_CONVOLUTION_HPP
#define POPLIN_CONVOLUTION_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poplin/ConvParams.hpp>
#include <poputil/exceptions.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

// Convolution options (all optional): `availableMemoryProportion` (0..1), `partialsType`
// (half, float) are passed to the matrix-multiply planner; `pass` (NONE, INFERENCE_FWD,
// TRAINING_FWD, TRAINING_BWD, TRAINING_WU, FC_INFERENCE_FWD, FC_TRAINING_FWD,
// FC_TRAINING_BWD, FC_TRAINING_WU), `use128BitConvUnitLoad`, `enableMultiStageReduce`,
// `enableFastReduce`, `enableConvDithering`, `remapOutputTensor`, `gatherConvOutput`,
// `enableTransformsPlan`, `enableAmpHalfEnginesPlan`, `planConstraints` and
// `startTileMultiplier` are accepted and do not change the result. An unknown key throws
// poplar::invalid_option.

namespace poplin {

class PlanningCacheImpl;

/// Remembers the plans the convolution and matrix-multiply planner has made, so
/// that an operation of the same shapes, types and options is planned once.
/// Pass a pointer to one cache to every call that should share plans.
///
/// Example: `poplin::PlanningCache cache; matMul(g, a, b, seq, "mm", {}, &cache);`
class PlanningCache {
public:
  PlanningCache();
  ~PlanningCache();
  PlanningCache(const PlanningCache &) = delete;
  PlanningCache &operator=(const PlanningCache &) = delete;
  /// Number of plans held.
  std::size_t size() const;

  /// Internal: the cached plans. Not part of PopLibs' API.
  std::unique_ptr<PlanningCacheImpl> impl;
};

/// The parameters to pre-plan one convolution: target, parameters and options
/// (see poplin::createWeights). (PopLibs declares it here;
/// poplin/MatMul.hpp, which includes this header, uses it.)
using ConvPlanParams = std::tuple<const poplar::Target *, const ConvParams, const poplar::OptionFlags *>;

/// Multiply-accumulate counts (×2) of the passes of a convolution.
std::uint64_t getFwdFlops(const ConvParams &params);
std::uint64_t getBwdFlops(const ConvParams &params);
std::uint64_t getWuFlops(const ConvParams &params);

/// Weights {G, Co, Ci, kernel...} laid out for convolution() with `params`.
poplar::Tensor createWeights(poplar::Graph &graph, const ConvParams &params,
                             const poplar::DebugContext &debugContext,
                             const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Biases {G*Co} for addBias() on the output `acts` {B, G*Co, fields...}.
poplar::Tensor createBiases(poplar::Graph &graph, const poplar::Tensor &acts,
                            const poplar::DebugContext &debugContext = {"biases"});

/// An input {B, G*Ci, fields...} laid out for convolution() with `params`.
poplar::Tensor createInput(poplar::Graph &graph, const ConvParams &params,
                           const poplar::DebugContext &debugContext, const poplar::OptionFlags &options = {},
                           PlanningCache *cache = nullptr);

/// An output {B, G*Co, outputFields...} laid out as convolution() lays out its result.
poplar::Tensor createConvOutput(poplar::Graph &graph, const ConvParams &params,
                                const poplar::DebugContext &debugContext,
                                const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// The convolution of `in` {B, G*Ci, fields...} with `weights` {G, Co, Ci, kernel...}:
/// `out[b][g*Co+co][o] = sum over ci, k of in'[b][g*Ci+ci][o+k] * w'[g][co][ci][k]` on the
/// transformed input and kernel, then the output transform. With `transposeAndFlipWeights`
/// the weights are given as {G, Ci, Co, kernel...} (the forward weights, for the backward
/// pass): their channel dimensions are swapped and every kernel dimension reversed first.
///
/// Implementation: the input windows (im2col, as tensor views) and the weights become one
/// grouped matrix product {G, Co, K*Ci} x {G, K*Ci, B*outField}, planned by the matMul
/// planner (rows = output channels, columns = batch x output field, K split).
///
/// Example (a 3x3 "same" convolution):
/// ```
/// poplin::ConvParams p(poplar::FLOAT, 4, {56, 56}, {3, 3}, 64, 64, 1);
/// p.inputTransform.paddingLower = {1, 1};
/// p.inputTransform.paddingUpper = {1, 1};
/// auto in = poplin::createInput(graph, p, "in");
/// auto w = poplin::createWeights(graph, p, "w");
/// auto out = poplin::convolution(graph, in, w, p, false, prog, "conv");
/// ```
/// \throws poputil::poplibs_error naming the parameter or tensor that does not fit.
poplar::Tensor convolution(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &weights,
                           const ConvParams &params, bool transposeAndFlipWeights,
                           poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                           const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// convolution() writing into `out`.
void convolutionWithOutput(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &weights,
                           const poplar::Tensor &out, const ConvParams &params, bool transposeAndFlipWeights,
                           poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                           const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// `weightsOut` {G, Ci, Co, kernel...} = `weightsIn` {G, Co, Ci, kernel...} with the channel
/// dimensions swapped and the kernel dimensions reversed.
void weightsTransposeChansFlipXY(poplar::Graph &graph, const poplar::Tensor &weightsIn,
                                 const poplar::Tensor &weightsOut, poplar::program::Sequence &prog,
                                 const poplar::DebugContext &debugContext = {});

/// The gradient of the loss with respect to the weights, {G, Co, Ci, kernel...}, from the
/// output gradients `zDeltas` {B, G*Co, outputFields...} and the forward input `activations`.
/// The kernel transform must be the identity.
poplar::Tensor calculateWeightDeltas(poplar::Graph &graph, const poplar::Tensor &zDeltas,
                                     const poplar::Tensor &activations, const ConvParams &params,
                                     poplar::program::Sequence &prog,
                                     const poplar::DebugContext &debugContext = {},
                                     const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// `weights += scale * calculateWeightDeltas(...)` (scale is typically -learningRate).
void convolutionWeightUpdate(poplar::Graph &graph, const poplar::Tensor &zDeltas,
                             const poplar::Tensor &weights, const poplar::Tensor &activations,
                             ConvParams params, const poplar::Tensor &scale, poplar::program::Sequence &prog,
                             const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);
void convolutionWeightUpdate(poplar::Graph &graph, const poplar::Tensor &zDeltas,
                             const poplar::Tensor &weights, const poplar::Tensor &activations,
                             ConvParams params, float scale, poplar::program::Sequence &prog,
                             const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// `biases += scale * (zDeltas summed over the batch and field)`.
void convolutionBiasUpdate(poplar::Graph &graph, const poplar::Tensor &zDeltas, const poplar::Tensor &biases,
                           const poplar::Tensor &scale, const poplar::OptionFlags &options,
                           poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});
void convolutionBiasUpdate(poplar::Graph &graph, const poplar::Tensor &zDeltas, const poplar::Tensor &biases,
                           float scale, const poplar::OptionFlags &options, poplar::program::Sequence &prog,
                           const poplar::DebugContext &debugContext = {});

/// `acts[b][c][...] += biases[c]`.
void addBias(poplar::Graph &graph, const poplar::Tensor &acts, const poplar::Tensor &biases,
             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {});

/// Writes the plan of the convolution (its matrix product) to `out`.
void reportPlanInfo(std::ostream &out, const poplar::Graph &graph, const ConvParams &params,
                    const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Throws poplar::invalid_option for an unknown key or bad value.
void convolutionValidateOptions(const poplar::OptionFlags &options);

/// \deprecated Use poplin::preplan (poplin/ConvPreplan.hpp): same as
/// `preplan(convs, {}, cache)`. Validates each convolution as building it would and
/// records the plans of its forward product; see poplin/MatMul.hpp ("Pre-planning").
///
/// \param convs A set of (target, parameters, options) tuples.
/// \param cache The planning cache to update.
void preplanConvolutions(const std::set<ConvPlanParams> &convs, PlanningCache &cache);

/// \deprecated Use poplin::preplan. As above; `graph` is not used (each entry names its
/// target), as in PopLibs.
void preplanConvolutions(poplar::Graph &graph, const std::set<ConvPlanParams> &convs, PlanningCache &cache);

/// The forward weights of a fully-connected layer expressed as a 1-d convolution,
/// `weights` {G, Co, Ci, kernel}, arranged for its backward pass `params` (the forward
/// parameters with the input and output channels swapped): a new tensor {G, Ci, Co, kernel}
/// laid out as createWeights() lays out weights for `params`, holding `weights` with its
/// channel dimensions swapped. Options are the convolution's (typically
/// `pass` = FC_TRAINING_BWD).
/// \throws poputil::poplibs_error when `params` is not 1-d or `weights` does not fit it.
poplar::Tensor fullyConnectedWeightTranspose(poplar::Graph &graph, poplar::Tensor weights,
                                             const ConvParams &params, poplar::program::Sequence &prog,
                                             const poplar::DebugContext &debugContext,
                                             const poplar::OptionFlags &options,
                                             PlanningCache *cache = nullptr);

} // namespace poplin

#endif
