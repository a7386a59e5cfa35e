// Copyright (c) Aspen contributors.
// Benchmark: the cost of tensor view operations on a 4096x4096 float tensor, and
// of recording a graph with 1,000,000 variables (through the graph IR directly and
// through poplar::Graph). Prints a table of time per
// operation and the segment count of the result. Built, not run by ctest.
//
// The baseline row is the naive alternative (an explicit list of the 16M element
// indices, transposed), which every view operation is meant to beat by orders of
// magnitude.
#include "ir/GraphData.hpp"
#include "ir/TensorAlgebra.hpp"

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include "BenchSupport.hpp"

#include <cstdio>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

using namespace poplar;
using aspen::bench::Clock;
using aspen::bench::secondsSince;
using aspen::ir::GraphData;

namespace {

/// Repeats `op` for at least `budget` seconds; prints the mean time and the
/// segment count of the view it makes.
void timeView(const char *name, const std::function<Tensor()> &op, double budget = 0.2) {
  Tensor result = op(); // warm up
  std::size_t iterations = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    result = op();
    ++iterations;
    elapsed = secondsSince(start);
  } while (elapsed < budget && iterations < 1000000);
  std::printf("%-44s %12.3f us %12zu %16s\n", name, elapsed / iterations * 1e6,
              static_cast<std::size_t>(aspen::ir::numSegments(result.getImpl())),
              aspen::ir::shapeString(result.shape()).c_str());
}

void timeQuery(const char *name, const std::function<bool()> &query, double budget = 0.2) {
  bool answer = query();
  std::size_t iterations = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    answer = query() != answer ? !answer : answer;
    ++iterations;
    elapsed = secondsSince(start);
  } while (elapsed < budget && iterations < 1000000);
  std::printf("%-44s %12.3f us %12s %16s\n", name, elapsed / iterations * 1e6, "-",
              answer ? "true" : "false");
}

} // namespace

int main() {
  auto graph = std::make_shared<GraphData>();
  aspen::ir::Variable record;
  record.type = FLOAT;
  record.numElements = 4096ull * 4096;
  record.name = "m";
  record.shape = {4096, 4096};
  graph->variables.push_back(record);
  const Tensor m = aspen::ir::makeVariableTensor(graph, 0, FLOAT, {4096, 4096});
  const Tensor t = m.transpose();

  std::printf("Tensor views on a 4096x4096 float tensor\n");
  std::printf("%-44s %15s %12s %16s\n", "operation", "time/op", "segments", "shape / answer");
  timeView("transpose()", [&] { return m.transpose(); });
  timeView("transpose().transpose()", [&] { return t.transpose(); });
  timeView("slice(1000, 2000, 0)  (rows)", [&] { return m.slice(1000, 2000, 0); });
  timeView("slice(1000, 1001, 1)  (one column)", [&] { return m.slice(1000, 1001, 1); });
  timeView("slice(1000, 2000, 1)  (column block)", [&] { return m.slice(1000, 2000, 1); });
  timeView("operator[](17)", [&] { return m[17]; });
  timeView("flatten()", [&] { return m.flatten(); });
  timeView("reshape({64,64,4096})", [&] { return m.reshape({64, 64, 4096}); });
  timeView("reshape({64,64,64,64}).dimShuffle({2,3,0,1})", [&] {
    return m.reshape({64, 64, 64, 64}).dimShuffle({2, 3, 0, 1});
  });
  timeView("dimShuffle({1,0}) of the transpose", [&] { return t.dimShuffle({1, 0}); });
  timeView("transpose().slice(0, 64, 0)", [&] { return t.slice(0, 64, 0); });
  timeView("transpose().flatten().subSample(4097)", [&] { return t.flatten().subSample(4097, 0); });
  timeView("reverse(0)", [&] { return m.reverse(0); });
  timeView("subSample(2, 1)", [&] { return m.subSample(2, 1); });
  timeView("broadcast(2, 0)", [&] { return m.broadcast(2, 0); });
  timeView("concat of two column halves (dim 1)",
           [&] { return concat(m.slice(0, 2048, 1), m.slice(2048, 4096, 1), 1); });
  timeView("reinterpret(HALF)", [&] { return m.reinterpret(HALF); });
  {
    // 4096 pieces of 8 elements at irregular offsets: a scattered view, sliced
    // per "tile" (each slice was O(segments) before its index was kept).
    std::vector<Tensor> pieces;
    const Tensor flat = m.flatten();
    for (std::size_t i = 0; i < 4096; ++i) {
      const std::size_t at = (i * 7919 * 8 + (i % 7)) % (4096ull * 4096 - 8);
      pieces.push_back(flat.slice(at, at + 8));
    }
    const Tensor scattered = concat(pieces);
    std::size_t k = 0;
    timeView("slice(8k, 8k+8) of a view of 4096 segments", [&] {
      k = (k + 1) % 4096;
      return scattered.slice(k * 8, k * 8 + 8);
    });
  }
  timeQuery("isContiguous() of the transpose", [&] { return t.isContiguous(); });
  timeQuery("containsAliases() of the transpose", [&] { return t.containsAliases(); });
  timeQuery("transpose().transpose() == m", [&] { return t.transpose() == m; });
  timeQuery("intersectsWith(): transpose vs a row", [&] { return t.intersectsWith(m[5]); });

  // The naive alternative: the element indices listed one by one, transposed.
  {
    const auto start = Clock::now();
    std::vector<std::uint32_t> indices(4096ull * 4096);
    for (std::uint32_t r = 0; r < 4096; ++r)
      for (std::uint32_t c = 0; c < 4096; ++c)
        indices[std::size_t(c) * 4096 + r] = r * 4096 + c;
    const double elapsed = secondsSince(start);
    std::printf("%-44s %12.3f us %12s %16s   (baseline, checksum %u)\n", "naive element list, transposed",
                elapsed * 1e6, "16777216", "{4096,4096}", indices[12345]);
  }

  // Recording a graph with 1,000,000 variables through the graph IR.
  {
    constexpr std::size_t numVariables = 1000000;
    auto big = std::make_shared<GraphData>();
    std::vector<Tensor> tensors;
    tensors.reserve(numVariables);
    const auto start = Clock::now();
    for (std::size_t i = 0; i < numVariables; ++i) {
      aspen::ir::Variable v;
      v.type = FLOAT;
      v.numElements = 4;
      v.shape = {4};
      big->variables.push_back(std::move(v));
      tensors.push_back(aspen::ir::makeVariableTensor(big, static_cast<aspen::ir::VarId>(i), FLOAT, {4}));
    }
    const double elapsed = secondsSince(start);
    std::printf("\nGraph IR: %zu variables recorded in %.3f s (%.3f us per variable)\n", numVariables,
                elapsed, elapsed / numVariables * 1e6);
    const auto concatStart = Clock::now();
    const Tensor all = concat(tensors);
    std::printf("concat of all %zu variables: %.3f s, %zu segments\n", numVariables,
                secondsSince(concatStart), static_cast<std::size_t>(aspen::ir::numSegments(all.getImpl())));
  }
  // The same through the public API: poplar::Graph::addVariable, mapped to a tile.
  {
    constexpr std::size_t numVariables = 1000000;
    Graph g(Target::createIPUTarget(1, "ipu2"));
    const auto start = Clock::now();
    for (std::size_t i = 0; i < numVariables; ++i) {
      const Tensor v = g.addVariable(FLOAT, {4});
      g.setTileMapping(v, static_cast<unsigned>(i % 1472));
    }
    const double elapsed = secondsSince(start);
    std::printf("poplar::Graph: %zu addVariable + setTileMapping in %.3f s (%.3f us per variable)\n",
                numVariables, elapsed, elapsed / numVariables * 1e6);
  }
  return 0;
}
