// Copyright (c) Aspen contributors.
// A perf estimator reading a 2-D vertex field's initial values as PopLibs' sort estimators do:
// getInitialValues<std::vector<unsigned short>> on a Vector<Input<Vector<unsigned short,
// ONE_PTR>>> whose rows are constants. It must see one vector per row (the field's size(),
// not the first row's length) holding that row's values, the same as field[i]'s values and
// getSizeAtIndex(i); before the fix the rows came back as raw bytes copied over std::vector
// objects and the estimator ran off their ends. The vertex also runs, against a host loop.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/VertexIntrospector.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace poplar;

namespace {

std::string vertexSource() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/vertices/worklist_vertices.cpp";
}

// Per worker: { pairs-1, (first, distance) x pairs }; the workers' elements are disjoint.
const std::vector<std::vector<unsigned short>> kRows = {
    {1, 0, 4, 1, 4},
    {0, 2, 4},
    {2, 3, 4, 8, 1, 10, 1},
};

// What the estimator saw, checked after compilation.
struct Seen {
  unsigned calls = 0;
  std::size_t outer = 0;
  std::vector<std::vector<unsigned short>> rows;    // getInitialValues<std::vector<...>>
  std::vector<std::vector<unsigned short>> indexed; // field[i].getInitialValues<...>
  std::vector<std::size_t> sizeAt, indexedSize;     // getSizeAtIndex(i), field[i].size()
  unsigned flip = 99;
  bool walkInRange = true;
};

VertexPerfEstimate estimate(const VertexIntrospector &vi, const Target &target, Seen &seen) {
  ++seen.calls;
  const FieldData work = vi.getFieldInfo("work");
  seen.outer = work.size();
  seen.rows = work.getInitialValues<std::vector<unsigned short>>(target);
  seen.indexed.clear();
  seen.sizeAt.clear();
  seen.indexedSize.clear();
  for (std::size_t i = 0; i < work.size(); ++i) {
    seen.indexed.push_back(work[i].getInitialValues<unsigned short>(target));
    seen.sizeAt.push_back(work.getSizeAtIndex(i));
    seen.indexedSize.push_back(work[i].size());
  }
  seen.flip = vi.getFieldInfo("flip").getInitialValue<unsigned>(target);
  // Walk each row as a worklist, with iterators, as a sorting estimator does.
  std::uint64_t worst = 0;
  for (const auto &row : seen.rows) {
    auto it = row.cbegin();
    if (it == row.cend()) {
      seen.walkInRange = false;
      continue;
    }
    const unsigned pairs = unsigned(*it++) + 1;
    std::uint64_t cycles = 0;
    for (unsigned p = 0; p < pairs; ++p) {
      if (row.cend() - it < 2) {
        seen.walkInRange = false;
        break;
      }
      const unsigned distance = *(it + 1);
      it += 2;
      cycles += 10 + distance;
    }
    worst = std::max(worst, cycles);
  }
  return VertexPerfEstimate(20 + worst * target.getNumWorkerContexts(), 0);
}

} // namespace

TEST_CASE("A perf estimator reads a 2-D worklist field's rows as Poplar gives them", "[compat][introspect]") {
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(vertexSource());
  Seen seen;
  graph.registerPerfEstimator("PairSwapKeyVal", [&seen](const VertexIntrospector &vi, const Target &t) {
    return estimate(vi, t, seen);
  });

  const std::size_t n = 12;
  Tensor keys = graph.addVariable(FLOAT, {n}, "keys");
  Tensor values = graph.addVariable(UNSIGNED_INT, {n}, "values");
  graph.setTileMapping(keys, 1);
  graph.setTileMapping(values, 1);
  ComputeSet cs = graph.addComputeSet("swap");
  VertexRef v = graph.addVertex(cs, "PairSwapKeyVal", {{"keys", keys}, {"values", values}});
  graph.setTileMapping(v, 1);
  graph.setInitialValue(v["flip"], 0u);
  graph.setFieldSize(v["work"], kRows.size());
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    Tensor c = graph.addConstant(UNSIGNED_SHORT, {kRows[i].size()}, kRows[i].data(), "work");
    graph.setTileMapping(c, 1);
    graph.connect(v["work"][i], c);
  }
  graph.createHostWrite("keys", keys);
  graph.createHostWrite("values", values);
  graph.createHostRead("keys", keys);
  graph.createHostRead("values", values);

  Engine engine(graph, program::Execute(cs));
  REQUIRE(seen.calls >= 1);
  CHECK(seen.outer == kRows.size());
  CHECK(seen.rows == kRows);
  CHECK(seen.indexed == kRows);
  for (std::size_t i = 0; i < kRows.size(); ++i) {
    CHECK(seen.sizeAt[i] == kRows[i].size());
    CHECK(seen.indexedSize[i] == kRows[i].size());
  }
  CHECK(seen.flip == 0u);
  CHECK(seen.walkInRange);

  engine.load(device);
  std::vector<float> k = {5, 3, 9, 1, 2, 8, 4, 7, 6, 0, -1, -2};
  std::vector<unsigned> val(n);
  for (unsigned i = 0; i < n; ++i)
    val[i] = 100 + i;
  engine.writeTensor("keys", k.data(), k.data() + n);
  engine.writeTensor("values", val.data(), val.data() + n);
  engine.run(0);
  // Host reference: each row's pairs in order.
  for (const auto &row : kRows)
    for (unsigned p = 0; p < unsigned(row[0]) + 1; ++p) {
      const unsigned a = row[1 + 2 * p], b = a + row[2 + 2 * p];
      if (k[b] < k[a]) {
        std::swap(k[a], k[b]);
        std::swap(val[a], val[b]);
      }
    }
  std::vector<float> gotK(n);
  std::vector<unsigned> gotV(n);
  engine.readTensor("keys", gotK.data(), gotK.data() + n);
  engine.readTensor("values", gotV.data(), gotV.data() + n);
  CHECK(gotK == k);
  CHECK(gotV == val);
}

TEST_CASE("Initial values of a VectorList's rows and of a list of scalar edges", "[compat][introspect]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  graph.addCodelets(vertexSource());
  const Target &target = graph.getTarget();
  ComputeSet cs = graph.addComputeSet("count");
  Tensor total = graph.addVariable(UNSIGNED_INT, {}, "total");
  graph.setTileMapping(total, 0);
  VertexRef v = graph.addVertex(cs, "PairListCount", {{"total", total}});
  graph.setTileMapping(v, 0);
  std::vector<Tensor> rows;
  for (const auto &row : kRows) {
    rows.push_back(graph.addConstant(UNSIGNED_SHORT, {row.size()}, row.data(), "row"));
    graph.setTileMapping(rows.back(), 0);
  }
  graph.connect(v["work"], rows);
  const std::vector<unsigned> limits = {7, 11, 13, 17};
  graph.setFieldSize(v["limits"], limits.size());
  for (std::size_t i = 0; i < limits.size(); ++i)
    graph.connect(v["limits"][i], limits[i]);

  const VertexIntrospector vi(&graph.getImpl(), v.getId());
  const FieldData work = vi.getFieldInfo("work");
  CHECK(work.size() == kRows.size());
  CHECK(work.getInitialValues<std::vector<unsigned short>>(target) == kRows);
  for (std::size_t i = 0; i < kRows.size(); ++i)
    CHECK(work.getSizeAtIndex(i) == kRows[i].size());
  // Vector<Input<unsigned>>: one value per edge, and each edge's own.
  const FieldData lim = vi.getFieldInfo("limits");
  CHECK(lim.size() == limits.size());
  CHECK(lim.getInitialValues<unsigned>(target) == limits);
  for (std::size_t i = 0; i < limits.size(); ++i)
    CHECK(lim[i].getInitialValue<unsigned>(target) == limits[i]);
}
