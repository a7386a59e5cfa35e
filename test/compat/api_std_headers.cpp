// Copyright (c) Aspen contributors.
// Issue 26 item 1: programs use the standard library having included only Poplar and PopLibs
// headers (std::optional, std::cout, std::unordered_set, std::map, assert, ...), as the HPC
// examples do. Everything above the Catch2 include below sees only Poplar/PopLibs headers, so
// this file stops compiling if Aspen's headers stop bringing one of them.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>

namespace {

// The shape of an HPC example's device helper: an optional device, reported on std::cout.
std::optional<poplar::Device> modelDevice(unsigned tiles) {
  if (tiles == 0)
    return std::nullopt;
  poplar::IPUModel model;
  model.tilesPerIPU = tiles;
  std::cout << "Using an IPUModel of " << tiles << " tiles" << std::endl;
  return model.createDevice();
}

struct RunResult {
  std::map<std::string, std::vector<float>> outputs;
  std::unordered_set<unsigned> tilesUsed;
  std::optional<float> largest;
};

// Adds two vectors spread over the device's tiles and returns what a program would print.
RunResult runAdd(poplar::Device &device, const std::vector<float> &a, const std::vector<float> &b) {
  assert(a.size() == b.size());
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const std::size_t n = a.size();
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {n}, "x");
  poplar::Tensor y = graph.addVariable(poplar::FLOAT, {n}, "y");
  RunResult result;
  const unsigned tiles = graph.getTarget().getNumTiles();
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned tile = static_cast<unsigned>(i % tiles);
    graph.setTileMapping(x[i], tile);
    graph.setTileMapping(y[i], tile);
    result.tilesUsed.insert(tile);
  }
  poplar::program::Sequence prog;
  poplar::Tensor sum = popops::add(graph, x, y, prog, "sum");
  graph.createHostWrite("x", x);
  graph.createHostWrite("y", y);
  graph.createHostRead("sum", sum);
  poplar::Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("x", a.data(), a.data() + n);
  engine.writeTensor("y", b.data(), b.data() + n);
  engine.run(0);
  std::vector<float> out(n);
  engine.readTensor("sum", out.data(), out.data() + n);
  if (!out.empty())
    result.largest = *std::max_element(out.begin(), out.end());
  std::ostringstream summary;
  summary << "sum of " << n << " elements, largest " << result.largest.value_or(0.0f);
  std::cout << summary.str() << '\n';
  result.outputs.emplace("sum", std::move(out));
  return result;
}

} // namespace

#include <catch2/catch.hpp>

TEST_CASE("Poplar's headers bring the standard headers programs rely on", "[compat][headers]") {
  CHECK_FALSE(modelDevice(0).has_value());
  std::optional<poplar::Device> device = modelDevice(4);
  REQUIRE(device.has_value());
  const std::vector<float> a{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  const std::vector<float> b{0.5f, -1.0f, 8.0f, 0.25f, 2.0f, -6.0f};
  const RunResult r = runAdd(*device, a, b);
  REQUIRE(r.outputs.count("sum") == 1);
  const std::vector<float> &sum = r.outputs.at("sum");
  REQUIRE(sum.size() == a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    CHECK(sum[i] == a[i] + b[i]);
  CHECK(r.tilesUsed.size() == 4);
  REQUIRE(r.largest.has_value());
  CHECK(*r.largest == 11.0f);
}
