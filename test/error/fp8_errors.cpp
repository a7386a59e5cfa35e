// Copyright (c) Aspen contributors.
// Bad input for fp8 (issue 15 item 8): each is a poplar_error naming the tensor
// (or value) at fault. See docs/fp8.md.
#include "ErrorCheck.hpp"

#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/MetadataCreation.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/TypeConversion.hpp>
#include <poplar_test/Util.hpp>
#include <popops/Cast.hpp>
#include <popops/codelets.hpp>
#include <poputil/exceptions.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::requireError;
using Format = QuarterMetadata::Format;

namespace {
Graph makeGraph() {
  static IPUModel model;
  model.tilesPerIPU = 4;
  static Device device = model.createDevice();
  return Graph(device.getTarget());
}
} // namespace

TEST_CASE("fp8 error: a QUARTER constant without metadata", "[fp8][error]") {
  Graph graph = makeGraph();
  requireError<tensor_creation_error>(
      [&] {
        graph.addConstant<float>(QUARTER, {2}, {1.0f, 2.0f}, "qconst");
      },
      {"qconst", "quarter", "without metadata"});
}

TEST_CASE("fp8 error: a metadata tensor of the wrong type or shape", "[fp8][error]") {
  Graph graph = makeGraph();
  Tensor notMetadata = graph.addVariable(UNSIGNED_CHAR, {}, "bytes");
  requireError<type_error>([&] { graph.addVariable(QUARTER, notMetadata, {4}, "q1"); },
                           {"q1", "bytes", "unsigned char", "not quarter_metadata"});
  Tensor twoMetadata = graph.addVariable(QUARTER_METADATA, {2}, "mdPair");
  requireError<tensor_creation_error>([&] { graph.addVariable(QUARTER, twoMetadata, {4}, "q2"); },
                                      {"q2", "mdPair", "2 elements"});
  Tensor md = createVariableMetadataTensor(graph, Format::F143, 0, "md");
  requireError<type_error>([&] { graph.addVariable(FLOAT, md, {4}, "f"); }, {"'f'", "float", "takes none"});
  // An empty metadata tensor is none given: the variable gets its own (not an error).
  Tensor q3 = graph.addVariable(QUARTER, Tensor(), {4}, "q3");
  REQUIRE(q3.hasMetadata());
  CHECK(q3.getMetadata().getVarStr() == "'q3/metadata'[0:1)");
  Tensor t = graph.addVariable(FLOAT, {4}, "src");
  requireError<type_error>([&] { graph.clone(QUARTER, notMetadata, t, "qclone"); }, {"qclone", "bytes"});
  Graph other = makeGraph();
  Tensor otherMd = createVariableMetadataTensor(other, Format::F143, 0, "otherMd");
  requireError<tensor_creation_error>([&] { graph.addVariable(QUARTER, otherMd, {4}, "q4"); },
                                      {"q4", "otherMd", "different graph"});
}

TEST_CASE("fp8 error: a constant whose metadata is not known when the graph is built", "[fp8][error]") {
  Graph graph = makeGraph();
  Tensor md = graph.addVariable(QUARTER_METADATA, {}, "runtimeMd");
  requireError<tensor_creation_error>(
      [&] {
        graph.addConstant<float>(QUARTER, md, {2}, {1.0f, 2.0f}, "qc");
      },
      {"qc", "runtimeMd", "not known"});
}

TEST_CASE("fp8 error: invalid format values and scales", "[fp8][error]") {
  requireError<poplar_error>([] { QuarterMetadata md(static_cast<std::uint8_t>(0x40)); }, {"0x40", "format"});
  requireError<poplar_error>([] { QuarterMetadata md(static_cast<std::uint8_t>(0xc5)); }, {"0xc5", "format"});
  requireError<poplar_error>([] { QuarterMetadata md(Format::F143, 32); }, {"scale 32", "-32..31"});
  requireError<poplar_error>([] { QuarterMetadata md(Format::F152, -33); }, {"scale -33"});
  requireError<poplar_error>([] { QuarterMetadata md(static_cast<Format>(7), 0); }, {"invalid format"});
  Graph graph = makeGraph();
  requireError<poplar_error>([&] { createConstantMetadataTensor(graph, Format::F143, 40); },
                             {"createConstantMetadataTensor", "scale 40"});
  requireError<poplar_error>([&] { createVariableMetadataTensor(graph, Format::F152, -40); },
                             {"createVariableMetadataTensor", "scale -40"});
}

TEST_CASE("fp8 error: host conversion with metadata of a type other than quarter", "[fp8][error]") {
  std::vector<float> xs = {1.0f};
  std::vector<float> out(1);
  unsigned char byte = 0;
  requireError<type_error>([&] { convertToDeviceType(HALF, QuarterMetadata(), xs, &byte); },
                           {"convertToDeviceType", "half"});
  requireError<type_error>([&] { convertFromDeviceType(FLOAT, QuarterMetadata(), &byte, out); },
                           {"convertFromDeviceType", "float"});
  requireError<type_error>([&] { convertToDeviceType(QUARTER, xs, &byte); }, {"quarter"});
}

TEST_CASE("fp8 error: metadata reads and writes of tensors without metadata, an invalid metadata value",
          "[fp8][error]") {
  static IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor f = graph.addVariable(FLOAT, {2}, "plain");
  graph.setTileMapping(f, 0);
  graph.createHostWrite("plainW", f);
  graph.createHostRead("plainR", f);
  Tensor md = createVariableMetadataTensor(graph, Format::F143, 0, "md");
  Tensor q = graph.addVariable(QUARTER, md, {2}, "q");
  graph.setTileMapping(q, 1);
  graph.createHostRead("qR", q);
  Tensor mdBytes = md.reinterpret(UNSIGNED_CHAR);
  graph.createHostWrite("mdW", mdBytes);
  Engine engine(graph, program::Sequence());
  engine.load(device);
  std::vector<float> fs(2);
  std::vector<unsigned char> qs(2);
  QuarterMetadata got;
  requireError<poplar_error>(
      [&] { engine.writeTensor("plainW", QuarterMetadata(), fs.data(), fs.data() + 2); },
      {"plainW", "no metadata"});
  requireError<poplar_error>([&] { engine.readTensor("plainR", got, fs.data(), fs.data() + 2); },
                             {"plainR", "no metadata"});
  const unsigned char bad = 0x7f; // format bits 01: invalid
  engine.writeTensor("mdW", &bad, &bad + 1);
  requireError<poplar_error>([&] { engine.readTensor("qR", got, qs.data(), qs.data() + 2); },
                             {"qR", "0x7f", "format"});
}

TEST_CASE("fp8 error: popops::cast to QUARTER without metadata, or metadata for another type",
          "[fp8][error]") {
  Graph graph = makeGraph();
  popops::addCodelets(graph);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  graph.setTileMapping(x, 0);
  program::Sequence prog;
  requireError<poputil::poplibs_error>([&] { popops::cast(graph, x, QUARTER, prog, "toQ"); },
                                       {"popops::cast", "'x'", "quarter", "needs metadata"});
  Tensor md = createVariableMetadataTensor(graph, Format::F143, 0, "md");
  requireError<poputil::poplibs_error>([&] { popops::cast(graph, x, HALF, md, prog, "toH"); },
                                       {"popops::cast", "half", "takes none"});
  Tensor notMd = graph.addVariable(UNSIGNED_CHAR, {}, "bytes");
  requireError<poputil::poplibs_error>([&] { popops::cast(graph, x, QUARTER, notMd, prog, "toQ2"); },
                                       {"popops::cast", "'bytes'", "quarter_metadata"});
}

TEST_CASE("fp8 error: a quarter edge connected to a tensor without metadata", "[fp8][error]") {
  static IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  graph.addCodelets(std::string(root) + "/test/compat/vertices/fp8_vertices.cpp");
  // Bytes viewed as quarter: no variable of it carries metadata.
  Tensor raw = graph.addVariable(UNSIGNED_CHAR, {3}, "rawBytes").reinterpret(QUARTER);
  CHECK(!raw.hasMetadata());
  requireError<poplar_error>([&] { raw.getMetadata(); }, {"getMetadata", "rawBytes", "no metadata"});
  Tensor out = graph.addVariable(QUARTER, {3}, "out");
  Tensor info = graph.addVariable(INT, {5}, "info");
  graph.setTileMapping(raw, 0);
  graph.setTileMapping(out, 0);
  graph.setTileMapping(info, 0);
  ComputeSet cs = graph.addComputeSet("cs");
  VertexRef v = graph.addVertex(cs, "QuarterScale");
  graph.connect(v["in"], raw);
  graph.connect(v["out"], out);
  graph.connect(v["first"], out[0]);
  graph.connect(v["info"], info);
  graph.setInitialValue(v["factor"], 1.0f);
  graph.setTileMapping(v, 0);
  requireError<graph_connection_error>([&] { Engine engine(graph, program::Execute(cs)); },
                                       {"QuarterScale", "in", "rawBytes", "no metadata"});
}

TEST_CASE("fp8 error: a list of quarter edges whose tensors carry different metadata", "[fp8][error]") {
  static IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  graph.addCodelets(std::string(root) + "/test/compat/vertices/fp8_vertices.cpp");
  Tensor a = graph.addVariable(QUARTER, {4}, "rowA"); // each with metadata of its own
  Tensor b = graph.addVariable(QUARTER, {4}, "rowB");
  Tensor sums = graph.addVariable(FLOAT, {2}, "sums");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 0);
  graph.setTileMapping(sums, 0);
  ComputeSet cs = graph.addComputeSet("rows");
  VertexRef v = graph.addVertex(cs, "QuarterRowSums");
  graph.connect(v["in"], std::vector<Tensor>{a, b});
  graph.connect(v["firsts"], std::vector<Tensor>{a[0], a[1]});
  graph.connect(v["sums"], sums);
  graph.setInitialValue(v["rowLength"], 4u);
  graph.setTileMapping(v, 0);
  requireError<graph_connection_error>([&] { Engine engine(graph, program::Execute(cs)); },
                                       {"QuarterRowSums", "in", "one metadata", "rowA", "rowB"});
}

TEST_CASE("fp8 error: metadata from a scale tensor of the wrong type", "[fp8][error]") {
  Graph graph = makeGraph();
  Tensor fscale = graph.addVariable(FLOAT, {}, "floatScale");
  Tensor iscale = graph.addVariable(INT, {2}, "twoScales");
  program::Sequence prog;
  requireError<poplar_error>([&] { createVariableMetadataTensor(graph, Format::F143, fscale, prog); },
                             {"floatScale", "int"});
  requireError<poplar_error>([&] { createVariableMetadataTensor(graph, Format::F143, iscale, prog); },
                             {"twoScales", "one element"});
  Tensor s = graph.addVariable(INT, {}, "s");
  Tensor notMd = graph.addVariable(FLOAT, {}, "notMetadata");
  requireError<poplar_error>([&] { setMetadataTensor(graph, Format::F152, s, notMd, prog); },
                             {"notMetadata", "quarter_metadata"});
}

TEST_CASE("fp8 error: a view of quarter tensors with different metadata", "[fp8][error]") {
  Graph graph = makeGraph();
  Tensor a =
      graph.addVariable(QUARTER, createVariableMetadataTensor(graph, Format::F143, 0, "mdA"), {2}, "qa");
  Tensor b =
      graph.addVariable(QUARTER, createVariableMetadataTensor(graph, Format::F152, 0, "mdB"), {2}, "qb");
  Tensor both = concat(a, b);
  CHECK(both.hasMetadata());
  requireError<poplar_error>([&] { both.getMetadata(); },
                             {"getMetadata", "different metadata", "mdA", "mdB"});
  // A clone of it gets metadata of its own; a host handle of it has no metadata handle.
  Tensor c = graph.clone(both, "c");
  CHECK(c.hasMetadata());
  CHECK(c.getMetadata().getVarRegions()[0].var != a.getMetadata().getVarRegions()[0].var);
  graph.createHostRead("both", both);
}

TEST_CASE("fp8 error: a quarter constant whose metadata holds an invalid format", "[fp8][error]") {
  Graph graph = makeGraph();
  Tensor badMd =
      graph.addConstant<unsigned char>(UNSIGNED_CHAR, {}, 0x45, "badMd").reinterpret(QUARTER_METADATA);
  graph.setTileMapping(badMd, 0);
  requireError<tensor_creation_error>(
      [&] {
        graph.addConstant<float>(QUARTER, badMd, {2}, {1.0f, 2.0f}, "qc");
      },
      {"qc", "badMd", "0x45", "format"});
}

TEST_CASE("fp8 error: QUARTER_METADATA elements from a host type other than an 8-bit integer",
          "[fp8][error]") {
  Graph graph = makeGraph();
  Tensor md = graph.addVariable(QUARTER_METADATA, {}, "md");
  graph.setTileMapping(md, 0);
  requireError<type_error>(
      [&] { graph.setInitialValue(md, 1.5f); },
      {"host elements of type float", "quarter_metadata", "QuarterMetadata::getBinary()"});
  requireError<type_error>([&] { (void)graph.addConstant<int>(QUARTER_METADATA, {}, 0x80); },
                           {"host elements of type int", "quarter_metadata"});
}

TEST_CASE("fp8 error: a poplar_test buffer whose quarter metadata is not valid", "[fp8][error]") {
  static IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor md = createVariableMetadataTensor(graph, Format::F143, 0, "md");
  Tensor q = graph.addVariable(QUARTER, md, {2}, "q");
  graph.setTileMapping(q, 1);
  graph.createHostWrite("mdW", md.reinterpret(UNSIGNED_CHAR));
  program::Sequence download;
  std::vector<std::pair<std::string, poplar_test::HostMemory>> tmap;
  auto raw = poplar_test::allocateHostMemoryForTensor(q, "q", graph, boost::none, download, tmap);
  Engine engine(graph, download);
  poplar_test::attachStreams(engine, tmap);
  engine.load(device);
  const unsigned char bad = 0x7f; // bit 6 set: no format
  engine.writeTensor("mdW", &bad, &bad + 1);
  engine.run(0);
  QuarterMetadata got;
  std::vector<double> host(2);
  requireError<poplar_error>([&] { poplar_test::copy(graph.getTarget(), QUARTER, got, raw.get(), host); },
                             {"poplar_test::copy", "metadata of the host buffer", "0x7f"});
}
