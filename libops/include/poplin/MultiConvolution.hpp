// Copyright (c) Aspen contributors.
// poplin::multiconv: several independent convolutions given at once (PopLibs 3.x's
// poplin/MultiConvolution.hpp). PopLibs plans them together to run side by side on disjoint
// tiles; Aspen plans and runs each one as its single convolution (poplin/Convolution.hpp) with
// that convolution's own options, one after the other: the tensors created and the results are
// those of the single-convolution API, so a multi-convolution program gives the same results.
//
// Multi-convolution options (the `options` argument; each convolution's own options are in its
// args): `planType` (serial, parallel) [=parallel], `perConvReservedTiles` (integer) [=50] and
// `cycleBackOff` (0..1) [=0.1] are checked and do not change the result. An unknown key or a bad
// value throws poplar::invalid_option.
#ifndef POPLIN_MULTICONVOLUTION_HPP
#define POPLIN_MULTICONVOLUTION_HPP

#include <poplin/Convolution.hpp>

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <string>
#include <vector>

namespace poplin {
namespace multiconv {

/// One convolution of the set, for creating its tensors: its parameters, its options and the
/// debug name of the tensor created.
struct CreateTensorArgs {
  ConvParams params;
  poplar::OptionFlags options;
  std::string name;
};

/// The weights of convolution `weightsIndex` of `args`, as poplin::createWeights makes them.
poplar::Tensor createWeights(poplar::Graph &graph, const std::vector<CreateTensorArgs> &args,
                             unsigned weightsIndex, const poplar::OptionFlags &options = {},
                             poplin::PlanningCache *cache = nullptr);

/// The input of convolution `inputIndex` of `args`, as poplin::createInput makes it.
poplar::Tensor createInput(poplar::Graph &graph, const std::vector<CreateTensorArgs> &args,
                           unsigned inputIndex, const poplar::OptionFlags &options = {},
                           poplin::PlanningCache *cache = nullptr);

/// One convolution of the set: its input, weights, parameters and options.
struct ConvolutionArgs {
  poplar::Tensor inputs;
  poplar::Tensor weights;
  ConvParams params;
  poplar::OptionFlags options;
};

/// For each convolution i, copies `weightsIn[i]` into `args[i].weights` with the channel
/// dimensions swapped and the kernel flipped (poplin::weightsTransposeChansFlipXY).
void weightsTransposeChansFlipXY(poplar::Graph &graph, std::vector<ConvolutionArgs> &args,
                                 const std::vector<poplar::Tensor> &weightsIn,
                                 poplar::program::Sequence &prog, const poplar::OptionFlags &options,
                                 const poplar::DebugContext &debugContext, poplin::PlanningCache *cache);

/// The outputs of the convolutions of `args`, in order (poplin::convolution of each).
std::vector<poplar::Tensor> convolution(poplar::Graph &graph, const std::vector<ConvolutionArgs> &args,
                                        bool transposeAndFlipWeights, poplar::program::Sequence &prog,
                                        const poplar::DebugContext &debugContext = {},
                                        const poplar::OptionFlags &options = {},
                                        poplin::PlanningCache *cache = nullptr);

/// One weight-gradient computation: output gradients, forward inputs, parameters, options.
struct CalculateWeightDeltasArgs {
  poplar::Tensor zDeltas;
  poplar::Tensor activations;
  ConvParams params;
  poplar::OptionFlags options;
};

/// The weight gradients of each convolution (poplin::calculateWeightDeltas of each).
std::vector<poplar::Tensor>
calculateWeightDeltas(poplar::Graph &graph, const std::vector<CalculateWeightDeltasArgs> &args,
                      poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {}, poplin::PlanningCache *cache = nullptr);

/// One weight update `weights += scale * weight gradients`, scale a tensor.
struct ConvWeightUpdateArgs {
  poplar::Tensor zDeltas;
  poplar::Tensor weights;
  poplar::Tensor activations;
  poplar::Tensor scale;
  ConvParams params;
  poplar::OptionFlags options;
};

/// Applies each weight update (poplin::convolutionWeightUpdate of each).
void convolutionWeightUpdate(poplar::Graph &graph, const std::vector<ConvWeightUpdateArgs> &args,
                             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {}, poplin::PlanningCache *cache = nullptr);

/// One weight update with a constant scale.
struct ConvWeightUpdateArgsScalar {
  poplar::Tensor zDeltas;
  poplar::Tensor weights;
  poplar::Tensor activations;
  float scale;
  ConvParams params;
  poplar::OptionFlags options;
};

/// Applies each weight update (poplin::convolutionWeightUpdate of each).
void convolutionWeightUpdate(poplar::Graph &graph, const std::vector<ConvWeightUpdateArgsScalar> &args,
                             poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {}, poplin::PlanningCache *cache = nullptr);

} // namespace multiconv
} // namespace poplin

#endif
