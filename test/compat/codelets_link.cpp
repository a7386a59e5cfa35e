// Copyright (c) Aspen contributors.
// Issue 21, item 5: one image per graph, as the IPU linker makes it. A runtime library
// and a stub library calling into it (test/compat/codelets/LinkRuntime.cpp,
// LinkStub.cpp), built as a Makefile builds them (one popc call each, then popc linking
// the .gp files), given to one popc call, or added to one graph one by one, as .gp files
// or sources: the calls resolve, the runtime's variable is each tile's own, and the
// results match a host loop on the IPUModel and on a DeviceManager IPU device.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include "CodeletHarness.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

using namespace poplar;

namespace {

using aspen::test::codelets::DeviceKind;
using aspen::test::codelets::popcOk;

/// Tiles 0 and 1 run Axpy twice (y = a * x + y, clamp), then every tile of 0..2 reads
/// how often its vertices called into the runtime.
void runAndCheck(Graph &graph, Device &device) {
  constexpr unsigned n = 6, tiles = 2;
  const float a = 2.5f;
  Tensor x = graph.addVariable(FLOAT, {tiles, n}, "x");
  Tensor y = graph.addVariable(FLOAT, {tiles, n}, "y");
  Tensor raw = graph.addVariable(INT, {tiles, n}, "raw");
  Tensor clamped = graph.addVariable(INT, {tiles, n}, "clamped");
  Tensor calls = graph.addVariable(UNSIGNED_INT, {3, 1}, "calls");
  ComputeSet axpy = graph.addComputeSet("axpy"), count = graph.addComputeSet("count");
  for (unsigned t = 0; t < tiles; ++t) {
    for (const Tensor &v : {x, y, raw, clamped})
      graph.setTileMapping(v[t], t);
    VertexRef v =
        graph.addVertex(axpy, "Axpy", {{"x", x[t]}, {"y", y[t]}, {"raw", raw[t]}, {"clamped", clamped[t]}});
    graph.setInitialValue(v["a"], a);
    graph.setTileMapping(v, t);
  }
  for (unsigned t = 0; t < 3; ++t) {
    graph.setTileMapping(calls[t], t);
    VertexRef v = graph.addVertex(count, "RuntimeCalls", {{"calls", calls[t]}});
    graph.setTileMapping(v, t);
  }
  for (const char *name : {"x", "y", "raw"})
    graph.createHostWrite(name, name == std::string("x") ? x : name == std::string("y") ? y : raw);
  graph.createHostRead("y", y);
  graph.createHostRead("clamped", clamped);
  graph.createHostRead("calls", calls);
  program::Sequence prog({program::Execute(axpy), program::Execute(axpy), program::Execute(count)});
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<float> xs(tiles * n), ys(tiles * n);
  std::vector<int> raws(tiles * n);
  for (unsigned i = 0; i < tiles * n; ++i) {
    xs[i] = static_cast<float>(i) - 4.0f;
    ys[i] = 0.5f * static_cast<float>(i);
    raws[i] = static_cast<int>(i) * 3 - 10;
  }
  engine.writeTensor("x", xs.data(), xs.data() + xs.size());
  engine.writeTensor("y", ys.data(), ys.data() + ys.size());
  engine.writeTensor("raw", raws.data(), raws.data() + raws.size());
  engine.run(0);
  std::vector<float> yOut(tiles * n);
  std::vector<int> clampedOut(tiles * n);
  std::vector<unsigned> callsOut(3);
  engine.readTensor("y", yOut.data(), yOut.data() + yOut.size());
  engine.readTensor("clamped", clampedOut.data(), clampedOut.data() + clampedOut.size());
  engine.readTensor("calls", callsOut.data(), callsOut.data() + callsOut.size());
  for (unsigned i = 0; i < tiles * n; ++i) {
    float expected = ys[i];
    for (int run = 0; run < 2; ++run)
      expected = a * xs[i] + expected; // exact: small multiples of 0.5
    CHECK(yOut[i] == expected);
    CHECK(clampedOut[i] == std::min(5, std::max(-3, raws[i])));
  }
  // The runtime's variable is each tile's own: two calls on tiles 0 and 1, none on 2.
  CHECK(callsOut == std::vector<unsigned>{2, 2, 0});
}

void onBothDevices(const std::function<void(Graph &)> &addCodelets) {
  aspen::test::codelets::onBothDevices(
      addCodelets, [](Graph &graph, Device &device, DeviceKind) { runAndCheck(graph, device); });
}

} // namespace

TEST_CASE("link: a stub .gp calls into a runtime .gp, however they meet", "[compat][codelets][link]") {
  aspen::test::TempDir dir;
  const std::string runtime = dir.path + "/runtime.gp", stub = dir.path + "/stub.gp";
  // As a Makefile: one popc call per source, then one linking the .gp files.
  popcOk("-O2 -o " + runtime + " " + aspen::test::compatCodeletFile("LinkRuntime.cpp"));
  popcOk("-O2 -o " + stub + " " + aspen::test::compatCodeletFile("LinkStub.cpp"));
  popcOk("-o " + dir.path + "/app.gp " + stub + " " + runtime);
  popcOk("-O2 -o " + dir.path + "/both.gp " + aspen::test::compatCodeletFile("LinkStub.cpp") + " " +
         aspen::test::compatCodeletFile("LinkRuntime.cpp"));

  SECTION("popc linked the .gp files") {
    onBothDevices([&](Graph &g) { REQUIRE(g.addCodelets(dir.path + "/app.gp")); });
  }
  SECTION("both sources in one popc call") {
    onBothDevices([&](Graph &g) { REQUIRE(g.addCodelets(dir.path + "/both.gp")); });
  }
  SECTION("the .gp files added to one graph, the stub first") {
    onBothDevices([&](Graph &g) {
      REQUIRE(g.addCodelets(stub));
      REQUIRE(g.addCodelets(runtime));
      REQUIRE_FALSE(g.addCodelets(stub)); // already in the graph's image
    });
  }
  SECTION("the sources added to one graph by addCodelets") {
    onBothDevices([&](Graph &g) {
      REQUIRE(g.addCodelets(aspen::test::compatCodeletFile("LinkRuntime.cpp"), CodeletFileType::Auto, "-O2"));
      REQUIRE(g.addCodelets(aspen::test::compatCodeletFile("LinkStub.cpp"), CodeletFileType::Auto, "-O2"));
    });
  }
}
