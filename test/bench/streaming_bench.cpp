// Copyright (c) Aspen contributors.
// Streaming Memory benchmark (docs/streaming-memory.md): a 32-layer dense model whose weights
// are 2.7 times the tiles' SRAM, run with aspen.streamingMemory=auto. For layers of increasing
// compute it reports the simulated cycles of one run with the loads overlapped (as planned) and
// without (every load's full cost added back), and the fraction of load time hidden.
//
//   build-*/test/bin/streaming_bench
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "EngineImpl.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

constexpr unsigned kTiles = 4, kWidth = 64, kLayers = 32, kRows = kWidth / kTiles;

struct Result {
  std::uint64_t withOverlap = 0, loadCycles = 0, hidden = 0, stagedBytes = 0;
};

Result run(const Device &device, std::uint64_t vertexCycles) {
  Graph graph(device.getTarget());
  graph.addCodelets(std::string(ASPEN_SOURCE_DIR) + "/samples/streamed_inference/layer_codelets.cpp",
                    CodeletFileType::Auto, "-O2");
  std::vector<Tensor> act;
  for (unsigned l = 0; l <= kLayers; ++l) {
    act.push_back(graph.addVariable(FLOAT, {kWidth}, "act" + std::to_string(l)));
    for (unsigned t = 0; t < kTiles; ++t)
      graph.setTileMapping(act[l].slice(t * kRows, (t + 1) * kRows), t);
  }
  Sequence prog;
  for (unsigned l = 0; l < kLayers; ++l) {
    Tensor w = graph.addVariable(FLOAT, {kWidth, kWidth}, "w" + std::to_string(l));
    Tensor b = graph.addVariable(FLOAT, {kWidth}, "b" + std::to_string(l));
    graph.setInitialValue(w, std::vector<float>(kWidth * kWidth, 1.0f / 64));
    graph.setInitialValue(b, std::vector<float>(kWidth, 0.0f));
    ComputeSet cs = graph.addComputeSet("layer" + std::to_string(l));
    for (unsigned t = 0; t < kTiles; ++t) {
      graph.setTileMapping(w.slice(t * kRows, (t + 1) * kRows), t);
      graph.setTileMapping(b.slice(t * kRows, (t + 1) * kRows), t);
      VertexRef v = graph.addVertex(cs, "DenseRows",
                                    {{"w", w.slice(t * kRows, (t + 1) * kRows).flatten()},
                                     {"x", act[l]},
                                     {"b", b.slice(t * kRows, (t + 1) * kRows)},
                                     {"y", act[l + 1].slice(t * kRows, (t + 1) * kRows)}});
      graph.setTileMapping(v, t);
      graph.setPerfEstimate(v, vertexCycles);
    }
    prog.add(Execute(cs));
  }
  graph.createHostWrite("input", act[0]);
  Executable exe = compileGraph(graph, {prog}, OptionFlags{{"aspen.streamingMemory", "auto"}});
  const auto profile = nlohmann::json::parse(exe.getImpl().profileJson);
  Result r;
  r.loadCycles = profile["streamingMemory"]["transferCycles"].get<std::uint64_t>();
  r.hidden = profile["streamingMemory"]["hiddenCycles"].get<std::uint64_t>();
  r.stagedBytes = profile["streamingMemory"]["stagedBytes"].get<std::uint64_t>();
  Engine engine(std::move(exe));
  engine.load(device);
  std::vector<float> input(kWidth, 0.5f);
  engine.writeTensor("input", input.data(), input.data() + input.size());
  engine.run(0);
  r.withOverlap = engine.getImpl().profile_.totalCycles;
  return r;
}

} // namespace

int main() {
  IPUModel model("ipu2");
  model.tilesPerIPU = kTiles;
  model.memoryBytesPerTile = 48 * 1024;
  Device device = model.createDevice();
  std::printf("%u layers of %ux%u floats on %u tiles of %u bytes: weights %u bytes per tile\n", kLayers,
              kWidth, kWidth, kTiles, model.memoryBytesPerTile, kLayers * kWidth * kWidth * 4 / kTiles);
  std::printf("%14s %14s %16s %16s %14s %10s\n", "vertex cycles", "staged bytes", "cycles overlap",
              "cycles serial", "load cycles", "hidden");
  for (std::uint64_t vertexCycles : {100u, 500u, 2000u, 8000u}) {
    const Result r = run(device, vertexCycles);
    std::printf("%14llu %14llu %16llu %16llu %14llu %9.1f%%\n", (unsigned long long)vertexCycles,
                (unsigned long long)r.stagedBytes, (unsigned long long)r.withOverlap,
                (unsigned long long)(r.withOverlap + r.hidden), (unsigned long long)r.loadCycles,
                r.loadCycles ? 100.0 * double(r.hidden) / double(r.loadCycles) : 0.0);
  }
  return 0;
}
