// Copyright (c) Aspen contributors.
// Unit tests of the runtime on hand-built executables: tile memory, loading
// (blobs, relocations), exchange runs, compute dispatch, control flow, host
// streams (fixed, circular, callbacks), remote buffers, prints, aborts, cycle
// accounting and independence from the host thread count.
#include "Executor.hpp"
#include "Loader.hpp"
#include "PrintTensor.hpp"
#include "poplar/exceptions.hpp"

#include <catch2/catch.hpp>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

using namespace aspen;
using exe::StepKind;
using poplar::Type;

namespace {

constexpr unsigned kTiles = 4;
constexpr std::uint32_t kBytesPerTile = 4096;

exe::ExecutableData smallExecutable(unsigned tiles = kTiles, std::uint32_t bytesPerTile = kBytesPerTile) {
  exe::ExecutableData e;
  e.target.numIPUs = 1;
  e.target.tilesPerIPU = tiles;
  e.target.bytesPerTile = bytesPerTile;
  e.target.numWorkerContexts = 6;
  return e;
}

exe::Step step(StepKind kind, std::uint32_t a = 0, std::uint32_t b = 0, std::uint32_t target = 0) {
  exe::Step s;
  s.kind = kind;
  s.a = a;
  s.b = b;
  s.target = target;
  return s;
}

exe::ScalarRef scalarAt(std::uint32_t tile, std::uint32_t addr, Type::Id type) {
  exe::ScalarRef s;
  s.where = {tile, addr};
  s.type = type;
  return s;
}

/// A copy plan from (src tile, addr) runs, grouped by destination tile.
exe::CopyPlan plan(std::vector<exe::CopyRun> runs) {
  std::sort(runs.begin(), runs.end(),
            [](const exe::CopyRun &a, const exe::CopyRun &b) { return a.dst.tile < b.dst.tile; });
  exe::CopyPlan p;
  for (const exe::CopyRun &r : runs) {
    if (p.tiles.empty() || p.tiles.back() != r.dst.tile) {
      p.tiles.push_back(r.dst.tile);
      p.tileBegin.push_back(static_cast<std::uint32_t>(p.runs.size()));
    }
    p.runs.push_back(r);
    p.totalBytes += r.bytes;
  }
  p.tileBegin.push_back(static_cast<std::uint32_t>(p.runs.size()));
  return p;
}

/// A host transfer of `bytes` contiguous bytes at one location.
std::uint32_t addTransfer(exe::ExecutableData &e, exe::TileAddr where, std::uint32_t bytes) {
  exe::HostTransfer t;
  t.bytes = bytes;
  t.runs.push_back({0, where, bytes});
  e.hostTransfers.push_back(t);
  return static_cast<std::uint32_t>(e.hostTransfers.size() - 1);
}

// ---- test vertices (the vertex ABI: pointers written by relocations) --------

struct ScaleVertex { // Vertex: data[i] *= factor
  float *data;
  std::uint32_t size;
  float factor;
};
int scaleCompute(void *v, unsigned) {
  auto *s = static_cast<ScaleVertex *>(v);
  for (std::uint32_t i = 0; i < s->size; ++i)
    s->data[i] *= s->factor;
  return 1;
}

struct IncrementVertex { // Vertex: *x += 1
  std::int32_t *x;
};
int incrementCompute(void *v, unsigned) {
  ++*static_cast<IncrementVertex *>(v)->x;
  return 1;
}

struct WorkerIdsVertex { // MultiVertex: out[w] += w + 1
  std::uint32_t *out;
};
int workerIdsCompute(void *v, unsigned w) {
  static_cast<WorkerIdsVertex *>(v)->out[w] += w + 1;
  return 1;
}

struct CheckVertex { // Vertex: fails when *x is negative
  std::int32_t *x;
};
int checkCompute(void *v, unsigned) {
  return *static_cast<CheckVertex *>(v)->x >= 0 ? 1 : 0;
}

int nothingCompute(void *, unsigned) {
  return 1;
}

enum TestType : std::uint32_t { kScale, kIncrement, kWorkerIds, kCheck, kNothing };

std::vector<rt::VertexCode> testVertexCode() {
  return {{scaleCompute, false},
          {incrementCompute, false},
          {workerIdsCompute, true},
          {checkCompute, false},
          {nothingCompute, false}};
}

void addTestVertexTypes(exe::ExecutableData &e) {
  e.codeletLibraries.resize(1);
  for (const char *name : {"Scale", "Increment", "WorkerIds", "Check", "Nothing"})
    e.vertexTypes.push_back({name, 0, std::string(name) == "WorkerIds"});
}

/// Places a vertex object at (tile, state) whose first field points at `data`.
void addPointerVertex(exe::ExecutableData &e, exe::ComputeStep &cs, std::uint32_t type, std::uint32_t tile,
                      std::uint32_t state, exe::TileAddr data, std::vector<std::uint8_t> tail = {},
                      std::uint64_t cycles = 10, std::uint32_t graphVertex = 0) {
  if (cs.tiles.empty() || cs.tiles.back() != tile) {
    cs.tiles.push_back(tile);
    if (cs.tileBegin.empty())
      cs.tileBegin.push_back(0);
    cs.tileBegin.push_back(static_cast<std::uint32_t>(cs.vertices.size()));
  }
  cs.vertices.push_back({type, state, graphVertex, cycles});
  cs.tileBegin.back() = static_cast<std::uint32_t>(cs.vertices.size());
  cs.totalVertexCycles += cycles;
  cs.computeCycles = std::max(cs.computeCycles, cycles);
  e.relocations.push_back({{tile, state}, data});
  if (!tail.empty())
    e.blobs.push_back({{tile, state + 8}, tail});
}

template <class T> std::vector<std::uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<std::uint8_t> b(values.size() * sizeof(T));
  std::memcpy(b.data(), values.data(), b.size());
  return b;
}

/// The fields of a ScaleVertex after its pointer: size, factor.
std::vector<std::uint8_t> scaleFields(std::uint32_t size, float factor) {
  std::vector<std::uint8_t> b(8);
  std::memcpy(b.data(), &size, 4);
  std::memcpy(b.data() + 4, &factor, 4);
  return b;
}

void finish(exe::ComputeStep &cs) {
  if (cs.tileBegin.empty())
    cs.tileBegin.push_back(0);
}

/// A loaded executable with its host side, run through the executor.
struct Machine {
  explicit Machine(exe::ExecutableData executable)
      : exe(std::move(executable)),
        memory(exe.target.numTiles(), exe.target.bytesPerTile, rt::imagePageOffset(exe)),
        streams(exe.streams), remote(exe.remoteBuffers) {
    rt::validateExecutable(exe);
    rt::loadMemoryImage(exe, memory);
    profile.reset(exe.programEntry.size(), exe.steps.size(), exe.vertexTypes.size());
    std::vector<rt::VertexCode> code = testVertexCode();
    code.resize(exe.vertexTypes.size());
    executor = std::make_unique<rt::Executor>(exe, memory, code,
                                              rt::HostContext{&streams, &remote, &printed, &profile});
  }
  template <class T> T read(std::uint32_t tile, std::uint32_t addr) {
    T value;
    std::memcpy(&value, memory.at(tile, addr), sizeof value);
    return value;
  }
  template <class T> void write(std::uint32_t tile, std::uint32_t addr, T value) {
    std::memcpy(memory.at(tile, addr), &value, sizeof value);
  }
  void run(unsigned program = 0) { executor->run(program); }

  exe::ExecutableData exe;
  rt::TileMemory memory;
  rt::HostStreams streams;
  rt::RemoteBuffers remote;
  rt::ExecutionProfile profile;
  std::ostringstream printed;
  std::unique_ptr<rt::Executor> executor;
};

void endProgram(exe::ExecutableData &e) {
  e.programEntry.push_back(0);
  e.steps.push_back(step(StepKind::End));
}

} // namespace

TEST_CASE("Tile memory is zeroed, addressed per tile and cleared", "[runtime][memory]") {
  rt::TileMemory memory(3, 1000);
  memory.prepare(nullptr);
  REQUIRE(memory.at(2, 10) == memory.base() + 2 * memory.stride() + 10);
  // Tiles lie whole pages apart, each followed by an inaccessible guard.
  const std::uint64_t page = rt::TileMemory::pageSize();
  REQUIRE(memory.stride() % page == 0);
  REQUIRE(memory.stride() >= 1000 + rt::TileMemory::guardBytes());
  REQUIRE(memory.guarded());
  unsigned tile = 0;
  std::uint64_t offset = 0;
  REQUIRE(memory.locate(memory.at(2, 10), tile, offset));
  REQUIRE((tile == 2 && offset == 10));
  REQUIRE(memory.locate(memory.at(1, 1000) + 5, tile, offset));
  REQUIRE((tile == 1 && offset == 1005));
  REQUIRE_FALSE(memory.locate(memory.base() - 1, tile, offset));
  REQUIRE(memory.contains({2, 990}, 10));
  REQUIRE_FALSE(memory.contains({2, 991}, 10));
  REQUIRE_FALSE(memory.contains({3, 0}, 1));
  for (unsigned t = 0; t < 3; ++t)
    REQUIRE(*memory.at(t, 999) == 0);
  // Bounded users (executables compiled in this process) write below their extents.
  const std::vector<std::uint64_t> used{16, 16, 16};
  memory.prepare(&used);
  *memory.at(1, 5) = 42;
  memory.prepare(&used);
  REQUIRE(*memory.at(1, 5) == 0);
  // Each tile is written after it is zeroed.
  *memory.at(1, 5) = 42;
  memory.prepare(&used, [&](unsigned t) { *memory.at(t, 3) = static_cast<std::uint8_t>(10 + t); });
  for (unsigned t = 0; t < 3; ++t)
    REQUIRE(*memory.at(t, 3) == 10 + t);
  REQUIRE(*memory.at(1, 5) == 0);
  // An unbounded user (an executable read from a file) may write anywhere.
  memory.prepare(nullptr);
  *memory.at(2, 990) = 7;
  *memory.at(0, 0) = 1;
  memory.prepare(&used);
  REQUIRE(*memory.at(2, 990) == 0);
  REQUIRE(*memory.at(0, 0) == 0);
}

TEST_CASE("Reused tile memory reads as zero", "[runtime][memory]") {
  // Released memory goes to a pool and comes back zeroed over what its user wrote.
  const std::vector<std::uint64_t> used{5000, 0, 70000, 1};
  for (int round = 0; round < 4; ++round) {
    rt::TileMemory memory(4, 80000);
    memory.prepare(round % 2 ? nullptr : &used);
    for (unsigned t = 0; t < 4; ++t)
      for (std::uint32_t a = 0; a < 80000; a += 997)
        REQUIRE(*memory.at(t, a) == 0);
    for (unsigned t = 0; t < 4; ++t)
      std::memset(memory.at(t, 0), 0xab, round % 2 ? 80000 : used[t]);
  }
}

/// Pages of host memory that the blobs of `e` cover when tile memory starts
/// `offset` bytes into a page (a plain count over every byte's page).
std::size_t pagesTouched(const exe::ExecutableData &e, std::uint64_t offset) {
  const std::uint64_t page = rt::TileMemory::pageSize();
  std::vector<std::uint64_t> pages;
  for (const exe::MemoryBlob &b : e.blobs)
    for (std::uint64_t i = 0; i < b.bytes.size(); ++i)
      pages.push_back((offset + b.where.tile * rt::TileMemory::strideFor(e.target.bytesPerTile, offset) +
                       b.where.addr + i) /
                      page);
  std::sort(pages.begin(), pages.end());
  return static_cast<std::size_t>(std::unique(pages.begin(), pages.end()) - pages.begin());
}

TEST_CASE("Tile memory starts where the image's blobs touch the fewest pages", "[runtime][memory]") {
  const std::uint32_t page = rt::TileMemory::pageSize();
  const std::uint32_t step = rt::TileMemory::kBaseAlignment;
  REQUIRE(page % step == 0);
  // Three tiles of two pages; on each, a blob of 1,000 bytes across the first
  // page boundary, and a small one that shares the second page.
  exe::ExecutableData e = smallExecutable(3, 2 * page);
  for (std::uint32_t t = 0; t < 3; ++t) {
    e.blobs.push_back({{t, page - 300}, std::vector<std::uint8_t>(1000, std::uint8_t(t + 1))});
    e.blobs.push_back({{t, page + 900}, std::vector<std::uint8_t>(8, std::uint8_t(t + 7))});
  }
  e.relocations.push_back({{2, page + 900}, {1, page - 300}});
  const std::uint32_t offset = rt::imagePageOffset(e);
  REQUIRE(offset % step == 0);
  REQUIRE(offset < page);
  // The best offset of all, and the lowest of the best.
  std::size_t fewest = pagesTouched(e, 0);
  for (std::uint32_t o = step; o < page; o += step)
    fewest = std::min(fewest, pagesTouched(e, o));
  REQUIRE(fewest == 3);
  REQUIRE(pagesTouched(e, 0) == 6);
  REQUIRE(pagesTouched(e, offset) == fewest);
  for (std::uint32_t o = 0; o < offset; o += step)
    REQUIRE(pagesTouched(e, o) > fewest);

  // The memory keeps its addressing and alignment at that offset, and the image loads.
  rt::TileMemory memory(3, 2 * page, offset);
  REQUIRE(memory.pageOffset() == offset);
  REQUIRE(reinterpret_cast<std::uintptr_t>(memory.base()) % page == offset);
  REQUIRE(reinterpret_cast<std::uintptr_t>(memory.base()) % step == 0);
  REQUIRE(memory.at(2, 5) == memory.base() + 2 * memory.stride() + 5);
  REQUIRE(memory.stride() % page == 0);
  rt::loadMemoryImage(e, memory);
  for (std::uint32_t t = 0; t < 3; ++t) {
    REQUIRE(*memory.at(t, page - 301) == 0);
    REQUIRE(*memory.at(t, page - 300) == t + 1);
    REQUIRE(*memory.at(t, page + 699) == t + 1);
    REQUIRE(*memory.at(t, page + 700) == 0);
    REQUIRE(*memory.at(t, 2 * page - 1) == 0);
  }
  std::uint8_t *pointer = nullptr;
  std::memcpy(&pointer, memory.at(2, page + 900), sizeof pointer);
  REQUIRE(pointer == memory.at(1, page - 300));

  // A blob that fits in a page as it is keeps tile memory page-aligned.
  exe::ExecutableData aligned = smallExecutable(2, page);
  aligned.blobs.push_back({{1, 16}, std::vector<std::uint8_t>(100, 1)});
  REQUIRE(rt::imagePageOffset(aligned) == 0);
}

TEST_CASE("Pooled tile memory keeps its offset and reads as zero", "[runtime][memory]") {
  const std::uint32_t page = rt::TileMemory::pageSize();
  // Five tiles: a layout no other test's memory (pooled too, when released) has.
  const std::vector<std::uint64_t> used{3 * page, page / 2, 0, 0, 0};
  std::uint32_t offset = 0;
  for (int round = 0; round < 3; ++round) {
    // Released memory comes back from the pool with the offset it had.
    rt::TileMemory memory(5, 3 * page + 40, round == 0 ? 2 * rt::TileMemory::kBaseAlignment : 0);
    if (round == 0)
      offset = memory.pageOffset();
    REQUIRE(memory.pageOffset() == offset);
    REQUIRE(reinterpret_cast<std::uintptr_t>(memory.base()) % page == offset);
    memory.prepare(&used);
    for (unsigned t = 0; t < 5; ++t)
      for (std::uint32_t a = 0; a < 3 * page + 40; ++a)
        REQUIRE(*memory.at(t, a) == 0);
    for (unsigned t = 0; t < 5; ++t)
      std::memset(memory.at(t, 0), 0xcd, used[t]);
  }
}

TEST_CASE("Loading writes blobs and relocations", "[runtime][loader]") {
  exe::ExecutableData e = smallExecutable();
  e.blobs.push_back({{1, 100}, {1, 2, 3, 4}});
  e.relocations.push_back({{2, 0}, {1, 102}});
  endProgram(e);
  Machine m(e);
  REQUIRE(m.read<std::uint32_t>(1, 100) == 0x04030201u);
  REQUIRE(m.read<std::uint8_t *>(2, 0) == m.memory.at(1, 102));
  REQUIRE(*m.read<std::uint8_t *>(2, 0) == 3);
}

TEST_CASE("Relocations load the same grouped by tile or in any order", "[runtime][loader]") {
  // Blobs on every tile; relocations on tiles 0, 2 and 3 (none on 1).
  exe::ExecutableData e = smallExecutable();
  for (std::uint32_t t = 0; t < kTiles; ++t)
    e.blobs.push_back({{t, 64}, std::vector<std::uint8_t>(512, std::uint8_t(0x10 + t))});
  for (std::uint32_t t : {0u, 2u, 3u})
    for (std::uint32_t k = 0; k < 20; ++k)
      e.relocations.push_back({{t, 64 + 8 * k}, {(t + k) % kTiles, 4 * k}});
  endProgram(e);
  // The bytes tile memory must hold, by a plain walk over blobs then relocations.
  auto expectLoaded = [&](const exe::ExecutableData &x) {
    Machine m(x);
    for (std::uint32_t t = 0; t < kTiles; ++t)
      for (std::uint32_t a = 0; a < kBytesPerTile; ++a) {
        bool relocated = false;
        for (const exe::Relocation &r : x.relocations)
          relocated |= r.where.tile == t && a >= r.where.addr && a < r.where.addr + 8;
        if (!relocated)
          REQUIRE(*m.memory.at(t, a) == (a >= 64 && a < 64 + 512 ? 0x10 + t : 0));
      }
    for (const exe::Relocation &r : x.relocations)
      REQUIRE(m.read<std::uint8_t *>(r.where.tile, r.where.addr) == m.memory.at(r.target));
  };
  SECTION("grouped by tile") {
    expectLoaded(e);
  }
  SECTION("tiles interleaved") {
    std::vector<exe::Relocation> byK;
    for (std::uint32_t k = 0; k < 20; ++k)
      for (std::uint32_t t = 0; t < 3; ++t)
        byK.push_back(e.relocations[t * 20 + k]);
    e.relocations = byK;
    expectLoaded(e);
  }
  SECTION("descending tiles") {
    std::reverse(e.relocations.begin(), e.relocations.end());
    expectLoaded(e);
  }
  SECTION("one out of place") {
    std::swap(e.relocations[5], e.relocations[45]);
    expectLoaded(e);
  }
}

TEST_CASE("A corrupt executable is rejected before it runs", "[runtime][loader]") {
  exe::ExecutableData e = smallExecutable();
  endProgram(e);
  SECTION("blob outside memory") {
    e.blobs.push_back({{1, kBytesPerTile - 2}, {1, 2, 3, 4}});
  }
  SECTION("relocation on a missing tile") {
    e.relocations.push_back({{kTiles, 0}, {0, 0}});
  }
  SECTION("jump past the end") {
    e.steps.insert(e.steps.begin(), step(StepKind::Jump, 0, 0, 99));
  }
  SECTION("unknown compute set") {
    e.steps.insert(e.steps.begin(), step(StepKind::Execute, 3));
  }
  REQUIRE_THROWS_AS(rt::validateExecutable(e), poplar::graph_object_load_error);
}

TEST_CASE("A compute set exchanges in, runs its vertices per tile and exchanges out", "[runtime][execute]") {
  exe::ExecutableData e = smallExecutable();
  addTestVertexTypes(e);
  // Data: 8 floats on tile 0 at 0. Each of tiles 1..3 scales a copy by its tile
  // number (exchange in to a buffer at 512), then the results come back to tile 0
  // at 1024 + 32 * (tile - 1).
  std::vector<float> input = {1, 2, 3, 4, 5, 6, 7, 8};
  e.blobs.push_back({{0, 0}, bytesOf(input)});
  exe::ComputeStep cs;
  cs.name = "scale";
  std::vector<exe::CopyRun> in, out;
  for (std::uint32_t t = 1; t < kTiles; ++t) {
    in.push_back({{0, 0}, {t, 512}, 32});
    addPointerVertex(e, cs, kScale, t, 64, {t, 512}, scaleFields(8, float(t)));
    out.push_back({{t, 512}, {0, 1024 + 32 * (t - 1)}, 32});
  }
  cs.exchangeIn = plan(in);
  cs.exchangeOut = plan(out);
  finish(cs);
  e.computeSteps.push_back(cs);
  e.steps.push_back(step(StepKind::Execute, 0));
  endProgram(e);
  e.programEntry = {0};

  Machine m(e);
  m.run();
  for (std::uint32_t t = 1; t < kTiles; ++t)
    for (unsigned i = 0; i < 8; ++i)
      REQUIRE(m.read<float>(0, 1024 + 32 * (t - 1) + 4 * i) == input[i] * float(t));
  // The source is unchanged.
  REQUIRE(m.read<float>(0, 28) == 8.0f);
}

TEST_CASE("A MultiVertex runs once per worker with its worker id", "[runtime][execute]") {
  exe::ExecutableData e = smallExecutable();
  addTestVertexTypes(e);
  exe::ComputeStep cs;
  cs.name = "workers";
  addPointerVertex(e, cs, kWorkerIds, 2, 0, {2, 256});
  finish(cs);
  e.computeSteps.push_back(cs);
  e.steps.push_back(step(StepKind::Execute, 0));
  endProgram(e);
  e.programEntry = {0};
  Machine m(e);
  m.run();
  for (unsigned w = 0; w < 6; ++w)
    REQUIRE(m.read<std::uint32_t>(2, 256 + 4 * w) == w + 1);
  REQUIRE(m.read<std::uint32_t>(2, 256 + 24) == 0);
}

TEST_CASE("A copy whose runs read what others write behaves as all reads before writes",
          "[runtime][exchange]") {
  exe::ExecutableData e = smallExecutable();
  // Swap 64 bytes between tile 0 and tile 3, and rotate three words on tile 1.
  std::vector<std::uint8_t> a(64), b(64);
  std::iota(a.begin(), a.end(), 0);
  std::iota(b.begin(), b.end(), 100);
  e.blobs.push_back({{0, 0}, a});
  e.blobs.push_back({{3, 0}, b});
  e.blobs.push_back({{1, 0}, bytesOf(std::vector<std::uint32_t>{7, 8, 9})});
  e.copies.push_back(plan({{{0, 0}, {3, 0}, 64},
                           {{3, 0}, {0, 0}, 64},
                           {{1, 0}, {1, 4}, 4},
                           {{1, 4}, {1, 8}, 4},
                           {{1, 8}, {1, 0}, 4}}));
  e.steps.push_back(step(StepKind::Copy, 0));
  endProgram(e);
  e.programEntry = {0};
  Machine m(e);
  m.run();
  REQUIRE(std::memcmp(m.memory.at(0, 0), b.data(), 64) == 0);
  REQUIRE(std::memcmp(m.memory.at(3, 0), a.data(), 64) == 0);
  REQUIRE(m.read<std::uint32_t>(1, 0) == 9);
  REQUIRE(m.read<std::uint32_t>(1, 4) == 7);
  REQUIRE(m.read<std::uint32_t>(1, 8) == 8);
}

TEST_CASE("Control flow: counted loops, branches, switch and calls", "[runtime][control]") {
  exe::ExecutableData e = smallExecutable();
  addTestVertexTypes(e);
  // compute set 0 increments x at (0, 100); compute set 1 increments y at (0, 104).
  for (std::uint32_t c = 0; c < 2; ++c) {
    exe::ComputeStep cs;
    cs.name = c == 0 ? "incX" : "incY";
    addPointerVertex(e, cs, kIncrement, 0, 8 * c, {0, 100 + 4 * c});
    finish(cs);
    e.computeSteps.push_back(cs);
  }
  const auto x = [](Machine &m) { return m.read<std::int32_t>(0, 100); };
  const auto y = [](Machine &m) { return m.read<std::int32_t>(0, 104); };
  e.numCounters = 1;

  // Program 0: Repeat(5, incX) lowered as SetCounter(4) ; body ; LoopTest.
  e.programEntry.push_back(static_cast<std::uint32_t>(e.steps.size()));
  {
    exe::Step set = step(StepKind::SetCounter, 0);
    set.value = 4;
    const auto body = static_cast<std::uint32_t>(e.steps.size() + 1);
    e.steps.push_back(set);
    e.steps.push_back(step(StepKind::Execute, 0));
    // LoopTest: counter == 0 -> exit, else decrement and fall through to the jump back.
    e.steps.push_back(step(StepKind::LoopTest, 0, 0, body + 3));
    e.steps.push_back(step(StepKind::Jump, 0, 0, body));
    e.steps.push_back(step(StepKind::End));
  }
  // Program 1: If(flag at (1,0)) incX else incY.
  e.programEntry.push_back(static_cast<std::uint32_t>(e.steps.size()));
  {
    const auto base = static_cast<std::uint32_t>(e.steps.size());
    exe::Step test = step(StepKind::JumpIfZero, 0, 0, base + 3);
    test.scalar = scalarAt(1, 0, Type::Id::Float);
    e.steps.push_back(test);
    e.steps.push_back(step(StepKind::Execute, 0));
    e.steps.push_back(step(StepKind::Jump, 0, 0, base + 4));
    e.steps.push_back(step(StepKind::Execute, 1));
    e.steps.push_back(step(StepKind::End));
  }
  // Program 2: Switch(control at (1, 4)): 3 -> incX, -2 -> incY twice, default: nothing.
  e.programEntry.push_back(static_cast<std::uint32_t>(e.steps.size()));
  {
    const auto base = static_cast<std::uint32_t>(e.steps.size());
    exe::SwitchTable table;
    table.control = scalarAt(1, 4, Type::Id::Int);
    table.values = {3, -2};
    table.targets = {base + 1, base + 3};
    table.defaultTarget = base + 6;
    e.switchTables.push_back(table);
    e.steps.push_back(step(StepKind::SwitchJump, 0));
    e.steps.push_back(step(StepKind::Execute, 0));
    e.steps.push_back(step(StepKind::Jump, 0, 0, base + 6));
    e.steps.push_back(step(StepKind::Execute, 1));
    e.steps.push_back(step(StepKind::Execute, 1));
    e.steps.push_back(step(StepKind::Jump, 0, 0, base + 6));
    e.steps.push_back(step(StepKind::End));
  }
  // Program 3: Call(f) twice where f = incY.
  e.programEntry.push_back(static_cast<std::uint32_t>(e.steps.size()));
  {
    const auto base = static_cast<std::uint32_t>(e.steps.size());
    e.steps.push_back(step(StepKind::Call, 0, 0, base + 3));
    e.steps.push_back(step(StepKind::Call, 0, 0, base + 3));
    e.steps.push_back(step(StepKind::End));
    e.steps.push_back(step(StepKind::Execute, 1));
    e.steps.push_back(step(StepKind::Return));
  }

  Machine m(e);
  m.run(0);
  REQUIRE(x(m) == 5);
  m.run(0);
  REQUIRE(x(m) == 10);

  m.write<float>(1, 0, 0.0f);
  m.run(1);
  REQUIRE((x(m) == 10 && y(m) == 1));
  m.write<float>(1, 0, -0.5f);
  m.run(1);
  REQUIRE((x(m) == 11 && y(m) == 1));

  m.write<std::int32_t>(1, 4, 3);
  m.run(2);
  REQUIRE((x(m) == 12 && y(m) == 1));
  m.write<std::int32_t>(1, 4, -2);
  m.run(2);
  REQUIRE((x(m) == 12 && y(m) == 3));
  m.write<std::int32_t>(1, 4, 7);
  m.run(2);
  REQUIRE((x(m) == 12 && y(m) == 3));

  m.run(3);
  REQUIRE(y(m) == 5);
}

namespace {

/// Records the order of callback calls; prefetch says NotAvailable every other time.
class RecordingCallback : public poplar::StreamCallback {
public:
  explicit RecordingCallback(std::vector<std::string> &log) : log_(log) {}
  Result prefetch(void *p) override {
    const bool available = (calls_++ % 2) == 0;
    log_.push_back(available ? "prefetch" : "prefetch-not-available");
    if (!available)
      return Result::NotAvailable;
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
    const std::int32_t v = 1000 + next_++;
    std::memcpy(p, &v, 4);
  }
  std::vector<std::string> &log_;
  unsigned calls_ = 0;
  std::int32_t next_ = 0;
};

/// One host-to-device stream "in" (1 int) copied to (0, 0), then a device-to-host
/// stream "out" (1 int) from (0, 0).
exe::ExecutableData streamExecutable() {
  exe::ExecutableData e = smallExecutable();
  e.streams.push_back({"in", Type::Id::Int, 1, true});
  e.streams.push_back({"out", Type::Id::Int, 1, false});
  const std::uint32_t t = addTransfer(e, {0, 0}, 4);
  e.programEntry.push_back(0);
  e.steps.push_back(step(StepKind::StreamToDevice, 0, t));
  e.steps.push_back(step(StepKind::DeviceToStream, 1, t));
  e.steps.push_back(step(StepKind::End));
  return e;
}

} // namespace

TEST_CASE("Streams: fixed buffers, circular buffers and callbacks", "[runtime][streams]") {
  Machine m(streamExecutable());

  SECTION("an unconnected stream is named in the error") {
    REQUIRE_THROWS_WITH(m.run(), Catch::Contains("'in'") && Catch::Contains("never connected"));
    REQUIRE_THROWS_AS(m.run(), poplar::stream_connection_error);
  }
  SECTION("fixed pointers are reused by every copy") {
    std::int32_t in = 17, out = 0;
    m.streams.connectFixed(0, &in);
    m.streams.connectFixed(1, &out);
    m.run();
    REQUIRE(out == 17);
    in = -4;
    m.run();
    REQUIRE(out == -4);
  }
  SECTION("a circular buffer's position carries over between runs and wraps") {
    std::vector<std::int32_t> in = {1, 2, 3};
    std::vector<std::int32_t> out(2, 0);
    m.streams.connectCircular(0, in.data(), in.data() + in.size());
    m.streams.connectCircular(1, out.data(), out.data() + out.size());
    std::vector<std::int32_t> seen;
    for (int run = 0; run < 5; ++run) {
      m.run();
      seen.push_back(m.read<std::int32_t>(0, 0));
    }
    REQUIRE(seen == std::vector<std::int32_t>{1, 2, 3, 1, 2});
    // out received 1,2,3,1,2 in turn: slot 0 saw 1,3,2; slot 1 saw 2,1.
    REQUIRE(out == std::vector<std::int32_t>{2, 1});
    // Connecting again starts from the beginning.
    m.streams.connectCircular(0, in.data(), in.data() + in.size());
    m.run();
    REQUIRE(m.read<std::int32_t>(0, 0) == 1);
  }
  SECTION("a circular buffer must hold whole transfers") {
    std::vector<std::uint8_t> odd(6);
    REQUIRE_THROWS_AS(m.streams.connectCircular(0, odd.data(), odd.data() + odd.size()),
                      poplar::stream_connection_error);
  }
  SECTION("callbacks: prefetch first, fetch when not available, then complete") {
    std::vector<std::string> log;
    m.streams.connectCallback(0, std::make_unique<RecordingCallback>(log));
    std::vector<std::int32_t> received;
    m.streams.connectCallback(1, poplar::StreamCallbackHandle([&](void *p) {
                                   std::int32_t v;
                                   std::memcpy(&v, p, 4);
                                   received.push_back(v);
                                 }).release());
    m.run();
    m.run();
    m.run();
    REQUIRE(log == std::vector<std::string>{"prefetch", "complete", "prefetch-not-available", "fetch",
                                            "complete", "prefetch", "complete"});
    REQUIRE(received == std::vector<std::int32_t>{1000, 1001, 1002});
    // Reconnecting between runs replaces the callback.
    std::int32_t fixed = 5;
    m.streams.connectFixed(0, &fixed);
    m.run();
    REQUIRE(received.back() == 5);
  }
}

TEST_CASE("Remote buffers: rows by offset, range-checked", "[runtime][remote]") {
  exe::ExecutableData e = smallExecutable();
  e.remoteBuffers.push_back({"rb", Type::Id::Float, 2, 4});
  // dst: 2 rows of 2 floats at (1, 0); offsets: 2 unsigned ints at (1, 64).
  const std::uint32_t rows2 = addTransfer(e, {1, 0}, 16);
  e.programEntry.push_back(0);
  exe::Step load = step(StepKind::RemoteToDevice, 0, rows2);
  load.scalar = scalarAt(1, 64, Type::Id::UnsignedInt);
  exe::Step store = step(StepKind::DeviceToRemote, 0, rows2);
  store.scalar = scalarAt(1, 72, Type::Id::UnsignedInt);
  e.steps.push_back(load);
  e.steps.push_back(store);
  e.steps.push_back(step(StepKind::End));
  Machine m(e);
  for (std::uint64_t r = 0; r < 4; ++r) {
    float row[2] = {float(r), float(10 * r)};
    std::memcpy(m.remote.row(0, r), row, 8);
  }
  m.write<std::uint32_t>(1, 64, 3);
  m.write<std::uint32_t>(1, 68, 1);
  m.write<std::uint32_t>(1, 72, 0);
  m.write<std::uint32_t>(1, 76, 2);
  m.run();
  REQUIRE(m.read<float>(1, 0) == 3.0f);
  REQUIRE(m.read<float>(1, 4) == 30.0f);
  REQUIRE(m.read<float>(1, 8) == 1.0f);
  REQUIRE(m.read<float>(1, 12) == 10.0f);
  float row0[2], row2[2];
  std::memcpy(row0, m.remote.row(0, 0), 8);
  std::memcpy(row2, m.remote.row(0, 2), 8);
  REQUIRE((row0[0] == 3.0f && row0[1] == 30.0f && row2[0] == 1.0f && row2[1] == 10.0f));

  m.write<std::uint32_t>(1, 68, 4);
  REQUIRE_THROWS_WITH(m.run(), Catch::Contains("'rb'") && Catch::Contains("Offset 4"));
}

TEST_CASE("PrintTensor formats like Poplar", "[runtime][print]") {
  auto print = [](const std::string &title, Type::Id type, std::vector<std::uint64_t> shape,
                  const std::vector<std::uint8_t> &bytes) {
    std::ostringstream os;
    rt::printTensor(os, title, type, shape, bytes.data());
    return os.str();
  };
  REQUIRE(print("x", Type::Id::Float, {2}, bytesOf(std::vector<float>{0.5f, 2.0f})) ==
          "x: [0.5000000 2.0000000]\n");
  REQUIRE(print("idx", Type::Id::UnsignedInt, {3}, bytesOf(std::vector<std::uint32_t>{3, 4, 5})) ==
          "idx: [3 4 5]\n");
  REQUIRE(print("n", Type::Id::Int, {2}, bytesOf(std::vector<std::int32_t>{-7, 0})) == "n: [-7 0]\n");
  REQUIRE(print("m", Type::Id::Float, {2, 2}, bytesOf(std::vector<float>{1, 2, 3, 4})) ==
          "m: [\n  [1.0000000 2.0000000]\n  [3.0000000 4.0000000]\n]\n");
  REQUIRE(print("t", Type::Id::Short, {2, 1, 2}, bytesOf(std::vector<std::int16_t>{1, 2, 3, 4})) ==
          "t: [\n  [\n    [1 2]\n  ]\n  [\n    [3 4]\n  ]\n]\n");
  // half 1.5 = 0x3e00, -2 = 0xc000
  REQUIRE(print("h", Type::Id::Half, {2}, bytesOf(std::vector<std::uint16_t>{0x3e00, 0xc000})) ==
          "h: [1.5000000 -2.0000000]\n");
  REQUIRE(print("b", Type::Id::Bool, {3}, std::vector<std::uint8_t>{1, 0, 1}) == "b: [1 0 1]\n");
  REQUIRE(print("c", Type::Id::Char, {2}, std::vector<std::uint8_t>{65, 0xff}) == "c: [65 -1]\n");
  REQUIRE(print("s", Type::Id::Float, {}, bytesOf(std::vector<float>{0.25f})) == "s: 0.2500000\n");
  REQUIRE(print("", Type::Id::Int, {1}, bytesOf(std::vector<std::int32_t>{9})) == "[9]\n");
  REQUIRE(print("e", Type::Id::Int, {0}, {}) == "e: []\n");
}

TEST_CASE("Print, Abort and AbortIf steps", "[runtime][control]") {
  exe::ExecutableData e = smallExecutable();
  e.blobs.push_back({{2, 0}, bytesOf(std::vector<std::int32_t>{4, 5, 6})});
  const std::uint32_t t = addTransfer(e, {2, 0}, 12);
  e.prints.push_back({"v", Type::Id::Int, {3}, t});
  e.programEntry = {0, 3, 5};
  e.steps.push_back(step(StepKind::Print, 0));
  e.steps.push_back(step(StepKind::WriteUndef));
  e.steps.push_back(step(StepKind::End));
  exe::Step abortIf = step(StepKind::AbortIf);
  abortIf.scalar = scalarAt(2, 12, Type::Id::Bool);
  abortIf.message = "flag was set";
  e.steps.push_back(abortIf);
  e.steps.push_back(step(StepKind::End));
  exe::Step abort = step(StepKind::Abort);
  abort.message = "stop here";
  e.steps.push_back(abort);
  Machine m(e);
  m.run(0);
  REQUIRE(m.printed.str() == "v: [4 5 6]\n");
  m.run(1);
  m.write<std::uint8_t>(2, 12, 1);
  REQUIRE_THROWS_AS(m.run(1), poplar::application_runtime_error);
  REQUIRE_THROWS_WITH(m.run(1), Catch::Contains("flag was set"));
  REQUIRE_THROWS_WITH(m.run(2), Catch::Contains("stop here"));
}

TEST_CASE("A vertex returning false is reported, or flagged with Execute(cs, flag)", "[runtime][execute]") {
  exe::ExecutableData e = smallExecutable();
  addTestVertexTypes(e);
  exe::ComputeStep cs;
  cs.name = "checks";
  for (std::uint32_t t = 0; t < kTiles; ++t)
    addPointerVertex(e, cs, kCheck, t, 0, {t, 100}, {}, 10, 40 + t);
  finish(cs);
  e.computeSteps.push_back(cs);
  e.programEntry = {0, 2};
  e.steps.push_back(step(StepKind::Execute, 0));
  e.steps.push_back(step(StepKind::End));
  exe::Step flagged = step(StepKind::Execute, 0);
  flagged.scalar = scalarAt(0, 200, Type::Id::UnsignedInt);
  e.steps.push_back(flagged);
  e.steps.push_back(step(StepKind::End));
  Machine m(e);
  m.run(0);
  m.run(1);
  REQUIRE(m.read<std::uint32_t>(0, 200) == 0);
  m.write<std::int32_t>(3, 100, -1);
  m.write<std::int32_t>(1, 100, -1);
  // The lowest failing vertex is named, whatever the thread count.
  REQUIRE_THROWS_WITH(m.run(0), Catch::Contains("Vertex 41") && Catch::Contains("'Check'") &&
                                    Catch::Contains("'checks'") && Catch::Contains("tile 1"));
  REQUIRE_THROWS_AS(m.run(0), poplar::application_runtime_error);
  m.run(1);
  REQUIRE(m.read<std::uint32_t>(0, 200) == 1);
}

TEST_CASE("Cycles are accounted per step and category; cycle streams read the counter", "[runtime][cycles]") {
  exe::ExecutableData e = smallExecutable();
  addTestVertexTypes(e);
  exe::ComputeStep cs;
  cs.name = "work";
  addPointerVertex(e, cs, kNothing, 0, 0, {0, 0}, {}, 100);
  addPointerVertex(e, cs, kNothing, 1, 0, {1, 0}, {}, 250);
  cs.exchangeIn = plan({{{0, 64}, {1, 64}, 8}});
  cs.exchangeIn.cycles = 40;
  finish(cs);
  e.computeSteps.push_back(cs);
  e.streams.push_back({"__aspen_cycles/begin/7", Type::Id::UnsignedInt, 2, true});
  e.streams.push_back({"__aspen_cycles/end/7", Type::Id::UnsignedInt, 2, true});
  e.streams.push_back({"__aspen_cycles/stamp/8", Type::Id::UnsignedInt, 2, true});
  const std::uint32_t count = addTransfer(e, {3, 0}, 8);
  const std::uint32_t stamp = addTransfer(e, {3, 8}, 8);
  e.programEntry = {0};
  exe::Step sync = step(StepKind::Sync);
  sync.cycles = 30;
  exe::Step execute = step(StepKind::Execute, 0);
  execute.cycles = 400; // 250 compute + 40 exchange + 110 sync
  e.steps.push_back(sync);
  e.steps.push_back(step(StepKind::StreamToDevice, 0, count));
  e.steps.push_back(execute);
  e.steps.push_back(sync);
  e.steps.push_back(step(StepKind::StreamToDevice, 1, count));
  e.steps.push_back(step(StepKind::StreamToDevice, 2, stamp));
  e.steps.push_back(step(StepKind::End));
  Machine m(e);
  m.run();
  REQUIRE(m.read<std::uint64_t>(3, 0) == 430);
  REQUIRE(m.read<std::uint64_t>(3, 8) == 460);
  m.run();
  REQUIRE(m.read<std::uint64_t>(3, 0) == 430);
  REQUIRE(m.read<std::uint64_t>(3, 8) == 920);
  REQUIRE(m.executor->cycles() == 920);
  REQUIRE(m.profile.totalCycles == 920);
  REQUIRE(m.profile.computeCycles == 500);
  REQUIRE(m.profile.exchangeCycles == 80);
  REQUIRE(m.profile.syncCycles == 2 * (110 + 60));
  REQUIRE(m.profile.vertexTypeInstances[kNothing] == 4);
  REQUIRE(m.profile.vertexTypeCycles[kNothing] == 700);
  REQUIRE(m.profile.stepExecutions[2] == 2);
  REQUIRE(m.profile.runs == 2);
  REQUIRE(m.profile.trace.size() == 2 * 6);
  REQUIRE(m.profile.trace.entries()[2].startCycle == 30);
  REQUIRE(m.profile.trace.entries()[2].cycles == 400);
}

TEST_CASE("The execution trace reads back every entry as recorded, repeated runs folded",
          "[runtime][cycles]") {
  // A flat reference beside the compact trace: runs that repeat the previous one (same steps
  // and cycles, shifted start), and runs that differ from it in each way that must end a fold.
  aspen::rt::ExecutionTrace trace;
  std::vector<aspen::rt::TraceEntry> flat;
  std::uint32_t run = 0;
  std::uint64_t clock = 0;
  auto doRun = [&](std::vector<std::pair<std::uint32_t, std::uint64_t>> steps, std::uint64_t gap = 0,
                   std::uint32_t skipRuns = 0) {
    trace.closeRun();
    run += skipRuns;
    clock += gap;
    for (const auto &[s, c] : steps) {
      const aspen::rt::TraceEntry e{s, run, clock, c};
      trace.add(e);
      flat.push_back(e);
      clock += c;
    }
    ++run;
  };
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> a{{0, 10}, {1, 20}, {2, 5}};
  for (int i = 0; i < 5; ++i)
    doRun(a);                        // folded: 1 block of 5
  doRun({{0, 10}, {1, 21}, {2, 5}}); // other cycles
  doRun(a);
  doRun(a, 7);               // a gap before it: a different start stride
  doRun(a, 7);               // the same gap again: folds with the one before
  doRun(a, 0, 3);            // runs without entries in between
  doRun({{0, 10}, {1, 20}}); // a shorter run (the trace's cap cut it)
  doRun({});                 // no entries
  doRun({{3, 1}, {2, 5}, {0, 10}});
  doRun({{3, 1}, {2, 5}, {0, 10}}); // left open (not closed)
  REQUIRE(trace.size() == flat.size());
  const std::vector<aspen::rt::TraceEntry> back = trace.entries();
  REQUIRE(back.size() == flat.size());
  for (std::size_t i = 0; i < flat.size(); ++i) {
    INFO("entry " << i);
    REQUIRE(back[i].step == flat[i].step);
    REQUIRE(back[i].run == flat[i].run);
    REQUIRE(back[i].startCycle == flat[i].startCycle);
    REQUIRE(back[i].cycles == flat[i].cycles);
  }
}

TEST_CASE("Results do not depend on the number of host threads", "[runtime][threads]") {
  // 64 tiles, each with 40 vertices that scale overlapping windows of a local
  // buffer in order (so the order within a tile matters), then a rotating
  // all-tiles exchange of 1 KiB per tile through a staging copy; 10 times.
  constexpr unsigned tiles = 64, floats = 256;
  auto build = [] {
    exe::ExecutableData e = smallExecutable(tiles, 8192);
    addTestVertexTypes(e);
    exe::ComputeStep cs;
    cs.name = "scale";
    std::vector<exe::CopyRun> rotate;
    for (std::uint32_t t = 0; t < tiles; ++t) {
      std::vector<float> data(floats);
      for (unsigned i = 0; i < floats; ++i)
        data[i] = float(t) + 0.25f * float(i);
      e.blobs.push_back({{t, 0}, bytesOf(data)});
      for (std::uint32_t v = 0; v < 40; ++v) {
        const std::uint32_t state = 4096 + 16 * v;
        addPointerVertex(e, cs, kScale, t, state, {t, 4 * (v % 48)},
                         scaleFields(16, 1.0f + 0.01f * float(v)));
      }
      rotate.push_back({{t, 0}, {(t + 1) % tiles, 0}, 4 * floats});
    }
    finish(cs);
    cs.exchangeOut = plan(rotate);
    e.computeSteps.push_back(cs);
    e.numCounters = 1;
    exe::Step set = step(StepKind::SetCounter, 0);
    set.value = 9;
    e.programEntry = {0};
    e.steps.push_back(set);
    e.steps.push_back(step(StepKind::Execute, 0));
    e.steps.push_back(step(StepKind::LoopTest, 0, 0, 4));
    e.steps.push_back(step(StepKind::Jump, 0, 0, 1));
    e.steps.push_back(step(StepKind::End));
    return e;
  };
  auto runWith = [&](std::size_t threads) {
    std::unique_ptr<tbb::global_control> limit;
    if (threads)
      limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
    Machine m(build());
    if (!threads && tbb::this_task_arena::max_concurrency() > 1) {
      // With several threads both phases really run as parallel chunks.
      REQUIRE(m.executor->computeChunks(0).parallel());
      REQUIRE(m.executor->exchangeOutChunks(0).parallel());
    }
    m.run();
    std::vector<std::uint8_t> bytes;
    for (std::uint32_t t = 0; t < tiles; ++t)
      bytes.insert(bytes.end(), m.memory.at(t, 0), m.memory.at(t, 4 * floats));
    return bytes;
  };
  const std::vector<std::uint8_t> one = runWith(1);
  const std::vector<std::uint8_t> all = runWith(0);
  REQUIRE(one == all);
  // And the result is the host loop's.
  std::vector<std::vector<float>> host(tiles, std::vector<float>(floats));
  for (unsigned t = 0; t < tiles; ++t)
    for (unsigned i = 0; i < floats; ++i)
      host[t][i] = float(t) + 0.25f * float(i);
  for (int iter = 0; iter < 10; ++iter) {
    for (unsigned t = 0; t < tiles; ++t)
      for (unsigned v = 0; v < 40; ++v)
        for (unsigned i = 0; i < 16; ++i)
          host[t][v % 48 + i] *= 1.0f + 0.01f * float(v);
    std::vector<std::vector<float>> next = host;
    for (unsigned t = 0; t < tiles; ++t)
      next[(t + 1) % tiles] = host[t];
    host = next;
  }
  for (unsigned t = 0; t < tiles; ++t)
    REQUIRE(std::memcmp(one.data() + 4 * floats * t, host[t].data(), 4 * floats) == 0);
}

TEST_CASE("A fused compute set exchanges in and computes tile by tile with unchanged results",
          "[runtime][execute][threads]") {
  // 64 tiles. Tile t copies tile t+1's 256 floats at 0 into a buffer at 2048,
  // 40 vertices scale overlapping windows of the buffer in order, and exchange-out
  // writes the buffer back to t's data at 0; 10 times. Tiles t % 5 == 0 receive
  // nothing and scale a local region at 6144 instead; tiles t % 7 == 3 receive
  // but have no vertices. No vertex writes data that exchange-in reads.
  constexpr unsigned tiles = 64, floats = 256, vertices = 40, iterations = 10;
  auto receives = [](unsigned t) { return t % 5 != 0; };
  auto computes = [](unsigned t) { return t % 7 != 3; };
  auto factor = [](unsigned v) { return 1.0f + 0.01f * float(v); };
  auto initial = [](unsigned t, unsigned i) { return float(t) + 0.25f * float(i); };
  auto build = [&](bool fuse) {
    exe::ExecutableData e = smallExecutable(tiles, 8192);
    addTestVertexTypes(e);
    exe::ComputeStep cs;
    cs.name = "fused";
    std::vector<exe::CopyRun> in, out;
    for (std::uint32_t t = 0; t < tiles; ++t) {
      std::vector<float> data(floats);
      for (unsigned i = 0; i < floats; ++i)
        data[i] = initial(t, i);
      e.blobs.push_back({{t, 0}, bytesOf(data)});
      e.blobs.push_back({{t, 6144}, bytesOf(data)});
      const std::uint32_t work = receives(t) ? 2048 : 6144;
      if (receives(t)) {
        in.push_back({{(t + 1) % tiles, 0}, {t, 2048}, 4 * floats});
        out.push_back({{t, 2048}, {t, 0}, 4 * floats});
      }
      if (computes(t))
        for (std::uint32_t v = 0; v < vertices; ++v)
          addPointerVertex(e, cs, kScale, t, 4096 + 16 * v, {t, work + 4 * (v % 48)},
                           scaleFields(16, factor(v)));
    }
    finish(cs);
    cs.exchangeIn = plan(in);
    cs.exchangeOut = plan(out);
    cs.fuseExchangeIn = fuse;
    e.computeSteps.push_back(cs);
    e.numCounters = 1;
    exe::Step set = step(StepKind::SetCounter, 0);
    set.value = iterations - 1;
    e.programEntry = {0};
    e.steps.push_back(set);
    e.steps.push_back(step(StepKind::Execute, 0));
    e.steps.push_back(step(StepKind::LoopTest, 0, 0, 4));
    e.steps.push_back(step(StepKind::Jump, 0, 0, 1));
    e.steps.push_back(step(StepKind::End));
    return e;
  };
  auto runWith = [&](bool fuse, std::size_t threads) {
    std::unique_ptr<tbb::global_control> limit;
    if (threads)
      limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads);
    Machine m(build(fuse));
    REQUIRE(m.executor->fusesExchangeIn(0) == fuse);
    if (fuse && !threads && tbb::this_task_arena::max_concurrency() > 1)
      REQUIRE(m.executor->fusedChunks(0).parallel());
    m.run();
    std::vector<std::uint8_t> bytes;
    for (std::uint32_t t = 0; t < tiles; ++t) {
      bytes.insert(bytes.end(), m.memory.at(t, 0), m.memory.at(t, 4 * floats));
      bytes.insert(bytes.end(), m.memory.at(t, 6144), m.memory.at(t, 6144 + 4 * floats));
    }
    return bytes;
  };
  const std::vector<std::uint8_t> fusedOne = runWith(true, 1);
  const std::vector<std::uint8_t> fusedAll = runWith(true, 0);
  REQUIRE(fusedOne == fusedAll);
  REQUIRE(runWith(false, 0) == fusedAll);

  // The host loop: all exchange-in, all compute, all exchange-out.
  std::vector<std::vector<float>> data(tiles, std::vector<float>(floats)), local = data, buffer = data;
  for (unsigned t = 0; t < tiles; ++t)
    for (unsigned i = 0; i < floats; ++i)
      data[t][i] = local[t][i] = initial(t, i);
  for (unsigned iter = 0; iter < iterations; ++iter) {
    for (unsigned t = 0; t < tiles; ++t)
      if (receives(t))
        buffer[t] = data[(t + 1) % tiles];
    for (unsigned t = 0; t < tiles; ++t) {
      std::vector<float> &work = receives(t) ? buffer[t] : local[t];
      if (computes(t))
        for (unsigned v = 0; v < vertices; ++v)
          for (unsigned i = 0; i < 16; ++i)
            work[v % 48 + i] *= factor(v);
    }
    for (unsigned t = 0; t < tiles; ++t)
      if (receives(t))
        data[t] = buffer[t];
  }
  for (unsigned t = 0; t < tiles; ++t) {
    REQUIRE(std::memcmp(fusedAll.data() + 8 * floats * t, data[t].data(), 4 * floats) == 0);
    REQUIRE(std::memcmp(fusedAll.data() + 8 * floats * t + 4 * floats, local[t].data(), 4 * floats) == 0);
  }
}

TEST_CASE("An unfused compute set copies every tile's inputs before any vertex runs", "[runtime][execute]") {
  // Tile 0's vertex doubles its data in place; tile 1's exchange-in reads that
  // data. Not marked fusable, tile 1 must receive the value from before the step.
  exe::ExecutableData e = smallExecutable();
  addTestVertexTypes(e);
  e.blobs.push_back({{0, 0}, bytesOf(std::vector<float>{3.0f})});
  exe::ComputeStep cs;
  cs.name = "hazard";
  addPointerVertex(e, cs, kScale, 0, 64, {0, 0}, scaleFields(1, 2.0f));
  addPointerVertex(e, cs, kScale, 1, 64, {1, 512}, scaleFields(1, 10.0f));
  finish(cs);
  cs.exchangeIn = plan({{{0, 0}, {1, 512}, 4}});
  e.computeSteps.push_back(cs);
  e.steps.push_back(step(StepKind::Execute, 0));
  endProgram(e);
  e.programEntry = {0};
  Machine m(e);
  REQUIRE_FALSE(m.executor->fusesExchangeIn(0));
  m.run();
  REQUIRE(m.read<float>(0, 0) == 6.0f);
  REQUIRE(m.read<float>(1, 512) == 30.0f);
}
