// Copyright (c) Aspen contributors.
// popops dynamic slicing (DynamicSlice.hpp) against host loops: dynamicSlice and
// dynamicUpdate in one and two dimensions (offsets wrap), multiSlice, multiUpdate,
// multiUpdateAdd and multiUpdateMax on tensors from createSliceableTensor, float and half.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popops/DynamicSlice.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

using namespace poplar;
using aspen::test::inputs;
using aspen::test::requireClose;
using aspen::test::TestDevice;

TEST_CASE("popops::dynamicSlice and dynamicUpdate", "[popops][slice]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t R = 10, C = 12;
      const auto t = inputs(R * C, -5.0f, 5.0f, 61), u = inputs(3 * 4, -5.0f, 5.0f, 62);
      Tensor T = graph.addVariable(type, {R, C}, "T");
      poputil::mapTensorLinearly(graph, T);
      Tensor U = graph.addVariable(type, {3, 4}, "U");
      poputil::mapTensorLinearly(graph, U);
      Tensor off1 = graph.addVariable(UNSIGNED_INT, {1}, "off1");
      Tensor off2 = graph.addVariable(UNSIGNED_INT, {2}, "off2");
      graph.setTileMapping(off1, 0);
      graph.setTileMapping(off2, 1);
      program::Sequence prog;
      Tensor rows = popops::dynamicSlice(graph, T, off1, {0}, {3}, prog);        // rows 8, 9, 0 (wraps)
      Tensor block = popops::dynamicSlice(graph, T, off2, {0, 1}, {3, 4}, prog); // rows 2..4, cols 5..8
      Tensor T2 = graph.clone(T, "T2");
      prog.add(program::Copy(T, T2));
      popops::dynamicUpdate(graph, T2, U, off2, {0, 1}, {3, 4}, prog);
      std::vector<float> gotRows, gotBlock, gotUpdated;
      dev.write(graph, T, t);
      dev.write(graph, U, u);
      dev.write(graph, off1, std::vector<unsigned>{8});
      dev.write(graph, off2, std::vector<unsigned>{2, 5});
      dev.read(graph, rows, gotRows);
      dev.read(graph, block, gotBlock);
      dev.read(graph, T2, gotUpdated);
      dev.run(graph, prog);
      std::vector<float> wRows, wBlock, wUpdated = t;
      for (std::size_t r : {8, 9, 0})
        for (std::size_t c = 0; c < C; ++c)
          wRows.push_back(t[r * C + c]);
      for (std::size_t r = 2; r < 5; ++r)
        for (std::size_t c = 5; c < 9; ++c) {
          wBlock.push_back(t[r * C + c]);
          wUpdated[r * C + c] = u[(r - 2) * 4 + (c - 5)];
        }
      requireClose(gotRows, wRows, 0, 0, "dynamicSlice rows (wrapping)");
      requireClose(gotBlock, wBlock, 0, 0, "dynamicSlice 2-D block");
      requireClose(gotUpdated, wUpdated, 0, 0, "dynamicUpdate 2-D block");
    });
  }
}

TEST_CASE("popops multiSlice, multiUpdate, multiUpdateAdd and multiUpdateMax", "[popops][slice]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t entries = 20, width = 24, lookups = 6;
      const auto plan = popops::embedding::plan(graph, type, entries, width, {lookups}, {});
      Tensor table =
          popops::createSliceableTensor(graph, type, {entries, width}, {0}, {1}, plan, {}, "table");
      Tensor table2 = popops::createSliceableTensor(graph, type, {entries, width}, {0}, {1}, 0, "table2");
      Tensor table3 = graph.clone(table2, "table3");
      Tensor table4 = graph.clone(table2, "table4");
      Tensor idx = popops::createIndicesTensor(graph, {0}, lookups, plan, {}, "idx");
      Tensor upd =
          popops::createSliceTensor(graph, type, {entries, width}, {0}, {1}, lookups, plan, {}, "upd");
      Tensor scale = graph.addVariable(type, {}, "scale");
      graph.setTileMapping(scale, 0);
      REQUIRE(idx.shape() == std::vector<std::size_t>{lookups, 1});
      REQUIRE(upd.shape() == std::vector<std::size_t>{lookups, 1, width});
      program::Sequence prog;
      Tensor sliced = popops::multiSlice(graph, table, idx, {0}, {1}, prog, plan, {});
      REQUIRE(sliced.shape() == std::vector<std::size_t>{lookups, 1, width});
      popops::multiUpdate(graph, table2, upd, idx, {0}, {1}, prog, plan, {});
      popops::multiUpdateAdd(graph, table3, upd, idx, scale, {0}, {1}, prog, plan, {});
      popops::multiUpdateMax(graph, table4, upd, idx, {0}, {1}, prog, plan, {});
      const auto t = inputs(entries * width, -2.0f, 2.0f, 71), u = inputs(lookups * width, -2.0f, 2.0f, 72);
      // Index 3 twice (accumulates for multiUpdateAdd), 25 out of range (zeros / ignored).
      const std::vector<unsigned> offsets{3, 0, 19, 3, 25, 7};
      std::vector<float> gotSliced, got2, got3, got4;
      for (Tensor *tt : {&table, &table2, &table3, &table4})
        dev.write(graph, *tt, t);
      dev.write(graph, upd, u);
      dev.write(graph, idx, offsets);
      dev.write(graph, scale, std::vector<float>{0.5f});
      dev.read(graph, sliced, gotSliced);
      dev.read(graph, table2, got2);
      dev.read(graph, table3, got3);
      dev.read(graph, table4, got4);
      dev.run(graph, prog);
      auto r = [&](float x) { return type == HALF ? aspen::test::roundToHalf(dev.getTarget(), x) : x; };
      std::vector<float> wSliced, w2 = t, w3 = t, w4 = t;
      for (std::size_t i = 0; i < lookups; ++i)
        for (std::size_t c = 0; c < width; ++c) {
          const unsigned o = offsets[i];
          wSliced.push_back(o < entries ? t[o * width + c] : 0.0f);
          if (o >= entries)
            continue;
          w2[o * width + c] = u[i * width + c];
          w3[o * width + c] = r(w3[o * width + c] + 0.5f * u[i * width + c]);
          w4[o * width + c] = std::max(w4[o * width + c], u[i * width + c]);
        }
      const double tol = type == HALF ? 2e-3 : 1e-6;
      requireClose(gotSliced, wSliced, 0, 0, "multiSlice");
      requireClose(got2, w2, 0, 0, "multiUpdate");
      requireClose(got3, w3, tol, tol, "multiUpdateAdd");
      requireClose(got4, w4, 0, 0, "multiUpdateMax");
    });
  }
}
