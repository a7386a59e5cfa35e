// Copyright (c) Aspen contributors.
// Unit tests of the compiler passes on small hand-built graphs.
#include "TestGraph.hpp"

#include "Compiler.hpp"
#include "passes/Allocate.hpp"
#include "passes/Emit.hpp"
#include "passes/EstimateCycles.hpp"
#include "passes/Exchange.hpp"
#include "passes/Liveness.hpp"
#include "passes/Lower.hpp"
#include "passes/Validate.hpp"
#include "poplar/exceptions.hpp"

#include <catch2/catch.hpp>

#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

using namespace aspen;
using namespace aspen::compiler;
using aspen::test::TestGraph;
using K = ir::ProgramKind;

namespace {

/// Runs lowered steps as the runtime would, but only records which compute sets
/// execute: conditions come from `conditions` (in the order they are tested) and
/// switch controls from `switchValues`.
std::vector<std::uint32_t> trace(const LoweredProgram &lp, std::uint32_t program, std::deque<bool> conditions,
                                 std::deque<std::int32_t> switchValues) {
  std::vector<std::uint32_t> executed;
  std::vector<std::uint64_t> counters(lp.numCounters);
  std::vector<std::uint32_t> stack;
  std::uint32_t pc = lp.programEntry.at(program);
  for (int guard = 0; guard < 10000; ++guard) {
    const exe::Step &s = lp.steps.at(pc++);
    using S = exe::StepKind;
    switch (s.kind) {
    case S::Execute:
      executed.push_back(s.a);
      break;
    case S::SetCounter:
      counters.at(s.a) = s.value;
      break;
    case S::LoopTest:
      if (counters.at(s.a) == 0)
        pc = s.target;
      else
        --counters[s.a];
      break;
    case S::Jump:
      pc = s.target;
      break;
    case S::JumpIfZero:
    case S::JumpIfNonZero: {
      const bool value = conditions.at(0);
      conditions.pop_front();
      if (value == (s.kind == S::JumpIfNonZero))
        pc = s.target;
      break;
    }
    case S::SwitchJump: {
      const auto &t = lp.switchTables.at(s.a);
      const std::int32_t v = switchValues.at(0);
      switchValues.pop_front();
      pc = t.defaultTarget;
      for (std::size_t i = 0; i < t.values.size(); ++i)
        if (t.values[i] == v)
          pc = t.targets[i];
      break;
    }
    case S::Call:
      stack.push_back(pc);
      pc = s.target;
      break;
    case S::Return:
      pc = stack.back();
      stack.pop_back();
      break;
    case S::End:
      return executed;
    default:
      break;
    }
  }
  FAIL("the lowered program does not end");
  return executed;
}

/// The passes up to allocation, as Compiler.cpp runs them.
struct Compiled {
  LoweredProgram lowered;
  ExchangePlan plan;
  LivenessResult liveness;
  AllocationResult allocation;
  CycleEstimates cycles;
};

Compiled runPasses(const ir::GraphData &g, const std::vector<const ir::ProgramNode *> &programs,
                   bool allowOutOfMemory = false) {
  Compiled c;
  validateGraph(g, programs);
  c.lowered = lowerPrograms(g, programs);
  c.plan = planExchange(g, c.lowered);
  c.liveness = analyseLiveness(g, c.lowered, c.plan);
  c.allocation = allocateMemory(g, c.lowered, c.plan, c.liveness, allowOutOfMemory);
  c.cycles = estimateCycles(g, c.lowered, c.plan);
  return c;
}

ir::VarId varOf(const poplar::Tensor &t) {
  return t.getImpl().segments->front().var;
}

/// Address of the first byte of variable `v` (its first piece).
std::uint32_t addressOf(const Compiled &c, ir::VarId v) {
  return c.allocation.address.at(c.plan.memory.firstPiece.at(v));
}

} // namespace

// ---- Lower --------------------------------------------------------------------------

TEST_CASE("Lower: loops, branches, switches and calls run in the right order", "[compiler][lower]") {
  TestGraph tg;
  auto pred = TestGraph::node(K::If);
  pred->children = {TestGraph::exec(2), TestGraph::exec(3)};
  auto sw = TestGraph::node(K::Switch);
  sw->caseValues = {1, 5};
  sw->children = {TestGraph::exec(4), TestGraph::exec(5), TestGraph::exec(6)};
  sw->hasDefault = true;
  auto fbody = TestGraph::seq({TestGraph::exec(7), TestGraph::repeat(2, TestGraph::exec(8))});
  tg.g->functions.push_back(fbody);
  auto call = TestGraph::node(K::Call);
  call->function = 0;
  auto whileTrue = TestGraph::node(K::RepeatWhileTrue);
  whileTrue->children = {TestGraph::exec(9), TestGraph::exec(10)};
  auto prog =
      TestGraph::seq({TestGraph::exec(0), TestGraph::repeat(3, TestGraph::seq({TestGraph::exec(1), pred})),
                      sw, call, whileTrue, call});
  auto second = TestGraph::seq({call, TestGraph::exec(11)});

  const LoweredProgram lp = lowerPrograms(*tg.g, {prog.get(), second.get()});
  REQUIRE(lp.programEntry.size() == 2);
  CHECK(lp.functionEntry.at(0) > lp.programEntry[1]); // function bodies follow the programs
  // If: true, false, true; while: true, true, false.
  CHECK(trace(lp, 0, {true, false, true, true, true, false}, {5}) ==
        std::vector<std::uint32_t>{0, 1, 2, 1, 3, 1, 2, 5, 7, 8, 8, 9, 10, 9, 10, 9, 7, 8, 8});
  CHECK(trace(lp, 0, {false, false, false, false}, {42}) ==
        std::vector<std::uint32_t>{0, 1, 3, 1, 3, 1, 3, 6, 7, 8, 8, 9, 7, 8, 8});
  CHECK(trace(lp, 1, {}, {}) == std::vector<std::uint32_t>{7, 8, 8, 11});
  CHECK(lp.numCounters == 2);
}

TEST_CASE("Lower: Repeat(0) runs nothing and an If without else skips", "[compiler][lower]") {
  TestGraph tg;
  auto iff = TestGraph::node(K::If);
  iff->children = {TestGraph::exec(1), TestGraph::seq({})};
  auto prog = TestGraph::seq({TestGraph::repeat(0, TestGraph::exec(0)), iff, TestGraph::exec(2)});
  const LoweredProgram lp = lowerPrograms(*tg.g, {prog.get()});
  CHECK(trace(lp, 0, {false}, {}) == std::vector<std::uint32_t>{2});
  CHECK(trace(lp, 0, {true}, {}) == std::vector<std::uint32_t>{1, 2});
}

TEST_CASE("Lower: recursion and self-containing programs are graph_cycle_errors", "[compiler][lower]") {
  TestGraph tg;
  auto call = TestGraph::node(K::Call);
  call->function = 0;
  tg.g->functions.push_back(TestGraph::seq({TestGraph::exec(0), call}));
  auto prog = TestGraph::seq({call});
  CHECK_THROWS_AS(lowerPrograms(*tg.g, {prog.get()}), poplar::graph_cycle_error);

  auto loop = TestGraph::seq({});
  loop->children.push_back(loop); // a Sequence that contains itself
  CHECK_THROWS_AS(lowerPrograms(*tg.g, {loop.get()}), poplar::graph_cycle_error);
  loop->children.clear();
}

// ---- Exchange and Emit ----------------------------------------------------------------

TEST_CASE("Exchange: local edges point at the variable, remote ones get a buffer and exchange",
          "[compiler][exchange]") {
  TestGraph tg;
  auto local = tg.var(poplar::FLOAT, {8}, "local", {0});
  auto remote = tg.var(poplar::FLOAT, {8}, "remote", {1});
  auto result = tg.var(poplar::FLOAT, {8}, "result", {0, 1}); // half on tile 0, half on tile 1
  const auto type = tg.vertexType("Add", {test::in("a"), test::in("b"), test::out("out")});
  const auto cs = tg.computeSet("add");
  const auto v = tg.vertex(cs, type, 0, {{"a", local}, {"b", remote}, {"out", result}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);

  REQUIRE(exe->computeSteps.size() == 1);
  const exe::ComputeStep &step = exe->computeSteps[0];
  // b: 32 bytes from tile 1 into a buffer on tile 0; out: 16 bytes stay on tile 0, 16 go to tile 1.
  CHECK(step.exchangeIn.totalBytes == 32);
  REQUIRE(step.exchangeIn.runs.size() == 1);
  CHECK(step.exchangeIn.runs[0].src.tile == 1);
  CHECK(step.exchangeIn.runs[0].dst.tile == 0);
  CHECK(step.exchangeIn.runs[0].src.addr == addressOf(c, varOf(remote)));
  CHECK(step.exchangeOut.totalBytes == 32);
  REQUIRE(step.exchangeOut.tiles == std::vector<std::uint32_t>{0, 1});
  REQUIRE(step.exchangeOut.runs.size() == 2);
  CHECK(step.exchangeOut.runs[0].bytes == 16);
  // The second half goes to the start of result's piece on tile 1.
  CHECK(step.exchangeOut.runs[1].dst.addr ==
        c.allocation.address.at(c.plan.memory.firstPiece.at(varOf(result)) + 1));
  CHECK(step.exchangeOut.runs[1].src.addr == step.exchangeOut.runs[0].src.addr + 16);
  REQUIRE(step.vertices.size() == 1);
  CHECK(step.vertices[0].graphVertex == v);
  CHECK(step.tiles == std::vector<std::uint32_t>{0});

  // The vertex object: field a points straight at `local`, b at the exchange buffer.
  const exe::VertexInstance &vi = step.vertices[0];
  const auto &fields = tg.g->vertexTypes[type].fields;
  std::map<std::uint32_t, exe::TileAddr> reloc;
  for (const exe::Relocation &r : exe->relocations)
    if (r.where.tile == 0)
      reloc[r.where.addr] = r.target;
  REQUIRE(reloc.count(vi.state + fields[0].offset));
  CHECK(reloc[vi.state + fields[0].offset].tile == 0);
  CHECK(reloc[vi.state + fields[0].offset].addr == addressOf(c, varOf(local)));
  CHECK(reloc[vi.state + fields[1].offset].addr == step.exchangeIn.runs[0].dst.addr);
  // Sizes of the vector fields are in the vertex object's bytes.
  bool found = false;
  for (const exe::MemoryBlob &b : exe->blobs) {
    if (b.where.tile != 0 || b.where.addr > vi.state || b.where.addr + b.bytes.size() < vi.state + 48)
      continue;
    std::uint32_t size = 0;
    std::memcpy(&size, b.bytes.data() + (vi.state - b.where.addr) + fields[1].offset + 8, 4);
    CHECK(size == 8);
    found = true;
  }
  CHECK(found);
  CHECK(exe->codeletLibraries.size() == 1);
  CHECK(exe->vertexTypes.at(vi.type).name == "Add");
}

TEST_CASE("Exchange: a step fuses exchange-in with compute unless a vertex writes in place what it reads",
          "[compiler][exchange]") {
  SECTION("matmul-like: inputs exchanged in, outputs written in place on each tile") {
    TestGraph tg(2);
    auto a = tg.var(poplar::FLOAT, {2, 8}, "a", {0, 1}); // row 0 on tile 0, row 1 on tile 1
    auto b = tg.var(poplar::FLOAT, {8}, "b", {1});
    auto c = tg.var(poplar::FLOAT, {2}, "c", {0, 1});
    const auto type = tg.vertexType("Dot", {test::in("a"), test::in("b"), test::out("out")});
    const auto cs = tg.computeSet("matmul");
    for (unsigned t = 0; t < 2; ++t)
      tg.vertex(cs, type, t, {{"a", a[t]}, {"b", b}, {"out", c.slice(t, t + 1)}});
    auto prog = TestGraph::exec(cs);
    const Compiled compiled = runPasses(*tg.g, {prog.get()});
    auto exe = emitExecutable(*tg.g, compiled.lowered, compiled.plan, compiled.liveness, compiled.allocation,
                              compiled.cycles);
    REQUIRE(exe->computeSteps.size() == 1);
    CHECK(exe->computeSteps[0].exchangeIn.tiles == std::vector<std::uint32_t>{0}); // b goes to tile 0
    CHECK(exe->computeSteps[0].fuseExchangeIn);
  }
  SECTION("a vertex updates in place a variable another tile's exchange-in reads") {
    TestGraph tg(2);
    auto x = tg.var(poplar::FLOAT, {8}, "x", {0});
    auto y = tg.var(poplar::FLOAT, {8}, "y", {1});
    const auto scale = tg.vertexType("Scale", {test::inout("data")});
    const auto add = tg.vertexType("Add", {test::in("a"), test::inout("out")});
    const auto cs = tg.computeSet("hazard");
    tg.vertex(cs, scale, 0, {{"data", x}});        // writes x in place on tile 0
    tg.vertex(cs, add, 1, {{"a", x}, {"out", y}}); // tile 1 receives x by exchange-in
    auto prog = TestGraph::exec(cs);
    const Compiled compiled = runPasses(*tg.g, {prog.get()});
    auto exe = emitExecutable(*tg.g, compiled.lowered, compiled.plan, compiled.liveness, compiled.allocation,
                              compiled.cycles);
    REQUIRE(exe->computeSteps.size() == 1);
    REQUIRE(exe->computeSteps[0].exchangeIn.runs.size() == 1);
    CHECK_FALSE(exe->computeSteps[0].fuseExchangeIn);
  }
}

TEST_CASE("Exchange: Copy programs are grouped by destination tile with contiguous runs merged",
          "[compiler][exchange]") {
  TestGraph tg(4);
  auto x = tg.var(poplar::FLOAT, {16}, "x", {0});
  auto y = tg.var(poplar::FLOAT, {16}, "y", {2, 3});
  auto z = tg.var(poplar::FLOAT, {16}, "z", {1});
  // x -> y: two runs (one per destination tile); rotate x into z: two runs on tile 1.
  auto prog = TestGraph::seq({TestGraph::copy(x, y),
                              TestGraph::copy(poplar::concat(x.slice(8, 16), x.slice(0, 8)), z),
                              TestGraph::copy(z, x)});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  REQUIRE(exe->copies.size() == 3);
  const exe::CopyPlan &toY = exe->copies[0];
  CHECK(toY.tiles == std::vector<std::uint32_t>{2, 3});
  CHECK(toY.tileBegin == std::vector<std::uint32_t>{0, 1, 2});
  CHECK(toY.runs.size() == 2);
  CHECK(toY.totalBytes == 64);
  const exe::CopyPlan &rot = exe->copies[1];
  REQUIRE(rot.runs.size() == 2);
  CHECK(rot.runs[0].src.addr == addressOf(c, varOf(x)) + 32);
  CHECK(rot.runs[0].dst.addr == addressOf(c, varOf(z)));
  CHECK(rot.runs[1].src.addr == addressOf(c, varOf(x)));
  const exe::CopyPlan &back = exe->copies[2];
  CHECK(back.runs.size() == 1); // contiguous: one merged run
  CHECK(back.runs[0].bytes == 64);
  // Exchange cost: tile 0 sends all 64 bytes (ceil(64 / 4)); tiles 2 and 3 each receive 32 bytes
  // from one tile (ceil(32 / 4) + one source's exchangeSourceCycles): the slowest tile, plus
  // overhead and sync.
  const auto &t = tg.g->target;
  const std::uint64_t receiver = 32 / t.exchangeBytesPerCycle + t.exchangeSourceCycles;
  CHECK(toY.cycles == std::max<std::uint64_t>(64 / t.exchangeBytesPerCycle, receiver) +
                          t.exchangeOverheadCycles + t.syncCycles + t.minIPUSyncDelay);
}

TEST_CASE("Exchange: a region sent from one tile to many is sent once (the exchange broadcasts)",
          "[compiler][exchange]") {
  TestGraph tg(4);
  auto x = tg.var(poplar::FLOAT, {16}, "x", {0});
  auto y = tg.var(poplar::FLOAT, {3, 16}, "y", {1, 2, 3});
  // x to each of tiles 1, 2 and 3: every receiver takes 64 bytes; the sender sends them once.
  auto prog = TestGraph::seq({TestGraph::copy(poplar::concat({x, x, x}).reshape({3, 16}), y)});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  REQUIRE(exe->copies.size() == 1);
  CHECK(exe->copies[0].tiles == std::vector<std::uint32_t>{1, 2, 3});
  // Each receiver: 64 bytes from one tile.
  const auto &t = tg.g->target;
  CHECK(exe->copies[0].cycles == 64 / t.exchangeBytesPerCycle + t.exchangeSourceCycles +
                                     t.exchangeOverheadCycles + t.syncCycles + t.minIPUSyncDelay);
  // Different halves of x to different tiles: the sender sends each half once, 64 bytes in all;
  // each receiver takes its half (32 bytes) once from one tile and copies it to its second place
  // (32 bytes within the tile).
  TestGraph tg2(4);
  auto x2 = tg2.var(poplar::FLOAT, {16}, "x", {0});
  auto z = tg2.var(poplar::FLOAT, {32}, "z", {1, 2});
  auto prog2 = TestGraph::seq({TestGraph::copy(poplar::concat({x2.slice(0, 8), x2, x2.slice(8, 16)}), z)});
  const Compiled c2 = runPasses(*tg2.g, {prog2.get()});
  auto exe2 = emitExecutable(*tg2.g, c2.lowered, c2.plan, c2.liveness, c2.allocation, c2.cycles);
  REQUIRE(exe2->copies.size() == 1);
  const auto &t2 = tg2.g->target;
  const std::uint64_t receiver2 =
      32 / t2.exchangeBytesPerCycle + t2.exchangeSourceCycles + 32 / t2.memcpyBytesPerCycle;
  CHECK(exe2->copies[0].cycles == std::max<std::uint64_t>(64 / t2.exchangeBytesPerCycle, receiver2) +
                                      t2.exchangeOverheadCycles + t2.syncCycles + t2.minIPUSyncDelay);
}

TEST_CASE("Exchange: a tile pays exchangeSourceCycles for each tile it receives from",
          "[compiler][exchange]") {
  TestGraph tg(4);
  auto a = tg.var(poplar::FLOAT, {4}, "a", {1});
  auto b = tg.var(poplar::FLOAT, {4}, "b", {2});
  auto d = tg.var(poplar::FLOAT, {4}, "d", {3});
  auto y = tg.var(poplar::FLOAT, {12}, "y", {0});
  // Tile 0 gathers 16 bytes from each of tiles 1, 2 and 3 (the second copy of a is a second
  // region of the same tile: not another source).
  auto prog = TestGraph::seq({TestGraph::copy(poplar::concat({a.slice(0, 2), b, d, a.slice(2, 4)}), y)});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  REQUIRE(exe->copies.size() == 1);
  const auto &t = tg.g->target;
  const std::uint64_t receiver = 48 / t.exchangeBytesPerCycle + 3 * t.exchangeSourceCycles;
  CHECK(exe->copies[0].cycles == receiver + t.exchangeOverheadCycles + t.syncCycles + t.minIPUSyncDelay);
  // Each tile's own cycles summed over the tiles (the profile's tile average): the receiver, the
  // three senders' 16 bytes each, and the set-up on each of the four tiles taking part.
  CHECK(exe->copies[0].tileCycles ==
        receiver + 3 * (16 / t.exchangeBytesPerCycle) + 4 * std::uint64_t(t.exchangeOverheadCycles));
  // The same gather from one tile costs one source.
  TestGraph tg2(2);
  auto x = tg2.var(poplar::FLOAT, {12}, "x", {1});
  auto z = tg2.var(poplar::FLOAT, {12}, "z", {0});
  auto prog2 = TestGraph::seq({TestGraph::copy(poplar::concat({x.slice(8, 12), x.slice(0, 8)}), z)});
  const Compiled c2 = runPasses(*tg2.g, {prog2.get()});
  auto exe2 = emitExecutable(*tg2.g, c2.lowered, c2.plan, c2.liveness, c2.allocation, c2.cycles);
  REQUIRE(exe2->copies.size() == 1);
  const auto &t2 = tg2.g->target;
  CHECK(exe2->copies[0].cycles == 48 / t2.exchangeBytesPerCycle + t2.exchangeSourceCycles +
                                      t2.exchangeOverheadCycles + t2.syncCycles + t2.minIPUSyncDelay);
}

// ---- Shared edge buffers: each remote region received once per compute set and tile ---

namespace {

std::uint64_t edgeBufferBytes(const Compiled &c, unsigned tile) {
  return c.allocation.tiles.at(tile).categoryBytes[static_cast<int>(MemCategory::EdgeBuffer)];
}

/// The tile address a vertex's field points at (its relocation target).
exe::TileAddr fieldTarget(const exe::ExecutableData &x, const exe::ComputeStep &step, std::size_t vertexIndex,
                          std::uint32_t fieldOffset) {
  const exe::VertexInstance &vi = step.vertices.at(vertexIndex);
  std::uint32_t tile = 0;
  for (std::size_t k = 0; k < step.tiles.size(); ++k)
    if (vertexIndex >= step.tileBegin[k] && vertexIndex < step.tileBegin[k + 1])
      tile = step.tiles[k];
  for (const exe::Relocation &r : x.relocations)
    if (r.where.tile == tile && r.where.addr == vi.state + fieldOffset)
      return r.target;
  FAIL("no relocation for the field");
  return {};
}

/// A tile receiving `bytes` from one other tile: the bytes, that one source, set-up and sync.
std::uint64_t crossTileCycles(const ir::TargetData &t, std::uint64_t bytes) {
  return (bytes + t.exchangeBytesPerCycle - 1) / t.exchangeBytesPerCycle + t.exchangeSourceCycles +
         t.exchangeOverheadCycles + t.syncCycles + t.minIPUSyncDelay;
}

} // namespace

TEST_CASE("Exchange: 100 vertices on one tile reading one remote region receive it once",
          "[compiler][exchange][shared]") {
  TestGraph tg(2);
  auto table = tg.var(poplar::FLOAT, {1024}, "table", {1}); // 4 KB on tile 1
  auto outs = tg.var(poplar::FLOAT, {100}, "outs", {0});
  const auto type = tg.vertexType("Sum", {test::in("in"), test::out("out")});
  const auto cs = tg.computeSet("sum");
  for (unsigned i = 0; i < 100; ++i)
    tg.vertex(cs, type, 0, {{"in", table}, {"out", outs.slice(i, i + 1)}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);

  CHECK(edgeBufferBytes(c, 0) == 4096); // was 100 × 4096
  const exe::ComputeStep &step = exe->computeSteps.at(0);
  CHECK(step.exchangeIn.totalBytes == 4096);
  CHECK(step.exchangeIn.cycles == crossTileCycles(tg.g->target, 4096));
  // Every vertex points at the one shared copy.
  const std::uint32_t inOffset = tg.g->vertexTypes[type].fields[0].offset;
  const exe::TileAddr first = fieldTarget(*exe, step, 0, inOffset);
  CHECK(first.tile == 0);
  CHECK(first.addr == step.exchangeIn.runs.at(0).dst.addr);
  for (std::size_t i = 1; i < 100; ++i) {
    const exe::TileAddr t = fieldTarget(*exe, step, i, inOffset);
    CHECK(t.tile == first.tile);
    CHECK(t.addr == first.addr);
  }
}

TEST_CASE("Exchange: overlapping remote windows (a halo stencil) share one buffer",
          "[compiler][exchange][shared]") {
  TestGraph tg(2);
  auto x = tg.var(poplar::FLOAT, {64}, "x", {1});
  auto y = tg.var(poplar::FLOAT, {4}, "y", {0});
  const auto type = tg.vertexType("Stencil", {test::in("in"), test::out("out")});
  const auto cs = tg.computeSet("stencil");
  // Windows [0,20), [14,36), [30,52), [46,64): each overlaps its neighbours.
  const std::size_t lo[4] = {0, 14, 30, 46}, hi[4] = {20, 36, 52, 64};
  for (unsigned i = 0; i < 4; ++i)
    tg.vertex(cs, type, 0, {{"in", x.slice(lo[i], hi[i])}, {"out", y.slice(i, i + 1)}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  const exe::ComputeStep &step = exe->computeSteps.at(0);
  CHECK(step.exchangeIn.totalBytes == 64 * 4); // the union, once (was 78 elements)
  CHECK(edgeBufferBytes(c, 0) == 64 * 4);
  CHECK(step.exchangeIn.cycles == crossTileCycles(tg.g->target, 256));
  // Each window points at its own place in the shared copy of x.
  const std::uint32_t inOffset = tg.g->vertexTypes[type].fields[0].offset;
  REQUIRE(step.exchangeIn.runs.size() == 1);
  const std::uint32_t base = step.exchangeIn.runs[0].dst.addr;
  for (unsigned i = 0; i < 4; ++i)
    CHECK(fieldTarget(*exe, step, i, inOffset).addr == base + lo[i] * 4);
}

TEST_CASE("Exchange: a vertex reading one remote region through two fields receives it once",
          "[compiler][exchange][shared]") {
  TestGraph tg(2);
  auto x = tg.var(poplar::FLOAT, {16}, "x", {1});
  auto y = tg.var(poplar::FLOAT, {16}, "y", {0});
  const auto type = tg.vertexType("Mul", {test::in("a"), test::in("b"), test::out("out")});
  const auto cs = tg.computeSet("square");
  tg.vertex(cs, type, 0, {{"a", x}, {"b", x}, {"out", y}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  const exe::ComputeStep &step = exe->computeSteps.at(0);
  CHECK(step.exchangeIn.totalBytes == 64);
  CHECK(edgeBufferBytes(c, 0) == 64);
  const auto &fields = tg.g->vertexTypes[type].fields;
  CHECK(fieldTarget(*exe, step, 0, fields[0].offset).addr ==
        fieldTarget(*exe, step, 0, fields[1].offset).addr);
}

TEST_CASE("Exchange: remote outputs of one tile are sent once; reads of them share the buffer",
          "[compiler][exchange][shared]") {
  TestGraph tg(2);
  auto x = tg.var(poplar::FLOAT, {32}, "x", {1});
  auto src = tg.var(poplar::FLOAT, {32}, "src", {0});
  const auto type = tg.vertexType("Copy", {test::in("in"), test::out("out")});
  const auto scale = tg.vertexType("Scale", {test::inout("data")});
  const auto cs = tg.computeSet("write");
  tg.vertex(cs, type, 0, {{"in", src.slice(0, 16)}, {"out", x.slice(0, 16)}});
  tg.vertex(cs, scale, 0, {{"data", x.slice(16, 32)}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  const exe::ComputeStep &step = exe->computeSteps.at(0);
  CHECK(step.exchangeIn.totalBytes == 64);   // only the InOut half is read
  CHECK(step.exchangeOut.totalBytes == 128); // both halves written back, once each
  CHECK(edgeBufferBytes(c, 0) == 128);
  REQUIRE(step.exchangeOut.runs.size() == 1); // one contiguous run: the halves are adjacent
  CHECK(step.exchangeOut.runs[0].dst.tile == 1);
}

TEST_CASE("Exchange: a non-contiguous local view gets its own gather buffer",
          "[compiler][exchange][shared]") {
  TestGraph tg(2);
  auto x = tg.var(poplar::FLOAT, {8}, "x", {0});
  auto y = tg.var(poplar::FLOAT, {4}, "y", {0});
  const auto type = tg.vertexType("Copy", {test::in("in"), test::out("out")});
  const auto cs = tg.computeSet("gather");
  tg.vertex(cs, type, 0, {{"in", x.subSample(2, 0)}, {"out", y}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  const exe::ComputeStep &step = exe->computeSteps.at(0);
  CHECK(edgeBufferBytes(c, 0) == 16);
  CHECK(step.exchangeIn.totalBytes == 16);
  REQUIRE(step.exchangeIn.runs.size() == 4); // elements 0, 2, 4, 6 of x
  for (unsigned i = 0; i < 4; ++i) {
    CHECK(step.exchangeIn.runs[i].src.addr == addressOf(c, varOf(x)) + 8 * i);
    CHECK(step.exchangeIn.runs[i].dst.addr == step.exchangeIn.runs[0].dst.addr + 4 * i);
  }
  // Local copies cost memcpy cycles, not exchange.
  CHECK(step.exchangeIn.cycles < crossTileCycles(tg.g->target, 16));
}

TEST_CASE("makeCopyPlan groups by destination tile and merges only continuing runs", "[compiler][exchange]") {
  std::vector<exe::CopyRun> runs = {{{1, 100}, {2, 0}, 8},
                                    {{1, 108}, {2, 8}, 8},
                                    {{0, 0}, {1, 0}, 4},
                                    {{1, 200}, {2, 16}, 4},
                                    {{3, 0}, {1, 4}, 4}};
  const exe::CopyPlan plan = makeCopyPlan(runs);
  CHECK(plan.tiles == std::vector<std::uint32_t>{1, 2});
  REQUIRE(plan.runs.size() == 4);
  CHECK(plan.runs[0].src.tile == 0);
  CHECK(plan.runs[1].src.tile == 3);
  CHECK(plan.runs[2].bytes == 16); // the two continuing runs into tile 2
  CHECK(plan.runs[3].src.addr == 200);
  CHECK(plan.totalBytes == 28);
}

// ---- Liveness and Allocate ------------------------------------------------------------

TEST_CASE("Liveness: variables with disjoint lifetimes share memory", "[compiler][liveness]") {
  TestGraph tg(2);
  auto src = tg.var(poplar::FLOAT, {64}, "src", {0});
  auto x = tg.var(poplar::FLOAT, {64}, "x", {0});
  auto y = tg.var(poplar::FLOAT, {64}, "y", {0});
  auto a = tg.var(poplar::FLOAT, {64}, "a", {0});
  auto b = tg.var(poplar::FLOAT, {64}, "b", {0});
  tg.setInitial(src, std::vector<float>(64, 1.0f));
  const auto type = tg.vertexType("Copy", {test::in("in"), test::out("out")});
  std::uint32_t cs[4];
  for (int i = 0; i < 4; ++i)
    cs[i] = tg.computeSet("cs" + std::to_string(i));
  tg.vertex(cs[0], type, 0, {{"in", src}, {"out", x}});
  tg.vertex(cs[1], type, 0, {{"in", x}, {"out", a}});
  tg.vertex(cs[2], type, 0, {{"in", src}, {"out", y}});
  tg.vertex(cs[3], type, 0, {{"in", y}, {"out", b}});
  tg.g->hostHandles.push_back({"a", a, false});
  tg.g->hostHandles.push_back({"b", b, false});
  auto prog = TestGraph::seq(
      {TestGraph::exec(cs[0]), TestGraph::exec(cs[1]), TestGraph::exec(cs[2]), TestGraph::exec(cs[3])});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  const auto &L = c.liveness;
  CHECK(L.alwaysLive[varOf(src)]);
  CHECK(L.alwaysLive[varOf(a)]);
  CHECK_FALSE(L.alwaysLive[varOf(x)]);
  CHECK_FALSE(L.alwaysLive[varOf(y)]);
  CHECK(L.liveBegin[varOf(x)] == 0);
  CHECK(L.liveEnd[varOf(x)] == 1);
  CHECK(L.liveBegin[varOf(y)] == 2);
  CHECK(L.liveEnd[varOf(y)] == 3);
  CHECK(addressOf(c, varOf(x)) == addressOf(c, varOf(y)));
  CHECK(addressOf(c, varOf(a)) != addressOf(c, varOf(b)));
  // Step 1 has x (256 bytes) live and nothing else not-always-live.
  CHECK(L.notAlwaysLiveBytes[1] == 256);
  CHECK(c.allocation.tiles[0].notAlwaysLivePeak == 256);
}

TEST_CASE("Liveness: a partial write keeps a variable live; WriteUndef lets it die", "[compiler][liveness]") {
  TestGraph tg(1);
  auto src = tg.var(poplar::FLOAT, {8}, "src", {0});
  tg.setInitial(src, std::vector<float>(8, 2.0f));
  auto x = tg.var(poplar::FLOAT, {8}, "x", {0});
  auto y = tg.var(poplar::FLOAT, {8}, "y", {0});
  auto out = tg.var(poplar::FLOAT, {8}, "out", {0});
  tg.g->hostHandles.push_back({"out", out, false});
  // x is written in two halves by two copies, then read: live at entry, so always-live.
  // y gets the same treatment after a WriteUndef: not always-live.
  auto prog = TestGraph::seq({TestGraph::copy(src.slice(0, 4), x.slice(0, 4)),
                              TestGraph::copy(src.slice(4, 8), x.slice(4, 8)), TestGraph::copy(x, out),
                              TestGraph::writeUndef(y), TestGraph::copy(src.slice(0, 4), y.slice(0, 4)),
                              TestGraph::copy(src.slice(4, 8), y.slice(4, 8)), TestGraph::copy(y, out)});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  CHECK(c.liveness.alwaysLive[varOf(x)]);
  CHECK_FALSE(c.liveness.alwaysLive[varOf(y)]);
  CHECK(c.liveness.liveBegin[varOf(y)] == 4);
  CHECK(c.liveness.liveEnd[varOf(y)] == 6);
}

TEST_CASE("Liveness: a value carried around a loop is live over the whole loop", "[compiler][liveness]") {
  TestGraph tg(1);
  auto src = tg.var(poplar::FLOAT, {8}, "src", {0});
  tg.setInitial(src, std::vector<float>(8, 2.0f));
  auto acc = tg.var(poplar::FLOAT, {8}, "acc", {0});
  auto tmp = tg.var(poplar::FLOAT, {8}, "tmp", {0});
  auto after = tg.var(poplar::FLOAT, {8}, "after", {0});
  auto out = tg.var(poplar::FLOAT, {8}, "out", {0});
  tg.g->hostHandles.push_back({"out", out, false});
  // acc = src; repeat 3 { tmp = acc; acc = tmp }; after = acc; out = after
  auto body = TestGraph::seq({TestGraph::copy(acc, tmp), TestGraph::copy(tmp, acc)});
  auto prog = TestGraph::seq({TestGraph::copy(src, acc), TestGraph::repeat(3, body),
                              TestGraph::copy(acc, after), TestGraph::copy(after, out)});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  const auto &L = c.liveness;
  REQUIRE_FALSE(L.alwaysLive[varOf(acc)]);
  REQUIRE_FALSE(L.alwaysLive[varOf(tmp)]);
  // acc lives from its first write to the copy after the loop, covering the whole loop.
  const std::uint32_t loopEnd = L.liveEnd[varOf(tmp)];
  CHECK(L.liveBegin[varOf(acc)] == 0);
  CHECK(L.liveEnd[varOf(acc)] > loopEnd);
  // tmp is live inside the loop while acc is: they must not share memory; nor may
  // acc and after, which one copy touches together.
  CHECK(addressOf(c, varOf(acc)) != addressOf(c, varOf(tmp)));
  CHECK(addressOf(c, varOf(after)) != addressOf(c, varOf(acc)));
}

TEST_CASE("Allocate: alignment, vertex state and per-tile overhead", "[compiler][allocate]") {
  TestGraph tg(1);
  auto c1 = tg.var(poplar::CHAR, {3}, "c", {0});
  auto f1 = tg.var(poplar::FLOAT, {5}, "f", {0});
  auto d1 = tg.var(poplar::DOUBLE, {1}, "d", {0});
  tg.g->hostHandles.push_back({"c", c1, true});
  tg.g->hostHandles.push_back({"f", f1, true});
  tg.g->hostHandles.push_back({"d", d1, true});
  const Compiled c = runPasses(*tg.g, {});
  const auto ov = tg.g->target.perTileOverheadBytes;
  for (auto [t, align] : {std::pair{c1, 1u}, {f1, 4u}, {d1, 8u}}) {
    const std::uint32_t a = addressOf(c, varOf(t));
    CHECK(a % align == 0);
    CHECK(a >= ov);
  }
  CHECK(c.allocation.tiles[0].peakBytes >= ov + 3 + 20 + 8);
  CHECK(c.allocation.tiles[0].peakBytes <= ov + 3 + 20 + 8 + 8 + 4);
}

// ---- EstimateCycles ---------------------------------------------------------------------

TEST_CASE("EstimateCycles: worker vertices share six workers, MultiVertex runs alone", "[compiler][cycles]") {
  TestGraph tg(2);
  auto data = tg.var(poplar::FLOAT, {64}, "data", {0});
  const auto worker = tg.vertexType("Work", {test::inout("x")});
  const auto multi = tg.vertexType("Multi", {test::inout("x")}, true);
  const auto cs = tg.computeSet("cs");
  // 7 worker vertices of 100 cycles on tile 0: the 7th doubles one worker's load.
  for (int i = 0; i < 7; ++i)
    tg.setCycles(tg.vertex(cs, worker, 0, {{"x", data.slice(i * 8, i * 8 + 8)}}), 100);
  const auto m = tg.vertex(cs, multi, 1, {{"x", data.slice(56, 64)}});
  tg.setCycles(m, 500);
  const auto cs2 = tg.computeSet("default");
  tg.vertex(cs2, worker, 0, {{"x", data.slice(0, 16)}}); // no estimate: 20 + 64 bytes / 4
  auto prog = TestGraph::seq({TestGraph::exec(cs), TestGraph::exec(cs2)});
  const Compiled c = runPasses(*tg.g, {prog.get()});
  const unsigned workers = tg.g->target.numWorkerContexts;
  CHECK(c.cycles.computeCycles[0] == std::max<std::uint64_t>(200 * workers, 500));
  CHECK(c.cycles.totalVertexCycles[0] == 7 * 100 + 500);
  CHECK(c.cycles.vertexCycles[1][0] == kDefaultVertexCycles + 16);
  CHECK(c.cycles.computeCycles[1] == (kDefaultVertexCycles + 16) * workers);
  // The multivertex's 8 elements live on tile 0: exchange in and out of 32 bytes, from one tile.
  const auto &t = tg.g->target;
  const std::uint64_t ex = 32 / t.exchangeBytesPerCycle + t.exchangeSourceCycles + t.exchangeOverheadCycles +
                           t.syncCycles + t.minIPUSyncDelay;
  CHECK(c.cycles.exchangeInCycles[0] == ex);
  CHECK(c.cycles.stepCycles[0] == ex + c.cycles.computeCycles[0] + t.syncCycles + t.minIPUSyncDelay + ex);
}

// ---- the whole pipeline -------------------------------------------------------------------

TEST_CASE("compile: progress is reported with increasing steps and the output is deterministic",
          "[compiler][pipeline]") {
  TestGraph tg(8);
  auto x = tg.var(poplar::FLOAT, {256}, "x", {0, 1, 2, 3, 4, 5, 6, 7});
  auto y = tg.var(poplar::FLOAT, {256}, "y", {7, 6, 5, 4, 3, 2, 1, 0});
  tg.setInitial(x, std::vector<float>(256, 3.0f));
  const auto type = tg.vertexType("Scale", {test::in("in"), test::out("out"), test::state("n")});
  const auto cs = tg.computeSet("scale");
  for (int i = 0; i < 32; ++i) {
    const auto v =
        tg.vertex(cs, type, i % 8, {{"in", x.slice(i * 8, i * 8 + 8)}, {"out", y.slice(i * 8, i * 8 + 8)}});
    tg.setState(v, "n", std::vector<unsigned>{8u});
  }
  tg.g->hostHandles.push_back({"y", y, false});
  auto prog = TestGraph::repeat(2, TestGraph::exec(cs));
  std::vector<std::pair<int, int>> progress;
  auto a = compile(*tg.g, {prog.get()}, {}, [&](int s, int t) { progress.push_back({s, t}); });
  auto b = compile(*tg.g, {prog.get()}, {});
  REQUIRE(progress.size() >= 2);
  for (std::size_t i = 1; i < progress.size(); ++i)
    CHECK(progress[i].first > progress[i - 1].first);
  CHECK(progress.back().first == progress.back().second);
  CHECK(a->profileJson == b->profileJson);
  CHECK(a->relocations.size() == b->relocations.size());
  CHECK(a->computeSteps.at(0).vertices.size() == 32);
  CHECK(a->computeSteps.at(0).tiles.size() == 8);
  CHECK_FALSE(a->outOfMemory);
}

TEST_CASE("Emit: relocations are grouped by the tile they write, in plan order within a tile",
          "[compiler][emit]") {
  // Vertices added round-robin over tiles: in plan order the relocations jump
  // from tile to tile.
  TestGraph tg(8);
  auto x = tg.var(poplar::FLOAT, {256}, "x", {0, 1, 2, 3, 4, 5, 6, 7});
  auto y = tg.var(poplar::FLOAT, {256}, "y", {7, 6, 5, 4, 3, 2, 1, 0});
  const auto type = tg.vertexType("Scale", {test::in("in"), test::out("out")});
  const auto cs = tg.computeSet("scale");
  for (unsigned i = 0; i < 32; ++i)
    tg.vertex(cs, type, (i * 3) % 8, {{"in", x.slice(i * 8, i * 8 + 8)}, {"out", y.slice(i * 8, i * 8 + 8)}});
  auto prog = TestGraph::exec(cs);
  const Compiled c = runPasses(*tg.g, {prog.get()});
  auto exe = emitExecutable(*tg.g, c.lowered, c.plan, c.liveness, c.allocation, c.cycles);
  // The plan's relocations resolved by hand, then stably grouped by tile.
  auto resolve = [&](Loc l) {
    return exe::TileAddr{c.plan.memory.objects.at(l.object).tile,
                         c.allocation.address.at(l.object) + l.offset};
  };
  std::vector<exe::Relocation> expected;
  for (unsigned t = 0; t < 8; ++t)
    for (const SymRelocation &r : c.plan.relocations)
      if (resolve(r.where).tile == t)
        expected.push_back({resolve(r.where), resolve(r.target)});
  REQUIRE(expected.size() == c.plan.relocations.size());
  REQUIRE(exe->relocations.size() == expected.size());
  REQUIRE(expected.size() >= 64);
  bool planJumps = false;
  for (std::size_t i = 1; i < c.plan.relocations.size(); ++i)
    planJumps |= resolve(c.plan.relocations[i].where).tile < resolve(c.plan.relocations[i - 1].where).tile;
  CHECK(planJumps);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(exe->relocations[i].where.tile == expected[i].where.tile);
    CHECK(exe->relocations[i].where.addr == expected[i].where.addr);
    CHECK(exe->relocations[i].target.tile == expected[i].target.tile);
    CHECK(exe->relocations[i].target.addr == expected[i].target.addr);
  }
}

TEST_CASE("aspen.dumpIR writes a text dump after each pass", "[compiler][dump]") {
  TestGraph tg(2);
  auto x = tg.var(poplar::FLOAT, {16}, "x", {1});
  auto y = tg.var(poplar::FLOAT, {16}, "y", {0});
  const auto type = tg.vertexType("Copy", {test::in("in"), test::out("out")});
  const auto cs = tg.computeSet("copyOver");
  tg.vertex(cs, type, 0, {{"in", x}, {"out", y}});
  auto prog = TestGraph::exec(cs);
  const auto dir = std::filesystem::temp_directory_path() / ("aspen_dump_ir_" + std::to_string(::getpid()));
  const CompileOptions options = parseCompileOptions({{"aspen.dumpIR", dir.string()}});
  CHECK(options.dumpIRDir == dir.string());
  compile(*tg.g, {prog.get()}, options);
  const char *names[] = {"1-validate", "2-lower",          "3-exchange", "4-liveness",
                         "5-allocate", "6-estimateCycles", "7-emit"};
  for (const char *n : names)
    CHECK(std::filesystem::exists(dir / (std::string(n) + ".txt")));
  std::ifstream in(dir / "3-exchange.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("edgeBuffers tile 0 64 B"));
  CHECK_THAT(text, Catch::Contains("computeSet 0 'copyOver'"));
  std::filesystem::remove_all(dir);
}
