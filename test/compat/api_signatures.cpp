// Copyright (c) Aspen contributors.
// Issue 26 item 3: signatures real programs use — Graph::cloneN with an element type, a
// default-constructed Executable assigned later, the older single-program Sequence
// conversions, and the grouped popops::embedding::plan — written as the programs write them
// and checked against host results.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

Device modelDevice(unsigned tiles) {
  IPUModel model;
  model.tilesPerIPU = tiles;
  return model.createDevice();
}

} // namespace

TEST_CASE("Graph::cloneN(type, t, N): N copies of another element type, mapped like t",
          "[compat][signatures]") {
  Device device = modelDevice(4);
  Graph graph(device.getTarget());
  Tensor t = graph.addVariable(FLOAT, {2, 3}, "t");
  graph.setTileMapping(t.slice(0, 1, 0), 1);
  graph.setTileMapping(t.slice(1, 2, 0), 3);
  Tensor c = graph.cloneN(INT, t, 4, "copies");
  CHECK(c.elementType() == INT);
  CHECK(c.shape() == std::vector<std::size_t>{4, 2, 3});
  for (std::size_t n = 0; n < 4; ++n) {
    CHECK(graph.getTileMapping(c[n]) == graph.getTileMapping(t));
  }
  // The copies are distinct variables of their own.
  Tensor h = graph.cloneN(HALF, t, 2, {}, TensorCloneMethod::PRESERVE_ORDER_AND_ALIASES,
                          TensorCloneDuplicationMethod::DUPLICATE_BY_OUTER_DIMENSION);
  CHECK(h.elementType() == HALF);
  CHECK(h.shape() == std::vector<std::size_t>{2, 2, 3});
  CHECK_FALSE(c.intersectsWith(t));
  // The untyped form still keeps t's type.
  CHECK(graph.cloneN(t, 3).elementType() == FLOAT);

  graph.createHostWrite("c", c);
  graph.createHostRead("c", c);
  Sequence prog;
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<int> in(24), out(24);
  for (int i = 0; i < 24; ++i)
    in[i] = 7 * i - 50;
  engine.writeTensor("c", in.data(), in.data() + in.size());
  engine.run(0);
  engine.readTensor("c", out.data(), out.data() + out.size());
  CHECK(out == in);
}

TEST_CASE("Executable: declared empty, assigned from compileGraph, run by an Engine",
          "[compat][signatures]") {
  Device device = modelDevice(2);
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  poputil::mapTensorLinearly(graph, x);
  graph.createHostWrite("x", x);
  graph.createHostRead("x", x);
  Sequence prog;
  popops::addInPlace(graph, x, 1.5f, prog);

  Executable exe; // as programs declare it, before deciding how to get it
  CHECK_THROWS_AS(Engine(std::move(exe)), poplar_error);
  std::ostringstream nothing;
  CHECK_THROWS_AS(exe.serialize(nothing), poplar_error);
  exe = compileGraph(graph, {prog});
  Engine engine(std::move(exe));
  engine.load(device);
  std::vector<float> v{1.0f, 2.0f, -3.0f, 0.0f}, r(4);
  engine.writeTensor("x", v.data(), v.data() + 4);
  engine.run(0);
  engine.readTensor("x", r.data(), r.data() + 4);
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(r[i] == v[i] + 1.5f);
}

TEST_CASE("Sequence from one program: Sequence s = Repeat(...) and Sequence(prog)", "[compat][signatures]") {
  Device device = modelDevice(2);
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor x = graph.addVariable(FLOAT, {2}, "x");
  poputil::mapTensorLinearly(graph, x);
  graph.createHostWrite("x", x);
  graph.createHostRead("x", x);
  Sequence body;
  popops::mulInPlace(graph, x, 2.0f, body);

  Sequence repeated = Repeat(5, body); // x * 32
  Program asProgram = Repeat(2, body);
  Sequence wrapped(asProgram); // x * 4
  Sequence copy(repeated);     // a Sequence is copied, not wrapped
  std::vector<Program> progs{repeated, wrapped, copy, Sequence(Repeat(1, Sequence()))};
  Engine engine(graph, progs);
  engine.load(device);
  auto runOnce = [&](unsigned program) {
    std::vector<float> v{1.0f, -0.5f}, r(2);
    engine.writeTensor("x", v.data(), v.data() + 2);
    engine.run(program);
    engine.readTensor("x", r.data(), r.data() + 2);
    return r;
  };
  CHECK(runOnce(0) == std::vector<float>{32.0f, -16.0f});
  CHECK(runOnce(1) == std::vector<float>{4.0f, -2.0f});
  CHECK(runOnce(2) == std::vector<float>{32.0f, -16.0f});
  CHECK(runOnce(3) == std::vector<float>{1.0f, -0.5f});
}

TEST_CASE("popops::embedding::plan with a group size, for the grouped slices", "[compat][signatures]") {
  Device device = modelDevice(4);
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  const std::size_t groups = 3, entries = 5, width = 4, lookups = 2;
  const OptionFlags options{{"usedForUpdate", "false"}};
  const popops::SlicePlan plan =
      popops::embedding::plan(graph, FLOAT, groups, entries, width, {lookups}, options);
  CHECK(plan.isValid());
  const popops::SlicePlan ungrouped =
      popops::embedding::plan(graph, FLOAT, entries, width, {lookups}, options);
  CHECK(plan != ungrouped);
  CHECK(popops::embedding::plan(graph, FLOAT, 1, entries, width, {lookups}, options) == ungrouped);
  std::ostringstream text;
  text << plan;
  CHECK(text.str().find("groupSize=3") != std::string::npos);

  Tensor table = graph.addVariable(FLOAT, {groups, entries, width}, "table");
  poputil::mapTensorLinearly(graph, table);
  Tensor indices = graph.addVariable(UNSIGNED_INT, {groups, lookups, 1}, "indices");
  poputil::mapTensorLinearly(graph, indices);
  Sequence prog;
  Tensor rows = popops::groupedMultiSlice(graph, table, indices, {0}, {1}, prog, plan, options, "lookup");
  REQUIRE(rows.shape() == std::vector<std::size_t>{groups, lookups, 1, width});
  graph.createHostWrite("table", table);
  graph.createHostWrite("indices", indices);
  graph.createHostRead("rows", rows);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> host(groups * entries * width);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = 0.5f * float(i);
  const std::vector<unsigned> idx{4, 0, 2, 2, 1, 3};
  engine.writeTensor("table", host.data(), host.data() + host.size());
  engine.writeTensor("indices", idx.data(), idx.data() + idx.size());
  engine.run(0);
  std::vector<float> out(groups * lookups * width);
  engine.readTensor("rows", out.data(), out.data() + out.size());
  for (std::size_t g = 0; g < groups; ++g)
    for (std::size_t l = 0; l < lookups; ++l)
      for (std::size_t w = 0; w < width; ++w)
        CHECK(out[(g * lookups + l) * width + w] == host[(g * entries + idx[g * lookups + l]) * width + w]);
}
