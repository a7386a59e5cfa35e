// Copyright (c) Aspen contributors.
// Issue 10 item 4: Graph::connect(FieldRef, T value) and ConnectionDesc{"field", value}
// make a constant of the field's type on the vertex's tile; Input<Vector<T>> has
// operator-> (`in->size()`). Results are checked against a host loop.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string vertexSource() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/vertices/api_scalar_vertices.cpp";
}

} // namespace

TEST_CASE("Scalar values connected to vertex fields", "[compat][connect]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  graph.addCodelets(vertexSource());

  const std::size_t n = 6;
  poplar::Tensor in = graph.addVariable(poplar::FLOAT, {2, n}, "in");
  poplar::Tensor out = graph.addVariable(poplar::FLOAT, {2, n}, "out");
  poplar::ComputeSet cs = graph.addComputeSet("scale");
  // Vertex 0: values connected with Graph::connect before the vertex is mapped (an int
  // literal goes into a float field and a float into an unsigned field: converted).
  poplar::VertexRef v0 = graph.addVertex(cs, "ScaleOffset", {{"in", in[0]}, {"out", out[0]}});
  graph.connect(v0["scale"], 2);
  graph.connect(v0["offset"], 3u);
  graph.setTileMapping(v0, 1);
  // Vertex 1: values in the ConnectionDesc list, vertex mapped first.
  poplar::VertexRef v1 =
      graph.addVertex(cs, "ScaleOffset", {{"in", in[1]}, {"out", out[1]}, {"scale", 0.5f}, {"offset", 10u}});
  graph.setTileMapping(v1, 2);
  graph.setTileMapping(in, 0);
  graph.setTileMapping(out[0], 1);
  graph.setTileMapping(out[1], 2);
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);

  poplar::Engine engine(graph, poplar::program::Execute(cs));
  engine.load(device);
  std::vector<float> host(2 * n);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = 0.25f * static_cast<float>(i) - 1.0f;
  engine.writeTensor("in", host.data(), host.data() + host.size());
  engine.run(0);
  std::vector<float> result(2 * n);
  engine.readTensor("out", result.data(), result.data() + result.size());
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(result[i] == host[i] * 2.0f + 3.0f);
    CHECK(result[n + i] == host[n + i] * 0.5f + 10.0f);
  }
}
