// Copyright (c) Aspen contributors.
// Vertex faults and run bounds (issue 22, items 3 and 4): a vertex whose code
// raises SIGFPE, SIGSEGV, SIGBUS or SIGILL, overflows its stack, or runs off
// its tile's end stops the run with application_runtime_error naming the vertex,
// its compute set, its tile and the fault; the process survives, other tiles'
// memory is unchanged, and the engine runs again once loaded again.
// aspen.maxRunCycles / aspen.maxRunSeconds turn a run that does not end into an
// error naming the step or vertex still running. docs/tile-model.md.
#include "ErrorCheck.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using aspen::test::requireError;

namespace {

// ThreadSanitizer delivers a signal sent to a thread (the watchdog's) only when
// that thread next enters instrumented code, which a compute() spinning in
// uninstrumented codelet code never does: those cases are skipped under TSan.
#if defined(__SANITIZE_THREAD__)
constexpr bool kTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kTsan = true;
#else
constexpr bool kTsan = false;
#endif
#else
constexpr bool kTsan = false;
#endif

// Under AddressSanitizer vertex code runs on its thread's own stack (VertexFaults.hpp).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr unsigned kTiles = 4;

const char *kCodelets = R"(
#include <poplar/Vertex.hpp>
#include <sys/mman.h>
#include <unistd.h>
#include <climits>
#include <cstdlib>
#include <cstring>

class DivideBy : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<int>> a, b;
  poplar::Output<poplar::Vector<int>> out;
  bool compute() { out[0] = a[0] / b[0]; return true; }
};

// Writes `count` ints from the start of `v`: far past the end of its tile.
class Overrun : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  poplar::Input<poplar::Vector<unsigned>> count;
  bool compute() {
    int *p = &v[0];
    for (unsigned i = 0; i < count[0]; ++i)
      p[i] = -1;
    return true;
  }
};

// Writes through a pointer made from an integer (a null or wild pointer).
class WildWrite : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<unsigned>> address;
  bool compute() {
    *reinterpret_cast<volatile int *>(static_cast<unsigned long>(address[0])) = 1;
    return true;
  }
};

class Trap : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() {
    if (v[0] == 7)
      __builtin_trap();
    return true;
  }
};

// Reads a page of a shared mapping beyond the end of its (empty) file.
class BusError : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() {
    char name[] = "/tmp/aspen-sigbus-XXXXXX";
    int fd = mkstemp(name);
    unlink(name);
    void *p = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    v[0] = *static_cast<volatile const char *>(p);
    return true;
  }
};

// Recursion without end: overflows the stack of the thread running it.
static int deeper(volatile int *n) {
  volatile char frame[512];
  frame[0] = static_cast<char>(*n);
  ++*n;
  return deeper(n) + frame[0];
}
class Recurse : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() { volatile int n = v[0]; v[0] = deeper(&n); return true; }
};

// Recursion to a depth: about 600 bytes of stack per level.
static int descend(volatile int *n, int depth) {
  volatile char frame[512];
  frame[0] = static_cast<char>(depth & 1);
  __asm__ volatile("" ::"r"(frame) : "memory"); // all 512 bytes, not the two used
  if (depth == 0)
    return *n;
  const int r = descend(n, depth - 1);
  frame[1] = static_cast<char>(r); // the frame lives across the call
  return r + 1 + frame[0] - (depth & 1);
}
class RecurseTo : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() { volatile int n = 0; v[0] = descend(&n, v[0]); return true; }
};

class Spin : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() {
    for (;;)
      __asm__ volatile("" ::: "memory");
    return true;
  }
};

// Never returns, and spends its time inside the C library.
class Sleep : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() {
    for (;;)
      usleep(1000);
    return true;
  }
};

// Stores the host address of v[0] (two words, low first).
class AddressOf : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<int>> v;
  poplar::Output<poplar::Vector<unsigned>> address;
  bool compute() {
    unsigned long a = reinterpret_cast<unsigned long>(&v[0]);
    address[0] = static_cast<unsigned>(a);
    address[1] = static_cast<unsigned>(a >> 32);
    return true;
  }
};

// Writes its own tile, then through a pointer into another tile's variable.
class WriteThrough : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<unsigned>> address;
  poplar::InOut<poplar::Vector<int>> mine;
  bool compute() {
    mine[0] = 5;
    *reinterpret_cast<volatile int *>(address[0] | static_cast<unsigned long>(address[1]) << 32) = -1;
    return true;
  }
};

// A wild index: writes at the index that reaches the host address in `address` from its
// own vector (one element, four by memset, one by an atomic add, or two in a loop, as `how`
// says).
class WriteAtIndex : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<unsigned>> address;
  poplar::Input<poplar::Vector<int>> how;
  poplar::InOut<poplar::Vector<int>> mine;
  bool compute() {
    mine[0] = 5;
    int *p = &mine[0];
    const long target = static_cast<long>(address[0] | static_cast<unsigned long>(address[1]) << 32);
    const long index = (target - reinterpret_cast<long>(p)) / static_cast<long>(sizeof(int));
    if (how[0] == 0)
      p[index] = -1;
    else if (how[0] == 1)
      std::memset(p + index, 0, 4 * sizeof(int));
    else if (how[0] == 2)
      __atomic_fetch_add(p + index, 1, __ATOMIC_RELAXED);
    else // a loop (checked once before it, then at every iteration)
      for (unsigned k = 0; k < mine.size(); ++k)
        p[index + k] = -2;
    mine[1] = 6;
    return true;
  }
};

class AddOne : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() { for (unsigned i = 0; i < v.size(); ++i) v[i] += 1; return true; }
};
)";

Device makeDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = kTiles;
  return model.createDevice();
}

/// A graph with a witness variable on every tile (written by the host, read
/// back after the fault) and a faulty vertex on tile 1.
struct FaultCase {
  Device device = makeDevice();
  Graph graph{device.getTarget()};
  std::vector<Tensor> witness;
  Tensor data; // tile 1: the faulty vertex's InOut / operand
  Tensor addOne;
  Sequence fault, good;
  unsigned faultyVertexId = 0;

  FaultCase() {
    std::stringstream source(kCodelets);
    graph.addCodelets(source);
    for (unsigned t = 0; t < kTiles; ++t) {
      witness.push_back(graph.addVariable(INT, {64}, "witness" + std::to_string(t)));
      graph.setTileMapping(witness.back(), t);
      graph.createHostWrite("w" + std::to_string(t), witness.back());
      graph.createHostRead("r" + std::to_string(t), witness.back());
    }
    // Tile 1's witness is allocated before the faulty vertex's data, tile 2's
    // lies after tile 1's end.
    addOne = graph.addVariable(INT, {8}, "addOne");
    graph.setTileMapping(addOne, 2);
    graph.createHostRead("addOne", addOne);
    ComputeSet cs = graph.addComputeSet("goodWork");
    VertexRef v = graph.addVertex(cs, "AddOne", {{"v", addOne}});
    graph.setTileMapping(v, 2);
    good.add(Execute(cs));
  }

  /// Adds `type` on tile 1 with its fields (a compute set named `name`).
  VertexRef addFaulty(const std::string &type, const std::string &name,
                      const std::vector<std::pair<std::string, Tensor>> &fields) {
    ComputeSet cs = graph.addComputeSet(name);
    VertexRef v = graph.addVertex(cs, type);
    for (const auto &[field, t] : fields)
      graph.connect(v[field], t);
    graph.setTileMapping(v, 1);
    faultyVertexId = v.getId();
    fault.add(Execute(cs));
    return v;
  }

  Tensor tile1(Type type, const std::string &name, std::size_t n = 1) {
    Tensor t = graph.addVariable(type, {n}, name);
    graph.setTileMapping(t, 1);
    return t;
  }

  Engine makeEngine(const OptionFlags &options = {}) {
    Engine engine(graph, {fault, good}, options);
    engine.load(device);
    writeWitnesses(engine);
    return engine;
  }

  static std::vector<int> pattern(unsigned t) {
    std::vector<int> v(64);
    for (unsigned i = 0; i < 64; ++i)
      v[i] = static_cast<int>(t * 1000 + i);
    return v;
  }
  void writeWitnesses(Engine &engine) {
    for (unsigned t = 0; t < kTiles; ++t) {
      const std::vector<int> values = pattern(t);
      engine.writeTensor("w" + std::to_string(t), values.data(), values.data() + 64);
    }
  }

  /// The process is alive; every tile's witness is as written; the engine
  /// refuses to run until loaded again, then runs.
  void checkContained(Engine &engine, const std::string &fragment) {
    for (unsigned t = 0; t < kTiles; ++t) {
      std::vector<int> back(64);
      engine.readTensor("r" + std::to_string(t), back.data(), back.data() + 64);
      INFO("tile " << t);
      CHECK(back == pattern(t));
    }
    requireError<application_runtime_error>([&] { engine.run(1); },
                                            {"must be loaded again", "Engine::load", fragment});
    engine.load(device);
    engine.run(1);
    std::vector<int> ones(8);
    engine.readTensor("addOne", ones.data(), ones.data() + 8);
    CHECK(ones == std::vector<int>(8, 1));
  }

  /// How a fault's message begins.
  std::string vertexName() const { return "Vertex " + std::to_string(faultyVertexId) + " "; }
};

} // namespace

TEST_CASE("A vertex dividing by zero stops the run with a named SIGFPE", "[error][fault]") {
  FaultCase c;
  Tensor a = c.tile1(INT, "a"), b = c.tile1(INT, "b"), out = c.tile1(INT, "out");
  c.graph.setInitialValue(a, 7);
  c.graph.setInitialValue(b, 0);
  c.addFaulty("DivideBy", "divide", {{"a", a}, {"b", b}, {"out", out}});
  Engine engine = c.makeEngine();
  requireError<application_runtime_error>([&] { engine.run(0); },
                                          {c.vertexName(), "'DivideBy'", "tile 1", "compute set 'divide'",
                                           "SIGFPE", "integer divide by zero", "Engine::load"});
  c.checkContained(engine, "SIGFPE");
}

TEST_CASE("A vertex computing INT_MIN / -1 stops the run with a named SIGFPE", "[error][fault]") {
  FaultCase c;
  Tensor a = c.tile1(INT, "a"), b = c.tile1(INT, "b"), out = c.tile1(INT, "out");
  c.graph.setInitialValue(a, std::numeric_limits<int>::min());
  c.graph.setInitialValue(b, -1);
  c.addFaulty("DivideBy", "overflowingDivide", {{"a", a}, {"b", b}, {"out", out}});
  Engine engine = c.makeEngine();
  requireError<application_runtime_error>(
      [&] { engine.run(0); },
      {c.vertexName(), "'DivideBy'", "tile 1", "compute set 'overflowingDivide'", "SIGFPE"});
  c.checkContained(engine, "DivideBy");
}

TEST_CASE("A vertex writing off its tile's end faults before it reaches the next tile", "[error][fault]") {
  FaultCase c;
  Tensor v = c.tile1(INT, "v", 16), count = c.tile1(UNSIGNED_INT, "count");
  // Far more than a tile holds: without guards it would run over tiles 2 and 3.
  c.graph.setInitialValue(count, 4u << 20);
  c.addFaulty("Overrun", "overrun", {{"v", v}, {"count", count}});
  Engine engine = c.makeEngine();
  requireError<application_runtime_error>([&] { engine.run(0); },
                                          {c.vertexName(), "'Overrun'", "tile 1", "compute set 'overrun'",
                                           "SIGSEGV", "past the end of tile 1's memory", "IPU exception"});
  c.checkContained(engine, "Overrun");
}

TEST_CASE("A vertex writing through a null or wild pointer stops the run with a named SIGSEGV",
          "[error][fault]") {
  for (unsigned address : {0u, 16u, 0xdead0000u}) {
    FaultCase c;
    Tensor where = c.tile1(UNSIGNED_INT, "address");
    c.graph.setInitialValue(where, address);
    c.addFaulty("WildWrite", "wild", {{"address", where}});
    Engine engine = c.makeEngine();
    requireError<application_runtime_error>(
        [&] { engine.run(0); }, {c.vertexName(), "'WildWrite'", "tile 1", "compute set 'wild'", "SIGSEGV"});
    c.checkContained(engine, "WildWrite");
  }
}

TEST_CASE("A vertex executing an illegal instruction stops the run with a named SIGILL", "[error][fault]") {
  FaultCase c;
  Tensor v = c.tile1(INT, "v");
  c.graph.setInitialValue(v, 7);
  c.addFaulty("Trap", "trap", {{"v", v}});
  Engine engine = c.makeEngine();
  requireError<application_runtime_error>(
      [&] { engine.run(0); }, {c.vertexName(), "'Trap'", "tile 1", "compute set 'trap'", "SIGILL"});
  c.checkContained(engine, "SIGILL");
}

TEST_CASE("A vertex reading a mapping beyond its file stops the run with a named SIGBUS", "[error][fault]") {
  FaultCase c;
  Tensor v = c.tile1(INT, "v");
  c.addFaulty("BusError", "bus", {{"v", v}});
  Engine engine = c.makeEngine();
  requireError<application_runtime_error>(
      [&] { engine.run(0); }, {c.vertexName(), "'BusError'", "tile 1", "compute set 'bus'", "SIGBUS"});
  c.checkContained(engine, "SIGBUS");
}

TEST_CASE("A vertex overflowing its stack stops the run with a named fault", "[error][fault]") {
  FaultCase c;
  Tensor v = c.tile1(INT, "v");
  c.addFaulty("Recurse", "recurse", {{"v", v}});
  Engine engine = c.makeEngine();
  requireError<application_runtime_error>(
      [&] { engine.run(0); },
      {c.vertexName(), "'Recurse'", "tile 1", "compute set 'recurse'", "SIGSEGV", "stack"});
  c.checkContained(engine, "Recurse");
}

TEST_CASE("A vertex's stack follows target.workerStackSizeInBytes", "[error][fault]") {
  // 1,000 levels need over 512 KB of host stack: more than the default worker
  // stack (512 IPU bytes: 256 KiB of host stack), less than 0x800's (1 MiB).
  FaultCase c;
  Tensor v = c.tile1(INT, "v");
  c.graph.setInitialValue(v, 1000);
  c.graph.createHostRead("depth", v);
  c.addFaulty("RecurseTo", "deep", {{"v", v}});
  Engine engine = c.makeEngine();
  const bool switched = sizeof(void *) == 8 && [] {
#if defined(__x86_64__)
    return true;
#else
    return false;
#endif
  }();
  if (switched && !kSanitized) {
    requireError<application_runtime_error>(
        [&] { engine.run(0); },
        {c.vertexName(), "'RecurseTo'", "tile 1", "compute set 'deep'", "SIGSEGV",
         "overflowed its worker stack (262144 bytes of host stack for target.workerStackSizeInBytes = 512 "
         "and target.supervisorStackSizeInBytes = 96)"});
    c.checkContained(engine, "RecurseTo");
  }
  for (const char *size : {"0x800", "2048"}) {
    Engine big = c.makeEngine({{"target.workerStackSizeInBytes", size}});
    big.run(0);
    int depth = 0;
    big.readTensor("depth", &depth, &depth + 1);
    CHECK(depth == 1000);
  }
  requireError<invalid_option>(
      [&] {
        Engine(c.graph, c.good, {{"target.workerStackSizeInBytes", "big"}});
      },
      {"target.workerStackSizeInBytes", "big"});
  requireError<invalid_option>(
      [&] {
        Engine(c.graph, c.good, {{"target.supervisorStackSizeInBytes", "0"}});
      },
      {"target.supervisorStackSizeInBytes", "0"});
}

TEST_CASE("The memory report's stack per tile follows the stack size options", "[error][fault]") {
  // Six worker stacks and the supervisor's per tile: 6 x 512 + 96 by default.
  FaultCase c;
  auto stackLine = [&](const OptionFlags &options) {
    Engine engine(c.graph, c.good, options);
    std::ostringstream summary;
    engine.printProfileSummary(summary);
    const std::string text = summary.str();
    const auto at = text.find("Stack and Control Code");
    REQUIRE(at != std::string::npos);
    return text.substr(at, text.find('\n', at) - at);
  };
  CHECK_THAT(stackLine({}), Catch::Contains("12,672 ")); // 4 tiles x 3,168
  // 4 x (6 x 1,024 + 256) = 25,600
  CHECK_THAT(
      stackLine({{"target.workerStackSizeInBytes", "0x400"}, {"target.supervisorStackSizeInBytes", "256"}}),
      Catch::Contains("25,600 "));
  // A tile that cannot hold its stacks is out of memory, and the message says how much is stack.
  Tensor big = c.tile1(INT, "big", 140000); // 560,000 bytes: fits beside the default stacks
  c.graph.createHostRead("big", big);
  requireError<graph_memory_allocation_error>(
      [&] {
        Engine(c.graph, c.good, {{"target.workerStackSizeInBytes", "0x4000"}});
      },
      {"Out of memory on tile 1", "including 98400 bytes of stack"});
}

TEST_CASE("Faults on many tiles run in parallel report the lowest vertex", "[error][fault]") {
  // Enough estimated work that the compute set runs in parallel chunks on TBB's threads.
  IPUModel model("ipu2");
  model.tilesPerIPU = 64;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  std::stringstream source(kCodelets);
  graph.addCodelets(source);
  ComputeSet cs = graph.addComputeSet("manyTiles");
  Tensor a = graph.addVariable(INT, {64}, "a"), b = graph.addVariable(INT, {64}, "b"),
         out = graph.addVariable(INT, {64}, "out");
  std::vector<int> divisors(64, 1);
  divisors[37] = divisors[50] = 0;
  graph.setInitialValue(a, std::vector<int>(64, 9));
  graph.setInitialValue(b, divisors);
  unsigned id37 = 0;
  for (unsigned t = 0; t < 64; ++t) {
    for (Tensor x : {a, b, out})
      graph.setTileMapping(x[t], t);
    VertexRef v = graph.addVertex(
        cs, "DivideBy", {{"a", a.slice(t, t + 1)}, {"b", b.slice(t, t + 1)}, {"out", out.slice(t, t + 1)}});
    graph.setTileMapping(v, t);
    graph.setPerfEstimate(v, 100000);
    if (t == 37)
      id37 = v.getId();
  }
  graph.createHostRead("out", out);
  Engine engine(graph, Execute(cs));
  engine.load(device);
  for (int round = 0; round < 3; ++round) {
    requireError<application_runtime_error>([&] { engine.run(0); },
                                            {"Vertex " + std::to_string(id37) + " ", "tile 37", "SIGFPE"});
    engine.load(device);
  }
  // Tiles that did not fault computed their quotient.
  std::vector<int> back(64);
  try {
    engine.run(0);
  } catch (const application_runtime_error &) {
  }
  engine.readTensor("out", back.data(), back.data() + 64);
  CHECK(back[0] == 9);
  CHECK(back[36] == 9);
}

// ---- run bounds ---------------------------------------------------------------------

TEST_CASE("aspen.maxRunSeconds stops a compute() that never returns", "[error][fault][bound]") {
  if (kTsan)
    return;
  FaultCase c;
  Tensor v = c.tile1(INT, "v");
  c.addFaulty("Spin", "spin", {{"v", v}});
  Engine engine = c.makeEngine({{"aspen.maxRunSeconds", "0.2"}});
  const auto start = std::chrono::steady_clock::now();
  requireError<application_runtime_error>([&] { engine.run(0); },
                                          {"aspen.maxRunSeconds (0.2 s)",
                                           "vertex " + std::to_string(c.faultyVertexId) + " ", "'Spin'",
                                           "tile 1", "compute set 'spin'", "still running"});
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
  c.checkContained(engine, "Spin");
}

TEST_CASE("aspen.maxRunSeconds stops a compute() that waits in the C library", "[error][fault][bound]") {
  if (kTsan)
    return;
  FaultCase c;
  Tensor v = c.tile1(INT, "v");
  c.addFaulty("Sleep", "sleep", {{"v", v}});
  Engine engine = c.makeEngine({{"aspen.maxRunSeconds", "0.1"}});
  requireError<application_runtime_error>(
      [&] { engine.run(0); }, {"aspen.maxRunSeconds (0.1 s)", "'Sleep'", "tile 1", "still running"});
  c.checkContained(engine, "Sleep");
}

TEST_CASE("aspen.maxRunSeconds stops a program that loops for ever between vertices", "[error][bound]") {
  FaultCase c;
  Tensor flag = c.graph.addConstant(INT, {}, 1, "always");
  c.graph.setTileMapping(flag, 0);
  Sequence forever;
  forever.add(RepeatWhileTrue(Sequence(), flag, c.good));
  Engine engine(c.graph, {forever, c.good}, {{"aspen.maxRunSeconds", "0.1"}});
  engine.load(c.device);
  std::string message;
  requireError<application_runtime_error>(
      [&] {
        try {
          engine.run(0);
        } catch (const application_runtime_error &e) {
          message = e.what();
          throw;
        }
      },
      {"Run of program 0", "aspen.maxRunSeconds (0.1 s)"});
  // Almost always stopped between steps, when the engine stays usable; a thread
  // held up for over the 10 ms grace inside AddOne's compute() is stopped there.
  if (message.find("at step") == std::string::npos) {
    CHECK(message.find("'AddOne'") != std::string::npos);
    engine.load(c.device);
  }
  engine.run(1);
}

TEST_CASE("aspen.maxRunCycles stops a run before the step that would pass it", "[error][bound]") {
  FaultCase c;
  Engine engine(c.graph, {Repeat(1000000000, c.good), c.good}, {{"aspen.maxRunCycles", "100000"}});
  engine.load(c.device);
  requireError<application_runtime_error>([&] { engine.run(0); },
                                          {"Run of program 0", "aspen.maxRunCycles (100000 cycles)", "step"});
  // The bound counts each run's cycles: a short program runs, again and again.
  for (int i = 0; i < 3; ++i)
    engine.run(1);
  std::vector<int> back(8);
  engine.readTensor("addOne", back.data(), back.data() + 8);
  CHECK(back[0] > 3);
}

TEST_CASE("Run bounds reject values that are not numbers", "[error][bound]") {
  FaultCase c;
  requireError<invalid_option>(
      [&] {
        Engine(c.graph, c.good, {{"aspen.maxRunSeconds", "soon"}});
      },
      {"aspen.maxRunSeconds", "soon"});
  requireError<invalid_option>(
      [&] {
        Engine(c.graph, c.good, {{"aspen.maxRunSeconds", "-1"}});
      },
      {"aspen.maxRunSeconds", "-1"});
  requireError<invalid_option>(
      [&] {
        Engine(c.graph, c.good, {{"aspen.maxRunCycles", "many"}});
      },
      {"aspen.maxRunCycles", "many"});
}

TEST_CASE("A fault outside vertex code still ends the process", "[error][fault]") {
  // Aspen's handlers catch faults in vertex code only: elsewhere the handler they
  // replaced (a sanitizer's, the test framework's, the default) sees the fault.
  // The default action behind Aspen's handler (the framework's own restored after).
  struct sigaction dfl {};
  struct sigaction framework {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  REQUIRE(::sigaction(SIGSEGV, &dfl, &framework) == 0);
  FaultCase c;
  Engine engine = c.makeEngine(); // puts Aspen's handlers on top
  engine.run(1);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    volatile std::uintptr_t address = 16; // an address no compiler can see
    *reinterpret_cast<volatile int *>(address) = 1;
    ::_exit(0); // not reached
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  // Killed by SIGSEGV, or (under ASan) exited with the sanitizer's failure status.
  const bool crashed = WIFSIGNALED(status) ? WTERMSIG(status) == SIGSEGV : WEXITSTATUS(status) != 0;
  CHECK(crashed);
  // This process goes on.
  engine.run(1);
  ::sigaction(SIGSEGV, &framework, nullptr);
}

// ---- checked writes (the default) -----------------------------------------------------

TEST_CASE("A vertex writing into another tile's variable is stopped before the write", "[error][fault]") {
  // 64 tiles in parallel chunks on TBB's threads: every tile adds one to its slice, and
  // the vertex on tile 1 writes through a wild index into tile 40's witness (one element,
  // a memset, an atomic add, a loop).
  constexpr unsigned tiles = 64, victim = 40;
  IPUModel model("ipu2");
  model.tilesPerIPU = tiles;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  std::stringstream source(kCodelets);
  graph.addCodelets(source);
  Tensor witness = graph.addVariable(INT, {tiles, 16}, "witness");
  Tensor slices = graph.addVariable(INT, {tiles, 8}, "slices");
  Tensor there = graph.addVariable(UNSIGNED_INT, {2}, "addressOnVictim");
  Tensor address = graph.addVariable(UNSIGNED_INT, {2}, "address");
  Tensor mine = graph.addVariable(INT, {2}, "mine"), how = graph.addVariable(INT, {1}, "how");
  graph.setTileMapping(there, victim);
  for (Tensor t : {address, mine, how})
    graph.setTileMapping(t, 1);
  ComputeSet find = graph.addComputeSet("findAddress");
  graph.setTileMapping(
      graph.addVertex(find, "AddressOf", {{"v", witness[victim].slice(4, 16)}, {"address", there}}), victim);
  ComputeSet cs = graph.addComputeSet("wildIndex");
  for (unsigned t = 0; t < tiles; ++t) {
    graph.setTileMapping(witness[t], t);
    graph.setTileMapping(slices[t], t);
    VertexRef v = graph.addVertex(cs, "AddOne", {{"v", slices[t]}});
    graph.setTileMapping(v, t);
    graph.setPerfEstimate(v, 100000); // parallel chunks
  }
  VertexRef w = graph.addVertex(cs, "WriteAtIndex", {{"address", address}, {"how", how}, {"mine", mine}});
  graph.setTileMapping(w, 1);
  const unsigned faulty = w.getId();
  graph.createHostRead("witnessOut", witness);
  graph.createHostRead("slices", slices);
  graph.createHostRead("mine", mine);
  graph.createHostWrite("witness", witness);
  graph.createHostWrite("how", how);
  Sequence prog({Execute(find), Copy(there, address), Execute(cs)});
  ComputeSet good = graph.addComputeSet("goodWork");
  graph.setTileMapping(graph.addVertex(good, "AddOne", {{"v", slices[victim]}}), victim);
  Engine engine(graph, {prog, Execute(good)});
  engine.load(device);
  std::vector<int> pattern(tiles * 16);
  for (unsigned i = 0; i < pattern.size(); ++i)
    pattern[i] = static_cast<int>(i * 7 + 1);
  for (int mode = 0; mode < 4; ++mode) {
    INFO("mode " << mode);
    engine.writeTensor("witness", pattern.data(), pattern.data() + pattern.size());
    engine.writeTensor("how", &mode, &mode + 1);
    requireError<application_runtime_error>(
        [&] { engine.run(0); },
        {"Vertex " + std::to_string(faulty) + " of type 'WriteAtIndex' on tile 1 in compute set 'wildIndex'",
         "faulted: a write to 0x", "outside its tile", "of tile 40's memory, which belongs to another tile",
         "stopped before it changed tile 40", "IPU exception on tile 1", "must be loaded again"});
    // Tile 40's witness is intact (every tile's is); the vertex's earlier write to its own
    // tile went ahead, its later one did not run.
    std::vector<int> back(tiles * 16);
    engine.readTensor("witnessOut", back.data(), back.data() + back.size());
    CHECK(back == pattern);
    std::vector<int> own(2);
    engine.readTensor("mine", own.data(), own.data() + 2);
    CHECK(own[0] == 5);
    CHECK(own[1] == 0);
    // The engine refuses to run until loaded again, then runs.
    requireError<application_runtime_error>([&] { engine.run(1); }, {"must be loaded again", "WriteAtIndex"});
    engine.load(device);
    engine.run(1);
    std::vector<int> slice(tiles * 8);
    engine.readTensor("slices", slice.data(), slice.data() + slice.size());
    CHECK(slice[victim * 8] == 1);
    CHECK(slice[victim * 8 + 7] == 1);
  }
}

namespace {

/// What the process writes to stderr (where Aspen's log goes) while `f` runs.
template <class F> std::string stderrOf(F &&f) {
  std::fflush(stderr);
  std::FILE *capture = std::tmpfile();
  REQUIRE(capture);
  const int saved = ::dup(2);
  ::dup2(::fileno(capture), 2);
  try {
    f();
  } catch (...) {
    ::dup2(saved, 2);
    ::close(saved);
    std::fclose(capture);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::string text;
  std::rewind(capture);
  for (int c; (c = std::fgetc(capture)) != EOF;)
    text += static_cast<char>(c);
  std::fclose(capture);
  return text;
}

/// Builds, loads and runs one vertex of `type` (from `source`) adding one to 8 ints on tile 0;
/// returns what the log said meanwhile, and checks the result.
std::string runAddOne(const std::string &source, const std::string &type) {
  return stderrOf([&] {
    Device device = makeDevice();
    Graph graph(device.getTarget());
    std::stringstream codelets(source);
    graph.addCodelets(codelets);
    Tensor v = graph.addVariable(INT, {8}, "v");
    graph.setTileMapping(v, 0);
    ComputeSet cs = graph.addComputeSet("addOne");
    graph.setTileMapping(graph.addVertex(cs, type, {{"v", v}}), 0);
    graph.createHostWrite("in", v);
    graph.createHostRead("out", v);
    Engine engine(graph, Execute(cs));
    engine.load(device);
    std::vector<int> data{1, 2, 3, 4, 5, 6, 7, 8}, back(8);
    engine.writeTensor("in", data.data(), data.data() + data.size());
    engine.run(0);
    engine.readTensor("out", back.data(), back.data() + back.size());
    CHECK(back == std::vector<int>{2, 3, 4, 5, 6, 7, 8, 9});
  });
}

const char *kUncheckedCodelets = R"(
#include <poplar/Vertex.hpp>
class AddOneWriteCheck : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<int>> v;
  bool compute() { for (unsigned i = 0; i < v.size(); ++i) v[i] += 1; return true; }
};
)";

} // namespace

TEST_CASE("A library compiled under ASPEN_WRITE_CHECK=0 says it does not check its writes",
          "[error][fault]") {
  // The warning comes once a process: first a library compiled with the check (the default)
  // loads without the warning, then one compiled under ASPEN_WRITE_CHECK=0 (which still counts its
  // cycles) must not claim to check, so the warning names its vertex type.
  const std::string checked = runAddOne(kUncheckedCodelets, "AddOneWriteCheck");
  CHECK(checked.find("does not check its writes") == std::string::npos);
  ::setenv("ASPEN_WRITE_CHECK", "0", 1);
  std::string unchecked;
  try {
    // Another source text, so no in-process memo of the first compile can stand in for it.
    unchecked = runAddOne(std::string("// unchecked\n") + kUncheckedCodelets, "AddOneWriteCheck");
  } catch (...) {
    ::unsetenv("ASPEN_WRITE_CHECK");
    throw;
  }
  ::unsetenv("ASPEN_WRITE_CHECK");
  INFO(unchecked);
  CHECK(unchecked.find("Vertex type 'AddOneWriteCheck'") != std::string::npos);
  CHECK(unchecked.find("does not check its writes") != std::string::npos);
}

// ---- aspen.checkTileWrites ------------------------------------------------------------

TEST_CASE("Under aspen.checkTileWrites a vertex writing into another tile's variable is stopped",
          "[error][fault]") {
  FaultCase c;
  // A vertex on tile 3 finds where tile 3's witness lies; the address goes to tile 1.
  Tensor there = c.graph.addVariable(UNSIGNED_INT, {2}, "addressOnTile3");
  c.graph.setTileMapping(there, 3);
  Tensor address = c.tile1(UNSIGNED_INT, "address", 2), mine = c.tile1(INT, "mine");
  c.graph.createHostRead("mine", mine);
  ComputeSet find = c.graph.addComputeSet("findAddress");
  VertexRef finder = c.graph.addVertex(find, "AddressOf", {{"v", c.witness[3]}, {"address", there}});
  c.graph.setTileMapping(finder, 3);
  c.fault.add(Execute(find));
  c.fault.add(Copy(there, address));
  c.addFaulty("WriteThrough", "intoTile3", {{"address", address}, {"mine", mine}});
  Engine engine = c.makeEngine({{"aspen.checkTileWrites", "true"}});
  requireError<application_runtime_error>(
      [&] { engine.run(0); }, {c.vertexName(), "'WriteThrough'", "tile 1", "compute set 'intoTile3'",
                               "SIGSEGV", "of tile 3's memory, which belongs to another tile",
                               "aspen.checkTileWrites", "IPU exception on tile 1"});
  // Its write into its own tile went ahead; tile 3's witness is unchanged.
  int back = 0;
  engine.readTensor("mine", &back, &back + 1);
  CHECK(back == 5);
  c.checkContained(engine, "WriteThrough");
}

TEST_CASE("aspen.checkTileWrites leaves correct programs' results unchanged", "[error][fault]") {
  // Every tile adds one to its slice, the slices rotate between tiles, twice.
  IPUModel model("ipu2");
  model.tilesPerIPU = 16;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  std::stringstream source(kCodelets);
  graph.addCodelets(source);
  Tensor x = graph.addVariable(INT, {16, 8}, "x"), y = graph.addVariable(INT, {16, 8}, "y");
  ComputeSet cs = graph.addComputeSet("addOne");
  for (unsigned t = 0; t < 16; ++t) {
    graph.setTileMapping(x[t], t);
    graph.setTileMapping(y[t], t);
    VertexRef v = graph.addVertex(cs, "AddOne", {{"v", x[t]}});
    graph.setTileMapping(v, t);
    graph.setPerfEstimate(v, 100000); // parallel chunks without the check
  }
  std::vector<int> init(16 * 8);
  for (unsigned i = 0; i < init.size(); ++i)
    init[i] = static_cast<int>(i);
  graph.setInitialValue(x, init);
  graph.createHostRead("x", x);
  Sequence prog;
  for (int round = 0; round < 2; ++round) {
    prog.add(Execute(cs));
    prog.add(Copy(concat(x.slice(1, 16), x.slice(0, 1)), y));
    prog.add(Copy(y, x));
  }
  std::vector<int> expected(16 * 8);
  for (unsigned t = 0; t < 16; ++t)
    for (unsigned i = 0; i < 8; ++i)
      expected[t * 8 + i] = init[((t + 2) % 16) * 8 + i] + 2;
  for (const char *check : {"false", "true"}) {
    INFO("aspen.checkTileWrites " << check);
    Engine engine(graph, prog, {{"aspen.checkTileWrites", check}});
    engine.load(device);
    engine.run(0);
    std::vector<int> back(16 * 8);
    engine.readTensor("x", back.data(), back.data() + back.size());
    CHECK(back == expected);
  }
  requireError<invalid_option>(
      [&] {
        Engine(graph, prog, {{"aspen.checkTileWrites", "yes"}});
      },
      {"aspen.checkTileWrites", "yes"});
}
