// Copyright (c) Aspen contributors.
// Issue 26 item 2: headers Poplar ships that programs include directly —
// poplar/CodeletFileType.hpp, poplar/ReplicatedStreamMode.hpp, poplar/replication_factor.hpp
// and gcl/TileAllocation.hpp — used as the programs that include them do (a benchmark tool
// and a ray tracer split each IPU into IO tiles and compute tiles with gcl).
#include <gcl/TileAllocation.hpp>
#include <poplar/CodeletFileType.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/ReplicatedStreamMode.hpp>
#include <poplar/replication_factor.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

namespace {

poplar::Device modelDevice(unsigned tiles) {
  poplar::IPUModel model;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

} // namespace

TEST_CASE("poplar/CodeletFileType.hpp: the type of a codelet file and its extension",
          "[compat][headers][codelets]") {
  using poplar::CodeletFileType;
  CHECK(poplar::getCodeletFileType("codelets/simple.cpp") == CodeletFileType::CppSource);
  CHECK(poplar::getCodeletFileType("kernel.cc") == CodeletFileType::CppSource);
  CHECK(poplar::getCodeletFileType("kernel.c") == CodeletFileType::CSource);
  CHECK(poplar::getCodeletFileType("kernel.S") == CodeletFileType::PreprocessedAsmSource);
  CHECK(poplar::getCodeletFileType("kernel.s") == CodeletFileType::AsmSource);
  CHECK(poplar::getCodeletFileType("kernel.ll") == CodeletFileType::IrSource);
  CHECK(poplar::getCodeletFileType("/opt/sdk/lib/popops.gp") == CodeletFileType::Object);
  CHECK_THROWS_AS(poplar::getCodeletFileType("notes.txt"), poplar::poplar_error);
  // Each type's extension names the type again.
  for (CodeletFileType t :
       {CodeletFileType::PreprocessedAsmSource, CodeletFileType::AsmSource, CodeletFileType::CSource,
        CodeletFileType::CppSource, CodeletFileType::IrSource, CodeletFileType::Object}) {
    const std::string file = "codelet" + poplar::getExtensionFromFileType(t);
    CHECK(poplar::getCodeletFileType(file.c_str()) == t);
  }
  CHECK(poplar::getExtensionFromFileType(CodeletFileType::Auto).empty());
  CHECK(poplar::getLanguageOption(CodeletFileType::CppSource) == "c++");
  CHECK(poplar::getLanguageOption(CodeletFileType::CSource) == "c");
  CHECK(poplar::getLanguageOption(CodeletFileType::PreprocessedAsmSource) == "assembler-with-cpp");
  CHECK(poplar::getLanguageOption(CodeletFileType::Object).empty());
}

TEST_CASE("poplar/ReplicatedStreamMode.hpp and replication_factor.hpp name what Graph uses",
          "[compat][headers]") {
  poplar::Device device = modelDevice(2);
  poplar::Graph graph(device.getTarget(), poplar::replication_factor(1));
  popops::addCodelets(graph);
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {4}, "x");
  graph.setTileMapping(x, 1);
  const poplar::ReplicatedStreamMode mode = poplar::ReplicatedStreamMode::BROADCAST;
  poplar::DataStream in = graph.addHostToDeviceFIFO("in", poplar::FLOAT, 4, mode);
  poplar::DataStream out = graph.addDeviceToHostFIFO("out", poplar::FLOAT, 4);
  poplar::program::Sequence prog;
  prog.add(poplar::program::Copy(in, x));
  popops::mulInPlace(graph, x, 2.0f, prog);
  prog.add(poplar::program::Copy(x, out));
  poplar::Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> host{1.0f, -2.0f, 3.5f, 0.25f}, result(4);
  engine.connectStream("in", host.data());
  engine.connectStream("out", result.data());
  engine.run(0);
  for (std::size_t i = 0; i < host.size(); ++i)
    CHECK(result[i] == 2.0f * host[i]);
}

TEST_CASE("gcl/TileAllocation.hpp: IO tiles and compute tiles, as overlapped-IO programs split them",
          "[compat][headers][gcl]") {
  for (unsigned tilesPerIpu : {4u, 16u, 64u, 1472u}) {
    INFO("tiles per IPU: " << tilesPerIpu);
    poplar::Device device = modelDevice(tilesPerIpu);
    poplar::Graph graph(device.getTarget());
    const unsigned numTiles = graph.getTarget().getNumTiles();
    const unsigned minIo = gcl::getMinIoTiles(graph);
    CHECK(minIo >= 2);
    CHECK(minIo % 2 == 0);
    CHECK(minIo <= numTiles / 2);
    if (tilesPerIpu == 1472)
      CHECK(minIo == 32);
    const unsigned numIo = std::max(minIo, 2u);
    const std::vector<unsigned> io = gcl::perIPUTiles(graph, 0, numIo);
    const std::vector<unsigned> compute = gcl::perIPUTiles(graph, numIo, numTiles - numIo);
    REQUIRE(io.size() == numIo);
    REQUIRE(compute.size() == numTiles - numIo);
    CHECK(std::is_sorted(io.begin(), io.end()));
    CHECK(std::is_sorted(compute.begin(), compute.end()));
    // Disjoint, and together every tile once.
    std::set<unsigned> all(io.begin(), io.end());
    all.insert(compute.begin(), compute.end());
    CHECK(all.size() == numTiles);
    CHECK(*all.rbegin() == numTiles - 1);
    // Tiles come in pairs {2k, 2k+1}.
    for (std::size_t i = 0; i + 1 < io.size(); i += 2) {
      CHECK(io[i] % 2 == 0);
      CHECK(io[i + 1] == io[i] + 1);
    }
    // Spread over the IPU rather than packed at its start: the second pair is in its second half.
    CHECK(gcl::perIPUTiles(graph, 0, 4).back() >= numTiles / 2);
    // Unsorted and single-tile forms hold the same kind of sets.
    const std::vector<unsigned> unsorted = gcl::perIPUTiles(graph, 0, numIo, false);
    CHECK(std::set<unsigned>(unsorted.begin(), unsorted.end()) == std::set<unsigned>(io.begin(), io.end()));
    const std::vector<unsigned> singles = gcl::perIPUTiles(graph, 0, 3, true, false);
    CHECK(std::set<unsigned>(singles.begin(), singles.end()).size() == 3);
    CHECK_THROWS_AS(gcl::perIPUTiles(graph, numIo, numTiles), poplar::poplar_error);
  }

  // The overlapped-IO pattern: a virtual graph of IO tiles holds the buffer the host streams
  // into, a virtual graph of compute tiles works on a copy.
  poplar::Device device = modelDevice(16);
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const unsigned numTiles = graph.getTarget().getNumTiles();
  const unsigned numIo = gcl::getMinIoTiles(graph);
  const std::vector<unsigned> ioTiles = gcl::perIPUTiles(graph, 0, numIo);
  const std::vector<unsigned> computeTiles = gcl::perIPUTiles(graph, numIo, numTiles - numIo);
  poplar::Graph ioGraph = graph.createVirtualGraph(ioTiles);
  poplar::Graph computeGraph = graph.createVirtualGraph(computeTiles);
  const std::size_t n = 3 * computeTiles.size();
  poplar::Tensor buffer = ioGraph.addVariable(poplar::FLOAT, {n}, "ioBuffer");
  poputil::mapTensorLinearly(ioGraph, buffer);
  poplar::Tensor work = computeGraph.addVariable(poplar::FLOAT, {n}, "work");
  poputil::mapTensorLinearly(computeGraph, work);
  poplar::DataStream in = graph.addHostToDeviceFIFO("in", poplar::FLOAT, n);
  poplar::DataStream out = graph.addDeviceToHostFIFO("out", poplar::FLOAT, n);
  poplar::program::Sequence prog;
  prog.add(poplar::program::Copy(in, buffer));
  prog.add(poplar::program::Copy(buffer, work));
  popops::addInPlace(computeGraph, work, work, prog);
  prog.add(poplar::program::Copy(work, out));
  // Every element of each tensor lives on its own graph's tiles.
  const auto bufferMapping = graph.getTileMapping(buffer);
  const auto workMapping = graph.getTileMapping(work);
  for (unsigned tile = 0; tile < numTiles; ++tile) {
    const bool isIo = std::find(ioTiles.begin(), ioTiles.end(), tile) != ioTiles.end();
    if (!isIo)
      CHECK(bufferMapping[tile].empty());
    else
      CHECK((tile >= workMapping.size() || workMapping[tile].empty()));
  }
  poplar::Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> host(n), result(n);
  std::iota(host.begin(), host.end(), 1.0f);
  engine.connectStream("in", host.data());
  engine.connectStream("out", result.data());
  engine.run(0);
  for (std::size_t i = 0; i < n; ++i)
    CHECK(result[i] == 2.0f * host[i]);
}
