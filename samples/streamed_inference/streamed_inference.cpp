// Sample: a model larger than the IPU's SRAM runs because the compiler keeps its weights in
// Streaming Memory and stages each layer's weights in just before the layer runs, overlapped
// with the layer before (aspen.streamingMemory=auto, docs/streaming-memory.md).
//
// The model: kLayers dense layers of kWidth x kWidth floats with ReLU, each layer's rows spread
// over the 4 tiles of a small IPU model whose tiles hold 48 KiB. The weights are 128 KiB per
// tile: about 2.7 times the SRAM. With aspen.streamingMemory=off the same program is out of
// memory; with auto it runs, its output equals the same program run on tiles with enough SRAM bit
// for bit, and matches a host reference.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#ifndef ASPEN_SAMPLE_DIR
#define ASPEN_SAMPLE_DIR "."
#endif

using namespace poplar;
using namespace poplar::program;

namespace {

constexpr unsigned kTiles = 4, kWidth = 64, kLayers = 32, kRowsPerTile = kWidth / kTiles;

float weight(unsigned layer, unsigned r, unsigned c) {
  return float(int((layer * 131 + r * 31 + c * 17) % 23) - 11) / 64.0f;
}
float bias(unsigned layer, unsigned r) {
  return float(int((layer * 7 + r * 3) % 5) - 1) / 16.0f;
}

struct Model {
  Graph graph;
  Sequence prog;
  explicit Model(const Target &target) : graph(target) {
    graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/layer_codelets.cpp", CodeletFileType::Auto, "-O2");
    std::vector<Tensor> act;
    for (unsigned l = 0; l <= kLayers; ++l) {
      act.push_back(graph.addVariable(FLOAT, {kWidth}, "act" + std::to_string(l)));
      for (unsigned t = 0; t < kTiles; ++t)
        graph.setTileMapping(act[l].slice(t * kRowsPerTile, (t + 1) * kRowsPerTile), t);
    }
    Tensor total = graph.addVariable(FLOAT, {kWidth}, "total");
    for (unsigned t = 0; t < kTiles; ++t)
      graph.setTileMapping(total.slice(t * kRowsPerTile, (t + 1) * kRowsPerTile), t);
    graph.setInitialValue(total, std::vector<float>(kWidth, 0.0f));
    for (unsigned l = 0; l < kLayers; ++l) {
      Tensor w = graph.addVariable(FLOAT, {kWidth, kWidth}, "w" + std::to_string(l));
      Tensor b = graph.addVariable(FLOAT, {kWidth}, "b" + std::to_string(l));
      std::vector<float> biases(kWidth);
      for (unsigned r = 0; r < kWidth; ++r)
        biases[r] = bias(l, r);
      graph.setInitialValue(b, biases); // initial values move to Streaming Memory with the variable
      graph.createHostWrite("w" + std::to_string(l), w);
      ComputeSet cs = graph.addComputeSet("layer" + std::to_string(l));
      for (unsigned t = 0; t < kTiles; ++t) {
        const unsigned r0 = t * kRowsPerTile, r1 = r0 + kRowsPerTile;
        graph.setTileMapping(w.slice(r0, r1), t);
        graph.setTileMapping(b.slice(r0, r1), t);
        VertexRef v = graph.addVertex(cs, "DenseRows",
                                      {{"w", w.slice(r0, r1).flatten()},
                                       {"x", act[l]},
                                       {"b", b.slice(r0, r1)},
                                       {"y", act[l + 1].slice(r0, r1)}});
        graph.setTileMapping(v, t);
        graph.setPerfEstimate(v, 20 + kRowsPerTile * kWidth * 2);
      }
      prog.add(Execute(cs));
    }
    ComputeSet acc = graph.addComputeSet("accumulate");
    for (unsigned t = 0; t < kTiles; ++t) {
      const unsigned r0 = t * kRowsPerTile, r1 = r0 + kRowsPerTile;
      VertexRef v = graph.addVertex(acc, "Accumulate",
                                    {{"y", act[kLayers].slice(r0, r1)}, {"total", total.slice(r0, r1)}});
      graph.setTileMapping(v, t);
    }
    prog.add(Execute(acc));
    graph.createHostWrite("input", act[0]);
    graph.createHostRead("output", act[kLayers]);
    graph.createHostRead("total", total);
  }
};

} // namespace

int main() {
  IPUModel model("ipu2");
  model.tilesPerIPU = kTiles;
  model.memoryBytesPerTile = 48 * 1024;
  Device device = model.createDevice();

  // The host reference, in the vertex's order of operations.
  std::vector<float> input(kWidth), x(kWidth);
  for (unsigned i = 0; i < kWidth; ++i)
    input[i] = float(int(i % 9) - 4) / 8.0f;
  x = input;
  for (unsigned l = 0; l < kLayers; ++l) {
    std::vector<float> y(kWidth);
    for (unsigned r = 0; r < kWidth; ++r) {
      float sum = bias(l, r);
      for (unsigned c = 0; c < kWidth; ++c)
        sum += weight(l, r, c) * x[c];
      y[r] = sum > 0.0f ? sum : 0.0f;
    }
    x = y;
  }

  // With Streaming Memory off the weights do not fit.
  bool oomWhenOff = false;
  {
    Model m(device.getTarget());
    try {
      Engine engine(m.graph, m.prog, OptionFlags{{"aspen.streamingMemory", "off"}});
    } catch (const graph_memory_allocation_error &e) {
      oomWhenOff = true;
      std::cout << "aspen.streamingMemory=off: " << std::string(e.what()).substr(0, 80) << "...\n";
    }
  }

  Model m(device.getTarget());
  Engine engine(m.graph, m.prog, OptionFlags{{"aspen.streamingMemory", "auto"}});
  engine.load(device);
  for (unsigned l = 0; l < kLayers; ++l) {
    std::vector<float> w(kWidth * kWidth);
    for (unsigned r = 0; r < kWidth; ++r)
      for (unsigned c = 0; c < kWidth; ++c)
        w[r * kWidth + c] = weight(l, r, c);
    engine.writeTensor("w" + std::to_string(l), w.data(), w.data() + w.size());
  }
  engine.writeTensor("input", input.data(), input.data() + input.size());
  engine.run(0);
  engine.run(0);
  std::vector<float> output(kWidth), total(kWidth);
  engine.readTensor("output", output.data(), output.data() + output.size());
  engine.readTensor("total", total.data(), total.data() + total.size());

  // The same program on tiles large enough to hold every weight, without Streaming Memory: the
  // results must be equal bit for bit.
  std::vector<float> golden(kWidth), goldenTotal(kWidth);
  {
    IPUModel big("ipu2");
    big.tilesPerIPU = kTiles;
    Device bigDevice = big.createDevice();
    Model g(bigDevice.getTarget());
    Engine reference(g.graph, g.prog, OptionFlags{{"aspen.streamingMemory", "off"}});
    reference.load(bigDevice);
    for (unsigned l = 0; l < kLayers; ++l) {
      std::vector<float> w(kWidth * kWidth);
      for (unsigned r = 0; r < kWidth; ++r)
        for (unsigned c = 0; c < kWidth; ++c)
          w[r * kWidth + c] = weight(l, r, c);
      reference.writeTensor("w" + std::to_string(l), w.data(), w.data() + w.size());
    }
    reference.writeTensor("input", input.data(), input.data() + input.size());
    reference.run(0);
    reference.run(0);
    reference.readTensor("output", golden.data(), golden.data() + golden.size());
    reference.readTensor("total", goldenTotal.data(), goldenTotal.data() + goldenTotal.size());
  }
  bool same = true, close = true;
  for (unsigned i = 0; i < kWidth; ++i) {
    same = same && output[i] == golden[i] && total[i] == goldenTotal[i];
    // The host reference may round differently (fused multiply-adds): compare to 1e-5.
    const float scale = std::max(1.0f, std::fabs(x[i]));
    close = close && std::fabs(output[i] - x[i]) <= 1e-5f * scale &&
            std::fabs(total[i] - 2.0f * x[i]) <= 2e-5f * scale;
  }
  std::cout << "weights: " << kLayers * kWidth * kWidth * 4 / kTiles << " bytes per tile, SRAM "
            << model.memoryBytesPerTile << " bytes per tile\n";
  std::cout << "output[0..3] = " << output[0] << " " << output[1] << " " << output[2] << " " << output[3]
            << "\nequals the run with enough SRAM bit for bit: " << (same ? "yes" : "no")
            << "; matches the host reference: " << (close ? "yes" : "no") << "\n";
  const bool ok = same && close && oomWhenOff;
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
