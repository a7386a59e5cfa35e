// Copyright (c) Aspen contributors.
// Runtime benchmarks, each beside a native baseline measured in the same run:
//  1. dispatch: cost per vertex of compute sets of >= 1,000 trivial vertices
//     (aim <= 10 ns) against a native loop of indirect calls;
//  2. an empty 1,472-tile superstep (aim <= 10 us) against a TBB parallel_for
//     over 1,472 empty tasks, also loaded with one host thread (the step on the calling thread);
//  3. exchange: bytes per second of a large all-tiles exchange against memcpy
//     of the same bytes (aim >= 50%);
//  4. a small program (stream in, compute, stream out) run 1,000 times against
//     the same work as host loops;
//  5. a 1,472-tile superstep of vertices with statics of their own (each tile's
//     copy swapped in, docs/tile-model.md) against one of stateless vertices;
//  6. 1, 2 and 4 again with codelets compiled without the write check
//     (ASPEN_WRITE_CHECK=0, docs/tile-model.md), then with it, for its cost;
//  7. 1, 2 and 4 again with codelets compiled without counting (ASPEN_CYCLE_COUNT=0:
//     no plugin, so neither counted nor checked) and with it (the default), twice in
//     turn, for counting's cost (docs/cost-model.md, "Cost of counting").
// Usage: runtime_bench [repetitions-scale [only]]   (not run by ctest; `only`: the benchmarks
// whose function name contains it: dispatch, superstep, exchange, smallProgram, tileState,
// writeCheck, cycleCount)
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "BenchSupport.hpp"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

using aspen::bench::bestOf;
using aspen::bench::Clock;

/// Best of `trials` timings of `f`, in seconds.

std::string codeletPath() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  return std::string(root ? root : ASPEN_RUNTIME_TEST_SOURCE_DIR) + "/test/runtime/runtime_codelets.cpp";
}

struct Setup {
  explicit Setup(unsigned tiles) {
    IPUModel model("ipu2");
    model.tilesPerIPU = tiles;
    device = model.createDevice();
    graph = Graph(device.getTarget());
    graph.addCodelets(codeletPath(), CodeletFileType::Auto, "-O2");
  }
  Device device;
  Graph graph;
};

// A native stand-in for a trivial vertex: an object and an indirect call.
struct NativeVertex {
  int (*compute)(void *, unsigned);
  void *object;
};
__attribute__((noinline)) int nativeNop(void *, unsigned) {
  return 1;
}

void report(const char *what, double aspen, double native, const char *unit, double scale) {
  std::printf("  %-58s aspen %10.3f %s   native %10.3f %s   ratio %6.2f\n", what, aspen * scale, unit,
              native * scale, unit, native > 0 ? aspen / native : 0.0);
}

// 1. Dispatch: `perTile` Nop vertices on each of `tiles` tiles, executed `repeats` times in one run.
void dispatch(unsigned tiles, unsigned perTile, unsigned repeats) {
  Setup s(tiles);
  ComputeSet cs = s.graph.addComputeSet("nops");
  for (unsigned t = 0; t < tiles; ++t)
    for (unsigned v = 0; v < perTile; ++v)
      s.graph.setTileMapping(s.graph.addVertex(cs, "Nop"), t);
  Engine engine(s.graph, {Repeat(repeats, Execute(cs)), Repeat(repeats, Sequence())});
  engine.load(s.device);
  const double withVertices = bestOf(5, [&] { engine.run(0); });
  const double loopOnly = bestOf(5, [&] { engine.run(1); });
  const std::size_t n = std::size_t(tiles) * perTile;

  std::vector<char> objects(n);
  std::vector<NativeVertex> table(n);
  for (std::size_t i = 0; i < n; ++i)
    table[i] = {nativeNop, &objects[i]};
  volatile int sink = 0;
  const double native = bestOf(5, [&] {
    for (unsigned r = 0; r < repeats; ++r) {
      int ok = 1;
      for (const NativeVertex &v : table)
        ok &= v.compute(v.object, 0);
      sink = sink + ok;
    }
  });
  char what[128];
  std::snprintf(what, sizeof what, "dispatch per vertex, %u tiles x %u vertices", tiles, perTile);
  report(what, (withVertices - loopOnly) / double(repeats) / double(n), native / double(repeats) / double(n),
         "ns", 1e9);
}

// 2. A superstep on 1,472 tiles with one trivial vertex each, and an empty compute set.
void superstep(unsigned repeats) {
  constexpr unsigned tiles = 1472;
  Setup s(tiles);
  ComputeSet cs = s.graph.addComputeSet("oneNopPerTile");
  for (unsigned t = 0; t < tiles; ++t)
    s.graph.setTileMapping(s.graph.addVertex(cs, "Nop"), t);
  ComputeSet empty = s.graph.addComputeSet("empty");
  Engine engine(s.graph, {Repeat(repeats, Execute(cs)), Repeat(repeats, Execute(empty))});
  engine.load(s.device);
  const double full = bestOf(5, [&] { engine.run(0); }) / repeats;
  const double none = bestOf(5, [&] { engine.run(1); }) / repeats;
  const double native = bestOf(5,
                               [&] {
                                 for (unsigned r = 0; r < repeats; ++r)
                                   tbb::parallel_for(0u, tiles, [](unsigned) {});
                               }) /
                        repeats;
  // The same step loaded with one host thread: every compute set on the calling thread.
  double oneThread = 0;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    Engine serialEngine(s.graph, Repeat(repeats, Execute(cs)));
    serialEngine.load(s.device);
    oneThread = bestOf(5, [&] { serialEngine.run(0); }) / repeats;
  }
  report("superstep, 1,472 tiles x 1 trivial vertex (vs parallel_for)", full, native, "us", 1e6);
  report("superstep, the same on 1 host thread (vs parallel_for)", oneThread, native, "us", 1e6);
  report("superstep, empty compute set (vs parallel_for)", none, native, "us", 1e6);
}

// 3. Exchange: every tile sends `bytesPerTile` bytes to the next tile.
void exchange(unsigned repeats) {
  constexpr unsigned tiles = 1472;
  constexpr unsigned floatsPerTile = 8192; // 32 KiB per tile, 47 MB in all
  Setup s(tiles);
  Tensor a = s.graph.addVariable(FLOAT, {tiles, floatsPerTile}, "a");
  Tensor b = s.graph.addVariable(FLOAT, {tiles, floatsPerTile}, "b");
  for (unsigned t = 0; t < tiles; ++t) {
    s.graph.setTileMapping(a[t], t);
    s.graph.setTileMapping(b[(t + 1) % tiles], t);
  }
  s.graph.createHostWrite("a", a);
  Engine engine(s.graph, Repeat(repeats, Copy(a, b)));
  engine.load(s.device);
  // Real data in every page of the source (untouched pages would all read the
  // one zero page, which stays in cache), and the destination touched once.
  std::vector<float> data(std::size_t(tiles) * floatsPerTile);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = float(i % 1000);
  engine.writeTensor("a", data);
  engine.run(0);
  const double bytes = double(tiles) * floatsPerTile * 4 * repeats;
  const double aspen = bestOf(3, [&] { engine.run(0); });
  std::vector<char> src(std::size_t(tiles) * floatsPerTile * 4, 1), dst(src.size(), 0);
  std::memcpy(dst.data(), src.data(), src.size());
  const double native = bestOf(3, [&] {
    for (unsigned r = 0; r < repeats; ++r)
      std::memcpy(dst.data(), src.data(), src.size());
  });
  std::printf("  %-58s aspen %10.2f GB/s   native %10.2f GB/s   aspen/native %5.0f%%\n",
              "exchange, 1,472 tiles x 32 KiB to the next tile (vs memcpy)", bytes / aspen / 1e9,
              bytes / native / 1e9, 100.0 * native / aspen);
}

/// Floats on 64-byte boundaries.
struct AlignedFloats {
  AlignedFloats(std::size_t n, float value = 0.0f)
      : p(static_cast<float *>(std::aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64))), count(n) {
    std::fill(p, p + n, value);
  }
  ~AlignedFloats() { std::free(p); }
  AlignedFloats(const AlignedFloats &) = delete;
  AlignedFloats &operator=(const AlignedFloats &) = delete;
  float *data() { return p; }
  std::size_t size() const { return count; }
  float *begin() { return p; }
  float *end() { return p + count; }
  float *p;
  std::size_t count;
};

// 4. Stream in, compute, stream out, run `iterations` times.
void smallProgram(unsigned iterations) {
  constexpr unsigned tiles = 4, n = 256;
  Setup s(tiles);
  Tensor x = s.graph.addVariable(FLOAT, {tiles, n}, "x");
  ComputeSet cs = s.graph.addComputeSet("addOne");
  for (unsigned t = 0; t < tiles; ++t) {
    s.graph.setTileMapping(x[t], t);
    s.graph.setTileMapping(s.graph.addVertex(cs, "AddOne", {{"data", x[t]}}), t);
  }
  DataStream in = s.graph.addHostToDeviceFIFO("in", FLOAT, tiles * n);
  DataStream out = s.graph.addDeviceToHostFIFO("out", FLOAT, tiles * n);
  Engine engine(s.graph, Sequence({Copy(in, x), Execute(cs), Copy(x, out)}));
  engine.load(s.device);
  // Host buffers on cache lines of their own, as is the native loop's device copy: the native
  // copies' speed depends on the buffers' alignment, which otherwise depends on what the heap
  // held before (it moved the native figure by 15 % between builds).
  AlignedFloats host(tiles * n, 1.0f), result(tiles * n);
  engine.connectStream("in", host.data());
  engine.connectStream("out", result.data());
  const double aspen = bestOf(3,
                              [&] {
                                for (unsigned i = 0; i < iterations; ++i)
                                  engine.run(0);
                              }) /
                       iterations;
  AlignedFloats device(tiles * n);
  const double native = bestOf(3,
                               [&] {
                                 for (unsigned i = 0; i < iterations; ++i) {
                                   std::memcpy(device.data(), host.data(), device.size() * 4);
                                   for (float &v : device)
                                     v += 1.0f;
                                   std::memcpy(result.data(), device.data(), device.size() * 4);
                                 }
                               }) /
                        iterations;
  report("small program (stream in 4 KiB, add, stream out), per run", aspen, native, "us", 1e6);
}

// 5. A superstep on 1,472 tiles of one vertex with a static counter each (every tile
// owns its copy, swapped in under the library's lock) against one of a stateless vertex.
void tileState(unsigned repeats) {
  constexpr unsigned tiles = 1472;
  Setup s(tiles);
  s.graph.addCodelets(ASPEN_TILE_STATE_GP);
  Tensor counts = s.graph.addVariable(UNSIGNED_INT, {tiles}, "counts");
  ComputeSet stateful = s.graph.addComputeSet("staticCounters");
  ComputeSet stateless = s.graph.addComputeSet("nops");
  for (unsigned t = 0; t < tiles; ++t) {
    s.graph.setTileMapping(counts[t], t);
    s.graph.setTileMapping(s.graph.addVertex(stateful, "StaticCounter", {{"out", counts[t]}}), t);
    s.graph.setTileMapping(s.graph.addVertex(stateless, "Nop"), t);
  }
  Engine engine(s.graph, {Repeat(repeats, Execute(stateful)), Repeat(repeats, Execute(stateless))});
  engine.load(s.device);
  const double withState = bestOf(5, [&] { engine.run(0); }) / repeats;
  const double without = bestOf(5, [&] { engine.run(1); }) / repeats;
  report("superstep, 1,472 tiles x 1 vertex with statics (vs stateless)", withState, without, "us", 1e6);
}

} // namespace

int main(int argc, char **argv) {
  const double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
  auto reps = [&](unsigned n) { return std::max(1u, unsigned(n * scale)); };
  const std::string only = argc > 2 ? argv[2] : "";
  auto run = [&](const char *name) { return std::string(name).find(only) != std::string::npos; };
  std::printf("Aspen runtime benchmarks (best of several trials)\n");
  if (run("dispatch")) {
    dispatch(1, 6000, reps(200));
    dispatch(1472, 8, reps(100));
  }
  if (run("superstep"))
    superstep(reps(2000));
  if (run("exchange"))
    exchange(reps(10));
  if (run("smallProgram"))
    smallProgram(reps(1000));
  if (run("tileState"))
    tileState(reps(2000));
  // 6. The write check's cost: the same codelets compiled without it, then with it again.
  if (run("writeCheck")) {
    for (const char *setting : {"0", "1"}) {
      ::setenv("ASPEN_WRITE_CHECK", setting, 1);
      std::printf("Codelets compiled with ASPEN_WRITE_CHECK=%s (%s)\n", setting,
                  setting[0] == '0' ? "writes not checked" : "checked writes, the default");
      dispatch(1472, 8, reps(100));
      superstep(reps(2000));
      smallProgram(reps(1000));
    }
  }
  // 7. Counting's cost: the same codelets compiled without the plugin, then with it, twice.
  if (run("cycleCount")) {
    for (const char *setting : {"0", "1", "0", "1"}) {
      ::setenv("ASPEN_CYCLE_COUNT", setting, 1);
      std::printf("Codelets compiled with ASPEN_CYCLE_COUNT=%s (%s)\n", setting,
                  setting[0] == '0' ? "not counted, not checked" : "counted and checked, the default");
      dispatch(1, 6000, reps(200));
      dispatch(1472, 8, reps(100));
      superstep(reps(2000));
      smallProgram(reps(1000));
    }
    ::unsetenv("ASPEN_CYCLE_COUNT");
  }
  return 0;
}
