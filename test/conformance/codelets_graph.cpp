// Copyright (c) Aspen contributors.
// Conformance: the vertex half of poplar::Graph, as reference/poplar_api.md
// ("poplar/Graph.hpp": Codelets; Compute sets & vertices) and
// reference/vertex_model.md (§2 fields, §4 vertex type names, §5 perf estimates)
// describe it: addCodelets in every form, hasCodelet, addVertex, connect,
// FieldRef[i], setFieldSize/getFieldSize, setInitialValue on state fields,
// perf estimates, vertex tile mapping, getMaxFieldDim, getMaxVertexFieldValue,
// and poputil::templateVertex.
#include "CodeletTestSupport.hpp"

#include "codelets/CodeletCompiler.hpp"
#include "ir/GraphData.hpp"
#include "poplar/Graph.hpp"
#include "poplar/exceptions.hpp"

#include <poputil/VertexTemplates.hpp>

#include <catch2/catch.hpp>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace poplar;
using codelet_test::corpusFile;
using codelet_test::corpusFlags;

namespace {

Target smallTarget(unsigned tiles = 8) {
  return Target::createIPUTarget(1, tiles, "ipu2");
}

/// A graph with the whole corpus added.
Graph corpusGraph(unsigned tiles = 8) {
  Graph g(smallTarget(tiles));
  g.addCodelets({corpusFile("FieldKinds.cpp"), corpusFile("Templates.cpp")}, corpusFlags());
  return g;
}

std::string tempDir() {
  char dirTemplate[] = "/tmp/aspen-codelets-graph-XXXXXX";
  return ::mkdtemp(dirTemplate);
}

const aspen::ir::FieldValue &fieldValue(const Graph &g, VertexRef v, const std::string &field) {
  const auto &data = g.getImpl();
  REQUIRE(v.getId() < data.vertices.size());
  const auto &vertex = data.vertices[v.getId()];
  const int i = data.vertexTypes[vertex.type].fieldIndex(field);
  REQUIRE(i >= 0);
  return vertex.fields[static_cast<std::size_t>(i)];
}

/// Edge `e` of the field, as a tensor (the graph holds edges as segments).
Tensor edgeOf(const Graph &g, VertexRef v, const std::string &field, std::size_t e) {
  const auto edges = fieldValue(g, v, field).edges();
  REQUIRE(e < edges.size());
  return aspen::ir::edgeTensor(g.getImpl(), edges[e]);
}

// ---- addCodelets -----------------------------------------------------------------------

TEST_CASE("codelets_graph: addCodelets compiles a source once, and again is harmless", "[codelets][graph]") {
  Graph g(smallTarget());
  REQUIRE_FALSE(g.hasCodelet("ScalarEdges"));
  REQUIRE(g.addCodelets(corpusFile("FieldKinds.cpp"), CodeletFileType::Auto, corpusFlags()));
  REQUIRE(g.hasCodelet("ScalarEdges"));
  REQUIRE(g.hasCodelet("MultiScale<float>"));
  REQUIRE_FALSE(g.hasCodelet("NotAVertexType"));
  const std::size_t types = g.getImpl().vertexTypes.size();
  REQUIRE_FALSE(g.addCodelets(corpusFile("FieldKinds.cpp"), CodeletFileType::Auto, corpusFlags()));
  REQUIRE(g.getImpl().vertexTypes.size() == types);
  REQUIRE(g.getImpl().codeletLibraries.size() == 1);
  const auto &lib = g.getImpl().codeletLibraries.front();
  REQUIRE(lib.origin == corpusFile("FieldKinds.cpp"));
  REQUIRE(std::ifstream(lib.path).good()); // the .gp in the codelet cache
  for (const auto &t : g.getImpl().vertexTypes)
    REQUIRE(t.library == 0);
}

TEST_CASE("codelets_graph: addCodelets loads a .gp, by extension or explicitly", "[codelets][graph]") {
  const auto compiled = aspen::codelets::compileCodelets(
      {corpusFile("Templates.cpp")}, aspen::codelets::parseCodeletFlags(codelet_test::corpusFlags()));
  const std::string dir = tempDir();
  const std::string gp = dir + "/templates.gp";
  std::ofstream(gp, std::ios::binary)
      .write(reinterpret_cast<const char *>(compiled.gpBytes.data()),
             static_cast<std::streamsize>(compiled.gpBytes.size()));
  const std::string object = dir + "/templates.bin";
  std::ofstream(object, std::ios::binary)
      .write(reinterpret_cast<const char *>(compiled.gpBytes.data()),
             static_cast<std::streamsize>(compiled.gpBytes.size()));
  {
    Graph g(smallTarget());
    REQUIRE(g.addCodelets(gp));
    REQUIRE(g.hasCodelet("ns::Param<float,3,true,corpus::Op::ADD>"));
    REQUIRE(g.hasCodelet("Plain"));
    REQUIRE(g.getImpl().codeletLibraries.front().path == gp);
    // The same library again, as a source compiled to these very bytes: harmless.
    REQUIRE_FALSE(g.addCodelets(corpusFile("Templates.cpp"), CodeletFileType::Auto, corpusFlags()));
    REQUIRE(g.getImpl().codeletLibraries.size() == 1);
  }
  {
    Graph g(smallTarget());
    REQUIRE(g.addCodelets(object, CodeletFileType::Object));
    REQUIRE(g.hasCodelet("Plain"));
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("codelets_graph: addCodelets with a list of files, an explicit type, and a stream",
          "[codelets][graph]") {
  Graph g = corpusGraph();
  REQUIRE(g.hasCodelet("ns::inner::Apply<corpus::Twice,float>"));
  REQUIRE(g.hasCodelet("HalfAxpy"));
  // Sources given together are compiled into one library, as one popc call compiles them.
  REQUIRE(g.getImpl().codeletLibraries.size() == 1);

  // An explicit CppSource for a file named otherwise.
  const std::string dir = tempDir();
  const std::string named = dir + "/kernel.codelet";
  std::ofstream(named) << "#include <poplar/Vertex.hpp>\n"
                          "class Named : public poplar::Vertex {\npublic:\n  poplar::Output<int> out;\n"
                          "  bool compute() { *out = 7; return true; }\n};\n";
  REQUIRE(g.addCodelets(named, CodeletFileType::CppSource));
  REQUIRE(g.hasCodelet("Named"));
  std::system(("rm -rf '" + dir + "'").c_str());

  // Library code generates codelets at run time and compiles them from a stream.
  const std::string name = "Generated";
  REQUIRE_FALSE(g.hasCodelet(name));
  std::stringstream source;
  source << "#include <poplar/Vertex.hpp>\n"
         << "#warning \"generated codelet\"\n"
         << "class " << name << " : public poplar::Vertex {\npublic:\n"
         << "  poplar::Input<poplar::Vector<float>> in;\n  poplar::Output<float> out;\n"
         << "  bool compute() { float s = 0; for (float x : in) s += x; *out = s; return true; }\n};\n";
  std::ostringstream compileOutput;
  g.addCodelets(source, "-O3", compileOutput);
  REQUIRE(g.hasCodelet(name));
  REQUIRE(compileOutput.str().find("generated codelet") != std::string::npos); // also on a cache hit
  REQUIRE(g.getImpl().codeletLibraries.back().origin == "<stringstream>");
  std::stringstream again(source.str());
  g.addCodelets(again, "-O3"); // harmless
  REQUIRE(g.hasCodelet(name));
}

// ---- vertices ----------------------------------------------------------------------------

TEST_CASE("codelets_graph: addVertex and connect every kind of edge", "[codelets][graph]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet("cs");
  const Tensor a = g.addVariable(FLOAT, {}, "a");
  const Tensor b = g.addVariable(INT, {1}, "b");
  const Tensor outs = g.addVariable(FLOAT, {2, 3}, "outs");
  const Tensor acc = g.addVariable(UNSIGNED_INT, {4}, "acc");
  VertexRef v = g.addVertex(cs, "ScalarEdges", {{"a", a}, {"b", b}, {"out", outs[1][2]}});
  g.connect(v["acc"], acc.slice(3, 4));
  REQUIRE(g.getImpl().computeSets.at(cs.getId()).vertices == std::vector<std::uint32_t>{v.getId()});
  REQUIRE(g.getImpl().vertices[v.getId()].tile == -1);
  REQUIRE(edgeOf(g, v, "a", 0) == a);
  REQUIRE(edgeOf(g, v, "out", 0) == outs[1][2]);
  REQUIRE(fieldValue(g, v, "acc").set);
  REQUIRE(g.getFieldSize(v["a"]) == 1);

  // A vector edge takes the flattened tensor.
  VertexRef sum = g.addVertex(cs, "SuperSum");
  g.connect(sum["in"], outs);
  g.connect(sum["out"], a);
  REQUIRE(edgeOf(g, sum, "in", 0) == outs.flatten());
  REQUIRE(g.getFieldSize(sum["in"]) == 6);

  // Lists of edges: from a vector of tensors, element by element, or from a 2-D tensor.
  VertexRef lists = g.addVertex(cs, "EdgeLists");
  const Tensor rows = g.addVariable(FLOAT, {2, 4}, "rows");
  const Tensor outRows = g.addVariable(FLOAT, {2, 4}, "outRows");
  const Tensor scalars = g.addVariable(FLOAT, {3}, "scalars");
  g.connect(lists["rows"], std::vector<Tensor>{rows[0], rows[1].slice(0, 2)});
  REQUIRE(g.getFieldSize(lists["rows"]) == 2);
  REQUIRE(g.getFieldSize(lists["rows"][1]) == 2);
  g.setFieldSize(lists["outRows"], 2);
  g.connect(lists["outRows"][0], outRows[0]);
  g.connect(lists["outRows"][1], outRows[1]);
  REQUIRE(edgeOf(g, lists, "outRows", 1) == outRows[1]);
  g.connect(lists["scalars"], std::vector<Tensor>{scalars[2], scalars[0]});
  REQUIRE(g.getFieldSize(lists["scalars"]) == 2);
  g.connect(lists["counters"], g.addVariable(INT, {5}, "counters")); // one edge per element
  REQUIRE(g.getFieldSize(lists["counters"]) == 5);
  g.connect(lists["lists"], g.addVariable(INT, {3, 2}, "lists")); // one edge per row
  REQUIRE(g.getFieldSize(lists["lists"]) == 3);
  REQUIRE(g.getFieldSize(lists["lists"][2]) == 2);
  VertexRef more = g.addVertex(cs, "EdgeLists", {{"rows", std::vector<Tensor>{rows[1], rows[0]}}});
  REQUIRE(edgeOf(g, more, "rows", 0) == rows[1]);

  // Vertex names built with poputil::templateVertex.
  const std::string name = poputil::templateVertex("ns::Param", FLOAT, 3, true, "corpus::Op::ADD");
  VertexRef p = g.addVertex(cs, name);
  g.connect(p["in"], rows);
  REQUIRE(g.getImpl().vertexTypes[g.getImpl().vertices[p.getId()].type].name == name);
}

TEST_CASE("codelets_graph: setInitialValue on state fields converts host values", "[codelets][graph]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "StateFields");
  g.setInitialValue(v["n"], 3.75f); // host float -> unsigned field (truncates)
  g.setInitialValue(v["c"], 0.5);   // double -> const float
  g.setInitialValue(v["offsets"], std::vector<unsigned>{2, 0, 1});
  g.setInitialValue(v["weights"], std::vector<int>{10, -20});
  g.setInitialValue(v["s"], -3);
  g.setInitialValue(v["flag"], true);
  g.setInitialValueHalf(v["h"], 0x3400);
  g.setInitialValue(v["k"], 1LL << 40);

  const VertexIntrospector vi(&g.getImpl(), v.getId());
  const Target &t = g.getTarget();
  REQUIRE(vi.getFieldInfo("n").getInitialValue<unsigned>(t) == 3);
  REQUIRE(vi.getFieldInfo("c").getInitialValue<float>(t) == 0.5f);
  REQUIRE(vi.getFieldInfo("offsets").getInitialValues<unsigned>(t) == std::vector<unsigned>{2, 0, 1});
  REQUIRE(vi.getFieldInfo("offsets").size() == 3);
  REQUIRE(g.getFieldSize(v["offsets"]) == 3);
  REQUIRE(vi.getFieldInfo("weights").getInitialValues<int>(t) == std::vector<int>{10, -20});
  REQUIRE(vi.getFieldInfo("s").getInitialValue<short>(t) == -3);
  REQUIRE(vi.getFieldInfo("flag").getInitialValue<bool>(t));
  REQUIRE(vi.getFieldInfo("h").getInitialValue<std::uint16_t>(t) == 0x3400);
  REQUIRE(vi.getFieldInfo("k").getInitialValue<long long>(t) == (1LL << 40));
  REQUIRE(fieldValue(g, v, "c").stateBytes().size() == 4);
  REQUIRE(vi.getVertexTypeName() == "StateFields");

  // A state vector can be sized first, then filled.
  VertexRef w = g.addVertex(cs, "StateFields");
  g.setFieldSize(w["offsets"], 4);
  REQUIRE(g.getFieldSize(w["offsets"]) == 4);
  REQUIRE(VertexIntrospector(&g.getImpl(), w.getId()).getFieldInfo("offsets").getInitialValues<unsigned>(t) ==
          std::vector<unsigned>(4, 0));
  g.setInitialValue(w["offsets"], std::vector<unsigned>{1, 2, 3, 4});
  REQUIRE_THROWS_AS(g.setInitialValue(w["offsets"], std::vector<unsigned>{1, 2}), graph_connection_error);
}

TEST_CASE("codelets_graph: perf estimates, estimators and the introspector", "[codelets][graph]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef a = g.addVertex(cs, "Plain");
  VertexRef b = g.addVertex(cs, "Plain");
  VertexRef c = g.addVertex(cs, "Plain");
  g.setPerfEstimate(a, 100, 7);
  g.setPerfEstimate(b, VertexPerfEstimate(200, 9));
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  g.setCycleEstimate(c, 300); // Poplar 1.x, deprecated: kept working
#pragma GCC diagnostic pop
  const auto &data = g.getImpl();
  REQUIRE((data.estimateOf(a.getId()) && data.estimateOf(a.getId())->cycles == 100 &&
           data.estimateOf(a.getId())->flops == 7));
  REQUIRE((data.estimateOf(b.getId())->cycles == 200 && data.estimateOf(b.getId())->flops == 9));
  REQUIRE((data.estimateOf(c.getId())->cycles == 300 && data.estimateOf(c.getId())->flops == 0));

  g.registerPerfEstimator("EdgeLists", [](const VertexIntrospector &v, const Target &) {
    const FieldData rows = v.getFieldInfo("rows");
    std::uint64_t elements = 0;
    for (std::size_t i = 0; i < rows.size(); ++i)
      elements += rows[i].size();
    REQUIRE(rows.getProfilerVectorLayout(0) == layout::Vector::Span);
    REQUIRE(v.getFieldInfo("lists").getProfilerVectorListLayout() == layout::VectorList::DeltaN);
    return VertexPerfEstimate(10 + elements, elements);
  });
  VertexRef lists = g.addVertex(cs, "EdgeLists");
  const Tensor rows = g.addVariable(FLOAT, {3, 5});
  g.connect(lists["rows"], std::vector<Tensor>{rows[0], rows[1].slice(0, 2)});
  const auto &estimator = g.getImpl().perfEstimators.at("EdgeLists");
  const VertexPerfEstimate e = estimator(VertexIntrospector(&g.getImpl(), lists.getId()), g.getTarget());
  REQUIRE(e.cycles == 17);
  REQUIRE(e.flops == 7);
}

TEST_CASE("codelets_graph: vertex tile mapping, also in a virtual graph", "[codelets][graph]") {
  Graph g = corpusGraph(8);
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "Plain");
  g.setTileMapping(v, 7);
  REQUIRE(g.getTileMapping(v) == 7);
  REQUIRE(g.getImpl().vertices[v.getId()].tile == 7);
  Graph sub = g.createVirtualGraph(4, 8);
  VertexRef w = sub.addVertex(cs, "Plain");
  sub.setTileMapping(w, 1);
  REQUIRE(sub.getTileMapping(w) == 1);
  REQUIRE(g.getTileMapping(w) == 5);
  REQUIRE(g.getImpl().vertices[w.getId()].tile == 5); // absolute
  REQUIRE_THROWS_AS(sub.setTileMapping(w, 4), invalid_tile_mapping);
}

TEST_CASE("codelets_graph: field limits from the layouts", "[codelets][graph]") {
  Graph g = corpusGraph();
  REQUIRE(g.getMaxFieldDim("Layouts", "shortSpan", 0) == (1u << 11) - 1);
  REQUIRE(g.getMaxFieldDim("Layouts", "span", 0) == UINT_MAX);
  REQUIRE(g.getMaxFieldDim("EdgeLists", "rows", 1) == UINT_MAX);
  REQUIRE(g.getMaxFieldDim("ScalarEdges", "a", 0) == 1);
  REQUIRE_THROWS_AS(g.getMaxFieldDim("Layouts", "span", 1), index_error);
  REQUIRE(g.getMaxVertexFieldValue("Layouts", "n") == 65535.0);
  REQUIRE(g.getMaxVertexFieldValue("StateFields", "h") == 65504.0);
  REQUIRE(g.getMaxVertexFieldValue("StateFields", "s") == 32767.0);
  // A SHORT_SPAN field takes at most 2047 elements.
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "Layouts");
  g.connect(v["shortSpan"], g.addVariable(FLOAT, {2047}));
  REQUIRE_THROWS_AS(g.connect(v["shortSpan"], g.addVariable(FLOAT, {2048})), graph_connection_error);
}

} // namespace
