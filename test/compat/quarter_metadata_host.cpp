// Copyright (c) Aspen contributors.
// QUARTER_METADATA on the host, as PopLibs' tests use it (issue 24, docs/fp8.md "Host
// buffers of quarter data"): QuarterMetadata is one metadata element, so a metadata tensor
// reads into an array of them; metadata elements take their value from an 8-bit integer
// (setInitialValue(md, binary)); poplar_test's buffers carry a quarter tensor's metadata up
// and down, and copy(target, QUARTER, QuarterMetadata &, buffer, ...) returns the metadata the
// buffer holds. Expected quarter bytes and values are worked out by hand from the formats.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/MetadataCreation.hpp>
#include <poplar/Quarter.hpp>
#include <poplar_test/Util.hpp>
#include <popops/Cast.hpp>
#include <popops/codelets.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using Format = QuarterMetadata::Format;
using poplar_test::HostMemory;

namespace {

Device makeDevice() {
  IPUModel model;
  model.tilesPerIPU = 4;
  return model.createDevice();
}

// Values exact in F152 at scale 1 (stored as x / 2: 0, 0.5, 1, 1.5, -2, 0.25, 3, 4) and in
// F143 at scale 2 (stored as x / 4: 0, 0.25, 0.5, 0.75, -1, 0.125, 1.5, 2).
const std::vector<double> kValues{0, 1, 2, 3, -4, 0.5, 6, 8};

} // namespace

TEST_CASE("a metadata tensor reads into QuarterMetadata objects, one byte each", "[compat][fp8]") {
  STATIC_REQUIRE(sizeof(QuarterMetadata) == 1);
  Device device = makeDevice();
  Graph graph(device.getTarget());
  const Tensor a = createConstantMetadataTensor(graph, Format::F143, 1);
  const Tensor b = graph.addVariable(QUARTER_METADATA, {}, "b");
  graph.setTileMapping(b, 1);
  // The value of a metadata element given as its binary, as PopLibs' DynamicSliceTest does.
  graph.setInitialValue(b, QuarterMetadata(Format::F152, -3).getBinary());
  const Tensor c =
      graph.addConstant<unsigned char>(QUARTER_METADATA, {}, QuarterMetadata(Format::F143, 1).getBinary());
  graph.setTileMapping(c, 2);
  graph.createHostRead("a", a);
  graph.createHostRead("b", b);
  graph.createHostRead("c", c);
  Engine engine(graph, Sequence{});
  engine.load(device);
  engine.run(0);
  std::vector<QuarterMetadata> md(3);
  engine.readTensor("a", &md[0], &md[1]);
  engine.readTensor("b", &md[1], &md[2]);
  engine.readTensor("c", &md[2], &md[3]);
  CHECK(md[0] == QuarterMetadata(Format::F143, 1));
  CHECK(md[0].getBinary() == 0x81); // bit 7: F143; bits 0-5: scale 1
  CHECK(md[1].getFormat() == Format::F152);
  CHECK(md[1].getScale() == -3);
  CHECK(md[1].getBinary() == 0x3d); // -3 in six bits
  CHECK(md[2] == md[0]);
}

TEST_CASE("a download buffer of a quarter tensor carries the tensor's metadata",
          "[compat][fp8][poplar_test]") {
  // PopLibs' CastTest: a half -> quarter cast into a tensor with F152 scale 1, read back
  // through copy() with a default QuarterMetadata, which becomes the tensor's.
  Device device = makeDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const Tensor in = graph.addVariable(HALF, {8}, "in");
  graph.setTileMapping(in, 0);
  const Tensor md = createVariableMetadataTensor(graph, Format::F152, 1);
  Sequence prog, upload, download;
  const Tensor out = popops::cast(graph, in, QUARTER, md, prog, "toQuarter");
  std::vector<std::pair<std::string, HostMemory>> tmap;
  auto rawIn = poplar_test::allocateHostMemoryForTensor(in, "in", graph, upload, boost::none, tmap);
  auto rawOut = poplar_test::allocateHostMemoryForTensor(out, "out", graph, boost::none, download, tmap);
  CHECK(tmap[1].second.bytesPerReplica() == 8); // the elements only; the metadata is kept beside them
  Engine engine(graph, Sequence{upload, prog, download});
  poplar_test::attachStreams(engine, tmap);
  poplar_test::copy(graph.getTarget(), kValues, HALF, rawIn.get());
  engine.load(device);
  engine.run(0);
  const auto *bytes = reinterpret_cast<const std::uint8_t *>(rawOut.get());
  CHECK(bytes[1] == 0x3c); // 1 / 2 = 2^-1 in F152: exponent 15 (bias 16), mantissa 0
  QuarterMetadata got;     // F143 scale 0 until copy() sets it
  std::vector<double> host(8);
  poplar_test::copy(graph.getTarget(), QUARTER, got, rawOut.get(), host);
  CHECK(got == QuarterMetadata(Format::F152, 1));
  CHECK(host == kValues);
  // A metadata argument that cannot be assigned decodes with what it says.
  const QuarterMetadata asGiven(Format::F152, 2);
  poplar_test::copy(graph.getTarget(), QUARTER, asGiven, rawOut.get(), host);
  CHECK(host[1] == 2.0);
}

TEST_CASE("an upload buffer of a quarter tensor writes the metadata copy() gave it",
          "[compat][fp8][poplar_test]") {
  // PopLibs' codelet tests: a quarter variable made with an empty metadata tensor, whose
  // metadata comes only from the host buffer.
  Device device = makeDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const Tensor q = graph.addVariable(QUARTER, {}, {8}, "q"); // as PopLibs writes it: no metadata given
  graph.setTileMapping(q, 1);
  Sequence prog, upload, download;
  const Tensor f = popops::cast(graph, q, FLOAT, prog, "toFloat");
  graph.createHostRead("f", f);
  graph.createHostRead("q", q);
  std::vector<std::pair<std::string, HostMemory>> tmap;
  auto raw = poplar_test::allocateHostMemoryForTensor(q, "q", graph, upload, download, tmap);
  Engine engine(graph, Sequence{upload, prog, download});
  poplar_test::attachStreams(engine, tmap);
  poplar_test::copy(graph.getTarget(), kValues, QUARTER, QuarterMetadata(Format::F143, 2), raw.get());
  engine.load(device);
  engine.run(0);
  std::vector<float> onDevice(8);
  engine.readTensor("f", onDevice.data(), onDevice.data() + onDevice.size());
  for (std::size_t i = 0; i < kValues.size(); ++i)
    CHECK(onDevice[i] == static_cast<float>(kValues[i]));
  QuarterMetadata md;
  std::vector<std::uint8_t> qBytes(8);
  engine.readTensor("q", md, qBytes.data(), qBytes.data() + qBytes.size());
  CHECK(md == QuarterMetadata(Format::F143, 2));
  CHECK(qBytes[1] == 0x30); // 1 / 4 = 2^-2 in F143: exponent 6 (bias 8), mantissa 0
}

TEST_CASE("an upload buffer starts with the metadata tensor's known value", "[compat][fp8][poplar_test]") {
  // PopLibs' CastCodeletsTest: an output with F152 metadata gets an upload and a download;
  // the upload must not replace F152 by the default before the cast runs.
  Device device = makeDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const Tensor in = graph.addVariable(FLOAT, {8}, "in");
  graph.setTileMapping(in, 0);
  const Tensor md = createVariableMetadataTensor(graph, Format::F152, 1);
  const Tensor out = graph.addVariable(QUARTER, md, {8}, "out");
  graph.setTileMapping(out, 2);
  Sequence prog, upload, download;
  prog.add(popops::cast(graph, in, out, "cast"));
  std::vector<std::pair<std::string, HostMemory>> tmap;
  auto rawIn = poplar_test::allocateHostMemoryForTensor(in, "in", graph, upload, boost::none, tmap);
  auto rawOut = poplar_test::allocateHostMemoryForTensor(out, "out", graph, upload, download, tmap);
  Engine engine(graph, Sequence{upload, prog, download});
  poplar_test::attachStreams(engine, tmap);
  poplar_test::copy(graph.getTarget(), kValues, FLOAT, rawIn.get());
  engine.load(device);
  engine.run(0);
  QuarterMetadata got;
  std::vector<double> host(8);
  poplar_test::copy(graph.getTarget(), QUARTER, got, rawOut.get(), host.data(), host.size());
  CHECK(got == QuarterMetadata(Format::F152, 1));
  CHECK(host == kValues);
}

TEST_CASE("copy() returns the metadata of the last write or read of a buffer with metadata",
          "[compat][fp8][poplar_test]") {
  // PopLibs' PlannedMultiSliceUpdateTest: plain std::vector buffers, written with copy() and
  // Engine::writeTensor with metadata, read with Engine::readTensor with metadata.
  Device device = makeDevice();
  Graph graph(device.getTarget());
  const Tensor md = createVariableMetadataTensor(graph, Format::F143, 0);
  const Tensor t = graph.addVariable(QUARTER, md, {8}, "t");
  graph.setTileMapping(t, 3);
  graph.createHostWrite("t", t);
  graph.createHostRead("t", t);
  const Target &target = graph.getTarget();
  const QuarterMetadata f152(Format::F152, 1);
  std::vector<char> rawIn(8), rawOut(8), fresh(8);
  poplar_test::copy(target, kValues.data(), kValues.size(), QUARTER, f152, rawIn.data());
  Engine engine(graph, Sequence{});
  engine.load(device);
  engine.writeTensor("t", f152, rawIn.data(), rawIn.data() + rawIn.size());
  engine.run(0);
  QuarterMetadata discarded;
  engine.readTensor("t", discarded, rawOut.data(), rawOut.data() + rawOut.size());
  QuarterMetadata got;
  std::vector<double> host(8);
  poplar_test::copy(target, QUARTER, got, rawOut.data(), host.data(), host.size());
  CHECK(got == f152);
  CHECK(host == kValues);
  // A copy into a buffer with metadata sets it; one without metadata forgets it.
  QuarterMetadata fromIn;
  poplar_test::copy(target, QUARTER, fromIn, rawIn.data(), host.data(), host.size());
  CHECK(fromIn == f152);
  poplar_test::copy(target, std::vector<double>(8, 1.0), UNSIGNED_CHAR, rawIn.data());
  QuarterMetadata unknown(Format::F143, 3);
  poplar_test::copy(target, QUARTER, unknown, rawIn.data(), host.data(), host.size());
  CHECK(unknown == QuarterMetadata(Format::F143, 3));
  // A plain read of the tensor into the buffer leaves it without known metadata.
  engine.readTensor("t", rawOut.data(), rawOut.data() + rawOut.size());
  QuarterMetadata afterPlainRead(Format::F143, -1);
  poplar_test::copy(target, QUARTER, afterPlainRead, rawOut.data(), host.data(), host.size());
  CHECK(afterPlainRead == QuarterMetadata(Format::F143, -1));
  // A buffer never written with metadata decodes with the metadata as given.
  QuarterMetadata given(Format::F143, 2);
  poplar_test::copy(target, QUARTER, given, fresh.data(), host.data(), host.size());
  CHECK(given == QuarterMetadata(Format::F143, 2));
}

TEST_CASE("slices() of a one-element tensor by wider intervals broadcasts the element", "[compat][tensor]") {
  // popops' generated element-wise vertices cut a one-element scale by the output's regions.
  Device device = makeDevice();
  Graph graph(device.getTarget());
  const Tensor scale = graph.addVariable(FLOAT, {1}, "scale");
  graph.setTileMapping(scale, 0);
  const std::vector<std::vector<Interval>> regions{{{0, 20}}, {{20, 24}, {30, 31}}};
  const std::vector<Tensor> cut = scale.slices(regions);
  REQUIRE(cut.size() == 2);
  CHECK(cut[0].numElements() == 20);
  CHECK(cut[1].numElements() == 5);
  const std::vector<Interval> intervals{{1, 2}, {0, 1}};
  const auto pieces = scale.slices(intervals);
  CHECK(pieces[0].numElements() == 1);
  // Every element is the scale itself.
  graph.setInitialValue(scale, std::vector<float>{2.5f});
  const Tensor sum = graph.addVariable(FLOAT, {20}, "copy");
  graph.setTileMapping(sum, 1);
  graph.createHostRead("copy", sum);
  Engine engine(graph, Sequence{Copy(cut[0], sum)});
  engine.load(device);
  engine.run(0);
  std::vector<float> host(20);
  engine.readTensor("copy", host.data(), host.data() + host.size());
  CHECK(host == std::vector<float>(20, 2.5f));
}
