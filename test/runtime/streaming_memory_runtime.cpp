// Copyright (c) Aspen contributors.
// aspen.streamingMemory=auto end to end (docs/streaming-memory.md): accumulators that do not all
// fit in tile memory are offloaded, loaded before their compute set and stored after it; their
// initial values, host reads and writes and a stream into one of them work across runs, and the
// results equal the same program on tiles with enough memory, bit for bit.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include "EngineImpl.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

constexpr unsigned kTiles = 2, kAccs = 8, kElems = 1024; // 2 KiB of each accumulator per tile

struct Program {
  Graph graph;
  Sequence prog;
  explicit Program(const Target &target) : graph(target) {
    graph.addCodelets(std::string(ASPEN_SOURCE_DIR) + "/samples/streamed_inference/layer_codelets.cpp",
                      CodeletFileType::Auto, "-O2");
    Tensor x = graph.addVariable(FLOAT, {kElems}, "x");
    graph.setTileMapping(x.slice(0, kElems / 2), 0);
    graph.setTileMapping(x.slice(kElems / 2, kElems), 1);
    graph.createHostWrite("x", x);
    for (unsigned a = 0; a < kAccs; ++a) {
      const std::string name = "acc" + std::to_string(a);
      Tensor acc = graph.addVariable(FLOAT, {kElems}, name);
      std::vector<float> init(kElems);
      for (unsigned i = 0; i < kElems; ++i)
        init[i] = float(a) + float(i % 7) / 4.0f;
      graph.setInitialValue(acc, init);
      ComputeSet cs = graph.addComputeSet("add" + std::to_string(a));
      for (unsigned t = 0; t < kTiles; ++t) {
        const unsigned b = t * kElems / 2, e = b + kElems / 2;
        graph.setTileMapping(acc.slice(b, e), t);
        VertexRef v = graph.addVertex(cs, "Accumulate", {{"y", x.slice(b, e)}, {"total", acc.slice(b, e)}});
        graph.setTileMapping(v, t);
      }
      if (a == 3) { // acc3 is also overwritten from a stream before its compute set
        DataStream in = graph.addHostToDeviceFIFO("in3", FLOAT, kElems);
        prog.add(Copy(in, acc));
      }
      prog.add(Execute(cs));
      graph.createHostRead(name, acc);
      if (a == 5)
        graph.createHostWrite(name + "w", acc);
    }
  }
};

struct Results {
  std::vector<std::vector<float>> accs;
  std::vector<std::string> offloaded;
};

Results runTwice(unsigned bytesPerTile, const std::string &streaming) {
  IPUModel model("ipu2");
  model.tilesPerIPU = kTiles;
  if (bytesPerTile)
    model.memoryBytesPerTile = bytesPerTile;
  Device device = model.createDevice();
  Program p(device.getTarget());
  Engine engine(p.graph, p.prog, OptionFlags{{"aspen.streamingMemory", streaming}});
  engine.load(device);
  std::vector<float> x(kElems), in3(kElems, 0.25f), acc5(kElems);
  for (unsigned i = 0; i < kElems; ++i) {
    x[i] = float(i % 5) / 8.0f;
    acc5[i] = float(i % 3) * 2.0f;
  }
  engine.connectStream("in3", in3.data());
  engine.writeTensor("x", x.data(), x.data() + kElems);
  engine.writeTensor("acc5w", acc5.data(), acc5.data() + kElems); // a host write into an offloaded variable
  engine.run(0);
  engine.run(0);
  Results r;
  for (unsigned a = 0; a < kAccs; ++a) {
    std::vector<float> v(kElems);
    engine.readTensor("acc" + std::to_string(a), v.data(), v.data() + kElems);
    r.accs.push_back(std::move(v));
  }
  for (const auto &v : engine.getImpl().exe().streamingLayout)
    r.offloaded.push_back(v.name);
  return r;
}

} // namespace

TEST_CASE("aspen.streamingMemory=auto: offloaded accumulators keep their values across runs, bit for bit",
          "[runtime][streaming]") {
  // 8 accumulators x 2 KiB per tile = 16 KiB of always-live state on 10 KiB tiles.
  CHECK_THROWS_AS(runTwice(10 * 1024, "off"), graph_memory_allocation_error);
  const Results streamed = runTwice(10 * 1024, "auto");
  const Results golden = runTwice(0, "off");
  INFO("offloaded: " << Catch::Detail::stringify(streamed.offloaded));
  CHECK(streamed.offloaded.size() >= 3);
  CHECK(golden.offloaded.empty());
  // The host-written and the streamed accumulators are among them.
  CHECK(std::count(streamed.offloaded.begin(), streamed.offloaded.end(), "acc5") == 1);
  CHECK(std::count(streamed.offloaded.begin(), streamed.offloaded.end(), "acc3") == 1);
  for (unsigned a = 0; a < kAccs; ++a) {
    INFO("acc" << a);
    CHECK(streamed.accs[a] == golden.accs[a]);
    // And against the host: the initial value (or what was written or streamed) plus x, twice.
    for (unsigned i = 0; i < kElems; i += 97) {
      const float x = float(i % 5) / 8.0f;
      const float start = a == 5 ? float(i % 3) * 2.0f : float(a) + float(i % 7) / 4.0f;
      const float expected = a == 3 ? 0.25f + x : start + x + x;
      CHECK(streamed.accs[a][i] == expected);
    }
  }
}
