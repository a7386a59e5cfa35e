// Copyright (c) Aspen contributors.
// Hostile inputs found by the engineering review of libgraph, the compiler and
// the runtime: each used to crash, leak a non-Poplar exception or silently do the
// wrong thing. Every case must now fail with a poplar_error naming what is at
// fault (or, for the deep-nesting cases, simply work).
#include "ErrorCheck.hpp"

#include <poplar/CycleCount.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#if defined(ASPEN_SANITIZE_address) // .ci/sanitize: LeakSanitizer's interface
#include <sanitizer/lsan_interface.h>
#endif

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using aspen::test::requireError;

namespace {

Device smallDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  return model.createDevice();
}

constexpr std::uint64_t kHuge = std::uint64_t(1) << 62; // elements: beyond any representable tensor

} // namespace

// ---- tensors of another graph ---------------------------------------------------------

TEST_CASE("review: a program using another graph's tensor is rejected", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget()), other(device.getTarget());
  Tensor mine = g.addVariable(FLOAT, {8}, "mine");
  g.setTileMapping(mine, 0);
  Tensor theirs = other.addVariable(FLOAT, {8}, "theirs");
  other.setTileMapping(theirs, 0);
  Tensor theirFlag = other.addVariable(INT, {}, "theirFlag");
  other.setTileMapping(theirFlag, 0);
  DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 8);
  // Variable 0 of each graph: before the fix the Copy silently copied g's own
  // variable 0 and the others read out of bounds.
  struct Case {
    const char *kind;
    Program program;
    const char *tensor;
  };
  const std::vector<Case> cases = {
      {"Copy", Copy(theirs, mine), "'theirs'"},
      {"PrintTensor", PrintTensor(theirs), "'theirs'"},
      {"If", If(theirFlag, Sequence()), "'theirFlag'"},
      {"Copy (stream to tensor)", Copy(in, theirs), "'theirs'"},
      {"WriteUndef", WriteUndef(theirs), "'theirs'"},
  };
  for (const Case &c : cases) {
    SECTION(c.kind) {
      requireError<control_program_error>([&] { Engine engine(g, c.program); },
                                          {c.kind, c.tensor, "belongs to another graph"});
    }
  }
}

TEST_CASE("review: concat of tensors from different graphs", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget()), other(device.getTarget());
  Tensor a = g.addVariable(FLOAT, {2}, "a");
  Tensor b = other.addVariable(FLOAT, {2}, "b");
  requireError<index_error>([&] { concat(a, b); }, {"different graphs", "'a'", "'b'"});
  // Both are variable 0 of their graph: they must not compare equal or intersect.
  CHECK_FALSE(a == b);
  CHECK_FALSE(a.intersectsWith(b));
}

// ---- sizes beyond what can be represented ------------------------------------------

TEST_CASE("review: a variable or constant too large to represent", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  // 2^62 floats = 2^64 bytes: the byte count used to wrap to 0.
  requireError<tensor_creation_error>([&] { g.addVariable(FLOAT, {kHuge}, "huge"); }, {"'huge'", "too many"});
  requireError<tensor_creation_error>(
      [&] { g.addVariable(FLOAT, {kHuge}, VariableMappingMethod::LINEAR, "hugeLinear"); }, {"'hugeLinear'"});
  // The splat constant used to write 2^64 bytes into an empty buffer.
  requireError<tensor_creation_error>([&] { g.addConstant<float>(FLOAT, {kHuge}, 1.0f, "hugeConst"); },
                                      {"'hugeConst'", "too many"});
}

TEST_CASE("review: view operations whose result is too large", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor empty = g.addVariable(FLOAT, {0}, "empty");
  Tensor four = g.addVariable(FLOAT, {4}, "four");
  // 2^32 x 2^32 x 4 wraps to 0, which used to match the empty tensor.
  requireError<index_error>(
      [&] {
        empty.reshape({std::size_t(1) << 32, std::size_t(1) << 32, 4});
      },
      {"reshape", "shape {0}", "too many elements"});
  requireError<index_error>(
      [&] {
        four.reshapePartial(0, 1, {std::size_t(1) << 32, std::size_t(1) << 32, 4});
      },
      {"reshapePartial", "'four'"});
  // One element repeated 2^31 times is one stride-0 segment; 2^32 times more
  // overflows what a float tensor may hold.
  const Tensor wide = g.addVariable(FLOAT, {1}, "one").broadcast(1u << 31, 0);
  requireError<index_error>([&] { wide.broadcast(~0u, 0); }, {"broadcast", "'one'", "too many elements"});
  requireError<index_error>([&] { wide.upsample(~0u, 0, UpsampleMethod::REPEAT); },
                            {"upsample", "'one'", "too many elements"});
}

TEST_CASE("review: streams and remote buffers too large to represent", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  requireError<graph_object_creation_error>([&] { g.addHostToDeviceFIFO("bigIn", FLOAT, kHuge); },
                                            {"'bigIn'", "too large"});
  requireError<graph_object_creation_error>([&] { g.addDeviceToHostFIFO("bigOut", FLOAT, kHuge); },
                                            {"'bigOut'", "too large"});
  // 2^40 x 2^40 elements used to wrap to a zero-byte host buffer.
  requireError<graph_object_creation_error>(
      [&] { g.addRemoteBuffer("bigRemote", FLOAT, std::size_t(1) << 40, std::size_t(1) << 40); },
      {"'bigRemote'", "too large"});
}

TEST_CASE("review: a target with more tiles than a tile number can count", "[error][review]") {
  IPUModel model("ipu2");
  model.numIPUs = 64;
  model.tilesPerIPU = 1u << 30;
  requireError<invalid_machine_model>([&] { model.createDevice(); },
                                      {"numIPUs x tilesPerIPU", "64 x 1073741824"});
}

// ---- null pointers -----------------------------------------------------------------

TEST_CASE("review: setInitialValue with a null pointer", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor t = g.addVariable(FLOAT, {2}, "weights");
  requireError<tensor_creation_error>(
      [&] { g.setInitialValue(t, ArrayRef<float>(static_cast<const float *>(nullptr), 2)); },
      {"'weights'", "null pointer"});
}

TEST_CASE("review: null host buffers given to the engine", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(FLOAT, {2}, "x");
  g.setTileMapping(x, 0);
  DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 2);
  RemoteBuffer rb = g.addRemoteBuffer("rows", FLOAT, 2, 2);
  Engine engine(g, Sequence{Copy(in, x), Copy(x, rb)});
  engine.load(device);
  void *const eightBytesFromNull = reinterpret_cast<void *>(std::uintptr_t{8});
  requireError<stream_connection_error>([&] { engine.connectStream("in", nullptr, eightBytesFromNull); },
                                        {"'in'", "null buffer"});
  requireError<stream_connection_error>(
      [&] { engine.connectStreamToCallback("in", std::function<void(void *)>()); },
      {"'in'", "Null callback"});
  requireError<poplar_error>([&] { engine.copyToRemoteBuffer(nullptr, "rows", 1); }, {"'rows'", "null"});
  requireError<poplar_error>([&] { engine.copyFromRemoteBuffer("rows", nullptr, 1); }, {"'rows'", "null"});
}

// ---- empty and moved-from objects ----------------------------------------------------

TEST_CASE("review: compiling an empty Graph", "[error][review]") {
  Graph empty;
  requireError<poplar_error>([&] { Engine engine(empty, Sequence()); }, {"compileGraph", "empty"});
}

TEST_CASE("review: using an Engine or an Executable after a move", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Engine engine(g, Sequence());
  Engine moved(std::move(engine));
  requireError<poplar_error>([&] { engine.load(device); }, {"moved from"});
  requireError<poplar_error>([&] { engine.run(0); }, {"moved from"});
  moved.load(device);
  moved.run(0);

  Executable exe = compileGraph(g, {Sequence()});
  Executable kept(std::move(exe));
  requireError<poplar_error>([&] { Engine again(std::move(exe)); }, {"Executable was moved from"});
}

TEST_CASE("review: an engine with no programs", "[error][review]") {
  // It used to be refused at load as a corrupt executable ("no steps").
  Device device = smallDevice();
  Graph g(device.getTarget());
  Executable exe = compileGraph(g, std::vector<Program>{});
  std::stringstream saved;
  exe.serialize(saved);
  Engine engine(Executable::deserialize(saved));
  engine.load(device);
  requireError<index_error>([&] { engine.run(0); }, {"Program index 0", "0 programs"});
}

// ---- concurrency -------------------------------------------------------------------

TEST_CASE("review: Engine::run while another run is in progress", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  g.setTileMapping(x, 0);
  DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 4);
  Engine engine(g, {Copy(in, x), Sequence()});
  engine.load(device);
  // The callback of program 0 holds the run open until the second run has tried.
  std::atomic<bool> inCallback{false}, secondDone{false};
  engine.connectStreamToCallback("in", [&](void *p) {
    inCallback = true;
    while (!secondDone)
      std::this_thread::yield();
    std::fill_n(static_cast<float *>(p), 4, 1.0f);
  });
  std::thread first([&] { engine.run(0); });
  while (!inCallback)
    std::this_thread::yield();
  requireError<system_runtime_error>([&] { engine.run(1); }, {"Engine::run(1)", "one program at a time"});
  requireError<system_runtime_error>([&] { engine.load(device); }, {"Engine::load", "running a program"});
  secondDone = true;
  first.join();
  engine.run(1); // the engine is free again
}

// ---- codelets and fields -------------------------------------------------------------

TEST_CASE("review: addCodelets of a directory", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  char dirTemplate[] = "/tmp/aspen-review-XXXXXX";
  const std::string dir = ::mkdtemp(dirTemplate);
  // A libstdc++ read error (EISDIR) used to leak out as std::ios_base::failure.
  requireError<graph_object_creation_error>([&] { g.addCodelets(dir, CodeletFileType::Object); },
                                            {dir, "directory"});
  requireError<graph_object_creation_error>([&] { g.addCodelets(dir, CodeletFileType::CppSource); },
                                            {dir, "directory"});
  ::rmdir(dir.c_str());
}

TEST_CASE("review: field sizes and indices beyond what a tile can hold", "[error][review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  std::stringstream source;
  source << "#include <poplar/Vertex.hpp>\n"
            "class ReviewRows : public poplar::Vertex {\n"
            "public:\n"
            "  poplar::Vector<poplar::Input<poplar::Vector<float>>> rows;\n"
            "  poplar::Vector<unsigned> offsets;\n"
            "  bool compute() { return true; }\n"
            "};\n";
  g.addCodelets(source);
  ComputeSet cs = g.addComputeSet("rowsCs");
  VertexRef v = g.addVertex(cs, "ReviewRows");
  Tensor row = g.addVariable(FLOAT, {4}, "row");
  // These used to attempt allocations of terabytes (std::bad_alloc).
  requireError<graph_connection_error>([&] { g.connect(v["rows"][std::size_t(1) << 40], row); },
                                       {"'rows'", "ReviewRows", "at most"});
  requireError<graph_connection_error>([&] { g.setFieldSize(v["rows"], std::size_t(1) << 31); },
                                       {"'rows'", "ReviewRows", "at most"});
  requireError<graph_connection_error>([&] { g.setFieldSize(v["offsets"], std::size_t(1) << 40); },
                                       {"'offsets'", "at most"});
  requireError<graph_connection_error>(
      [&] { g.setInitialValue(v["offsets"], ArrayRef<unsigned>(static_cast<const unsigned *>(nullptr), 3)); },
      {"'offsets'", "null pointer"});
  // A state field counts its values in 30 bits: more is rejected before anything is read.
  requireError<graph_connection_error>(
      [&] {
        g.setInitialValue(v["offsets"],
                          ArrayRef<unsigned>(static_cast<const unsigned *>(nullptr), std::size_t(1) << 31));
      },
      {"'offsets'", "more than a field can hold"});
  // Sizes that fit still work.
  g.setFieldSize(v["rows"], 2);
  g.connect(v["rows"][1], row);
  CHECK(g.getFieldSize(v["rows"]) == 2);
}

// ---- deep and cyclic program trees -------------------------------------------------

namespace {

/// `Sequence(prog, step)` in a loop, the way generated code builds long
/// programs: every level nests the previous one. The innermost step writes 7.
Sequence deeplyNested(Graph &g, const Tensor &x, std::size_t depth) {
  Tensor seven = g.addConstant<int>(INT, {}, 7, "seven");
  g.setTileMapping(seven, 0);
  Sequence prog{Copy(seven, x)};
  for (std::size_t i = 0; i < depth; ++i)
    prog = Sequence(prog, WriteUndef(x.slice(0, 0)));
  return prog;
}

} // namespace

#if defined(ASPEN_SANITIZE_thread)
// ThreadSanitizer keeps a fixed shadow call stack of 65,536 frames per thread: a recursion
// 100,000 deep crashes inside TSan itself. 30,000 levels still take the deep-program path (the
// compile thread with a stack sized for the depth), and stay within TSan's limit.
constexpr std::size_t kDeepProgram = 30000;
#else
constexpr std::size_t kDeepProgram = 100000;
#endif

TEST_CASE("review: programs nested 100,000 deep compile and run", "[review]") {
  // Hashing, validation and lowering recursed once per level and overflowed the stack.
  for (const char *cache : {"false", "true"}) {
    DYNAMIC_SECTION("compile cache " << cache) {
      Device device = smallDevice();
      Graph g(device.getTarget());
      Tensor x = g.addVariable(INT, {1}, "x");
      g.setTileMapping(x, 0);
      g.createHostRead("x", x);
      Sequence prog = deeplyNested(g, x, kDeepProgram);
      Engine engine(g, prog, {{"aspen.compileCache", cache}});
      engine.load(device);
      engine.run(0);
      int value = 0;
      engine.readTensor("x", &value, &value + 1);
      CHECK(value == 7);
    }
  }
}

TEST_CASE("review: a program nested 1,000,000 deep is released without recursion", "[review]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(INT, {1}, "x");
  { Sequence prog = deeplyNested(g, x, 1000000); } // the destructor chain used to overflow the stack here
  SUCCEED();
}

TEST_CASE("review: a cyclic program with the compile cache on", "[error][review]") {
  // The cache key was computed (recursively) before lowering found the cycle.
  Device device = smallDevice();
  Graph g(device.getTarget());
#if defined(ASPEN_SANITIZE_address)
  __lsan_disable(); // the leak below is deliberate: not a finding of the sanitized suite
#endif
  Sequence a(DebugContext("loopA")), b(DebugContext("loopB"));
  a.add(b);
  b.add(a); // the two nodes now own each other: they are never released
#if defined(ASPEN_SANITIZE_address)
  __lsan_enable();
#endif
  requireError<graph_cycle_error>(
      [&] {
        Engine engine(g, a, {{"aspen.compileCache", "true"}});
      },
      {"contains itself"});
}

// ---- API shape -------------------------------------------------------------------

TEST_CASE("review: addConstant from a non-const pointer", "[review]") {
  // `addConstant(type, shape, vec.data())` picked the splat overload (T = float *)
  // and did not compile.
  Device device = smallDevice();
  Graph g(device.getTarget());
  std::vector<float> values = {1.5f, -2.0f, 4.25f};
  Tensor c = g.addConstant(FLOAT, {3}, values.data(), "fromPointer");
  g.setTileMapping(c, 1);
  Tensor x = g.addVariable(FLOAT, {3}, "x");
  g.setTileMapping(x, 0);
  g.createHostRead("x", x);
  Engine engine(g, Copy(c, x));
  engine.load(device);
  engine.run(0);
  std::vector<float> out(3);
  engine.readTensor("x", out.data(), out.data() + out.size());
  CHECK(out == values);
}

// ---- control values split by a reinterpret ------------------------------------------

TEST_CASE("review: a control value split between tiles", "[error][review]") {
  // The runtime reads a predicate at one address; the compiler used to hit an
  // internal assertion ("a scalar element spans pieces") and abort.
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor halves = g.addVariable(SHORT, {2}, "halves");
  g.setTileMapping(halves[0], 0);
  g.setTileMapping(halves[1], 1);
  const Tensor acrossTiles = halves.reinterpret(INT).reshape({});
  ComputeSet cs = g.addComputeSet("empty");
  RemoteBuffer rb = g.addRemoteBuffer("rows", FLOAT, 2, 2);
  Tensor x = g.addVariable(FLOAT, {2}, "x");
  g.setTileMapping(x, 0);
  struct Case {
    const char *kind;
    Program program;
  };
  const std::vector<Case> cases = {
      {"If (predicate)", If(acrossTiles, Sequence())},
      {"Switch (control)", Switch(acrossTiles, {{3, Sequence()}})},
      {"Execute (failure flag)", Execute(cs, acrossTiles)},
      {"(row offsets)", Copy(rb, x, halves.reinterpret(UNSIGNED_INT))},
      {"RepeatWhileTrue (predicate)", RepeatWhileTrue(Sequence(), acrossTiles, Sequence())},
  };
  for (const Case &c : cases) {
    SECTION(c.kind) {
      requireError<control_program_error>([&] { Engine engine(g, c.program); },
                                          {c.kind, "is split between tiles"});
    }
  }
  SECTION("a reinterpreted predicate in one place is fine") {
    Tensor both = g.addVariable(SHORT, {2}, "both");
    g.setTileMapping(both, 3);
    g.setInitialValue(both, std::vector<short>{0, 0});
    Engine engine(g, If(both.reinterpret(INT).reshape({}), Abort("the predicate is zero")));
    engine.load(device);
    engine.run(0);
  }
}
