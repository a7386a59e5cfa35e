// Copyright (c) Aspen contributors.
// poplin::fc (poplin/FullyConnected.hpp) and the ordering of poplin::MatMulParams.
#include "poplin/FullyConnected.hpp"

#include <tuple>

namespace poplin {

bool operator<(const MatMulParams &a, const MatMulParams &b) {
  return std::tie(a.inputType, a.outputType, a.aShape, a.bShape) <
         std::tie(b.inputType, b.outputType, b.aShape, b.bShape);
}

namespace fc {

namespace {
// The forward product of a layer of shape p: {G, batch, in} x {G, in, out}.
MatMulParams forwardProduct(const FullyConnectedParams &p, const poplar::Type &type) {
  return {type, type, {p.numGroups, p.batchSize, p.inputSize}, {p.numGroups, p.inputSize, p.outputSize}};
}

std::pair<MatMulParams, poplar::OptionFlags> withPass(MatMulParams params, poplar::OptionFlags options,
                                                      const char *pass) {
  options.set("fullyConnectedPass", pass);
  return {std::move(params), std::move(options)};
}
} // namespace

std::vector<std::pair<MatMulParams, poplar::OptionFlags>>
getMatMulPrePlanParameters(FullyConnectedParams p, poplar::OptionFlags matmulOptions, poplar::Type type,
                           bool inferenceOnly) {
  std::vector<std::pair<MatMulParams, poplar::OptionFlags>> out;
  out.push_back(
      withPass(forwardProduct(p, type), matmulOptions, inferenceOnly ? "INFERENCE_FWD" : "TRAINING_FWD"));
  if (inferenceOnly)
    return out;
  // Backward: the output gradients {batch, out} times the weights transposed {out, in}.
  out.push_back(withPass(forwardProduct({p.numGroups, p.batchSize, p.outputSize, p.inputSize}, type),
                         matmulOptions, "TRAINING_BWD"));
  // Weight update: the activations transposed {in, batch} times the output gradients {batch, out}.
  out.push_back(withPass(forwardProduct({p.numGroups, p.inputSize, p.batchSize, p.outputSize}, type),
                         matmulOptions, "TRAINING_WU"));
  return out;
}

} // namespace fc
} // namespace poplin
