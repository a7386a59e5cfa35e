// Copyright (c) Aspen contributors.
// popops::normaliseImage: one element-wise expression writes the three normalised channels of
// the output, and a zero fill its fourth (padding) channel.
#include "popops/NormaliseImage.hpp"

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/Cast.hpp"
#include "popops/ElementWise.hpp"
#include "popops/Expr.hpp"
#include "popops/Zero.hpp"

#include <poputil/TileMapping.hpp>
#include <poputil/exceptions.hpp>

#include <vector>

namespace popops {

namespace {

void checkImageType(const poplar::Type &type, const std::string &what, const std::string &op) {
  if (type != poplar::UNSIGNED_CHAR && type != poplar::HALF && type != poplar::FLOAT)
    throw poputil::poplibs_error(op + ": " + what + " must be unsigned char, half or float, not " +
                                 type.toString().str());
}

void checkChannels(const std::vector<std::size_t> &shape, const std::string &what, const std::string &op) {
  if (shape.empty() || shape.back() != 3)
    throw poputil::poplibs_error(op + ": " + what + " must have an inner dimension of 3 channels");
}

} // namespace

poplar::Tensor createNormaliseImageInput(poplar::Graph &graph, const poplar::Type &type,
                                         const poplar::ArrayRef<std::size_t> shape,
                                         const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(type, shape));
  const std::string op = "popops::createNormaliseImageInput";
  const std::vector<std::size_t> dims(shape.begin(), shape.end());
  checkImageType(type, "the type", op);
  checkChannels(dims, "the shape " + aspen::ops::shapeString(dims), op);
  poplar::Tensor t = graph.addVariable(type, dims, {poplar::DebugContext(di), "image"});
  poputil::mapTensorLinearly(graph, t, 0, 3); // whole pixels on a tile
  di.addOutput(t);
  return t;
}

poplar::Tensor normaliseImage(poplar::Graph &graph, poplar::program::Sequence &seq, poplar::Tensor tIn,
                              float inScale, poplar::Tensor offsets, poplar::Tensor scales,
                              const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(tIn, inScale, offsets, scales));
  const poplar::DebugContext dc(di, "normaliseImage");
  const std::string op = "popops::normaliseImage";
  aspen::ops::requireValid(tIn, op, "tIn");
  aspen::ops::requireValid(offsets, op, "offsets");
  aspen::ops::requireValid(scales, op, "scales");
  checkImageType(tIn.elementType(), "the image " + aspen::ops::describe(tIn), op);
  checkChannels(tIn.shape(), "the image " + aspen::ops::describe(tIn), op);
  const poplar::Type outType = tIn.elementType() == poplar::UNSIGNED_CHAR ? poplar::HALF : tIn.elementType();
  for (const auto &[t, name] : {std::pair<const poplar::Tensor &, const char *>{offsets, "offsets"},
                                std::pair<const poplar::Tensor &, const char *>{scales, "scales"}})
    if (t.shape() != std::vector<std::size_t>{3} || t.elementType() != outType)
      throw poputil::poplibs_error(op + ": " + name + " " + aspen::ops::describe(t) + " must be {3} " +
                                   outType.toString().str() + " (the output's type)");

  std::vector<std::size_t> outShape = tIn.shape();
  outShape.back() = 4;
  poplar::Tensor out = graph.addVariable(outType, outShape, {dc, "out"});
  poputil::mapTensorLinearly(graph, out, 0, 4);
  const unsigned channelDim = static_cast<unsigned>(outShape.size() - 1);
  // Element-wise expressions take no unsigned char: the pixels are cast first (exact in half).
  const poplar::Tensor in = tIn.elementType() == outType ? tIn : cast(graph, tIn, outType, seq, {dc, "cast"});
  using namespace popops::expr;
  mapWithOutput(graph, Mul(Sub(Mul(_1, Const(inScale)), _2), _3), {in, offsets, scales},
                out.slice(0, 3, channelDim), seq, {dc, "normalise"});
  zero(graph, out.slice(3, 4, channelDim), seq, {dc, "pad"});
  di.addOutput(out);
  return out;
}

} // namespace popops
