// Copyright (c) Aspen contributors.
// The metadata-creation calls of poplar/MetadataCreation.hpp that read the scale at run time
// (docs/fp8.md). They compile a small vertex with Graph::addCodelets, so they live beside the
// codelet compiler: libgraph, below the compiler, cannot call it (docs/internals.md, layering).
#include "poplar/Graph.hpp"
#include "poplar/MetadataCreation.hpp"
#include "poplar/Program.hpp"
#include "poplar/exceptions.hpp"

#include <sstream>
#include <string>

namespace poplar {

namespace {

// The vertex behind the metadata-creation overloads that read the scale at run
// time. Compiled once by addCodelets (and then taken from the codelet cache).
const char *const kSetMetadataVertex = "aspen_fp8::SetMetadata";
const char *const kSetMetadataSource = R"(#include <poplar/Vertex.hpp>
namespace aspen_fp8 {
class SetMetadata : public poplar::Vertex {
public:
  poplar::Input<int> scale;
  poplar::Output<MetadataType> out; // the metadata as unsigned char
  unsigned format; // 0: F143, 1: F152
  void compute() {
    int s = scale;
    s = s < -32 ? -32 : (s > 31 ? 31 : s);
    quarter_metadata md;
    md.fmt = format ? quarter_metadata::f152 : quarter_metadata::f143;
    md.scale = static_cast<signed char>(s);
    *out = poplar::packMetadata(md);
  }
};
} // namespace aspen_fp8
)";

} // namespace

void setMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, const Tensor &fp8Scale,
                       const Tensor &metadataOut, program::Sequence &prog, const DebugContext &debugContext) {
  if (!fp8Scale.valid() || fp8Scale.elementType() != INT || fp8Scale.numElements() != 1)
    throw poplar_error("setMetadataTensor: the scale tensor " +
                       (fp8Scale.valid() ? fp8Scale.shortString() : std::string("<invalid>")) +
                       " must be one element of type int");
  if (!metadataOut.valid() || metadataOut.elementType() != QUARTER_METADATA || metadataOut.numElements() != 1)
    throw poplar_error("setMetadataTensor: the metadata tensor " +
                       (metadataOut.valid() ? metadataOut.shortString() : std::string("<invalid>")) +
                       " must be one element of type quarter_metadata");
  if (fp8Format != QuarterMetadata::Format::F143 && fp8Format != QuarterMetadata::Format::F152)
    throw poplar_error("setMetadataTensor: invalid format " + std::to_string(static_cast<int>(fp8Format)));
  if (!graph.hasCodelet(kSetMetadataVertex)) {
    std::stringstream source(kSetMetadataSource);
    graph.addCodelets(source);
  }
  unsigned tile = 0;
  const auto mapping = graph.getTileMapping(metadataOut, false);
  for (unsigned t = 0; t < mapping.size(); ++t)
    if (!mapping[t].empty()) {
      tile = t;
      break;
    }
  ComputeSet cs = graph.addComputeSet({debugContext, "setMetadata"});
  VertexRef v = graph.addVertex(cs, kSetMetadataVertex);
  graph.connect(v["scale"], fp8Scale.reshape({}));
  graph.connect(v["out"], metadataOut.reshape({}).reinterpret(UNSIGNED_CHAR));
  graph.setInitialValue(v["format"], fp8Format == QuarterMetadata::Format::F152 ? 1u : 0u);
  graph.setTileMapping(v, tile);
  graph.setPerfEstimate(v, 20);
  prog.add(program::Execute(cs, {debugContext, "setMetadata"}));
}

Tensor createVariableMetadataTensor(Graph &graph, QuarterMetadata::Format fp8Format, const Tensor &fp8Scale,
                                    program::Sequence &prog, const DebugContext &debugContext) {
  Tensor md = createVariableMetadataTensor(graph, fp8Format, 0, debugContext);
  setMetadataTensor(graph, fp8Format, fp8Scale, md, prog, debugContext);
  return md;
}

} // namespace poplar
