// Copyright (c) Aspen contributors.
// Programs the runtime must reject, one case per user-facing error, each with
// the message naming what is at fault.
#include "../runtime/RuntimeTestSupport.hpp"

#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <vector>

using namespace poplar;
using namespace poplar::program;
using Catch::Contains;
using runtime_test::TestGraph;

namespace {

/// x (8 floats on tile 1) with host handles "x-in"/"x-out"; program 0 adds one.
struct AddOneGraph : TestGraph {
  AddOneGraph() {
    x = graph.addVariable(FLOAT, {8}, "x");
    graph.setTileMapping(x, 1);
    add = graph.addComputeSet("addOne");
    graph.setTileMapping(graph.addVertex(add, "AddOne", {{"data", x}}), 1);
    graph.createHostWrite("x-in", x);
    graph.createHostRead("x-out", x);
  }
  Tensor x;
  ComputeSet add;
};

} // namespace

TEST_CASE("run before load", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Execute(t.add));
  REQUIRE_THROWS_AS(engine.run(0), system_runtime_error);
  REQUIRE_THROWS_WITH(engine.run(0), Contains("before Engine::load"));
}

TEST_CASE("program index out of range", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, {Execute(t.add), Sequence()});
  engine.load(t.device);
  REQUIRE_THROWS_AS(engine.run(2), index_error);
  REQUIRE_THROWS_WITH(engine.run(2), Contains("Program index 2") && Contains("2 programs"));
}

TEST_CASE("unknown handle in writeTensor", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Execute(t.add));
  engine.load(t.device);
  std::vector<float> buf(8);
  REQUIRE_THROWS_AS(engine.writeTensor("nope", buf.data(), buf.data() + 8), poplar_error);
  REQUIRE_THROWS_WITH(engine.writeTensor("nope", buf.data(), buf.data() + 8), Contains("'nope'"));
  // A read handle is not a write handle.
  REQUIRE_THROWS_WITH(engine.writeTensor("x-out", buf.data(), buf.data() + 8),
                      Contains("'x-out'") && Contains("read handle"));
}

TEST_CASE("unknown handle in readTensor", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Execute(t.add));
  engine.load(t.device);
  std::vector<float> buf(8);
  REQUIRE_THROWS_AS(engine.readTensor("missing", buf.data(), buf.data() + 8), poplar_error);
  REQUIRE_THROWS_WITH(engine.readTensor("missing", buf.data(), buf.data() + 8), Contains("'missing'"));
}

TEST_CASE("unknown handle in connectStream", "[error][runtime]") {
  AddOneGraph t;
  DataStream in = t.graph.addHostToDeviceFIFO("in", FLOAT, 8);
  Engine engine(t.graph, Copy(in, t.x));
  std::vector<float> buf(8);
  REQUIRE_THROWS_AS(engine.connectStream("inn", buf.data()), stream_connection_error);
  REQUIRE_THROWS_WITH(engine.connectStream("inn", buf.data()), Contains("'inn'"));
  REQUIRE_THROWS_WITH(engine.connectStreamToCallback("inn", [](void *) {}), Contains("'inn'"));
}

TEST_CASE("a stream used but never connected", "[error][runtime]") {
  AddOneGraph t;
  DataStream in = t.graph.addHostToDeviceFIFO("weights-in", FLOAT, 8);
  Engine engine(t.graph, Sequence({Copy(in, t.x), Execute(t.add)}));
  engine.load(t.device);
  REQUIRE_THROWS_AS(engine.run(0), stream_connection_error);
  REQUIRE_THROWS_WITH(engine.run(0), Contains("'weights-in'") && Contains("never connected"));
}

TEST_CASE("writeTensor with the wrong byte count", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Execute(t.add));
  engine.load(t.device);
  std::vector<float> buf(7);
  REQUIRE_THROWS_AS(engine.writeTensor("x-in", buf.data(), buf.data() + buf.size()), poplar_error);
  REQUIRE_THROWS_WITH(engine.writeTensor("x-in", buf.data(), buf.data() + buf.size()),
                      Contains("'x-in'") && Contains("28 bytes") && Contains("32 bytes"));
}

TEST_CASE("readTensor with the wrong byte count", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Execute(t.add));
  engine.load(t.device);
  std::vector<double> buf(8);
  REQUIRE_THROWS_AS(engine.readTensor("x-out", buf.data(), buf.data() + buf.size()), poplar_error);
  REQUIRE_THROWS_WITH(engine.readTensor("x-out", buf.data(), buf.data() + buf.size()),
                      Contains("'x-out'") && Contains("64 bytes") && Contains("32 bytes"));
}

TEST_CASE("a vertex whose compute() returns false", "[error][runtime]") {
  TestGraph t;
  Tensor v = t.graph.addConstant<int>(INT, {2}, {3, -1}, "values");
  ComputeSet check = t.graph.addComputeSet("checkValues");
  t.graph.setTileMapping(v[0], 0);
  t.graph.setTileMapping(v[1], 2);
  t.graph.setTileMapping(t.graph.addVertex(check, "CheckNonNegative", {{"x", v[0]}}), 0);
  VertexRef bad = t.graph.addVertex(check, "CheckNonNegative", {{"x", v[1]}});
  t.graph.setTileMapping(bad, 2);
  Engine engine(t.graph, Execute(check));
  engine.load(t.device);
  REQUIRE_THROWS_AS(engine.run(0), application_runtime_error);
  REQUIRE_THROWS_WITH(engine.run(0), Contains("CheckNonNegative") && Contains("'checkValues'") &&
                                         Contains("Vertex " + std::to_string(bad.getId())) &&
                                         Contains("tile 2"));
}

TEST_CASE("Abort with its message", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Sequence({Execute(t.add), Abort("stopped on purpose")}));
  engine.load(t.device);
  REQUIRE_THROWS_AS(engine.run(0), application_runtime_error);
  REQUIRE_THROWS_WITH(engine.run(0), Contains("stopped on purpose"));
}

TEST_CASE("AbortOnCondition with its message", "[error][runtime]") {
  AddOneGraph t;
  Tensor flag = t.graph.addVariable(BOOL, {}, "flag");
  t.graph.setTileMapping(flag, 0);
  t.graph.createHostWrite("flag", flag);
  Engine engine(t.graph, AbortOnCondition(flag, "flag is raised"));
  engine.load(t.device);
  bool raised = false;
  engine.writeTensor("flag", &raised, &raised + 1);
  engine.run(0); // no abort while the flag is clear
  raised = true;
  engine.writeTensor("flag", &raised, &raised + 1);
  REQUIRE_THROWS_AS(engine.run(0), application_runtime_error);
  REQUIRE_THROWS_WITH(engine.run(0), Contains("flag is raised"));
}

TEST_CASE("running an executable compiled with debug.allowOutOfMemory that does not fit",
          "[error][runtime]") {
  TestGraph t(4, 16384);
  Tensor big = t.graph.addVariable(FLOAT, {8192}, "big"); // 32 KiB on one 16 KiB tile
  t.graph.setTileMapping(big, 0);
  ComputeSet add = t.graph.addComputeSet("addOne");
  t.graph.setTileMapping(t.graph.addVertex(add, "AddOne", {{"data", big}}), 0);
  Engine engine(t.graph, Execute(add), {{"debug.allowOutOfMemory", "true"}});
  std::ostringstream summary;
  engine.printProfileSummary(summary);
  REQUIRE(summary.str().find("1 tile(s) out of memory") != std::string::npos);
  REQUIRE_THROWS_AS(engine.load(t.device), graph_memory_allocation_error);
  REQUIRE_THROWS_WITH(engine.load(t.device), Contains("debug.allowOutOfMemory"));
}

TEST_CASE("a device whose target does not match the executable", "[error][runtime]") {
  AddOneGraph t;
  Engine engine(t.graph, Execute(t.add));
  Device other = runtime_test::makeDevice(8);
  REQUIRE_THROWS_AS(engine.load(other), system_runtime_error);
  REQUIRE_THROWS_WITH(engine.load(other), Contains("1 IPU x 4 tiles") && Contains("1 IPU x 8 tiles"));
}

TEST_CASE("an unknown engine option", "[error][runtime]") {
  AddOneGraph t;
  REQUIRE_THROWS_AS(Engine(t.graph, Execute(t.add), {{"debug.nonsense", "true"}}), invalid_option);
  REQUIRE_THROWS_WITH(Engine(t.graph, Execute(t.add), {{"debug.nonsense", "true"}}),
                      Contains("'debug.nonsense'"));
  REQUIRE_THROWS_WITH(Engine(t.graph, Execute(t.add), {{"debug.instrument", "maybe"}}),
                      Contains("'debug.instrument'") && Contains("maybe"));
}
