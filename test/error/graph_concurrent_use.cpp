// Copyright (c) Aspen contributors.
// Issue 25, item 6: a poplar::Graph is not thread-safe (as in Poplar), and using one from two
// threads at once is reported with a poplar_error naming both calls instead of corrupting the
// graph. One thread compiles codelets into the graph (a call that lasts long enough to be
// caught inside) while another keeps adding variables to the same graph.
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <sstream>
#include <string>
#include <thread>

using namespace poplar;

namespace {

bool isConcurrentUseError(const poplar_error &e) {
  return std::string(e.what()).find("is not thread-safe") != std::string::npos;
}

} // namespace

TEST_CASE("graph_concurrent_use: a second thread changing a Graph gets a poplar_error naming both calls",
          "[error]") {
  IPUModel model;
  model.numIPUs = 1;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());

  // A source no earlier run has compiled, so addCodelets really compiles it.
  std::random_device random;
  std::stringstream source;
  source << "#include <poplar/Vertex.hpp>\n// " << random() << random() << "\n"
         << "class Twice : public poplar::Vertex {\npublic:\n"
         << "  poplar::InOut<float> x;\n  bool compute() { *x = *x * 2; return true; }\n};\n";

  std::atomic<bool> compiling{true};
  std::string compileError;
  std::thread compiler([&] {
    for (;;) {
      try {
        std::stringstream copy(source.str());
        graph.addCodelets(copy);
        break;
      } catch (const poplar_error &e) {
        if (!isConcurrentUseError(e)) { // caught the other thread inside addVariable: try again
          compileError = e.what();
          break;
        }
      }
    }
    compiling = false;
  });

  unsigned added = 0, refused = 0;
  std::string refusal;
  while (compiling) {
    try {
      graph.addVariable(FLOAT, {1}, "v");
      ++added;
    } catch (const poplar_error &e) {
      if (!isConcurrentUseError(e))
        throw;
      if (refusal.empty())
        refusal = e.what();
      ++refused;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  compiler.join();

  INFO("added " << added << " variables, refused " << refused << " times");
  REQUIRE(compileError.empty());
  REQUIRE(refused > 0);
  CHECK(refusal.find("Graph::addVariable") != std::string::npos);
  CHECK(refusal.find("Graph::addCodelets") != std::string::npos);

  // Nothing was half-done: the graph is whole and usable from one thread afterwards.
  ComputeSet cs = graph.addComputeSet("cs");
  Tensor x = graph.addVariable(FLOAT, {1}, "x");
  graph.setTileMapping(x, 0);
  VertexRef v = graph.addVertex(cs, "Twice", {{"x", x}});
  graph.setTileMapping(v, 0);
  CHECK(graph.getTileMapping(x)[0].size() == 1);
}

TEST_CASE("graph_concurrent_use: nested calls on one thread are not concurrent use", "[error]") {
  IPUModel model;
  model.numIPUs = 1;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Graph virtualGraph = graph.createVirtualGraph(2, 4);
  // addVertex with connections calls connect; cloneN calls clone; virtual graphs share the mark.
  Tensor a = virtualGraph.addVariable(FLOAT, {4}, "a");
  virtualGraph.setTileMapping(a, 0);
  Tensor copies = graph.cloneN(a, 3, "copies");
  CHECK(copies.shape() == std::vector<std::size_t>{3, 4});
}
