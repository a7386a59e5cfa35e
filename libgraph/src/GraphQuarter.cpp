// Copyright (c) Aspen contributors.
// fp8 (QUARTER) tensors with metadata: checking and attaching metadata,
// Tensor::hasMetadata/getMetadata, QUARTER constants, poplar/MetadataCreation.hpp.
// The rules are in docs/fp8.md.
#include "ir/QuarterMetadata.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/MetadataCreation.hpp"
#include "poplar/exceptions.hpp"
#include "util/HostConvert.hpp"
#include "util/QuarterConvert.hpp"

#include <cstring>

namespace aspen::ir {

void checkQuarterMetadata(const GraphData &data, const poplar::Type &type, const poplar::Tensor &metadata,
                          const std::string &name) {
  const std::string what = "Cannot create '" + name + "'";
  if (!type.requiresMetadata())
    throw poplar::type_error(what + ": a metadata tensor was given but type " + type.toString().str() +
                             " takes none (only quarter does)");
  if (!metadata.valid())
    throw poplar::tensor_creation_error(what + ": its metadata tensor is not valid (default-constructed)");
  if (metadata.getImpl().graph != data.id())
    throw poplar::tensor_creation_error(what + ": its metadata tensor " + metadata.shortString() +
                                        " belongs to a different graph");
  if (metadata.elementType() != poplar::QUARTER_METADATA)
    throw poplar::type_error(what + ": its metadata tensor " + metadata.shortString() + " is of type " +
                             metadata.elementType().toString().str() + ", not quarter_metadata");
  if (metadata.numElements() != 1)
    throw poplar::tensor_creation_error(what + ": its metadata tensor " + metadata.shortString() + " has " +
                                        std::to_string(metadata.numElements()) +
                                        " elements; a metadata tensor has exactly one");
}

void attachQuarterMetadata(poplar::Graph &graph, GraphData &data, VarId var, const poplar::Tensor *metadata) {
  if (!data.variables[var].type.requiresMetadata())
    return;
  if (metadata) {
    data.quarterMetadata[var] = metadata->reshape({});
    return;
  }
  const std::string name = data.variables[var].name + "/metadata";
  poplar::Tensor md = graph.addVariable(poplar::QUARTER_METADATA, {}, name);
  graph.setTileMapping(md, 0);
  const VarId mdVar = md.getImpl().segments->front().var;
  data.initialValues[mdVar] = {poplar::QuarterMetadata().getBinary()};
  data.quarterMetadata[var] = md;
}

poplar::QuarterMetadata knownQuarterMetadata(const GraphData &data, const poplar::Tensor &metadata,
                                             const std::string &name) {
  const Segment &s = metadata.getImpl().segments->front();
  const auto it = data.initialValues.find(s.var);
  if (it == data.initialValues.end())
    throw poplar::tensor_creation_error("Cannot create constant '" + name +
                                        "': the value of its metadata tensor " + metadata.shortString() +
                                        " is not known while the graph is built (use a constant or a tensor "
                                        "from createVariableMetadataTensor)");
  const std::uint8_t binary = it->second.at(static_cast<std::size_t>(s.start));
  try {
    return poplar::QuarterMetadata(binary);
  } catch (const poplar::poplar_error &e) {
    throw poplar::tensor_creation_error("Cannot create constant '" + name + "': metadata tensor " +
                                        metadata.shortString() + ": " + e.what());
  }
}

poplar::Tensor uniqueMetadataOf(const poplar::Tensor &t) {
  if (!t.hasMetadata())
    return poplar::Tensor();
  try {
    return t.getMetadata();
  } catch (const poplar::poplar_error &) {
    return poplar::Tensor(); // elements with different metadata
  }
}

} // namespace aspen::ir

namespace poplar {

using aspen::ir::GraphData;

bool Tensor::hasMetadata() const {
  if (!valid() || !elementType().requiresMetadata())
    return false;
  const auto graph = getImpl().lockGraph();
  if (!graph || getImpl().segments->empty()) // an empty view names no variable
    return false;
  for (const auto &s : *getImpl().segments)
    if (!graph->metadataOf(s.var))
      return false;
  return true;
}

Tensor Tensor::getMetadata() const {
  if (!valid())
    throw poplar_error("getMetadata: the tensor is not valid (default-constructed)");
  if (!elementType().requiresMetadata())
    return Tensor(); // as Poplar: a tensor of a type without metadata has an empty one
  const auto graph = getImpl().lockGraph();
  if (!graph)
    throw poplar_error("getMetadata: the graph of tensor " + shortString() + " no longer exists");
  const Tensor *found = nullptr;
  for (const auto &s : *getImpl().segments) {
    const Tensor *mdp = graph->metadataOf(s.var);
    if (!mdp)
      throw poplar_error("getMetadata: tensor " + shortString() + " has elements of variable " +
                         graph->describeVariable(s.var) + ", which has no metadata");
    const Tensor &md = *mdp;
    if (found && !(md.getImpl().segments->front().var == found->getImpl().segments->front().var &&
                   md.getImpl().segments->front().start == found->getImpl().segments->front().start))
      throw poplar_error("getMetadata: tensor " + shortString() +
                         " has elements carrying different metadata tensors (" + found->shortString() +
                         " and " + md.shortString() + ")");
    found = &md;
  }
  if (!found) // an empty tensor: its variable (if any) is not listed in segments
    throw poplar_error("getMetadata: tensor " + shortString() + " has no elements and no metadata");
  return *found;
}

namespace {
// An empty metadata tensor means none given, for every type: quarter variables then get their
// own metadata, as addVariable(QUARTER, shape) makes. PopLibs' poplin::createInput and
// createWeights pass `{}` as the metadata of every convolution operand, quarter ones too, and
// read the result's getMetadata() afterwards (docs/fp8.md).
const Tensor *metadataOrNone(const Type &, const Tensor &metadata) {
  return metadata.valid() ? &metadata : nullptr;
}
} // namespace

Tensor Graph::addVariable(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                          const DebugContext &debugContext) {
  return addVariableImpl(type, metadataOrNone(type, metadata), shape, VariableMappingMethod::NONE,
                         debugContext);
}

Tensor Graph::addVariable(const Type &type, const Tensor *metadata, ArrayRef<std::size_t> shape,
                          const DebugContext &debugContext) {
  return addVariableImpl(type, metadata, shape, VariableMappingMethod::NONE, debugContext);
}

Tensor Graph::addVariable(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                          VariableMappingMethod mappingMethod, const DebugContext &debugContext) {
  return addVariableImpl(type, metadataOrNone(type, metadata), shape, mappingMethod, debugContext);
}

Tensor Graph::addVariable(const Type &type, const Tensor *metadata, ArrayRef<std::size_t> shape,
                          VariableMappingMethod mappingMethod, const DebugContext &debugContext) {
  return addVariableImpl(type, metadata, shape, mappingMethod, debugContext);
}

Tensor Graph::addConstantWithMetadata(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                                      const Type &hostType, const void *values, std::size_t count, bool splat,
                                      const DebugContext &dc) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addConstantWithMetadata");
  const std::string &name = dc.getPathName();
  // An empty metadata tensor with a type that takes none is a plain constant.
  if (!metadata.valid() && !type.requiresMetadata())
    return addConstantFromHost(type, shape, hostType, values, count, splat, dc);
  aspen::ir::checkQuarterMetadata(*data_, type, metadata, name);
  const QuarterMetadata md = aspen::ir::knownQuarterMetadata(*data_, metadata, name);
  if (!splat && values == nullptr && count > 0)
    throw tensor_creation_error("Constant '" + name + "': no values given (null pointer)");
  const std::size_t hostSize = hostType == HALF ? 2 : hostType.size();
  std::vector<std::uint8_t> bytes(splat ? 1 : count);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    double x;
    aspen::util::convertHostToDevice(hostType, static_cast<const char *>(values) + i * hostSize, DOUBLE, &x,
                                     1);
    bytes[i] = aspen::util::encodeQuarter(x, md);
  }
  // The bytes as an UNSIGNED_CHAR constant (checks shape and count), then retyped.
  Tensor t = splat ? addConstantFromHost(UNSIGNED_CHAR, shape, UNSIGNED_CHAR, bytes.data(), 1, true, dc)
                   : addConstantFromHost(UNSIGNED_CHAR, shape, UNSIGNED_CHAR, bytes.data(), count, false, dc);
  const aspen::ir::VarId var = static_cast<aspen::ir::VarId>(data_->variables.size() - 1);
  data_->variables[var].type = type;
  aspen::ir::attachQuarterMetadata(*this, *data_, var, &metadata);
  return aspen::ir::makeVariableTensor(data_, var, type, t.shape());
}

namespace {

std::uint8_t metadataBinary(const char *what, QuarterMetadata::Format fp8Format, int fp8Scale) {
  if (fp8Scale < -32 || fp8Scale > 31)
    throw poplar_error(std::string(what) + ": scale " + std::to_string(fp8Scale) +
                       " is outside the range -32..31 of the metadata's 6-bit scale");
  return QuarterMetadata(fp8Format, static_cast<std::int8_t>(fp8Scale)).getBinary();
}

/// A scalar QUARTER_METADATA variable on the graph's first tile holding `binary`.
Tensor metadataTensor(Graph &graph, std::uint8_t binary, bool constant, const DebugContext &debugContext) {
  DebugContext dc = debugContext.getPathName().empty() ? DebugContext("metadata") : debugContext;
  // QUARTER_METADATA has no host conversion: make the byte as UNSIGNED_CHAR and retype it.
  Tensor t = constant ? graph.addConstant<unsigned char>(UNSIGNED_CHAR, {}, binary, dc)
                      : graph.addVariable(UNSIGNED_CHAR, {}, dc);
  graph.setTileMapping(t, 0);
  const std::shared_ptr<GraphData> data = t.getImpl().lockGraph();
  const aspen::ir::VarId var = t.getImpl().segments->front().var;
  data->variables[var].type = QUARTER_METADATA;
  data->initialValues[var] = {binary};
  return aspen::ir::makeVariableTensor(data, var, QUARTER_METADATA, {});
}

} // namespace

Tensor createConstantMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, int fp8Scale,
                                    const DebugContext &debugContext) {
  return metadataTensor(graph, metadataBinary("createConstantMetadataTensor", fp8Format, fp8Scale), true,
                        debugContext);
}

Tensor createVariableMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, int fp8Scale,
                                    const DebugContext &debugContext) {
  return metadataTensor(graph, metadataBinary("createVariableMetadataTensor", fp8Format, fp8Scale), false,
                        debugContext);
}

} // namespace poplar
