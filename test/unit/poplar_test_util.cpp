// Copyright (c) Aspen contributors.
// libpoplar_test (include/poplar_test/Util.hpp), the host helpers PopLibs' tests use, checked
// against independent host encodings: IEEE binary16 bit patterns written out by hand, two's
// complement bytes, QUARTER through poplar's own conversion; and a tensor's buffer streamed up
// and down through allocateHostMemoryForTensor and attachStreams on an IPUModel, replicated too.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/TypeConversion.hpp>
#include <poplar/exceptions.hpp>
#include <poplar_test/Util.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace poplar;
using poplar_test::HostMemory;

namespace {
std::vector<std::uint8_t> bytes(const void *p, std::size_t n) {
  const auto *b = static_cast<const std::uint8_t *>(p);
  return std::vector<std::uint8_t>(b, b + n);
}
} // namespace

TEST_CASE("poplar_test::copy writes HALF as binary16 and reads it back", "[unit][poplar_test]") {
  const Target target = Target::createCPUTarget();
  const std::vector<double> values{1.0, -2.0, 0.5, 65504.0, 0.0};
  // 1.0 = 0x3C00, -2.0 = 0xC000, 0.5 = 0x3800, 65504 = 0x7BFF, 0 = 0x0000 (little-endian).
  const std::vector<std::uint8_t> expected{0x00, 0x3C, 0x00, 0xC0, 0x00, 0x38, 0xFF, 0x7B, 0x00, 0x00};
  std::vector<std::uint8_t> raw(values.size() * 2, 0xAA);
  poplar_test::copy(target, values.data(), values.size(), HALF, raw.data());
  CHECK(raw == expected);
  std::vector<float> back(values.size());
  poplar_test::copy(target, HALF, raw.data(), back.data(), back.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    CHECK(back[i] == static_cast<float>(values[i]));
  // Containers: a std::vector in, a std::vector out (filled to its size).
  std::vector<std::uint8_t> raw2(values.size() * 2);
  poplar_test::copy(target, values, HALF, raw2.data());
  CHECK(raw2 == expected);
  std::vector<double> back2(values.size());
  poplar_test::copy(target, HALF, raw2.data(), back2);
  CHECK(back2 == values);
}

TEST_CASE("poplar_test::copy converts integer types as C casts do", "[unit][poplar_test]") {
  const Target target = Target::createCPUTarget();
  const std::vector<int> ints{-1, 2, 300, -129};
  std::vector<std::uint8_t> raw(ints.size());
  poplar_test::copy(target, ints.data(), ints.size(), SIGNED_CHAR, raw.data());
  CHECK(raw == std::vector<std::uint8_t>{0xFF, 0x02, 0x2C, 0x7F}); // 300 -> 44, -129 -> 127
  std::vector<long long> back(ints.size());
  poplar_test::copy(target, SIGNED_CHAR, raw.data(), back.data(), back.size());
  CHECK(back == std::vector<long long>{-1, 2, 44, 127});

  std::vector<std::uint8_t> u16(4);
  const std::vector<double> d{-1.0, 65537.0};
  poplar_test::copy(target, d.data(), d.size(), UNSIGNED_SHORT, u16.data());
  CHECK(u16 == std::vector<std::uint8_t>{0xFF, 0xFF, 0x01, 0x00});
  std::vector<unsigned> u(2);
  poplar_test::copy(target, UNSIGNED_SHORT, u16.data(), u.data(), u.size());
  CHECK(u == std::vector<unsigned>{65535u, 1u});

  const std::vector<unsigned long long> big{std::numeric_limits<unsigned long long>::max(), 7};
  std::vector<std::uint8_t> raw64(16);
  poplar_test::copy(target, big.data(), big.size(), UNSIGNED_LONGLONG, raw64.data());
  std::vector<unsigned long long> big2(2);
  poplar_test::copy(target, UNSIGNED_LONGLONG, raw64.data(), big2.data(), 2);
  CHECK(big2 == big);

  const std::vector<float> flags{0.0f, 2.5f, -1.0f};
  std::vector<std::uint8_t> b(3);
  poplar_test::copy(target, flags.data(), flags.size(), BOOL, b.data());
  CHECK(b == std::vector<std::uint8_t>{0, 1, 1});
  std::vector<int> asInt(3);
  poplar_test::copy(target, FLOAT, nullptr, asInt.data(), 0); // nothing to do
  const std::vector<float> f{1.75f, -3.5f, 1e9f};
  std::vector<std::uint8_t> rawF(12);
  poplar_test::copy(target, f.data(), f.size(), FLOAT, rawF.data());
  CHECK(bytes(rawF.data(), 12) == bytes(f.data(), 12));
  poplar_test::copy(target, FLOAT, rawF.data(), asInt.data(), 3);
  CHECK(asInt == std::vector<int>{1, -3, 1000000000});
}

TEST_CASE("poplar_test::copy of QUARTER uses the metadata, as poplar's conversion does",
          "[unit][poplar_test]") {
  const Target target = Target::createCPUTarget();
  const QuarterMetadata md(QuarterMetadata::Format::F143, -1);
  const std::vector<float> values{1.0f, -0.75f, 3.0f, 0.125f};
  std::vector<std::uint8_t> expected(values.size()), raw(values.size());
  convertToDeviceType(QUARTER, md, ArrayRef<float>(values), expected.data());
  poplar_test::copy(target, values.data(), values.size(), QUARTER, md, raw.data());
  CHECK(raw == expected);
  std::vector<double> back(values.size()), reference(values.size());
  poplar_test::copy(target, QUARTER, md, raw.data(), back.data(), back.size());
  convertFromDeviceType(QUARTER, md, raw.data(), ArrayRef<double>(reference));
  CHECK(back == reference);
}

TEST_CASE("poplar_test::copy refuses QUARTER without metadata and metadata for other types",
          "[unit][poplar_test][error]") {
  const Target target = Target::createCPUTarget();
  const std::vector<float> v{1.0f};
  std::vector<std::uint8_t> raw(4);
  CHECK_THROWS_WITH(poplar_test::copy(target, v.data(), 1, QUARTER, raw.data()),
                    Catch::Contains("QUARTER needs the tensor's QuarterMetadata"));
  CHECK_THROWS_WITH(poplar_test::copy(target, v.data(), 1, FLOAT, QuarterMetadata(), raw.data()),
                    Catch::Contains("float was given QuarterMetadata"));
}

TEST_CASE("poplar_test streams a tensor's buffer up and down on an IPUModel", "[unit][poplar_test]") {
  IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor a = graph.addVariable(INT, {6}, "a");
  Tensor b = graph.addVariable(INT, {6}, "b");
  graph.setTileMapping(a, 1);
  graph.setTileMapping(b, 2);
  program::Sequence upload, download;
  std::vector<std::pair<std::string, HostMemory>> tmap;
  auto rawA = poplar_test::allocateHostMemoryForTensor(a, "a", graph, upload, boost::none, tmap);
  auto rawB = poplar_test::allocateHostMemoryForTensor(b, "b", graph, upload, download, tmap);
  REQUIRE(tmap.size() == 2);
  CHECK(tmap[0].second.size() == 24);
  CHECK(tmap[0].second.hasUpload());
  CHECK_FALSE(tmap[0].second.hasDownload());
  CHECK(tmap[1].second.hasDownload());
  CHECK_THROWS_WITH(poplar_test::allocateHostMemoryForTensor(a, "a", graph, upload, download, tmap),
                    Catch::Contains("already has a buffer named 'a'"));
  const std::vector<int> hostA{5, -6, 7, -8, 9, 10};
  poplar_test::copy(graph.getTarget(), hostA, INT, rawA.get());
  std::vector<int> zeros(6, 0);
  poplar_test::copy(graph.getTarget(), zeros, INT, rawB.get());
  Engine engine(graph, program::Sequence{upload, program::Copy(a, b), download});
  poplar_test::attachStreams(engine, tmap);
  engine.load(device);
  engine.run(0);
  std::vector<int> out(6);
  poplar_test::copy(graph.getTarget(), INT, rawB.get(), out);
  CHECK(out == hostA);
}

TEST_CASE("poplar_test gives each replica its own part of the buffer", "[unit][poplar_test]") {
  IPUModel model;
  model.numIPUs = 2;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget(), replication_factor(2));
  Tensor t = graph.addVariable(FLOAT, {3}, "t");
  graph.setTileMapping(t, 0);
  program::Sequence upload, download;
  std::vector<std::pair<std::string, HostMemory>> tmap;
  auto raw = poplar_test::allocateHostMemoryForTensor(t, "t", graph, upload, download, tmap);
  CHECK(tmap[0].second.replicas() == 2);
  CHECK(tmap[0].second.bytesPerReplica() == 12);
  const std::vector<float> host{1, 2, 3, 4, 5, 6}; // replica 0 then replica 1
  poplar_test::copy(graph.getTarget(), host, FLOAT, raw.get());
  Engine engine(graph, program::Sequence{upload, download});
  poplar_test::attachStreams(engine, tmap);
  engine.load(device);
  engine.run(0);
  std::vector<float> out(6);
  poplar_test::copy(graph.getTarget(), FLOAT, raw.get(), out);
  CHECK(out == host);
}
