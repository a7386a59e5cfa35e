// Copyright (c) Aspen contributors.
// fp8 as operator-library code uses it (issue 15 items 5 and 8): quarter tensors
// with metadata, popops::cast to and from QUARTER, metadata set at run time
// through Engine::writeTensor, Graph::clone keeping metadata, quarter constants,
// and a codelet reading its edges' metadata. Results are checked against the
// independent reference in support/QuarterReference.hpp.
#include "QuarterReference.hpp"
#include "TestDevice.hpp"

#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/MetadataCreation.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/TypeConversion.hpp>
#include <popops/Cast.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/Util.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using Format = QuarterMetadata::Format;

namespace {

aspen::test::QuarterFormat refFormat(Format f) {
  return f == Format::F143 ? aspen::test::f143() : aspen::test::f152();
}

/// Inputs that cover the format at `scale`: every value, midpoints, overflow, specials.
std::vector<float> sweep(Format f, int scale) {
  const auto rf = refFormat(f);
  std::vector<float> xs;
  for (int b = 0; b < 0x7f; ++b) {
    const double v = aspen::test::quarterValue(static_cast<std::uint8_t>(b), rf, scale);
    const double next = aspen::test::quarterValue(static_cast<std::uint8_t>(b + 1), rf, scale);
    for (double x : {v, (v + next) / 2, v + (next - v) / 4}) {
      xs.push_back(static_cast<float>(x));
      xs.push_back(static_cast<float>(-x));
    }
  }
  const double largest = aspen::test::quarterValue(0x7f, rf, scale);
  xs.push_back(static_cast<float>(largest));
  xs.push_back(static_cast<float>(largest * 4));
  xs.push_back(std::numeric_limits<float>::infinity());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::nanf(""));
  return xs;
}

Device makeDevice() {
  IPUModel model;
  model.tilesPerIPU = 4;
  return model.createDevice();
}

} // namespace

TEST_CASE("fp8 compat: float -> quarter -> float with popops::cast, both formats, several scales",
          "[fp8][compat]") {
  Device device = makeDevice();
  for (Format format : {Format::F143, Format::F152})
    for (int scale : {-32, -3, 0, 4, 31}) {
      Graph graph(device.getTarget());
      popops::addCodelets(graph);
      const std::vector<float> hIn = sweep(format, scale);
      const std::size_t n = hIn.size();
      Tensor in = graph.addVariable(FLOAT, {n}, "in");
      poputil::mapTensorLinearly(graph, in);
      Sequence prog;
      Tensor md = createVariableMetadataTensor(graph, format, scale, "md");
      Tensor q = popops::cast(graph, in, QUARTER, md, prog, "toQuarter");
      REQUIRE(q.elementType() == QUARTER);
      REQUIRE(q.hasMetadata());
      Tensor back = popops::cast(graph, q, FLOAT, prog, "fromQuarter");
      graph.createHostWrite("in", in);
      graph.createHostRead("q", q);
      graph.createHostRead("back", back);
      Engine engine(graph, prog);
      engine.load(device);
      engine.writeTensor("in", hIn.data(), hIn.data() + n);
      engine.run(0);
      std::vector<std::uint8_t> qBytes(n);
      QuarterMetadata qMd;
      engine.readTensor("q", qMd, qBytes.data(), qBytes.data() + n);
      std::vector<float> hBack(n);
      engine.readTensor("back", hBack.data(), hBack.data() + n);
      CHECK(qMd == QuarterMetadata(format, static_cast<std::int8_t>(scale)));
      const auto rf = refFormat(format);
      for (std::size_t i = 0; i < n; ++i) {
        INFO(qMd << " x = " << hIn[i]);
        const std::uint8_t expected = aspen::test::quarterNearest(hIn[i], rf, scale);
        CHECK(static_cast<unsigned>(qBytes[i]) == expected);
        const double value = aspen::test::quarterValue(expected, rf, scale);
        if (std::isnan(value))
          CHECK(std::isnan(hBack[i]));
        else
          CHECK(hBack[i] == static_cast<float>(value));
      }
    }
}

TEST_CASE("fp8 compat: a quarter input whose metadata is written at run time, cast to half and float",
          "[fp8][compat]") {
  // As PopLibs' own tests do: a QUARTER variable without explicit metadata, its
  // bytes and metadata written by Engine::writeTensor. On every target (a few tiles,
  // the full IPU, an executable saved and reloaded).
  aspen::test::forEachTarget([](aspen::test::TestDevice &dev) {
    const QuarterMetadata written(Format::F152, -7);
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    Tensor in = graph.addVariable(QUARTER, {256}, "in");
    REQUIRE(in.hasMetadata());
    poputil::mapTensorLinearly(graph, in);
    graph.createHostWrite("in", in);
    Sequence prog;
    Tensor asHalf = popops::cast(graph, in, HALF, prog);
    Tensor asFloat = popops::cast(graph, in, FLOAT, prog);
    graph.createHostRead("half", asHalf);
    graph.createHostRead("float", asFloat);
    auto engine = dev.createEngine(graph, {prog});
    std::vector<std::uint8_t> bytes(256);
    for (unsigned i = 0; i < 256; ++i)
      bytes[i] = static_cast<std::uint8_t>(i);
    engine->writeTensor("in", written, bytes.data(), bytes.data() + 256);
    engine->run(0);
    std::vector<std::uint16_t> halves(256);
    std::vector<float> floats(256), halfAsFloat(256);
    engine->readTensor("half", halves.data(), halves.data() + 256);
    engine->readTensor("float", floats.data(), floats.data() + 256);
    convertFromDeviceType(HALF, halves.data(), halfAsFloat);
    for (unsigned b = 0; b < 256; ++b) {
      INFO("bits " << b);
      const double ref = aspen::test::quarterValue(static_cast<std::uint8_t>(b), aspen::test::f152(), -7);
      if (std::isnan(ref)) {
        CHECK(std::isnan(floats[b]));
        CHECK(std::isnan(halfAsFloat[b]));
      } else {
        CHECK(floats[b] == static_cast<float>(ref));
        CHECK(halfAsFloat[b] == static_cast<float>(ref)); // F152 at scale -7 is exact in half
      }
    }
  });
}

TEST_CASE("fp8 compat: half -> quarter, quarter -> quarter between metadata, clone and constants",
          "[fp8][compat]") {
  Device device = makeDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor mdA = createConstantMetadataTensor(graph, Format::F143, 2, "mdA");
  Tensor mdB = createVariableMetadataTensor(graph, Format::F152, -1, "mdB");
  const std::vector<float> values = {0.0f, 1.0f, -3.0f, 100.0f, 0.3f, 448.0f, 480.0f, 1000.0f};
  // A QUARTER constant encoded with mdA at graph-construction time.
  Tensor c = graph.addConstant<float>(QUARTER, mdA, {values.size()}, values, "c");
  // The pointer forms PopLibs' tests use (`&metadata`), with and without a mapping method.
  Tensor viaPointer = graph.addVariable(QUARTER, &mdB, {4}, "viaPointer");
  Tensor linear = graph.addVariable(QUARTER, &mdB, {64}, VariableMappingMethod::LINEAR, "linear");
  CHECK(viaPointer.getMetadata().getVarRegions()[0].var == mdB.getVarRegions()[0].var);
  CHECK(linear.getMetadata().getVarRegions()[0].var == mdB.getVarRegions()[0].var);
  CHECK(graph.getTileMapping(linear, false).size() == 4);
  graph.setTileMapping(viaPointer, 0);
  graph.setTileMapping(c, 1);
  REQUIRE(c.hasMetadata());
  // Clones keep the metadata of a quarter tensor.
  Tensor cl = graph.clone(c, "clone");
  CHECK(cl.hasMetadata());
  CHECK(cl.getMetadata().getVarRegions()[0].var == c.getMetadata().getVarRegions()[0].var);
  Sequence prog;
  Tensor toB = popops::cast(graph, c, QUARTER, mdB, prog, "toB");
  Tensor h = graph.addVariable(HALF, {values.size()}, "h");
  graph.setTileMapping(h, 2);
  Tensor fromHalf = popops::cast(graph, h, QUARTER, mdB, prog, "fromHalf");
  graph.createHostRead("c", c);
  graph.createHostRead("toB", toB);
  graph.createHostRead("fromHalf", fromHalf);
  graph.createHostWrite("h", h);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<std::uint16_t> hBits(values.size());
  convertToDeviceType(HALF, values, hBits.data());
  engine.writeTensor("h", hBits.data(), hBits.data() + hBits.size());
  engine.run(0);
  const std::size_t n = values.size();
  std::vector<std::uint8_t> cBytes(n), bBytes(n), hq(n);
  QuarterMetadata cMd, bMd, hMd;
  engine.readTensor("c", cMd, cBytes.data(), cBytes.data() + n);
  engine.readTensor("toB", bMd, bBytes.data(), bBytes.data() + n);
  engine.readTensor("fromHalf", hMd, hq.data(), hq.data() + n);
  CHECK(cMd == QuarterMetadata(Format::F143, 2));
  CHECK(bMd == QuarterMetadata(Format::F152, -1));
  CHECK(hMd == bMd);
  for (std::size_t i = 0; i < n; ++i) {
    INFO("value " << values[i]);
    const std::uint8_t a = aspen::test::quarterNearest(values[i], aspen::test::f143(), 2);
    CHECK(static_cast<unsigned>(cBytes[i]) == a);
    const double aValue = aspen::test::quarterValue(a, aspen::test::f143(), 2);
    CHECK(static_cast<unsigned>(bBytes[i]) == aspen::test::quarterNearest(aValue, aspen::test::f152(), -1));
    // Every value here is exact in half.
    CHECK(static_cast<unsigned>(hq[i]) == aspen::test::quarterNearest(values[i], aspen::test::f152(), -1));
  }
}

TEST_CASE("fp8 compat: a codelet reads its quarter edges' metadata", "[fp8][compat][codelet]") {
  Device device = makeDevice();
  Graph graph(device.getTarget());
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  graph.addCodelets(std::string(root) + "/test/compat/vertices/fp8_vertices.cpp");
  // The input's metadata lives on tile 0, the vertex on tile 3: it is exchanged.
  Tensor mdIn = createVariableMetadataTensor(graph, Format::F143, -2, "mdIn");
  Tensor mdOut = createVariableMetadataTensor(graph, Format::F152, 1, "mdOut");
  const std::vector<float> values = {0.25f, -1.0f, 3.5f, 10.0f, 0.0f};
  const std::size_t n = values.size();
  Tensor in = graph.addVariable(QUARTER, mdIn, {n}, "in");
  Tensor out = graph.addVariable(QUARTER, mdOut, {n}, "out");
  Tensor info = graph.addVariable(INT, {5}, "info");
  graph.setTileMapping(in, 3);
  graph.setTileMapping(out, 3);
  graph.setTileMapping(info, 3);
  ComputeSet cs = graph.addComputeSet("scale");
  VertexRef v = graph.addVertex(cs, "QuarterScale");
  graph.connect(v["in"], in);
  graph.connect(v["out"], out);
  graph.connect(v["first"], in[1]);
  graph.connect(v["info"], info);
  graph.setInitialValue(v["factor"], 3.0f);
  graph.setTileMapping(v, 3);
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);
  graph.createHostRead("info", info);
  Engine engine(graph, Execute(cs));
  engine.load(device);
  std::vector<std::uint8_t> inBytes(n);
  const QuarterMetadata inMd(Format::F143, -2);
  convertToDeviceType(QUARTER, inMd, values, inBytes.data());
  engine.writeTensor("in", inMd, inBytes.data(), inBytes.data() + n);
  engine.run(0);
  std::vector<std::uint8_t> outBytes(n);
  std::vector<int> hInfo(5);
  QuarterMetadata outMd;
  engine.readTensor("out", outMd, outBytes.data(), outBytes.data() + n);
  engine.readTensor("info", hInfo.data(), hInfo.data() + 5);
  CHECK(hInfo == std::vector<int>{143, -2, 152, 1, inBytes[1]});
  CHECK(outMd == QuarterMetadata(Format::F152, 1));
  for (std::size_t i = 0; i < n; ++i) {
    const double x = aspen::test::quarterValue(inBytes[i], aspen::test::f143(), -2) * 3.0;
    CHECK(static_cast<unsigned>(outBytes[i]) == aspen::test::quarterNearest(x, aspen::test::f152(), 1));
  }
}

TEST_CASE("fp8 compat: metadata whose scale is a tensor read at run time", "[fp8][compat]") {
  // As PopART's fp8 ops do: the scale is an INT tensor, the metadata made by a program.
  Device device = makeDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor scale = graph.addVariable(INT, {}, "scale");
  graph.setTileMapping(scale, 2);
  graph.createHostWrite("scale", scale);
  Sequence prog;
  Tensor md = createVariableMetadataTensor(graph, Format::F152, scale, prog, "md");
  CHECK(md.elementType() == QUARTER_METADATA);
  const std::vector<float> values = {1.0f, 6.0f, -0.75f, 1000.0f, 70000.0f};
  Tensor x = graph.addConstant<float>(FLOAT, {values.size()}, values, "x");
  graph.setTileMapping(x, 1);
  Tensor q = popops::cast(graph, x, QUARTER, md, prog, "q");
  graph.createHostRead("q", q);
  // setMetadataTensor into an existing metadata tensor (F143 here).
  Tensor md3 = graph.addVariable(QUARTER_METADATA, {}, "md3");
  graph.setTileMapping(md3, 3);
  setMetadataTensor(graph, Format::F143, scale, md3, prog);
  Tensor q3 = graph.addVariable(QUARTER, md3, {values.size()}, "q3");
  graph.setTileMapping(q3, 3);
  popops::castWithOutput(graph, x, q3, prog);
  graph.createHostRead("q3", q3);
  Engine engine(graph, prog);
  engine.load(device);
  for (int s : {-40, -3, 0, 5, 31}) {
    engine.writeTensor("scale", &s, &s + 1);
    engine.run(0);
    const std::size_t n = values.size();
    std::vector<std::uint8_t> bytes(n), bytes3(n);
    QuarterMetadata got, got3;
    engine.readTensor("q", got, bytes.data(), bytes.data() + n);
    engine.readTensor("q3", got3, bytes3.data(), bytes3.data() + n);
    const int clamped = s < -32 ? -32 : s;
    CHECK(got == QuarterMetadata(Format::F152, static_cast<std::int8_t>(clamped)));
    CHECK(got3 == QuarterMetadata(Format::F143, static_cast<std::int8_t>(clamped)));
    for (std::size_t i = 0; i < n; ++i) {
      INFO("scale " << s << " x = " << values[i]);
      CHECK(static_cast<unsigned>(bytes[i]) ==
            aspen::test::quarterNearest(values[i], aspen::test::f152(), clamped));
      CHECK(static_cast<unsigned>(bytes3[i]) ==
            aspen::test::quarterNearest(values[i], aspen::test::f143(), clamped));
    }
  }
}

TEST_CASE("fp8 compat: metadata set by copying a metadata tensor, poputil's names, char casts",
          "[fp8][compat]") {
  using namespace poputil; // PopLibs tests use both namespaces: unqualified calls are not ambiguous
  Device device = makeDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const std::vector<float> values = {0.5f, 3.0f, -7.0f, 100.0f};
  const std::size_t n = values.size();
  Tensor q = graph.addVariable(QUARTER, {n}, "q"); // its own metadata: F143 scale 0
  graph.setTileMapping(q, 1);
  Tensor x = graph.addConstant<float>(FLOAT, {n}, values, "x");
  graph.setTileMapping(x, 1);
  Sequence prog;
  // As PopLibs' tests do: set a tensor's metadata with a Copy from a constant one.
  Tensor md = createConstantMetadataTensor(graph, Format::F152, 1);
  Tensor md2 = poputil::createVariableMetadataTensor(graph, Format::F143, -1);
  prog.add(Copy(md, q.getMetadata()));
  popops::castWithOutput(graph, x, q, prog);
  graph.createHostRead("q", q);
  // char -> quarter -> char, as PopLibs' cast tests do.
  const std::vector<char> chars = {0, 1, 2, 5, 9, -3};
  Tensor c = graph.addConstant<char>(CHAR, {chars.size()}, chars, "c");
  graph.setTileMapping(c, 2);
  Tensor cq = popops::cast(graph, c, QUARTER, md2, prog, "charToQuarter");
  Tensor cBack = popops::cast(graph, cq, CHAR, prog, "quarterToChar");
  graph.createHostRead("cBack", cBack);
  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  std::vector<std::uint8_t> bytes(n);
  QuarterMetadata got;
  engine.readTensor("q", got, bytes.data(), bytes.data() + n);
  CHECK(got == QuarterMetadata(Format::F152, 1));
  for (std::size_t i = 0; i < n; ++i)
    CHECK(static_cast<unsigned>(bytes[i]) == aspen::test::quarterNearest(values[i], aspen::test::f152(), 1));
  std::vector<char> back(chars.size());
  engine.readTensor("cBack", back.data(), back.data() + back.size());
  for (std::size_t i = 0; i < chars.size(); ++i) {
    // Small integers are exact in F143 at scale -1 (up to 240 * 2^-1 = 120).
    const double v = aspen::test::quarterValue(aspen::test::quarterNearest(chars[i], aspen::test::f143(), -1),
                                               aspen::test::f143(), -1);
    CHECK(back[i] == static_cast<char>(v));
  }
}

TEST_CASE("fp8 compat: a codelet with a list of quarter edges sharing one metadata",
          "[fp8][compat][codelet]") {
  Device device = makeDevice();
  Graph graph(device.getTarget());
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  graph.addCodelets(std::string(root) + "/test/compat/vertices/fp8_vertices.cpp");
  const QuarterMetadata md(Format::F152, 2);
  Tensor mdT = createVariableMetadataTensor(graph, md.getFormat(), md.getScale(), "md");
  Tensor m = graph.addVariable(QUARTER, mdT, {3, 4}, "m");
  poputil::mapTensorLinearly(graph, m);
  Tensor sums = graph.addVariable(FLOAT, {3}, "sums");
  graph.setTileMapping(sums, 2);
  ComputeSet cs = graph.addComputeSet("rows");
  VertexRef v = graph.addVertex(cs, "QuarterRowSums");
  graph.connect(v["in"], std::vector<Tensor>{m[0], m[1], m[2]});
  graph.connect(v["firsts"], std::vector<Tensor>{m[0][0], m[1][0], m[2][0]});
  graph.connect(v["sums"], sums);
  graph.setInitialValue(v["rowLength"], 4u);
  graph.setTileMapping(v, 2);
  graph.createHostWrite("m", m);
  graph.createHostRead("sums", sums);
  Engine engine(graph, Execute(cs));
  engine.load(device);
  const std::vector<float> values = {4, 8, -12, 16, 0.5f, 1, 2, 3, 100, 200, -300, 4};
  std::vector<std::uint8_t> bytes(values.size());
  convertToDeviceType(QUARTER, md, values, bytes.data());
  engine.writeTensor("m", bytes.data(), bytes.data() + bytes.size());
  engine.run(0);
  std::vector<float> got(3);
  engine.readTensor("sums", got.data(), got.data() + 3);
  for (unsigned r = 0; r < 3; ++r) {
    double expected = 0;
    for (unsigned i = 0; i < 4; ++i)
      expected += aspen::test::quarterValue(bytes[r * 4 + i], aspen::test::f152(), 2);
    CHECK(got[r] == Approx(expected));
  }
}
