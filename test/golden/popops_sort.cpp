// Copyright (c) Aspen contributors.
// popops::sort / sortKeyValue (Sort.hpp) and topK / topKWithPermutation / topKKeyValue
// (TopK.hpp) against std::stable_sort on the host.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

using namespace poplar;
using aspen::test::inputs;
using aspen::test::requireClose;
using aspen::test::TestDevice;

TEST_CASE("popops::sort and sortKeyValue", "[popops][sort]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t rows = 9, cols = 40;
      const auto keys = inputs(rows * cols, -8.0f, 8.0f, 81);
      std::vector<int> values(rows * cols);
      std::iota(values.begin(), values.end(), 0);
      Tensor K = graph.addVariable(type, {rows, cols}, "K");
      Tensor V = graph.addVariable(INT, {rows, cols}, "V");
      poputil::mapTensorLinearly(graph, K);
      poputil::mapTensorLinearly(graph, V);
      program::Sequence prog;
      Tensor sortedRows = popops::sort(graph, K, 1, prog);
      Tensor sortedCols = popops::sort(graph, K, 0, prog);
      Tensor permuted = popops::sortKeyValue(graph, K, V, 1, prog);
      std::vector<float> gotRows, gotCols;
      std::vector<int> gotPermuted;
      dev.write(graph, K, keys);
      dev.write(graph, V, values);
      dev.read(graph, sortedRows, gotRows);
      dev.read(graph, sortedCols, gotCols);
      dev.read(graph, permuted, gotPermuted);
      dev.run(graph, prog);
      std::vector<float> wRows = keys, wCols(rows * cols);
      std::vector<int> wPermuted(rows * cols);
      for (std::size_t r = 0; r < rows; ++r) {
        std::sort(wRows.begin() + r * cols, wRows.begin() + (r + 1) * cols);
        std::vector<int> order(cols);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return keys[r * cols + a] < keys[r * cols + b]; });
        for (std::size_t c = 0; c < cols; ++c)
          wPermuted[r * cols + c] = values[r * cols + order[c]];
      }
      for (std::size_t c = 0; c < cols; ++c) {
        std::vector<float> col(rows);
        for (std::size_t r = 0; r < rows; ++r)
          col[r] = keys[r * cols + c];
        std::sort(col.begin(), col.end());
        for (std::size_t r = 0; r < rows; ++r)
          wCols[r * cols + c] = col[r];
      }
      requireClose(gotRows, wRows, 0, 0, "sort along rows");
      requireClose(gotCols, wCols, 0, 0, "sort along columns");
      REQUIRE(gotPermuted == wPermuted);
    });
  }
}

TEST_CASE("popops::topK and its key-value and permutation forms", "[popops][topk]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t rows = 7, n = 50;
      const unsigned k = 5;
      auto x = inputs(rows * n, -3.0f, 3.0f, 91);
      x[3] = x[10]; // a tie in row 0
      std::vector<float> values = inputs(rows * n, 0.0f, 10.0f, 92);
      const popops::TopKParams largest(k, true, popops::SortOrder::DESCENDING);
      const popops::TopKParams smallestAsc(k, false, popops::SortOrder::ASCENDING);
      Tensor X = popops::createTopKInput(graph, type, {rows, n}, largest, "X");
      Tensor Vals = graph.addVariable(FLOAT, {rows, n}, "Vals");
      poputil::mapTensorLinearly(graph, Vals);
      program::Sequence prog;
      Tensor top = popops::topK(graph, prog, X, largest);
      auto withPerm = popops::topKWithPermutation(graph, prog, X, smallestAsc);
      auto kv = popops::topKKeyValue(graph, prog, X, Vals, largest);
      REQUIRE(top.shape() == std::vector<std::size_t>{rows, k});
      REQUIRE(withPerm.second.elementType() == UNSIGNED_INT);
      std::vector<float> gotTop, gotSmall, gotKvKeys, gotKvValues;
      std::vector<unsigned> gotIdx;
      dev.write(graph, X, x);
      dev.write(graph, Vals, values);
      dev.read(graph, top, gotTop);
      dev.read(graph, withPerm.first, gotSmall);
      dev.read(graph, withPerm.second, gotIdx);
      dev.read(graph, kv.first, gotKvKeys);
      dev.read(graph, kv.second, gotKvValues);
      dev.run(graph, prog);
      std::vector<float> wTop, wSmall, wKvValues;
      std::vector<unsigned> wIdx;
      for (std::size_t r = 0; r < rows; ++r) {
        std::vector<unsigned> order(n);
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin(), order.end(),
                         [&](unsigned a, unsigned b) { return x[r * n + a] > x[r * n + b]; });
        for (unsigned j = 0; j < k; ++j) {
          wTop.push_back(x[r * n + order[j]]);
          wKvValues.push_back(values[r * n + order[j]]);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](unsigned a, unsigned b) { return x[r * n + a] < x[r * n + b]; });
        for (unsigned j = 0; j < k; ++j) {
          wSmall.push_back(x[r * n + order[j]]);
          wIdx.push_back(order[j]);
        }
      }
      requireClose(gotTop, wTop, 0, 0, "topK largest descending");
      requireClose(gotSmall, wSmall, 0, 0, "topK smallest ascending");
      REQUIRE(gotIdx == wIdx);
      requireClose(gotKvKeys, wTop, 0, 0, "topKKeyValue keys");
      requireClose(gotKvValues, wKvValues, 0, 0, "topKKeyValue values");
    });
  }
}
