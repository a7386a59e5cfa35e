// Copyright (c) Aspen contributors.
// Conformance of poplar::Engine (poplar_api.md §"poplar/Engine.hpp, Executable.hpp")
// and of every program kind (§"poplar/Program.hpp") run end to end: a graph with
// test codelets, compiled, loaded on an IPUModel device, results checked against
// host loops, and identical with one host thread and with all of them.
#include "EngineImpl.hpp"
#include "ProfileReport.hpp"
#include "RuntimeTestSupport.hpp"

#include <poplar/CycleCount.hpp>
#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using runtime_test::TestGraph;

namespace {

std::vector<float> iota(std::size_t n, float start, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = start + step * float(i);
  return v;
}

/// A scratch directory removed at the end of the test.
struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/aspen-runtime-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

} // namespace

TEST_CASE("Execute, inter-tile Copy and host handles (Program.hpp Execute, Copy; Engine write/readTensor)",
          "[conformance][engine]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {4, 8}, "x");
  Tensor y = g.addVariable(FLOAT, {4, 8}, "y");
  Tensor z = g.addVariable(FLOAT, {4, 8}, "z");
  ComputeSet add = g.addComputeSet("addOne");
  ComputeSet scale = g.addComputeSet("scale");
  for (unsigned r = 0; r < 4; ++r) {
    g.setTileMapping(x[r], r);
    g.setTileMapping(y[r], (r + 1) % 4);
    g.setTileMapping(z[r], (r + 2) % 4);
    VertexRef a = g.addVertex(add, "AddOne", {{"data", x[r]}});
    g.setTileMapping(a, r);
    // The vertex reads y[r] from another tile: exchange before compute.
    VertexRef s = g.addVertex(scale, "ScaleMulti", {{"in", y[r]}, {"out", z[r]}});
    g.setInitialValue(s["factor"], float(r + 2));
    g.setTileMapping(s, (r + 2) % 4);
  }
  g.createHostWrite("x-in", x);
  g.createHostRead("x-out", x);
  g.createHostRead("z-out", z);
  Sequence prog({Execute(add), Copy(x, y), Execute(scale)});
  Engine engine(g, prog);
  engine.load(t.device);
  const std::vector<float> input = iota(32, -3.0f, 0.5f);
  engine.writeTensor("x-in", input.data(), input.data() + input.size());
  engine.run(0);
  engine.run(); // default program index 0

  std::vector<float> xs(32), zs(32);
  engine.readTensor("x-out", xs.data(), xs.data() + xs.size());
  engine.readTensor<float>("z-out", zs);
  for (unsigned r = 0; r < 4; ++r)
    for (unsigned c = 0; c < 8; ++c) {
      const float expectedX = input[8 * r + c] + 2.0f;
      REQUIRE(xs[8 * r + c] == expectedX);
      REQUIRE(zs[8 * r + c] == expectedX * float(r + 2));
    }
  // The templated ArrayRef forms and the legacy end-less form.
  engine.writeTensor("x-in", ArrayRef<float>(input));
  std::vector<float> again(32);
  engine.readTensor("x-out", again.data());
  REQUIRE(again == input);
  REQUIRE(engine.getTileClockFrequency() == t.device.getTarget().getTileClockFrequency());
}

TEST_CASE("Engine constructors: options, several programs, Graph&&, Executable&& and reloading",
          "[conformance][engine]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {8}, "x");
  g.setTileMapping(x, 1);
  ComputeSet add = g.addComputeSet("addOne");
  g.setTileMapping(g.addVertex(add, "AddOne", {{"data", x}}), 1);
  g.createHostWrite("x-in", x);
  g.createHostRead("x-out", x);
  const std::vector<float> zeros(8, 0.0f);
  std::vector<float> out(8);

  SECTION("brace-initialised options and a single program") {
    Sequence prog({Execute(add)});
    Engine engine{g, prog, {{"debug.retainDebugInformation", "true"}}};
    engine.load(t.device);
    engine.writeTensor("x-in", zeros);
    engine.run(0);
    engine.readTensor("x-out", out);
    REQUIRE(out == std::vector<float>(8, 1.0f));
  }
  SECTION("several programs, progress reported") {
    int lastStep = -1, total = 0;
    Engine engine(g, {Sequence(), Execute(add), Repeat(3, Execute(add))}, {}, [&](int step, int of) {
      REQUIRE(step >= lastStep);
      lastStep = step;
      total = of;
    });
    REQUIRE(total > 0);
    engine.load(t.device);
    engine.writeTensor("x-in", zeros);
    engine.run(2);
    engine.run(0);
    engine.run(1);
    engine.readTensor("x-out", out);
    REQUIRE(out == std::vector<float>(8, 4.0f));
    // Loading again restores the initial state.
    engine.load(t.device);
    engine.writeTensor("x-in", zeros);
    engine.run(1);
    engine.readTensor("x-out", out);
    REQUIRE(out == std::vector<float>(8, 1.0f));
  }
  SECTION("an executable compiled earlier, saved and read back") {
    Executable exe = compileGraph(g, {Execute(add)});
    std::stringstream saved;
    exe.serialize(saved);
    Engine engine(Executable::deserialize(saved));
    engine.loadAndRun(t.device); // the variable starts at zero
    engine.readTensor("x-out", out);
    REQUIRE(out == std::vector<float>(8, 1.0f));
    Engine moved(std::move(engine));
    moved.run(0);
    moved.readTensor("x-out", out);
    REQUIRE(out == std::vector<float>(8, 2.0f));
  }
  SECTION("a moved-in graph") {
    Engine engine(std::move(g), Execute(add));
    engine.load(t.device);
    engine.run(0);
    engine.readTensor("x-out", out);
    REQUIRE(out == std::vector<float>(8, 1.0f));
  }
}

namespace {

/// Counts calls; prefetch supplies data only every other call.
class Source : public StreamCallback {
public:
  explicit Source(std::vector<std::string> &log) : log_(log) {}
  Result prefetch(void *p) override {
    if (prefetches_++ % 2 == 1) {
      log_.push_back("prefetch:none");
      return Result::NotAvailable;
    }
    log_.push_back("prefetch");
    fill(p);
    return Result::Success;
  }
  void fetch(void *p) override {
    log_.push_back("fetch");
    fill(p);
  }
  void complete() override { log_.push_back("complete"); }

private:
  void fill(void *p) {
    std::vector<float> v(4, float(next_++));
    std::memcpy(p, v.data(), 16);
  }
  std::vector<std::string> &log_;
  unsigned prefetches_ = 0;
  int next_ = 10;
};

} // namespace

TEST_CASE("Streams: fixed, circular and callback connections (Engine connectStream*)",
          "[conformance][streams]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  g.setTileMapping(x, 2);
  ComputeSet add = g.addComputeSet("addOne");
  g.setTileMapping(g.addVertex(add, "AddOne", {{"data", x}}), 2);
  DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 4);
  DataStream out = g.addDeviceToHostFIFO("out", FLOAT, 4);
  Engine engine(g, Sequence({Copy(in, x), Execute(add), Copy(x, out)}));
  engine.load(t.device);

  SECTION("fixed buffers") {
    std::vector<float> src = iota(4, 1, 1), dst(4);
    engine.connectStream("in", src.data());
    engine.connectStream(out, dst.data());
    engine.run(0);
    REQUIRE(dst == iota(4, 2, 1));
    src[0] = 100;
    engine.run(0);
    REQUIRE(dst[0] == 101);
  }
  SECTION("circular buffers keep their position across runs") {
    std::vector<float> src = iota(12, 0, 1); // three transfers
    std::vector<float> dst(8);               // two transfers
    engine.connectStream("in", src);
    engine.connectStream("out", dst.data(), dst.data() + dst.size());
    std::vector<float> seen;
    for (int run = 0; run < 4; ++run) {
      engine.run(0);
      seen.push_back(dst[run % 2 * 4]);
    }
    // Transfers 0, 1, 2, 0 of the input, plus one.
    REQUIRE(seen == std::vector<float>{1, 5, 9, 1});
  }
  SECTION("callbacks: prefetch, fetch when not available, complete; reconnecting between runs") {
    std::vector<std::string> log;
    engine.connectStreamToCallback("in", std::unique_ptr<Source>(new Source(log)));
    std::vector<float> received;
    engine.connectStreamToCallback("out", 0, [&](void *p) {
      const float *f = static_cast<const float *>(p);
      received.insert(received.end(), f, f + 4);
    });
    engine.run(0);
    engine.run(0);
    REQUIRE(log == std::vector<std::string>{"prefetch", "complete", "prefetch:none", "fetch", "complete"});
    REQUIRE(received == std::vector<float>{11, 11, 11, 11, 12, 12, 12, 12});
    std::vector<float> src(4, 7.0f);
    engine.connectStream("in", src.data());
    engine.run(0);
    REQUIRE(received.back() == 8.0f);
  }
}

TEST_CASE(
    "Remote buffers: host copies and Copy with row offsets (Engine copy*RemoteBuffer, Program.hpp Copy)",
    "[conformance][remote]") {
  TestGraph t;
  Graph &g = t.graph;
  RemoteBuffer rb = g.addRemoteBuffer("rb", FLOAT, 4, 3);
  Tensor rows = g.addVariable(FLOAT, {2, 4}, "rows");
  Tensor offsets = g.addVariable(UNSIGNED_INT, {2}, "offsets");
  g.setTileMapping(rows[0], 0);
  g.setTileMapping(rows[1], 3);
  g.setTileMapping(offsets, 1);
  ComputeSet add = g.addComputeSet("addOne");
  for (unsigned r = 0; r < 2; ++r)
    g.setTileMapping(g.addVertex(add, "AddOne", {{"data", rows[r]}}), r == 0 ? 0 : 3);
  g.createHostWrite("offsets", offsets);
  g.createHostRead("rows", rows);
  Engine engine(g, Sequence({Copy(rb, rows, offsets), Execute(add), Copy(rows, rb, offsets)}));
  engine.load(t.device);
  for (unsigned r = 0; r < 3; ++r) {
    std::vector<float> row = iota(4, float(10 * r), 1);
    engine.copyToRemoteBuffer(row.data(), "rb", r);
  }
  const std::vector<unsigned> chosen = {2, 0};
  engine.writeTensor("offsets", chosen);
  engine.run(0);
  std::vector<float> got(8);
  engine.readTensor("rows", got);
  std::vector<float> expected = iota(4, 21, 1);
  const std::vector<float> second = iota(4, 1, 1);
  expected.insert(expected.end(), second.begin(), second.end());
  REQUIRE(got == expected);
  std::vector<float> row(4);
  engine.copyFromRemoteBuffer("rb", row.data(), 2);
  REQUIRE(row == iota(4, 21, 1));
  engine.copyFromRemoteBuffer("rb", row.data(), 1);
  REQUIRE(row == iota(4, 10, 1)); // untouched
  REQUIRE_THROWS_AS(engine.copyFromRemoteBuffer("rb", row.data(), 3), index_error);
}

TEST_CASE("Control programs: Repeat, RepeatWhileTrue/False, If, Switch, Call, Block, Sync, WriteUndef",
          "[conformance][control]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor acc = g.addVariable(FLOAT, {4}, "acc");
  Tensor counter = g.addVariable(INT, {}, "counter");
  Tensor positive = g.addVariable(BOOL, {}, "positive");
  Tensor zero = g.addVariable(BOOL, {}, "zero");
  Tensor choice = g.addVariable(INT, {}, "choice");
  Tensor flag = g.addVariable(UNSIGNED_INT, {}, "flag");
  for (const Tensor &v : {counter, positive, zero, choice, flag})
    g.setTileMapping(v, 3);
  g.setTileMapping(acc, 0);
  ComputeSet add = g.addComputeSet("addOne");
  g.setTileMapping(g.addVertex(add, "AddOne", {{"data", acc}}), 0);
  ComputeSet down = g.addComputeSet("countDown");
  g.setTileMapping(g.addVertex(down, "CountDown", {{"x", counter}, {"positive", positive}, {"zero", zero}}),
                   3);
  g.createHostWrite("counter", counter);
  g.createHostWrite("choice", choice);
  g.createHostWrite("flag", flag);
  g.createHostWrite("acc-in", acc);
  g.createHostRead("acc", acc);
  Function addTwice = g.addFunction(Sequence({Execute(add), Execute(add)}));
  Switch sw(choice, {{1, Execute(add)}, {-4, Repeat(3, Execute(add))}}, Sequence());
  std::vector<Program> programs = {
      Repeat(5, Execute(add)),                                // 0
      RepeatWhileTrue(Execute(down), positive, Execute(add)), // 1
      RepeatWhileFalse(Execute(down), zero, Execute(add)),    // 2
      If(flag, Execute(add), Repeat(2, Execute(add))),        // 3
      sw,                                                     // 4
      Sequence({Call(addTwice), Block(Call(addTwice), "block"), Sync(SyncType::INTERNAL),
                WriteUndef(choice)}), // 5
      If(flag, Execute(add)),         // 6
  };
  Engine engine(g, programs);
  engine.load(t.device);
  auto runFromZero = [&](unsigned program) {
    engine.writeTensor("acc-in", std::vector<float>(4, 0.0f));
    engine.run(program);
    std::vector<float> a(4);
    engine.readTensor("acc", a);
    for (float v : a)
      REQUIRE(v == a[0]);
    return a[0];
  };
  auto setInt = [&](const char *handle, int v) { engine.writeTensor(handle, &v, &v + 1); };

  REQUIRE(runFromZero(0) == 5.0f);
  setInt("counter", 5); // cond runs 5 times (4, 3, 2, 1, 0); the body while positive
  REQUIRE(runFromZero(1) == 4.0f);
  setInt("counter", 3); // 2, 1, 0: the body while not zero
  REQUIRE(runFromZero(2) == 2.0f);
  setInt("flag", 1);
  REQUIRE(runFromZero(3) == 1.0f);
  REQUIRE(runFromZero(6) == 1.0f);
  setInt("flag", 0);
  REQUIRE(runFromZero(3) == 2.0f);
  REQUIRE(runFromZero(6) == 0.0f);
  setInt("choice", 1);
  REQUIRE(runFromZero(4) == 1.0f);
  setInt("choice", -4);
  REQUIRE(runFromZero(4) == 3.0f);
  setInt("choice", 9);
  REQUIRE(runFromZero(4) == 0.0f);
  REQUIRE(runFromZero(5) == 4.0f);
}

TEST_CASE("PrintTensor and codelet printf go to the print stream (Program.hpp PrintTensor)",
          "[conformance][print]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor f = g.addConstant<float>(FLOAT, {2}, {0.5f, 2.0f}, "f");
  Tensor m = g.addConstant<int>(INT, {2, 2}, {1, 2, 3, 4}, "m");
  Tensor seven = g.addConstant<int>(INT, {}, 7, "seven");
  g.setTileMapping(f, 0);
  g.setTileMapping(m, 1);
  g.setTileMapping(seven, 2);
  ComputeSet say = g.addComputeSet("say");
  g.setTileMapping(g.addVertex(say, "Say", {{"x", seven}}), 2);
  Engine engine(g, Sequence({PrintTensor("f", f), PrintTensor("m", m), Execute(say)}));
  std::ostringstream printed;
  engine.setPrintStream(printed);
  engine.load(t.device);
  engine.run(0);
  REQUIRE(printed.str() == "f: [0.5000000 2.0000000]\nm: [\n  [1 2]\n  [3 4]\n]\nsay 7\n");
}

TEST_CASE("Engines sharing a codelet library print to their own streams, run after run",
          "[conformance][print]") {
  // The library's print sink is process-wide; an engine sets it only when another engine set
  // it since its own last run (Loader.hpp setPrintSink).
  TestGraph t;
  Graph &g = t.graph;
  Tensor seven = g.addConstant<int>(INT, {}, 7, "seven");
  g.setTileMapping(seven, 0);
  ComputeSet say = g.addComputeSet("say");
  g.setTileMapping(g.addVertex(say, "Say", {{"x", seven}}), 0);
  std::ostringstream a, b, c;
  Engine first(g, Execute(say)), second(g, Execute(say));
  first.setPrintStream(a);
  second.setPrintStream(b);
  first.load(t.device);
  second.load(t.device);
  for (Engine *e : {&first, &first, &second, &first, &second, &second})
    e->run(0);
  REQUIRE(a.str() == "say 7\nsay 7\nsay 7\n");
  REQUIRE(b.str() == "say 7\nsay 7\nsay 7\n");
  {
    Engine third(g, Execute(say)); // made, run and destroyed between the others' runs
    third.setPrintStream(c);
    third.load(t.device);
    third.run(0);
  }
  first.run(0);
  second.run(0);
  REQUIRE(c.str() == "say 7\n");
  REQUIRE(a.str() == "say 7\nsay 7\nsay 7\nsay 7\n");
  REQUIRE(b.str() == "say 7\nsay 7\nsay 7\nsay 7\n");
}

TEST_CASE("Execute with a failure flag reports vertex failure in the flag (Program.hpp Execute)",
          "[conformance][execute]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(INT, {3}, "x");
  Tensor failed = g.addVariable(UNSIGNED_INT, {}, "failed");
  g.setTileMapping(failed, 0);
  ComputeSet check = g.addComputeSet("check");
  for (unsigned i = 0; i < 3; ++i) {
    g.setTileMapping(x[i], i);
    g.setTileMapping(g.addVertex(check, "CheckNonNegative", {{"x", x[i]}}), i);
  }
  g.createHostWrite("x", x);
  g.createHostRead("failed", failed);
  Engine engine(g, Execute(check, failed));
  engine.load(t.device);
  auto run = [&](std::vector<int> values) {
    engine.writeTensor("x", values);
    engine.run(0);
    unsigned f = 99;
    engine.readTensor("failed", &f, &f + 1);
    return f;
  };
  REQUIRE(run({0, 1, 2}) == 0);
  REQUIRE(run({0, -1, 2}) != 0);
}

TEST_CASE("cycleCount and cycleStamp read the simulated cycle counter (CycleCount.hpp)",
          "[conformance][cycles]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {64}, "x");
  g.setTileMapping(x, 1);
  ComputeSet add = g.addComputeSet("addOne");
  VertexRef v = g.addVertex(add, "AddOne", {{"data", x}});
  g.setTileMapping(v, 1);
  g.setPerfEstimate(v, 1000);
  Sequence body({Execute(add), Execute(add)});
  Tensor count = cycleCount(g, body, 0, SyncType::INTERNAL, "count");
  Sequence prog;
  Tensor before = cycleStamp(g, prog, 2, SyncType::INTERNAL, "before");
  prog.add(body);
  Tensor after = cycleStamp(g, prog, 2, SyncType::INTERNAL, "after");
  g.createHostRead("count", count);
  g.createHostRead("before", before);
  g.createHostRead("after", after);
  Engine engine(g, prog);
  engine.load(t.device);
  engine.run(0);
  std::uint64_t c = 0, b = 0, a = 0;
  engine.readTensor("count", &c, &c + 1);
  engine.readTensor("before", &b, &b + 1);
  engine.readTensor("after", &a, &a + 1);
  // Two executions of a 1000-cycle vertex (6 worker slots: 6000 machine cycles each).
  REQUIRE(c >= 2 * 6000);
  // The stamps bracket the counted program and its syncs.
  REQUIRE(a > b);
  REQUIRE(a - b >= c);
  // The count runs from the end of cycleCount's first sync (the program's second
  // sync; the first is the "before" stamp's) to the end of its second sync.
  const aspen::rt::ExecutionProfile &profile = engine.getImpl().profile_;
  const auto &steps = engine.getImpl().exe().steps;
  std::uint64_t firstSyncEnd = 0, countEnd = 0;
  int syncsSeen = 0;
  for (const auto &e : profile.trace.entries()) {
    if (steps[e.step].kind == aspen::exe::StepKind::Sync && ++syncsSeen == 2)
      firstSyncEnd = e.startCycle + e.cycles;
    if (steps[e.step].kind == aspen::exe::StepKind::Sync && syncsSeen == 3)
      countEnd = e.startCycle + e.cycles;
  }
  REQUIRE(c == countEnd - firstSyncEnd);
}

TEST_CASE("Results are identical with one host thread and with all threads", "[conformance][threads]") {
  // 32 tiles: each scales its row (MultiVertex), rows rotate by one tile, then
  // each tile adds one and sums its row; repeated several times. Large enough
  // that compute sets and exchanges run as parallel loops.
  constexpr unsigned tiles = 32, n = 1024;
  auto runOnce = [&](std::size_t threads) {
    std::unique_ptr<tbb::global_control> limit;
    if (threads)
      limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
    TestGraph t(tiles);
    Graph &g = t.graph;
    Tensor a = g.addVariable(FLOAT, {tiles, n}, "a");
    Tensor b = g.addVariable(FLOAT, {tiles, n}, "b");
    Tensor sums = g.addVariable(FLOAT, {tiles}, "sums");
    ComputeSet scale = g.addComputeSet("scale");
    ComputeSet finish = g.addComputeSet("finish");
    for (unsigned r = 0; r < tiles; ++r) {
      g.setTileMapping(a[r], r);
      g.setTileMapping(b[r], r);
      g.setTileMapping(sums[r], r);
      VertexRef s = g.addVertex(scale, "ScaleMulti", {{"in", a[r]}, {"out", b[(r + 1) % tiles]}});
      g.setInitialValue(s["factor"], 1.0f + 0.125f * float(r % 5));
      g.setTileMapping(s, r);
      g.setTileMapping(g.addVertex(finish, "AddOne", {{"data", b[r]}}), r);
      g.setTileMapping(g.addVertex(finish, "Sum", {{"in", b[r]}, {"out", sums[r]}}), r);
    }
    g.createHostWrite("a", a);
    g.createHostRead("a-out", a);
    g.createHostRead("sums", sums);
    Engine engine(g, Repeat(4, Sequence({Execute(scale), Execute(finish), Copy(b, a)})));
    engine.load(t.device);
    if (!threads && tbb::this_task_arena::max_concurrency() > 1) {
      const auto &exe = engine.getImpl().exe();
      for (unsigned c = 0; c < exe.computeSteps.size(); ++c)
        REQUIRE(engine.getImpl().executor_->computeChunks(c).parallel());
    }
    std::vector<float> input(tiles * n);
    for (std::size_t i = 0; i < input.size(); ++i)
      input[i] = float(i % 17) * 0.25f - 1.0f;
    engine.writeTensor("a", input);
    engine.run(0);
    std::vector<float> result(tiles * n), s(tiles);
    engine.readTensor("a-out", result);
    engine.readTensor("sums", s);
    result.insert(result.end(), s.begin(), s.end());
    return std::make_pair(result, input);
  };
  const auto one = runOnce(1);
  const auto all = runOnce(0);
  REQUIRE(one.first == all.first);

  // The host loop.
  std::vector<float> a = one.second, b(a.size()), sums(tiles);
  for (int iter = 0; iter < 4; ++iter) {
    for (unsigned r = 0; r < tiles; ++r)
      for (unsigned i = 0; i < n; ++i)
        b[(r + 1) % tiles * n + i] = a[r * n + i] * (1.0f + 0.125f * float(r % 5));
    for (unsigned r = 0; r < tiles; ++r) {
      float s = 0;
      for (unsigned i = 0; i < n; ++i) {
        b[r * n + i] += 1.0f;
        s += b[r * n + i];
      }
      sums[r] = s;
    }
    a = b;
  }
  std::vector<float> expected = a;
  expected.insert(expected.end(), sums.begin(), sums.end());
  REQUIRE(one.first == expected);
}

TEST_CASE("A full 1,472-tile IPUModel runs one vertex per tile", "[conformance][engine]") {
  TestGraph t(1472);
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {1472, 2}, "x");
  ComputeSet add = g.addComputeSet("addOne");
  for (unsigned tile = 0; tile < 1472; ++tile) {
    g.setTileMapping(x[tile], tile);
    g.setTileMapping(g.addVertex(add, "AddOne", {{"data", x[tile]}}), tile);
  }
  g.createHostWrite("x", x);
  g.createHostRead("x-out", x);
  Engine engine(g, Repeat(3, Execute(add)));
  engine.load(t.device);
  std::vector<float> input = iota(2 * 1472, 0, 1), out(2 * 1472);
  engine.writeTensor("x", input);
  engine.run(0);
  engine.readTensor("x-out", out);
  for (std::size_t i = 0; i < out.size(); ++i)
    REQUIRE(out[i] == input[i] + 3.0f);
}

TEST_CASE("printProfileSummary reports Target, Graph, Memory Usage and Execution (Engine profiling)",
          "[conformance][profile]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {16}, "x");
  g.setTileMapping(x, 0);
  ComputeSet add = g.addComputeSet("addOne");
  VertexRef v = g.addVertex(add, "AddOne", {{"data", x}});
  g.setTileMapping(v, 0);
  g.setPerfEstimate(v, 100);
  Engine engine(g, Repeat(3, Execute(add)));
  std::ostringstream before;
  engine.printProfileSummary(before);
  REQUIRE(before.str().find("Memory Usage:") != std::string::npos);
  REQUIRE(before.str().find("Execution:") == std::string::npos);
  engine.load(t.device);
  engine.run(0);
  std::ostringstream summary;
  engine.printProfileSummary(summary, {{"showExecutionSteps", "true"}});
  const std::string s = summary.str();
  for (const char *section :
       {"Target:", "Number of IPUs", "Tiles per IPU", "Clock Speed (approx)", "Graph:", "Number of vertices",
        "Number of compute sets", "Memory Usage:", "Including Gaps", "tile(s) out of memory",
        "Execution:", "Total cycles", "Tile compute cycles", "Tile sync cycles",
        "Cycles by vertex type:", "AddOne (3 instances)", "Execution steps:", "Execute addOne"})
    REQUIRE(s.find(section) != std::string::npos);
  // The Execute step's cycles: 3 executions of a 100-cycle worker vertex.
  const auto &profile = engine.getImpl().profile_;
  REQUIRE(profile.vertexTypeCycles.size() == 1);
  REQUIRE(profile.vertexTypeCycles[0] == 300);
  REQUIRE(profile.computeCycles == 3 * 600);
  REQUIRE(profile.totalCycles == profile.computeCycles + profile.exchangeCycles + profile.hostExchangeCycles +
                                     profile.streamingMemoryCycles + profile.syncCycles +
                                     profile.controlCycles);
  // The launch (docs/cost-model.md, "Launch"): a host-link round trip and a host sync per run,
  // beside the program's total.
  const auto &target = engine.getImpl().exe().target;
  REQUIRE(profile.launchCycles == std::uint64_t(target.hostLinkLatencyCycles) + target.globalSyncCycles);
  REQUIRE(profile.launchCycles == 1330 + 150); // the ipu2 model's defaults
  REQUIRE(s.find("Launch cycles (Engine::run)") != std::string::npos);
  REQUIRE(s.find("1,480 (1 run(s), not in the total)") != std::string::npos);
  engine.run(0);
  REQUIRE(profile.launchCycles == 2 * (1330 + 150));
  engine.resetExecutionProfile();
  engine.disableExecutionProfiling();
  engine.run(0);
  REQUIRE(engine.getImpl().profile_.totalCycles == 0);
  engine.enableExecutionProfiling();
  engine.run(0);
  REQUIRE(engine.getImpl().profile_.computeCycles == 3 * 600);
}

TEST_CASE("Tile averages are Poplar's per-tile view: a tile's sync includes its wait for the slowest tile",
          "[conformance][profile][cycles]") {
  TestGraph t; // 4 tiles
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {16}, "x");
  g.setTileMapping(x, 0);
  Tensor y = g.addVariable(FLOAT, {16}, "y");
  g.setTileMapping(y, 1);
  Tensor z = g.addVariable(FLOAT, {16}, "z");
  g.setTileMapping(z, 3);
  ComputeSet add = g.addComputeSet("addOne");
  VertexRef fast = g.addVertex(add, "AddOne", {{"data", x}});
  g.setTileMapping(fast, 0);
  g.setPerfEstimate(fast, 100);
  VertexRef slow = g.addVertex(add, "AddOne", {{"data", y}});
  g.setTileMapping(slow, 1);
  g.setPerfEstimate(slow, 300);
  Engine engine(g, Sequence({Execute(add), Copy(x, z)}));
  engine.load(t.device);
  engine.run(0);
  const auto &exe = engine.getImpl().exe();
  const auto &target = exe.target;
  const std::uint64_t workers = target.numWorkerContexts, S = target.syncCycles + target.minIPUSyncDelay;
  const std::uint64_t X = target.exchangeOverheadCycles, P = target.exchangeSourceCycles;
  const std::uint64_t E = target.exchangeBytesPerCycle;
  // The compute set lasts as long as its slowest tile (300 thread cycles on tile 1) and a sync;
  // the copy as its slowest tile (tile 3 receiving 64 bytes from one tile), set-up and sync.
  const std::uint64_t execute = 300 * workers + S, copy = 64 / E + P + X + S;
  const auto &profile = engine.getImpl().profile_;
  REQUIRE(profile.totalCycles == execute + copy);
  const nlohmann::json averages =
      aspen::rt::profileJson(exe, profile, false, true)["execution"]["tileAverageCycles"];
  // Each tile's own compute (tiles 2 and 3 have none) and exchange (tile 0 sends 64 bytes, tile 3
  // receives them from one tile; both pay the set-up), over the 4 tiles.
  const double compute = double((100 + 300) * workers) / 4;
  const double exchange = double(64 / E + X + 64 / E + P + X) / 4;
  CHECK(averages["compute"].get<double>() == Approx(compute));
  CHECK(averages["exchange"].get<double>() == Approx(exchange));
  CHECK(averages["hostExchange"].get<double>() == 0);
  // The rest of each tile's time is sync: its wait for the slowest tile, and the syncs.
  CHECK(averages["sync"].get<double>() == Approx(double(execute + copy) - compute - exchange));
  std::ostringstream summary;
  engine.printProfileSummary(summary);
  // Every kind is printed, control too, and the printed averages add up to the total.
  const std::string text = summary.str();
  double printed = 0;
  for (const char *line :
       {"Tile average compute cycles", "Tile average IPU exchange cycles",
        "Tile average host exchange cycles", "Tile average sync cycles", "Tile average control cycles"}) {
    INFO(line);
    const std::size_t at = text.find(line);
    REQUIRE(at != std::string::npos);
    const std::size_t colon = text.find(':', at);
    std::string value = text.substr(colon + 1, text.find('\n', at) - colon - 1);
    value.erase(std::remove(value.begin(), value.end(), ','), value.end());
    printed += std::stod(value); // "  1200.0 (61.5% of total)"
  }
  CHECK(printed == Approx(double(profile.totalCycles)).margin(0.05 * 5));
}

TEST_CASE("Host transfers are priced over the IPU's host link (docs/cost-model.md)",
          "[conformance][cycles]") {
  IPUModel model; // ipu2: 1,472 tiles at 1.33 GHz, host link 32 GB/s each way
  Device device = model.createDevice();
  Graph g(device.getTarget());
  const std::size_t perTile = 1024; // floats: 4 KiB a tile, 6 MB in all
  const std::size_t n = perTile * g.getTarget().getNumTiles();
  Tensor x = g.addVariable(FLOAT, {n}, "x");
  for (unsigned tile = 0; tile < g.getTarget().getNumTiles(); ++tile)
    g.setTileMapping(x.slice(tile * perTile, (tile + 1) * perTile), tile);
  Tensor y = g.addVariable(FLOAT, {4}, "y");
  g.setTileMapping(y, 0);
  DataStream in = g.addHostToDeviceFIFO("in", FLOAT, n);
  DataStream small = g.addHostToDeviceFIFO("small", FLOAT, 4);
  Engine engine(g, {Copy(in, x), Copy(small, y)});
  std::vector<float> host(n, 1.5f), hostSmall(4, 2.0f);
  engine.connectStream("in", host.data());
  engine.connectStream("small", hostSmall.data());
  engine.load(device);
  engine.run(0);
  // Link-bound: 6,029,312 bytes at 32e9 / 1.33e9 bytes a cycle, where each tile alone needs
  // only 4,096 / 4 = 1,024 cycles.
  const double linkBytesPerCycle = 32e9 / 1.33e9;
  const auto linkCycles = static_cast<std::uint64_t>(double(n * 4) / linkBytesPerCycle);
  const std::uint64_t first = engine.getImpl().profile_.hostExchangeCycles;
  REQUIRE(first >= linkCycles);
  REQUIRE(first < linkCycles + 5000);
  engine.resetExecutionProfile();
  engine.run(1);
  // 16 bytes: the link's round trip (about 1 us) dominates.
  const std::uint64_t tiny = engine.getImpl().profile_.hostExchangeCycles;
  REQUIRE(tiny >= 1330);
  REQUIRE(tiny < 2000);
}

TEST_CASE("The profile times each run on the host; compute sets only under aspen.profileHostComputeTime",
          "[conformance][profile]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {16}, "x");
  g.setTileMapping(x, 0);
  ComputeSet add = g.addComputeSet("addOne");
  g.setTileMapping(g.addVertex(add, "AddOne", {{"data", x}}), 0);
  for (const bool perComputeSet : {false, true}) {
    CAPTURE(perComputeSet);
    OptionFlags options;
    if (perComputeSet)
      options.set("aspen.profileHostComputeTime", "true");
    Engine engine(g, Repeat(50, Execute(add)), options);
    engine.load(t.device);
    engine.run(0);
    const auto &profile = engine.getImpl().profile_;
    REQUIRE(profile.hostTicks > 0);
    std::ostringstream summary;
    engine.printProfileSummary(summary);
    const nlohmann::json report = aspen::rt::profileJson(engine.getImpl().exe(), profile, false, true);
    const nlohmann::json &execution = report.contains("execution") ? report["execution"] : report;
    REQUIRE(execution["hostSeconds"].get<double>() > 0);
    REQUIRE(summary.str().find("Host time simulating") != std::string::npos);
    if (perComputeSet) {
      // 50 compute sets timed, inside the run's time.
      REQUIRE(profile.hostComputeTicks > 0);
      REQUIRE(profile.hostComputeTicks <= profile.hostTicks);
      REQUIRE(execution["hostComputeSeconds"].get<double>() > 0);
      REQUIRE(execution["hostComputeSeconds"].get<double>() <= execution["hostSeconds"].get<double>());
      REQUIRE(summary.str().find("of which compute sets") != std::string::npos);
    } else {
      // Not measured: absent, not reported as zero.
      REQUIRE(profile.hostComputeTicks == 0);
      REQUIRE_FALSE(execution.contains("hostComputeSeconds"));
      REQUIRE(summary.str().find("of which compute sets") == std::string::npos);
    }
  }
  // A value other than "true" or "false" is refused, naming the option.
  REQUIRE_THROWS_WITH(Engine(g, Execute(add), {{"aspen.profileHostComputeTime", "yes"}}),
                      Catch::Contains("aspen.profileHostComputeTime"));
}

TEST_CASE("autoReport writes profile.json; POPLAR_ENGINE_OPTIONS is merged and wins (Engine options)",
          "[conformance][profile]") {
  TestGraph t;
  Graph &g = t.graph;
  Tensor x = g.addVariable(FLOAT, {16}, "x");
  g.setTileMapping(x, 3);
  ComputeSet add = g.addComputeSet("addOne");
  g.setTileMapping(g.addVertex(add, "AddOne", {{"data", x}}), 3);
  TempDir dir, ignored;
  SECTION("from the options") {
    {
      Engine engine(g, Execute(add), {{"autoReport.all", "true"}, {"autoReport.directory", dir.path}});
      engine.load(t.device);
      engine.run(0);
      engine.run(0);
    }
  }
  SECTION("from the environment") {
    const std::string json = "{\"autoReport.all\": \"true\", \"autoReport.directory\": \"" + dir.path + "\"}";
    setenv("POPLAR_ENGINE_OPTIONS", json.c_str(), 1);
    {
      Engine engine(g, Execute(add), {{"autoReport.directory", ignored.path}});
      REQUIRE(std::string(engine.getEngineOptions().at("autoReport.directory")) == dir.path);
      engine.load(t.device);
      engine.run(0);
      engine.run(0);
    }
    unsetenv("POPLAR_ENGINE_OPTIONS");
    REQUIRE_FALSE(std::filesystem::exists(ignored.path + "/profile.json"));
  }
  std::ifstream in(dir.path + "/profile.json");
  REQUIRE(in.good());
  const nlohmann::json p = nlohmann::json::parse(in);
  REQUIRE(p["format"] == "aspen-profile");
  REQUIRE(p["memory"]["tiles"]["peakBytes"].size() == 4);
  REQUIRE(p["steps"].is_array());
  const nlohmann::json &execution = p["execution"];
  REQUIRE(execution["runs"] == 2);
  REQUIRE(execution["trace"].size() >= 2);
  bool sawExecute = false;
  for (const auto &s : execution["steps"])
    if (s["kind"] == "Execute") {
      sawExecute = true;
      REQUIRE(s["executions"] == 2);
      REQUIRE(s["tiles"] == nlohmann::json::array({3}));
      REQUIRE(s["tileComputeCycles"].size() == 1);
    }
  REQUIRE(sawExecute);
}

TEST_CASE("The CPU device runs a program (Device::createCPUDevice)", "[conformance][engine]") {
  Device cpu = Device::createCPUDevice();
  Graph g(cpu.getTarget());
  g.addCodelets(runtime_test::codeletPath(), CodeletFileType::Auto, "-O2");
  Tensor x = g.addVariable(FLOAT, {100}, "x");
  Tensor s = g.addVariable(FLOAT, {}, "s");
  g.setTileMapping(x, 0);
  g.setTileMapping(s, 0);
  ComputeSet add = g.addComputeSet("addOne");
  g.setTileMapping(g.addVertex(add, "AddOne", {{"data", x}}), 0);
  ComputeSet sum = g.addComputeSet("sum");
  g.setTileMapping(g.addVertex(sum, "Sum", {{"in", x}, {"out", s}}), 0);
  g.createHostWrite("x", x);
  g.createHostRead("s", s);
  Engine engine(g, Sequence({Execute(add), Execute(sum)}));
  engine.load(cpu);
  const std::vector<float> input = iota(100, 0, 1);
  engine.writeTensor("x", input);
  engine.run(0);
  float result = 0;
  engine.readTensor("s", &result, &result + 1);
  float expected = 0;
  for (float v : input)
    expected += v + 1.0f;
  REQUIRE(result == expected);
}
