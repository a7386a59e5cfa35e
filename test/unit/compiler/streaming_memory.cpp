// Copyright (c) Aspen contributors.
// Streaming Memory as a tier the compiler plans (docs/streaming-memory.md): the cost of a
// remote-buffer copy, and the planner's loads and stores (each offloaded variable loaded
// before each use and stored after each write), on hand-built graphs.
#include "TestGraph.hpp"

#include "Compiler.hpp"
#include "exe/Serialize.hpp"
#include "exe/Validate.hpp"
#include "passes/Allocate.hpp"
#include "passes/EstimateCycles.hpp"
#include "passes/Exchange.hpp"
#include "passes/Liveness.hpp"
#include "passes/Lower.hpp"
#include "passes/Streaming.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace aspen;
using namespace aspen::compiler;
using aspen::test::TestGraph;
using K = ir::ProgramKind;
using S = exe::StepKind;

namespace {

std::uint64_t ceilDiv(std::uint64_t a, double b) {
  return static_cast<std::uint64_t>(std::ceil(double(a) / b));
}

/// A program of `layers` compute sets, each reading its own weight (`weightFloats` floats spread
/// over `tiles` tiles, initial values set) and the activation before it, writing the next one;
/// the last one also adds into an accumulator that keeps its value across runs.
struct Layers {
  TestGraph tg;
  std::vector<poplar::Tensor> weights, acts;
  poplar::Tensor total;
  std::shared_ptr<ir::ProgramNode> body;
  Layers(unsigned layers, unsigned weightFloats, std::uint64_t bytesPerTile, unsigned loop = 0)
      : tg(2, bytesPerTile) {
    const auto dense = tg.vertexType("Dense", {test::in("w"), test::in("x"), test::out("y")});
    const auto accumulate = tg.vertexType("Accumulate", {test::in("y"), test::inout("total")});
    for (unsigned l = 0; l <= layers; ++l)
      acts.push_back(tg.var(poplar::FLOAT, {8}, "act" + std::to_string(l), {0, 1}));
    total = tg.var(poplar::FLOAT, {8}, "total", {0, 1});
    tg.setInitial(total, std::vector<float>(8, 0.0f));
    std::vector<std::shared_ptr<ir::ProgramNode>> steps;
    for (unsigned l = 0; l < layers; ++l) {
      weights.push_back(tg.var(poplar::FLOAT, {weightFloats}, "w" + std::to_string(l), {0, 1}));
      tg.setInitial(weights.back(), std::vector<float>(weightFloats, float(l)));
      const auto cs = tg.computeSet("layer" + std::to_string(l));
      for (unsigned t = 0; t < 2; ++t)
        tg.vertex(cs, dense, t,
                  {{"w", weights.back().slice(t * weightFloats / 2, (t + 1) * weightFloats / 2)},
                   {"x", acts[l]},
                   {"y", acts[l + 1].slice(t * 4, t * 4 + 4)}});
      steps.push_back(TestGraph::exec(cs));
    }
    const auto cs = tg.computeSet("accumulate");
    for (unsigned t = 0; t < 2; ++t)
      tg.vertex(cs, accumulate, t,
                {{"y", acts[layers].slice(t * 4, t * 4 + 4)}, {"total", total.slice(t * 4, t * 4 + 4)}});
    steps.push_back(TestGraph::exec(cs));
    body = TestGraph::node(K::Sequence);
    body->children = steps;
    if (loop)
      body = TestGraph::repeat(loop, body);
    tg.g->hostHandles.push_back({"input", acts[0], true});
    tg.g->hostHandles.push_back({"total", total, false});
  }
};

std::uint32_t varOf(const poplar::Tensor &t) {
  return t.getImpl().segments->front().var;
}

/// The passes up to allocation, as compile() runs them.
struct Passes {
  LoweredProgram lowered;
  ExchangePlan plan;
  LivenessResult liveness;
  AllocationResult allocation;
  Passes(const ir::GraphData &g, const std::vector<const ir::ProgramNode *> &programs) {
    lowered = lowerPrograms(g, programs);
    plan = planExchange(g, lowered);
    liveness = analyseLiveness(g, lowered, plan);
    allocation = allocateMemory(g, lowered, plan, liveness, true);
  }
};

bool isControl(S kind) {
  return kind == S::Jump || kind == S::JumpIfZero || kind == S::JumpIfNonZero || kind == S::LoopTest ||
         kind == S::Call || kind == S::Return || kind == S::SwitchJump || kind == S::SetCounter ||
         kind == S::End || kind == S::Abort || kind == S::AbortIf;
}

/// Checks that every step reading or writing an offloaded variable finds, going back, that
/// variable's load before any control flow or store of it; and that a step writing it finds,
/// going on, its store before any control flow or load.
void checkStaging(const LoweredProgram &lp, const ExchangePlan &plan) {
  REQUIRE(lp.steps.size() == plan.steps.size());
  REQUIRE(!plan.streaming.empty());
  for (const exe::StreamingVariable &sv : plan.streaming) {
    INFO("variable '" << sv.name << "'");
    auto isLoad = [&](std::size_t s) {
      return plan.steps[s].kind == S::RemoteToDevice && plan.steps[s].a == sv.remoteBuffer;
    };
    auto isStore = [&](std::size_t s) {
      return plan.steps[s].kind == S::DeviceToRemote && plan.steps[s].a == sv.remoteBuffer;
    };
    unsigned uses = 0;
    for (std::size_t s = 0; s < plan.steps.size(); ++s) {
      if (isLoad(s) || isStore(s))
        continue;
      std::uint8_t flags = 0;
      for (std::uint32_t k = plan.stepAccessBegin[s]; k < plan.stepAccessBegin[s + 1]; ++k)
        if (plan.stepAccesses[k].var == sv.variable)
          flags |= plan.stepAccesses[k].flags;
      if (!(flags & (kRead | kWrite)))
        continue;
      ++uses;
      INFO("step " << s << " '" << plan.steps[s].message << "'");
      bool loaded = false;
      for (std::size_t p = s; p-- > 0;) {
        if (isLoad(p)) {
          loaded = true;
          break;
        }
        if (isStore(p) || isControl(plan.steps[p].kind))
          break;
      }
      CHECK(loaded);
      if (flags & kWrite) {
        bool stored = false;
        for (std::size_t n = s + 1; n < plan.steps.size(); ++n) {
          if (isStore(n)) {
            stored = true;
            break;
          }
          if (isLoad(n) || isControl(plan.steps[n].kind))
            break;
        }
        CHECK(stored);
      }
    }
    CHECK(uses > 0);
  }
}

} // namespace

TEST_CASE("Streaming Memory: a remote-buffer copy is priced from Streaming Memory's bandwidth and latency",
          "[compiler][streaming]") {
  TestGraph tg(4);
  const ir::TargetData &t = tg.g->target;
  // 16,000 bytes spread over 4 tiles (4,000 each), to and from a remote buffer and a host stream.
  auto data = tg.var(poplar::FLOAT, {4000}, "data", {0, 1, 2, 3});
  tg.g->remoteBuffers.push_back({"rb", poplar::FLOAT, 4000, 1});
  tg.g->streams.push_back({"in", poplar::FLOAT, 4000, true, poplar::ReplicatedStreamMode::REPLICATE});
  auto load = TestGraph::node(K::RemoteToTensor, "load");
  load->dst = data;
  load->remoteBuffer = 0;
  auto stream = TestGraph::node(K::StreamToTensor, "stream");
  stream->dst = data;
  stream->stream = 0;
  auto prog = TestGraph::seq({load, stream});
  auto exe = compile(*tg.g, {prog.get()}, {});
  std::uint64_t remote = 0, host = 0;
  for (const exe::Step &s : exe->steps) {
    if (s.kind == S::RemoteToDevice)
      remote = s.cycles;
    if (s.kind == S::StreamToDevice)
      host = s.cycles;
  }
  // docs/cost-model.md: max(per-tile bytes / E, per-IPU bytes / (bandwidth / clock)) + latency + X + S.
  const std::uint64_t S_ = t.syncCycles + t.minIPUSyncDelay, X = t.exchangeOverheadCycles;
  const std::uint64_t ddr = ceilDiv(16000, 20e9 / 1.33e9);  // 1,064 cycles at 20 GB/s
  const std::uint64_t link = ceilDiv(16000, 32e9 / 1.33e9); // 665 cycles at 32 GB/s
  CHECK(t.streamingMemoryBandwidth == 20e9);
  CHECK(t.streamingMemoryLatencyCycles == 2660);
  CHECK(t.streamingMemoryBytes == 112'000'000'000ull);
  CHECK(remote == std::max<std::uint64_t>(1000, ddr) + 2660 + X + S_);
  CHECK(remote == 3774);
  CHECK(host == std::max<std::uint64_t>(1000, link) + 1330 + X + S_);
  CHECK(host == 2380);
  // The profile's memory report shows what the remote buffer holds.
  CHECK_THAT(exe->profileJson, Catch::Contains("\"remoteBuffers\":[{\"bytes\":16000,\"name\":\"rb\"}]"));
  CHECK_THAT(exe->profileJson, Catch::Contains("\"streamingBytes\":16000"));
}

TEST_CASE("Streaming Memory: each offloaded variable is loaded before each use and stored after each write",
          "[compiler][streaming]") {
  for (unsigned loop : {0u, 3u}) {
    INFO("loop " << loop);
    Layers m(6, 2048, 20000, loop); // 4 KiB of each weight per tile: 24 KiB of weights, 20,000-byte tiles
    Passes p(*m.tg.g, {m.body.get()});
    REQUIRE(p.allocation.outOfMemory);
    const OffloadCandidates c = findOffloadCandidates(*m.tg.g, p.lowered, p.plan, p.liveness, {});
    // Weights (one step each) come first, the accumulator (also one step, smaller) after them.
    REQUIRE(c.priority.size() >= 7);
    CHECK(c.eligible[varOf(m.total)]);
    for (const poplar::Tensor &w : m.weights)
      CHECK(c.eligible[varOf(w)]);
    CHECK(c.reason[varOf(m.acts[3])] ==
          "it is not always-live: it already shares tile memory outside its live range");
    applyOffload(*m.tg.g, p.lowered, p.plan, c.priority);
    checkStaging(p.lowered, p.plan);
    // Arena order is first-read order; a prefetch overlaps the Execute step before its first use.
    for (std::size_t i = 1; i < p.plan.streaming.size(); ++i)
      CHECK(p.plan.streaming[i - 1].firstStep <= p.plan.streaming[i].firstStep);
    for (std::size_t i = 1; i < p.plan.streaming.size(); ++i)
      CHECK(p.plan.streaming[i].offset >= p.plan.streaming[i - 1].offset + p.plan.streaming[i - 1].bytes);
    unsigned overlapped = 0;
    for (std::size_t s = 0; s < p.plan.overlapStep.size(); ++s)
      if (p.plan.overlapStep[s] != kNoObject) {
        ++overlapped;
        CHECK(p.plan.steps[p.plan.overlapStep[s]].kind == S::Execute);
        CHECK(p.plan.overlapStep[s] > s);
      }
    CHECK(overlapped >= 5); // every layer's weights but the first
    // The accumulator is written: stored once; weights are only read: never stored.
    for (const exe::StreamingVariable &sv : p.plan.streaming)
      CHECK(sv.stores == (sv.variable == varOf(m.total) ? 1u : 0u));
    // Its initial value moved to Streaming Memory; the handle reads it there.
    const auto &handle = p.plan.hostHandles[1];
    CHECK(handle.name == "total");
    CHECK(handle.streamingRuns.size() == 2);

    // compile() with aspen.streamingMemory=auto does the same and fits.
    CompileOptions options;
    options.streamingMemoryAuto = true;
    auto exe = compile(*m.tg.g, {m.body.get()}, options);
    CHECK_FALSE(exe->outOfMemory);
    CHECK_FALSE(exe->streamingLayout.empty());
    CHECK_THAT(exe->profileJson, Catch::Contains("\"offloadedVariables\":[{"));
    CHECK_THAT(exe->profileJson, Catch::Contains("\"hiddenCycles\""));
  }
}

TEST_CASE("Streaming Memory: a hidden load costs only what the compute before it does not cover",
          "[compiler][streaming]") {
  Layers m(3, 1024, 9000);
  // Slow layers: 10,000 cycles of compute hide all of a 4 KiB load per tile.
  for (std::uint32_t v = 0; v < m.tg.g->vertices.size(); ++v)
    m.tg.setCycles(v, 10000);
  CompileOptions options;
  options.streamingMemoryAuto = true;
  auto exe = compile(*m.tg.g, {m.body.get()}, options);
  REQUIRE(exe->streamingLayout.size() >= 2);
  bool sawHidden = false, sawExposed = false;
  for (std::size_t s = 0; s + 1 < exe->steps.size(); ++s) {
    if (exe->steps[s].kind != S::RemoteToDevice)
      continue;
    if (exe->steps[s + 1].kind == S::Execute && exe->steps[s].cycles == 0)
      sawHidden = true; // the whole load runs beside the next Execute step's compute
    if (exe->steps[s].cycles != 0)
      sawExposed = true; // the first layer's load has nothing before it to hide behind
  }
  CHECK(sawHidden);
  CHECK(sawExposed);
}

TEST_CASE("Streaming Memory: the executable records the layout, in first-read order, and reads it back",
          "[compiler][streaming]") {
  Layers m(6, 2048, 20000);
  CompileOptions options;
  options.streamingMemoryAuto = true;
  auto exe = compile(*m.tg.g, {m.body.get()}, options);
  REQUIRE(exe->streamingLayout.size() >= 2);
  const auto bytes = exe::serializeToBytes(*exe);
  auto back = exe::deserializeFromBytes(bytes.data(), bytes.size(), false, "test executable");
  exe::validateStructure(*back, "test executable");
  REQUIRE(back->streamingLayout.size() == exe->streamingLayout.size());
  for (std::size_t i = 0; i < exe->streamingLayout.size(); ++i) {
    const exe::StreamingVariable &a = exe->streamingLayout[i], &b = back->streamingLayout[i];
    INFO("entry " << i);
    CHECK(b.name == a.name);
    CHECK(b.variable == a.variable);
    CHECK(b.remoteBuffer == a.remoteBuffer);
    CHECK(b.offset == a.offset);
    CHECK(b.bytes == a.bytes);
    CHECK(b.firstStep == a.firstStep);
    CHECK(b.initial == a.initial);
    if (i)
      CHECK(a.firstStep >= exe->streamingLayout[i - 1].firstStep); // first-read order
  }
  // A weight's initial value (layer l: all l) is in its entry, not in tile memory.
  for (const exe::StreamingVariable &sv : back->streamingLayout)
    if (sv.name.rfind("w", 0) == 0) {
      const float l = float(std::stoi(sv.name.substr(1)));
      REQUIRE(sv.initial.size() == sv.bytes);
      float first = 0;
      std::memcpy(&first, sv.initial.data(), sizeof first);
      CHECK(first == l);
    }
  // The handle's bytes of offloaded variables survive too.
  for (std::size_t h = 0; h < exe->hostHandles.size(); ++h)
    CHECK(back->hostHandles[h].streamingRuns.size() == exe->hostHandles[h].streamingRuns.size());
}
