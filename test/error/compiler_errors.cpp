// Copyright (c) Aspen contributors.
// Graphs the compiler must reject: one case per validation rule, each message
// checked for naming the vertex (id and type), field, tensor and compute set;
// out-of-memory reports; bad compile options.
#include "../unit/compiler/TestGraph.hpp"

#include "Compiler.hpp"
#include "poplar/exceptions.hpp"

#include <catch2/catch.hpp>

using namespace aspen;
using aspen::test::TestGraph;
using Catch::Contains;

namespace {

/// Compiles and returns the error's message; fails the test if the type differs.
template <class Error>
std::string compileError(const TestGraph &tg, std::vector<const ir::ProgramNode *> programs,
                         compiler::CompileOptions options = {}) {
  try {
    compiler::compile(*tg.g, programs, options);
  } catch (const Error &e) {
    return e.what();
  } catch (const std::exception &e) {
    FAIL("unexpected exception: " << e.what());
  }
  FAIL("the graph compiled");
  return {};
}

/// A graph with one vertex type "Op" (in, out: float vectors; n: unsigned state).
struct OneVertex {
  TestGraph tg{4};
  std::uint32_t type, cs;
  poplar::Tensor a, b;
  std::shared_ptr<ir::ProgramNode> prog;
  OneVertex() {
    a = tg.var(poplar::FLOAT, {8}, "alpha", {0});
    b = tg.var(poplar::FLOAT, {8}, "beta", {1});
    type = tg.vertexType("Op", {test::in("in"), test::out("out"), test::scalarIn("s"), test::state("n")});
    cs = tg.computeSet("myComputeSet");
    prog = TestGraph::exec(cs);
  }
};

} // namespace

TEST_CASE("an unconnected field names the vertex, field and compute set", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, 0, {{"in", t.a}, {"s", t.a[0]}});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op)"));
  CHECK_THAT(msg, Contains("compute set 'myComputeSet'"));
  CHECK_THAT(msg, Contains("field 'out': not connected"));
}

TEST_CASE("a field connected to a tensor of the wrong type names the tensor", "[compiler][error]") {
  OneVertex t;
  auto ints = t.tg.var(poplar::INT, {8}, "gamma", {1});
  t.tg.vertex(t.cs, t.type, 1, {{"in", ints}, {"out", t.b}, {"s", t.a[0]}});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op)"));
  CHECK_THAT(msg, Contains("field 'in'"));
  CHECK_THAT(msg, Contains("'gamma'"));
  CHECK_THAT(msg, Contains("float"));
  CHECK_THAT(msg, Contains("'myComputeSet'"));
}

TEST_CASE("a scalar edge connected to several elements names the size", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, 1, {{"in", t.a}, {"out", t.b}, {"s", t.a.slice(0, 3)}});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op)"));
  CHECK_THAT(msg, Contains("field 's'"));
  CHECK_THAT(msg, Contains("'alpha'"));
  CHECK_THAT(msg, Contains("3 elements"));
  CHECK_THAT(msg, Contains("'myComputeSet'"));
}

TEST_CASE("a 2-D field whose declared size differs from its connections", "[compiler][error]") {
  TestGraph tg(2);
  auto a = tg.var(poplar::FLOAT, {8}, "alpha", {0});
  const auto type = tg.vertexType("Lists", {test::inList("rows")});
  const auto cs = tg.computeSet("lists");
  const auto v = tg.vertex(cs, type, 0);
  tg.connectList(v, "rows", {a.slice(0, 4), a.slice(4, 8)});
  tg.fieldOf(v, "rows").declaredSize = 3;
  auto prog = TestGraph::exec(cs);
  const std::string msg = compileError<poplar::graph_connection_error>(tg, {prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Lists)"));
  CHECK_THAT(msg, Contains("field 'rows'"));
  CHECK_THAT(msg, Contains("size was set to 3 but 2 tensors are connected"));
  CHECK_THAT(msg, Contains("'lists'"));
}

TEST_CASE("an element of a 2-D field left unconnected", "[compiler][error]") {
  TestGraph tg(2);
  auto a = tg.var(poplar::FLOAT, {8}, "alpha", {0});
  const auto type = tg.vertexType("Lists", {test::inList("rows")});
  const auto cs = tg.computeSet("lists");
  const auto v = tg.vertex(cs, type, 0);
  tg.connectList(v, "rows", {a.slice(0, 4), poplar::Tensor()});
  auto prog = TestGraph::exec(cs);
  const std::string msg = compileError<poplar::graph_connection_error>(tg, {prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Lists)"));
  CHECK_THAT(msg, Contains("field 'rows[1]': not connected"));
  CHECK_THAT(msg, Contains("'lists'"));
}

TEST_CASE("two vertices of one compute set writing one element", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, 1, {{"in", t.a}, {"out", t.b}, {"s", t.a[0]}});
  t.tg.vertex(t.cs, t.type, 1, {{"in", t.a}, {"out", t.b.slice(4, 8)}, {"s", t.a[1]}});
  // Poplar's type for a write conflict inside a compute set.
  const std::string msg = compileError<poplar::graph_cycle_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op) field 'out'"));
  CHECK_THAT(msg, Contains("vertex 1 (Op) field 'out'"));
  CHECK_THAT(msg, Contains("both write element 4 of 'beta'"));
  CHECK_THAT(msg, Contains("'myComputeSet'"));
}

TEST_CASE("an output connected to a tensor that contains aliases", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, 1,
              {{"in", t.a}, {"out", poplar::concat(t.b.slice(0, 4), t.b.slice(0, 4))}, {"s", t.a[0]}});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op)"));
  CHECK_THAT(msg, Contains("field 'out'"));
  CHECK_THAT(msg, Contains("more than once"));
  CHECK_THAT(msg, Contains("'beta'"));
  CHECK_THAT(msg, Contains("'myComputeSet'"));
}

TEST_CASE("an output connected to a constant", "[compiler][error]") {
  OneVertex t;
  auto k = t.tg.var(poplar::FLOAT, {8}, "kappa", {0}, true);
  t.tg.setInitial(k, std::vector<float>(8, 1.0f));
  t.tg.vertex(t.cs, t.type, 0, {{"in", t.a}, {"out", k}, {"s", t.a[0]}});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op)"));
  CHECK_THAT(msg, Contains("field 'out'"));
  CHECK_THAT(msg, Contains("'kappa'"));
  CHECK_THAT(msg, Contains("constant"));
  CHECK_THAT(msg, Contains("'myComputeSet'"));
}

TEST_CASE("state given the wrong number of values", "[compiler][error]") {
  OneVertex t;
  const auto v = t.tg.vertex(t.cs, t.type, 1, {{"in", t.a}, {"out", t.b}, {"s", t.a[0]}});
  t.tg.setState(v, "n", std::vector<unsigned>{1, 2});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op)"));
  CHECK_THAT(msg, Contains("field 'n'"));
  CHECK_THAT(msg, Contains("2 values"));
  CHECK_THAT(msg, Contains("'myComputeSet'"));
}

TEST_CASE("every problem is reported at once", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, 0, {{"in", t.a}});                           // out, s unconnected
  t.tg.vertex(t.cs, t.type, 1, {{"in", t.a}, {"out", t.b}, {"s", t.a}}); // s too big
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("3 problems"));
  CHECK_THAT(msg, Contains("vertex 0 (Op) in compute set 'myComputeSet' (id 0), field 'out': not connected"));
  CHECK_THAT(msg, Contains("vertex 0 (Op) in compute set 'myComputeSet' (id 0), field 's': not connected"));
  CHECK_THAT(msg, Contains("vertex 1 (Op) in compute set 'myComputeSet' (id 0), field 's'"));
}

TEST_CASE("an unmapped vertex is an invalid_tile_mapping", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, -1, {{"in", t.a}, {"out", t.b}, {"s", t.a[0]}});
  const std::string msg = compileError<poplar::invalid_tile_mapping>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op) in compute set 'myComputeSet'"));
  CHECK_THAT(msg, Contains("has no tile mapping"));
}

TEST_CASE("a vertex mapped beyond the target's tiles", "[compiler][error]") {
  OneVertex t;
  t.tg.vertex(t.cs, t.type, 9, {{"in", t.a}, {"out", t.b}, {"s", t.a[0]}});
  const std::string msg = compileError<poplar::invalid_tile_mapping>(t.tg, {t.prog.get()});
  CHECK_THAT(msg, Contains("vertex 0 (Op) in compute set 'myComputeSet'"));
  CHECK_THAT(msg, Contains("tile 9 but the target has only 4 tiles"));
}

TEST_CASE("a partly mapped variable is an invalid_tile_mapping naming the tensor", "[compiler][error]") {
  OneVertex t;
  auto partly = t.tg.var(poplar::FLOAT, {10}, "delta", {0});
  t.tg.g->variables.back().mapping = {{0, 6, 0}};
  auto none = t.tg.unmapped(poplar::HALF, {3}, "epsilon");
  (void)partly;
  (void)none;
  const std::string msg = compileError<poplar::invalid_tile_mapping>(t.tg, {});
  CHECK_THAT(msg, Contains("'delta'"));
  CHECK_THAT(msg, Contains("4 of its 10 elements have no tile (the first is element 6)"));
  CHECK_THAT(msg, Contains("'epsilon'"));
}

TEST_CASE("a variable mapped beyond the target's tiles", "[compiler][error]") {
  OneVertex t;
  t.tg.var(poplar::FLOAT, {4}, "zeta", {17});
  const std::string msg = compileError<poplar::invalid_tile_mapping>(t.tg, {});
  CHECK_THAT(msg, Contains("'zeta'"));
  CHECK_THAT(msg, Contains("tile 17"));
}

TEST_CASE("duplicate host handles and stream handles", "[compiler][error]") {
  OneVertex t;
  t.tg.g->hostHandles.push_back({"h", t.a, true});
  t.tg.g->hostHandles.push_back({"h", t.b, true});
  t.tg.g->hostHandles.push_back({"h", t.b, false}); // a read handle may share a write handle's name
  t.tg.g->streams.push_back({"s", poplar::FLOAT, 8, true, poplar::ReplicatedStreamMode::REPLICATE});
  t.tg.g->streams.push_back({"s", poplar::FLOAT, 8, false, poplar::ReplicatedStreamMode::REPLICATE});
  const std::string msg = compileError<poplar::graph_connection_error>(t.tg, {});
  CHECK_THAT(msg, Contains("host write handle 'h' is created more than once"));
  CHECK_THAT(msg, Contains("stream handle 's' is used by more than one stream"));
  CHECK_THAT(msg, Contains("2 problems"));
}

TEST_CASE("a non-scalar predicate is a control_program_error naming the tensor", "[compiler][error]") {
  OneVertex t;
  auto iff = TestGraph::node(ir::ProgramKind::If, "myIf");
  iff->predicate = t.a;
  iff->children = {TestGraph::seq({}), TestGraph::seq({})};
  const std::string msg = compileError<poplar::control_program_error>(t.tg, {iff.get()});
  CHECK_THAT(msg, Contains("program If 'myIf'"));
  CHECK_THAT(msg, Contains("must be a scalar"));
  CHECK_THAT(msg, Contains("'alpha'"));
}

TEST_CASE("a copy between tensors of different sizes or into a constant", "[compiler][error]") {
  OneVertex t;
  auto k = t.tg.var(poplar::FLOAT, {4}, "kappa", {0}, true);
  auto prog = TestGraph::seq({TestGraph::copy(t.a, t.b.slice(0, 4)), TestGraph::copy(t.a.slice(0, 4), k)});
  const std::string msg = compileError<poplar::control_program_error>(t.tg, {prog.get()});
  CHECK_THAT(msg, Contains("'alpha' {8} float (8 elements) to tensor 'beta' {4} float (4 elements)"));
  CHECK_THAT(msg, Contains("'kappa'"));
  CHECK_THAT(msg, Contains("constant"));
}

TEST_CASE("Execute of a compute set that does not exist", "[compiler][error]") {
  OneVertex t;
  auto prog = TestGraph::exec(42);
  const std::string msg = compileError<poplar::control_program_error>(t.tg, {prog.get()});
  CHECK_THAT(msg, Contains("compute set 42, which does not exist"));
}

TEST_CASE("a stream copy whose tensor does not match the stream", "[compiler][error]") {
  OneVertex t;
  t.tg.g->streams.push_back({"input", poplar::FLOAT, 4, true, poplar::ReplicatedStreamMode::REPLICATE});
  auto copy = TestGraph::node(ir::ProgramKind::StreamToTensor, "load");
  copy->stream = 0;
  copy->dst = t.a; // 8 elements, the stream carries 4
  const std::string msg = compileError<poplar::control_program_error>(t.tg, {copy.get()});
  CHECK_THAT(msg, Contains("program Copy (stream to tensor) 'load'"));
  CHECK_THAT(msg, Contains("'alpha'"));
  CHECK_THAT(msg, Contains("stream 'input' carries 4 float elements"));
}

TEST_CASE("a switch on a non-integral control with a repeated case", "[compiler][error]") {
  OneVertex t;
  auto sw = TestGraph::node(ir::ProgramKind::Switch, "choose");
  sw->predicate = t.a[0];
  sw->caseValues = {1, 1};
  sw->children = {TestGraph::seq({}), TestGraph::seq({})};
  const std::string msg = compileError<poplar::control_program_error>(t.tg, {sw.get()});
  CHECK_THAT(msg, Contains("program Switch 'choose'"));
  CHECK_THAT(msg, Contains("'alpha'"));
  CHECK_THAT(msg, Contains("must be an integral scalar"));
  CHECK_THAT(msg, Contains("case value 1 twice"));
}

// ---- out of memory ----------------------------------------------------------------------

TEST_CASE("out of memory: Poplar's message, then what is on the tile", "[compiler][error]") {
  TestGraph tg(2);
  auto big = tg.var(poplar::FLOAT, {100000}, "weights", {1});
  auto small = tg.var(poplar::FLOAT, {70000}, "activations", {1});
  auto out = tg.var(poplar::FLOAT, {100}, "result", {1});
  tg.setInitial(big, std::vector<float>(100000, 0.5f));
  const auto type = tg.vertexType("Op", {test::in("in"), test::out("out")});
  const auto cs1 = tg.computeSet("produce");
  const auto cs2 = tg.computeSet("consume");
  tg.vertex(cs1, type, 1, {{"in", big.slice(0, 70000)}, {"out", small}});
  tg.vertex(cs2, type, 1, {{"in", small.slice(0, 100)}, {"out", out}});
  tg.g->hostHandles.push_back({"result", out, false});
  auto prog = TestGraph::seq({TestGraph::exec(cs1), TestGraph::exec(cs2)});
  const std::string msg = compileError<poplar::graph_memory_allocation_error>(tg, {prog.get()});
  INFO(msg);
  CHECK_THAT(msg, Catch::StartsWith("Out of memory on tile 1: "));
  CHECK_THAT(msg, Contains(" bytes used but tiles only have 638976 bytes of memory"));
  CHECK_THAT(msg, Contains("'weights' (variable 0, {100000} float): 400000 bytes (always-live)"));
  CHECK_THAT(msg, Contains("'activations' (variable 1, {70000} float): 280000 bytes (not-always-live)"));
  CHECK_THAT(msg, Contains("not-always-live peak: 280000 bytes at program step 0 ('produce')"));
  CHECK_THAT(msg, Contains("Op: 2 vertices"));

  // With debug.allowOutOfMemory the compile finishes and says why it cannot run.
  compiler::CompileOptions allow;
  allow.allowOutOfMemory = true;
  auto exe = compiler::compile(*tg.g, {prog.get()}, allow);
  CHECK(exe->outOfMemory);
  CHECK_THAT(exe->outOfMemoryMessage, Catch::StartsWith("Out of memory on tile 1: "));
  CHECK(exe->tileBytesUsed.at(1) > 638976);
  CHECK_THAT(exe->profileJson, Contains("\"outOfMemory\":true"));
}

TEST_CASE("unknown compiler options are invalid_options naming the key", "[compiler][error]") {
  CHECK_THROWS_AS(compiler::parseCompileOptions({{"aspen.compileCacheSize", "1"}}), poplar::invalid_option);
  CHECK_THROWS_WITH(compiler::parseCompileOptions({{"aspen.compileCacheSize", "1"}}),
                    Contains("'aspen.compileCacheSize'"));
  CHECK_THROWS_WITH(compiler::parseCompileOptions({{"debug.allowOutOfMemory", "yes"}}),
                    Contains("'debug.allowOutOfMemory' must be \"true\" or \"false\", not \"yes\""));
}

TEST_CASE("aspen.dumpIR needs a directory it can create", "[compiler][error]") {
  CHECK_THROWS_WITH(compiler::parseCompileOptions({{"aspen.dumpIR", ""}}),
                    Contains("aspen.dumpIR") && Contains("needs a directory"));
  TestGraph tg(1);
  const auto cs = tg.computeSet("empty");
  auto prog = TestGraph::exec(cs);
  compiler::CompileOptions options;
  options.dumpIRDir = "/proc/aspen-no-such-place/dump";
  const std::string msg = compileError<poplar::invalid_option>(tg, {prog.get()}, options);
  CHECK_THAT(msg, Contains("aspen.dumpIR") && Contains("/proc/aspen-no-such-place/dump"));
}

// ---- Streaming Memory (docs/streaming-memory.md) ----------------------------------------

TEST_CASE("a remote buffer larger than the target's Streaming Memory is named at compile time",
          "[compiler][error][streaming]") {
  OneVertex t;
  t.tg.g->remoteBuffers.push_back({"small", poplar::FLOAT, 16, 1});
  // 2^35 floats x 2 rows: 256 GiB, more than the 112 GB beside an IPU-M2000's IPU.
  t.tg.g->remoteBuffers.push_back({"huge", poplar::FLOAT, std::uint64_t(1) << 35, 2});
  auto prog = TestGraph::seq({});
  const std::string msg = compileError<poplar::graph_memory_allocation_error>(t.tg, {prog.get()});
  CHECK_THAT(msg, Catch::StartsWith("Out of Streaming Memory: the remote buffers need 274877907008 bytes"));
  CHECK_THAT(msg, Contains("the target has 112000000000 bytes of Streaming Memory"));
  CHECK_THAT(msg, Contains("'huge': 34359738368 x float x 2 rows = 274877906944 bytes"));
  CHECK_THAT(msg, Contains("'small': 16 x float x 1 rows = 64 bytes"));
}

TEST_CASE("aspen.streamingMemory takes off or auto; anything else is an invalid_option naming it",
          "[compiler][error][streaming]") {
  CHECK_FALSE(compiler::parseCompileOptions({}).streamingMemoryAuto);
  CHECK_FALSE(compiler::parseCompileOptions({{"aspen.streamingMemory", "off"}}).streamingMemoryAuto);
  CHECK(compiler::parseCompileOptions({{"aspen.streamingMemory", "auto"}}).streamingMemoryAuto);
  CHECK_THROWS_AS(compiler::parseCompileOptions({{"aspen.streamingMemory", "on"}}), poplar::invalid_option);
  CHECK_THROWS_WITH(compiler::parseCompileOptions({{"aspen.streamingMemory", "on"}}),
                    Contains("aspen.streamingMemory") && Contains("on"));
  const auto pinned =
      compiler::parseCompileOptions({{"aspen.streamingMemoryPinned", "a,,b"}}).streamingMemoryPinned;
  CHECK(pinned == std::vector<std::string>{"a", "b"});
}

TEST_CASE("out of memory even with Streaming Memory: the message names what was offloaded and what stayed",
          "[compiler][error][streaming]") {
  TestGraph tg(2, 40000);
  auto pinned = tg.var(poplar::FLOAT, {5000}, "pinnedWeights", {1});
  auto streamed = tg.var(poplar::FLOAT, {5000}, "streamedWeights", {1});
  auto looped = tg.var(poplar::FLOAT, {4000}, "loopedWeights", {1});
  auto out = tg.var(poplar::FLOAT, {4}, "result", {1});
  for (const poplar::Tensor &w : {pinned, streamed, looped})
    tg.setInitial(w, std::vector<float>(w.numElements(), 1.0f));
  const auto type = tg.vertexType("Op", {test::in("in"), test::out("out")});
  const auto cs1 = tg.computeSet("first");
  const auto cs2 = tg.computeSet("second");
  const auto cs3 = tg.computeSet("third");
  tg.vertex(cs1, type, 1, {{"in", pinned}, {"out", out}});
  tg.vertex(cs2, type, 1, {{"in", streamed}, {"out", out}});
  tg.vertex(cs3, type, 1, {{"in", looped}, {"out", out}});
  // loopedWeights is used before and inside a loop: control flow lies between its uses.
  auto prog = TestGraph::seq({TestGraph::exec(cs3), TestGraph::exec(cs1), TestGraph::exec(cs2),
                              TestGraph::repeat(2, TestGraph::exec(cs3))});
  compiler::CompileOptions options;
  options.streamingMemoryAuto = true;
  options.streamingMemoryPinned = {"pinnedWeights"};
  const std::string msg = compileError<poplar::graph_memory_allocation_error>(tg, {prog.get()}, options);
  INFO(msg);
  CHECK_THAT(msg, Catch::StartsWith("Out of memory on tile 1: "));
  CHECK_THAT(msg,
             Contains("aspen.streamingMemory=auto offloaded 1 variable (20000 bytes) to Streaming Memory: "
                      "'streamedWeights'"));
  CHECK_THAT(msg, Contains("'pinnedWeights' (variable 0, {5000} float): 20000 bytes, stays because pinned to "
                           "tile memory (aspen.streamingMemoryPinned)"));
  CHECK_THAT(msg,
             Contains("'loopedWeights' (variable 2, {4000} float): 16000 bytes, stays because control "
                      "flow (a loop, branch, call or program boundary) lies between its first and last use"));
  CHECK_THAT(msg,
             Contains("'streamedWeights' (variable 1, {5000} float): 20000 bytes (offloaded to Streaming "
                      "Memory; staged here)"));
}
