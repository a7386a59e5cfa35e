// Copyright (c) Aspen contributors.
// popops::createOutputForElementWiseOp: an output laid out like the best-mapped input.
#include "popops/ElementWiseUtil.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

namespace popops {

poplar::Tensor createOutputForElementWiseOp(poplar::Graph &graph, const std::vector<poplar::Tensor> &inputs,
                                            const poplar::Type &outputType,
                                            const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(inputs, outputType));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::createOutputForElementWiseOp";
  if (inputs.empty())
    throw poputil::poplibs_error(op + ": no input tensors were given");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    aspen::ops::requireValid(inputs[i], op, "input " + std::to_string(i));
    if (inputs[i].shape() != inputs[0].shape())
      throw poputil::poplibs_error(op + ": input " + std::to_string(i) + " " +
                                   aspen::ops::describe(inputs[i]) + " does not have the shape of input 0 " +
                                   aspen::ops::describe(inputs[0]));
  }
  poplar::Tensor out = graph.addVariable(outputType, inputs[0].shape(), {debugContext, "output"});
  for (const auto &in : inputs) {
    bool complete = true;
    graph.getTileMapping(in, &complete);
    if (complete && in.isParallelWriteable() && in.numElements() > 0) {
      graph.setTileMapping(out, graph.getTileMapping(in));
      return out;
    }
  }
  poputil::mapTensorLinearly(graph, out);
  return out;
}

} // namespace popops
