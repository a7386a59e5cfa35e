// Copyright (c) Aspen contributors.
// poplin::multiconv: each convolution of the set is planned and run as Aspen's single
// convolution with its own options (see poplin/MultiConvolution.hpp); the multi-convolution
// options are checked. Errors from one convolution name the multi-convolution op and the index
// of the convolution at fault.
#include "poplin/MultiConvolution.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poplar/exceptions.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/exceptions.hpp>

#include <map>
#include <string>

using namespace poplar;

namespace poplin::multiconv {

namespace {

const char *const kLib = "poplin::multiconv::";

// Checks the multi-convolution options (PopLibs' keys; none changes the result here).
void checkOptions(const OptionFlags &options, const std::string &op) {
  enum class PlanType { SERIAL, PARALLEL };
  PlanType planType = PlanType::PARALLEL;
  unsigned perConvReservedTiles = 50;
  double cycleBackOff = 0.1;
  poplibs::OptionSpec spec{
      {"planType", poplibs::OptionHandler::createWithEnum(
                       planType, std::map<std::string, PlanType>{{"serial", PlanType::SERIAL},
                                                                 {"parallel", PlanType::PARALLEL}})},
      {"perConvReservedTiles", poplibs::OptionHandler::createWithUnsignedInt(perConvReservedTiles)},
      {"cycleBackOff", poplibs::OptionHandler::createWithDouble(cycleBackOff)}};
  aspen::ops::parseOptions(spec, options, op);
  if (!(cycleBackOff >= 0.0 && cycleBackOff <= 1.0))
    throw poplar::invalid_option(op + ": option cycleBackOff (" + std::to_string(cycleBackOff) +
                                 ") must be between 0 and 1");
}

// Runs `f` for convolution `index`, prefixing any error with the op and the index.
template <class F> auto forConvolution(const std::string &op, std::size_t index, F &&f) -> decltype(f()) {
  const std::string where = op + ": convolution " + std::to_string(index) + ": ";
  try {
    return f();
  } catch (const poplar::invalid_option &e) {
    throw poplar::invalid_option(where + e.what());
  } catch (const poputil::poplibs_error &e) {
    throw poputil::poplibs_error(where + e.what());
  }
}

const CreateTensorArgs &pick(const std::vector<CreateTensorArgs> &args, unsigned index, const char *role,
                             const std::string &op) {
  if (index >= args.size())
    throw poputil::poplibs_error(op + ": " + role + " " + std::to_string(index) + " is not an index of the " +
                                 std::to_string(args.size()) + " convolutions in args");
  return args[index];
}

/// The convolutions' parameters, for the debug information (every args struct has `params`).
template <class Args> poplar::ProfileValue paramsOf(const std::vector<Args> &args) {
  poplar::ProfileValue::Vector v;
  for (const Args &a : args)
    v.push_back(aspen::ops::streamedProfileValue(a.params));
  return poplar::ProfileValue(std::move(v));
}

} // namespace

namespace {

// createWeights and createInput: the tensor of convolution `index`, made by `create`.
template <class Create>
Tensor createFor(const std::vector<CreateTensorArgs> &args, unsigned index, const char *indexName,
                 const char *opName, const OptionFlags &options, Create &&create) {
  const std::string op = std::string(kLib) + opName;
  aspen::ops::PoplinDebugInfo di({}, {{"params", paramsOf(args)},
                                      {indexName, poputil::toProfileValue(index)},
                                      {"options", poputil::toProfileValue(options)}});
  checkOptions(options, op);
  const CreateTensorArgs &a = pick(args, index, indexName, op);
  Tensor t = forConvolution(op, index, [&] { return create(a, poplar::DebugContext(di)); });
  di.addOutput(t);
  return t;
}

} // namespace

Tensor createWeights(Graph &graph, const std::vector<CreateTensorArgs> &args, unsigned weightsIndex,
                     const OptionFlags &options, PlanningCache *cache) {
  return createFor(args, weightsIndex, "weightsIndex", "createWeights", options,
                   [&](const CreateTensorArgs &a, const poplar::DebugContext &dc) {
                     return poplin::createWeights(graph, a.params, {dc, a.name}, a.options, cache);
                   });
}

Tensor createInput(Graph &graph, const std::vector<CreateTensorArgs> &args, unsigned inputIndex,
                   const OptionFlags &options, PlanningCache *cache) {
  return createFor(args, inputIndex, "inputIndex", "createInput", options,
                   [&](const CreateTensorArgs &a, const poplar::DebugContext &dc) {
                     return poplin::createInput(graph, a.params, {dc, a.name}, a.options, cache);
                   });
}

void weightsTransposeChansFlipXY(Graph &graph, std::vector<ConvolutionArgs> &args,
                                 const std::vector<Tensor> &weightsIn, program::Sequence &prog,
                                 const OptionFlags &options, const DebugContext &debugContextIn,
                                 PlanningCache *cache) {
  const std::string op = std::string(kLib) + "weightsTransposeChansFlipXY";
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 {{"params", paramsOf(args)}, {"options", poputil::toProfileValue(options)}});
  const poplar::DebugContext debugContext(di);
  (void)cache;
  checkOptions(options, op);
  if (weightsIn.size() != args.size())
    throw poputil::poplibs_error(op + ": weightsIn has " + std::to_string(weightsIn.size()) +
                                 " tensors for the " + std::to_string(args.size()) + " convolutions in args");
  for (std::size_t i = 0; i < args.size(); ++i)
    forConvolution(op, i, [&] {
      poplin::weightsTransposeChansFlipXY(graph, weightsIn[i], args[i].weights, prog,
                                          {debugContext, "conv" + std::to_string(i)});
    });
}

std::vector<Tensor> convolution(Graph &graph, const std::vector<ConvolutionArgs> &args,
                                bool transposeAndFlipWeights, program::Sequence &prog,
                                const DebugContext &debugContextIn, const OptionFlags &options,
                                PlanningCache *cache) {
  const std::string op = std::string(kLib) + "convolution";
  aspen::ops::PoplinDebugInfo di(
      debugContextIn, {{"params", paramsOf(args)},
                       {"transposeAndFlipWeights", poputil::toProfileValue(transposeAndFlipWeights)},
                       {"options", poputil::toProfileValue(options)}});
  const poplar::DebugContext debugContext(di);
  checkOptions(options, op);
  std::vector<Tensor> outs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ConvolutionArgs &a = args[i];
    outs.push_back(forConvolution(op, i, [&] {
      return poplin::convolution(graph, a.inputs, a.weights, a.params, transposeAndFlipWeights, prog,
                                 {debugContext, "conv" + std::to_string(i)}, a.options, cache);
    }));
  }
  for (const Tensor &t : outs)
    di.addOutput(t);
  return outs;
}

std::vector<Tensor> calculateWeightDeltas(Graph &graph, const std::vector<CalculateWeightDeltasArgs> &args,
                                          program::Sequence &prog, const DebugContext &debugContextIn,
                                          const OptionFlags &options, PlanningCache *cache) {
  const std::string op = std::string(kLib) + "calculateWeightDeltas";
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 {{"params", paramsOf(args)}, {"options", poputil::toProfileValue(options)}});
  const poplar::DebugContext debugContext(di);
  checkOptions(options, op);
  std::vector<Tensor> outs;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const CalculateWeightDeltasArgs &a = args[i];
    outs.push_back(forConvolution(op, i, [&] {
      return poplin::calculateWeightDeltas(graph, a.zDeltas, a.activations, a.params, prog,
                                           {debugContext, "conv" + std::to_string(i)}, a.options, cache);
    }));
  }
  for (const Tensor &t : outs)
    di.addOutput(t);
  return outs;
}

namespace {

// Both weight-update forms (tensor and float scale): one convolution after another.
template <class Args>
void weightUpdateEach(Graph &graph, const std::vector<Args> &args, program::Sequence &prog,
                      const DebugContext &debugContextIn, const OptionFlags &options, PlanningCache *cache) {
  const std::string op = std::string(kLib) + "convolutionWeightUpdate";
  aspen::ops::PoplinDebugInfo di(debugContextIn,
                                 {{"params", paramsOf(args)}, {"options", poputil::toProfileValue(options)}});
  const poplar::DebugContext debugContext(di);
  checkOptions(options, op);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Args &a = args[i];
    forConvolution(op, i, [&] {
      poplin::convolutionWeightUpdate(graph, a.zDeltas, a.weights, a.activations, a.params, a.scale, prog,
                                      {debugContext, "conv" + std::to_string(i)}, a.options, cache);
    });
  }
}

} // namespace

void convolutionWeightUpdate(Graph &graph, const std::vector<ConvWeightUpdateArgs> &args,
                             program::Sequence &prog, const DebugContext &debugContextIn,
                             const OptionFlags &options, PlanningCache *cache) {
  weightUpdateEach(graph, args, prog, debugContextIn, options, cache);
}

void convolutionWeightUpdate(Graph &graph, const std::vector<ConvWeightUpdateArgsScalar> &args,
                             program::Sequence &prog, const DebugContext &debugContextIn,
                             const OptionFlags &options, PlanningCache *cache) {
  weightUpdateEach(graph, args, prog, debugContextIn, options, cache);
}

} // namespace poplin::multiconv
