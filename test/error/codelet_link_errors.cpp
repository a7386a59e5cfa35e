// Copyright (c) Aspen contributors.
// Linking codelets into one image (issue 21, item 5): a symbol defined twice is an error
// naming both files, from popc and from Graph::addCodelets; a function no codelet of
// the graph defines is a link_error naming the library and the function when the
// Engine is made.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "CommandSupport.hpp"

#include "codelets/ContentHash.hpp"
#include "codelets/GpFile.hpp"
#include "codelets/VertexLibrary.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

using namespace poplar;

namespace {

using aspen::test::popc;

aspen::test::CommandResult popcRun(const std::string &args) {
  return aspen::test::runCommand(popc() + " " + args);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("link errors: a symbol defined twice names both files", "[error][codelets][link]") {
  aspen::test::TempDir dir;
  const std::string runtime = dir.path + "/runtime.gp", twice = dir.path + "/twice.gp",
                    stub = dir.path + "/stub.gp";
  REQUIRE(popcRun("-o " + runtime + " " + aspen::test::compatCodeletFile("LinkRuntime.cpp")).status == 0);
  REQUIRE(popcRun("-o " + twice + " " + aspen::test::compatCodeletFile("LinkTwice.cpp")).status == 0);
  REQUIRE(popcRun("-o " + stub + " " + aspen::test::compatCodeletFile("LinkStub.cpp")).status == 0);

  SECTION("two sources of one popc call") {
    const auto r = popcRun("-o " + dir.path + "/x.gp " + aspen::test::compatCodeletFile("LinkRuntime.cpp") +
                           " " + aspen::test::compatCodeletFile("LinkTwice.cpp"));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(contains(r.output, "symbol 'rt_axpy(float, float, float)' is defined by both"));
    CHECK(contains(r.output, "LinkRuntime.cpp'"));
    CHECK(contains(r.output, "LinkTwice.cpp'"));
  }
  SECTION("two .gp files popc links") {
    const auto r = popcRun("-o " + dir.path + "/x.gp " + runtime + " " + twice);
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK(contains(r.output, "symbol 'rt_axpy(float, float, float)' is defined by both"));
    CHECK(contains(r.output, "runtime.gp(LinkRuntime.cpp)"));
    CHECK(contains(r.output, "twice.gp(LinkTwice.cpp)"));
  }
  SECTION("libraries added to one graph, linked when the stub needs them") {
    Graph graph(IPUModel("ipu2").createDevice().getTarget());
    REQUIRE(graph.addCodelets(runtime));
    REQUIRE(graph.addCodelets(twice)); // each stands alone: separate images so far
    try {
      graph.addCodelets(stub);
      FAIL("a symbol defined twice in the graph's image was accepted");
    } catch (const graph_object_creation_error &e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(contains(what, "symbol 'rt_axpy(float, float, float)' is defined by both"));
      CHECK(contains(what, "runtime.gp(LinkRuntime.cpp)"));
      CHECK(contains(what, "twice.gp(LinkTwice.cpp)"));
    }
  }
}

TEST_CASE("link errors: a function no codelet of the graph defines", "[error][codelets][link]") {
  aspen::test::TempDir dir;
  const std::string stub = dir.path + "/stub.gp";
  // popc leaves it to the linker, as Graphcore's popc makes an object of one source.
  REQUIRE(popcRun("-o " + stub + " " + aspen::test::compatCodeletFile("LinkStub.cpp")).status == 0);
  Device device = IPUModel("ipu2").createDevice();
  Graph graph(device.getTarget());
  REQUIRE(graph.addCodelets(stub));
  Tensor x = graph.addVariable(FLOAT, {4}, "x"), raw = graph.addVariable(INT, {4}, "raw");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(raw, 0);
  ComputeSet cs = graph.addComputeSet("cs");
  VertexRef v = graph.addVertex(cs, "Axpy", {{"x", x}, {"y", x}, {"raw", raw}, {"clamped", raw}});
  graph.setInitialValue(v["a"], 1.0f);
  graph.setTileMapping(v, 0);
  try {
    Engine engine(graph, program::Execute(cs));
    FAIL("an Engine was made of codelets that call undefined functions");
  } catch (const link_error &e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(contains(what, "'" + stub + "'"));
    CHECK(contains(what, "'rt_axpy(float, float, float)'"));
    CHECK(contains(what, "'rt_clamp'"));
    CHECK(contains(what, "'rt_calls'"));
  }
  // Its shared object has stubs for the three: the loader never runs it either.
  const auto bytes = aspen::codelets::readBinaryFile(stub);
  try {
    aspen::codelets::loadVertexLibrary(aspen::codelets::contentHash(bytes.data(), bytes.size()), bytes,
                                       "stub.gp");
    FAIL("a library with undefined symbols was loaded to run");
  } catch (const graph_object_load_error &e) {
    INFO(e.what());
    CHECK(contains(e.what(), "'stub.gp'"));
    CHECK(contains(e.what(), "3 symbols no linked library defined"));
  }
}
