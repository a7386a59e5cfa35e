// Sample 10: MIMD. Every tile runs its own small interpreter over its own
// slice of input text: different programs, different lengths, different
// control flow, all in one compute set. Then an all-to-all exchange gives
// every tile every result, and each tile ranks its own. Tiles are independent
// processors, not SIMD lanes.
//
// Build with Poplar or Aspen:  g++ -std=c++11 mimd_interpreter.cpp -lpoplar
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#ifndef ASPEN_SAMPLE_DIR
#define ASPEN_SAMPLE_DIR "."
#endif

using namespace poplar;
using namespace poplar::program;

namespace {
const unsigned kTiles = 256, kTextBytes = 64;

// A different reverse-Polish program for every tile.
std::string programFor(unsigned tile) {
  std::string p = std::to_string(tile % 17 + 1);
  for (unsigned k = 0; k < tile % 5 + 1; ++k) {
    p += " " + std::to_string((tile * 7 + k * 3) % 11 + 1);
    p += (k + tile) % 3 == 0 ? " +" : (k + tile) % 3 == 1 ? " *" : " -";
  }
  if (tile % 4 == 0)
    p += " d *";
  return p;
}

int evaluateOnHost(const std::string &text) {
  std::vector<int> stack;
  for (std::size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == ' ') {
      ++i;
    } else if (c >= '0' && c <= '9') {
      int v = 0;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9')
        v = v * 10 + (text[i++] - '0');
      stack.push_back(v);
    } else {
      if (c == 'd') {
        stack.push_back(stack.back());
      } else {
        int b = stack.back();
        stack.pop_back();
        int a = stack.back();
        stack.pop_back();
        stack.push_back(c == '+' ? a + b : c == '-' ? a - b : a * b);
      }
      ++i;
    }
  }
  return stack.back();
}
} // namespace

int main() {
  IPUModel model("ipu2");
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(std::string(ASPEN_SAMPLE_DIR) + "/interpreter_codelets.cpp");

  Tensor text = graph.addVariable(CHAR, {kTiles, kTextBytes}, "text");
  Tensor results = graph.addVariable(INT, {kTiles}, "results");
  Tensor ranks = graph.addVariable(UNSIGNED_INT, {kTiles}, "ranks");
  ComputeSet interpret = graph.addComputeSet("interpret");
  ComputeSet rank = graph.addComputeSet("rank");
  for (unsigned t = 0; t < kTiles; ++t) {
    graph.setTileMapping(text[t], t);
    graph.setTileMapping(results[t], t);
    graph.setTileMapping(ranks[t], t);
    VertexRef v = graph.addVertex(interpret, "RpnInterpreter", {{"text", text[t]}, {"result", results[t]}});
    graph.setTileMapping(v, t);
    VertexRef r = graph.addVertex(rank, "RankResult", {{"all", results}, {"rank", ranks[t]}});
    graph.setInitialValue(r["self"], t);
    graph.setTileMapping(r, t);
  }
  graph.createHostWrite("text", text);
  graph.createHostRead("results", results);
  graph.createHostRead("ranks", ranks);

  Engine engine(graph, Sequence({Execute(interpret), Execute(rank)}));
  engine.load(device);

  std::vector<char> hostText(kTiles * kTextBytes, '\0');
  std::vector<int> expected(kTiles);
  for (unsigned t = 0; t < kTiles; ++t) {
    std::string p = programFor(t);
    std::copy(p.begin(), p.end(), hostText.begin() + t * kTextBytes);
    expected[t] = evaluateOnHost(p);
  }
  engine.writeTensor("text", hostText.data(), hostText.data() + hostText.size());
  engine.run(0);
  std::vector<int> got(kTiles);
  std::vector<unsigned> gotRanks(kTiles);
  engine.readTensor("results", got.data(), got.data() + got.size());
  engine.readTensor("ranks", gotRanks.data(), gotRanks.data() + gotRanks.size());

  std::vector<unsigned> order(kTiles);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](unsigned a, unsigned b) { return expected[a] < expected[b]; });
  bool ok = got == expected;
  for (unsigned pos = 0; pos < kTiles; ++pos)
    ok = ok && gotRanks[order[pos]] == pos;
  std::cout << "tile 0 ran \"" << programFor(0) << "\" = " << got[0] << "; tile 1 ran \"" << programFor(1)
            << "\" = " << got[1] << "\n";
  std::cout << "smallest result on tile " << order.front() << ", largest on tile " << order.back() << "\n";
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
