// Copyright (c) Aspen contributors.
// A vertex with many fields (issue 25, item 5): popc's generated registration code grows
// linearly in the number of fields and vertex types. A vertex of 1,500 fields (public and
// private, scalars and vectors) compiles with Graph::addCodelets and computes what a host loop
// computes, so every field's offset is right. test/bench/popc_fields_bench times 10,000.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>

#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

TEST_CASE("codelets_wide_vertex: 1,500 fields, public and private, each at its own offset", "[codelets]") {
  constexpr unsigned kScalars = 1000, kVectors = 500;
  std::ostringstream src;
  src << "#include <poplar/Vertex.hpp>\nusing namespace poplar;\n"
      << "class Wide : public Vertex {\npublic:\n";
  for (unsigned i = 0; i < kScalars; ++i)
    src << (i == kScalars / 2 ? "private:\n" : "") << "  Input<float> s" << i << ";\n";
  src << "public:\n";
  for (unsigned i = 0; i < kVectors; ++i)
    src << "  Input<Vector<float>> v" << i << ";\n";
  src << "  Output<float> out;\n  bool compute() {\n    float acc = 0;\n";
  for (unsigned i = 0; i < kScalars; ++i)
    src << "    acc = acc * 0.5f + *s" << i << ";\n";
  for (unsigned i = 0; i < kVectors; ++i)
    src << "    acc = acc * 0.5f + v" << i << "[1];\n";
  src << "    *out = acc;\n    return true;\n  }\n};\n";

  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  std::stringstream stream(src.str());
  graph.addCodelets(stream);

  Tensor scalars = graph.addVariable(FLOAT, {kScalars}, "scalars");
  Tensor vectors = graph.addVariable(FLOAT, {kVectors, 2}, "vectors");
  Tensor out = graph.addVariable(FLOAT, {}, "out");
  graph.setTileMapping(scalars, 0);
  graph.setTileMapping(vectors, 0);
  graph.setTileMapping(out, 0);
  ComputeSet cs = graph.addComputeSet("wide");
  VertexRef v = graph.addVertex(cs, "Wide");
  for (unsigned i = 0; i < kScalars; ++i)
    graph.connect(v["s" + std::to_string(i)], scalars[i]);
  for (unsigned i = 0; i < kVectors; ++i)
    graph.connect(v["v" + std::to_string(i)], vectors[i]);
  graph.connect(v["out"], out);
  graph.setTileMapping(v, 0);
  graph.createHostWrite("scalars", scalars);
  graph.createHostWrite("vectors", vectors);
  graph.createHostRead("out", out);

  std::mt19937 random(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> hostScalars(kScalars), hostVectors(kVectors * 2);
  for (float &x : hostScalars)
    x = value(random);
  for (float &x : hostVectors)
    x = value(random);
  float expected = 0;
  for (unsigned i = 0; i < kScalars; ++i)
    expected = expected * 0.5f + hostScalars[i];
  for (unsigned i = 0; i < kVectors; ++i)
    expected = expected * 0.5f + hostVectors[2 * i + 1];

  Engine engine(graph, Execute(cs));
  engine.load(device);
  engine.writeTensor("scalars", hostScalars.data(), hostScalars.data() + kScalars);
  engine.writeTensor("vectors", hostVectors.data(), hostVectors.data() + hostVectors.size());
  engine.run(0);
  float result = 0;
  engine.readTensor("out", &result, &result + 1);
  CHECK(result == expected);
}
