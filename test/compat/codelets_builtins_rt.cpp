// Copyright (c) Aspen contributors.
// Issue 21, item 6: the IPU builtins backed by the runtime (docs/codelets.md, "IPU builtins
// backed by the runtime"), called unguarded by codelet files written for hardware
// (test/compat/codelets/TileBuiltins.cpp, HwRandom.cpp), built with popc as a Makefile
// calls it and with Graph::addCodelets, run on the IPUModel and on a DeviceManager IPU
// device: tile and worker ids against the graph's mapping, the random builtins against an
// independent host transcription of the documented generator (and their moments), the
// tile's cycle counter against the execution profile.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/RandomSeed.hpp>
#include <poplar/Target.hpp>

#include "CodeletHarness.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

using aspen::test::codelets::roundHalf;

/// Builds `source` with popc as a Makefile does and runs `body` on a graph holding it, for
/// each build (the .gp, addCodelets of the source) and each device kind.
void onEveryBuildAndDevice(const std::string &source, const std::string &flags,
                           const std::function<void(Graph &, Device &)> &body) {
  aspen::test::codelets::onEveryBuildAndDevice({source}, flags, body);
}

Tensor onTile(Graph &graph, Type type, std::size_t n, unsigned tile, const std::string &name) {
  Tensor t = graph.addVariable(type, {n}, name);
  graph.setTileMapping(t, tile);
  graph.createHostRead(name, t);
  return t;
}

VertexRef addVertex(Graph &graph, ComputeSet cs, const std::string &type, unsigned tile,
                    const std::map<std::string, Tensor> &fields) {
  VertexRef v = graph.addVertex(cs, type);
  for (const auto &[field, tensor] : fields)
    graph.connect(v[field], tensor);
  graph.setTileMapping(v, tile);
  return v;
}

template <class T> std::vector<T> read(Engine &engine, const std::string &name, std::size_t n) {
  std::vector<T> v(n);
  engine.readTensor(name, v.data(), v.data() + n);
  return v;
}

std::vector<float> readHalf(Engine &engine, const Target &target, const std::string &name, std::size_t n) {
  std::vector<std::uint16_t> bits = read<std::uint16_t>(engine, name, n);
  std::vector<float> v(n);
  copyDeviceHalfToFloat(target, bits.data(), v.data(), n);
  return v;
}

// ---- the generator, transcribed from its published description -----------------------
// xoroshiro128aox (J. Hanlon et al., "A fast hardware pseudorandom number generator based
// on xoroshiro128", IEEE Trans. Computers; arXiv:2203.04058): xoroshiro128's engine with shifts 55, 14, 36
// and the AND-OR-XOR output; each (tile, worker context) seeded with two outputs of splitmix64
// started at tile * workerContexts + worker (docs/codelets.md).
struct HostGenerator {
  std::uint64_t s[2];
  HostGenerator(unsigned tile, unsigned worker, unsigned contexts) {
    std::uint64_t x = std::uint64_t(tile) * contexts + worker;
    s[0] = splitmix(x);
    s[1] = splitmix(x);
  }
  /// From the four words of a row of poplar::getHwSeeds' tensor.
  explicit HostGenerator(const unsigned *words) {
    s[0] = words[0] | std::uint64_t(words[1]) << 32;
    s[1] = words[2] | std::uint64_t(words[3]) << 32;
  }
  std::vector<unsigned> words() const {
    return {unsigned(s[0]), unsigned(s[0] >> 32), unsigned(s[1]), unsigned(s[1] >> 32)};
  }
  static std::uint64_t splitmix(std::uint64_t &x) {
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  static std::uint64_t rotl(std::uint64_t v, int k) { return (v << k) | (v >> (64 - k)); }
  std::uint64_t next() {
    const std::uint64_t both = s[0] & s[1], either = s[0] ^ s[1];
    const std::uint64_t out = either ^ (rotl(both, 1) | rotl(both, 2));
    s[0] = rotl(s[0], 55) ^ either ^ (either << 14);
    s[1] = rotl(either, 36);
    return out;
  }
  unsigned u32() { return unsigned(next() >> 32); }
  float f32() { return float(next() >> 40) / 16777216.0f - 0.5f; }
  float f16() { return float(next() >> 53) / 2048.0f - 0.5f; }
  std::pair<float, float> gauss() {
    const double u1 = double((next() >> 11) + 1) / 9007199254740992.0;
    const double u2 = double(next() >> 11) / 9007199254740992.0;
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 6.283185307179586476925 * u2;
    return {float(r * std::cos(a)), float(r * std::sin(a))};
  }
};

struct Moments {
  double mean = 0, variance = 0, lo = 1e30, hi = -1e30;
  explicit Moments(const std::vector<float> &v) {
    for (float x : v) {
      mean += x;
      lo = std::min(lo, double(x));
      hi = std::max(hi, double(x));
    }
    mean /= double(v.size());
    for (float x : v)
      variance += (x - mean) * (x - mean);
    variance /= double(v.size() - 1);
  }
};

} // namespace

TEST_CASE("builtins: __builtin_ipu_get_tile_id and get_worker_id name the running tile and worker",
          "[compat][codelets][builtins]") {
  onEveryBuildAndDevice("TileBuiltins.cpp", "-O2", [](Graph &graph, Device &device) {
    const unsigned contexts = graph.getTarget().getNumWorkerContexts();
    const std::vector<unsigned> tiles = {0, 1, 2, 3};
    ComputeSet cs = graph.addComputeSet("where");
    for (unsigned t : tiles)
      addVertex(graph, cs, "WhereAmI", t,
                {{"out", onTile(graph, UNSIGNED_INT, 2, t, "at" + std::to_string(t))}});
    // Seven worker vertices of one type on tile 1: the packing gives worker slots 0..5, 0.
    for (unsigned k = 0; k < 6; ++k)
      addVertex(graph, cs, "WhereAmI", 1,
                {{"out", onTile(graph, UNSIGNED_INT, 2, 1, "more" + std::to_string(k))}});
    addVertex(graph, cs, "WorkersOfTile", 2,
              {{"out", onTile(graph, UNSIGNED_INT, 2 * contexts, 2, "workers")}});
    Engine engine(graph, Execute(cs));
    engine.load(device);
    engine.run(0);
    for (unsigned t : tiles) {
      const std::vector<unsigned> at = read<unsigned>(engine, "at" + std::to_string(t), 2);
      REQUIRE(at[0] == t);
      REQUIRE(at[1] == 0);
    }
    for (unsigned k = 0; k < 6; ++k) {
      const std::vector<unsigned> at = read<unsigned>(engine, "more" + std::to_string(k), 2);
      REQUIRE(at[0] == 1);
      REQUIRE(at[1] == (k + 1) % contexts);
    }
    const std::vector<unsigned> workers = read<unsigned>(engine, "workers", 2 * contexts);
    for (unsigned w = 0; w < contexts; ++w) {
      REQUIRE(workers[2 * w] == w);
      REQUIRE(workers[2 * w + 1] == 2);
    }
  });
}

namespace {

constexpr std::size_t kSamples = 4000;

template <class T> void append(std::vector<T> &to, const std::vector<T> &from) {
  to.insert(to.end(), from.begin(), from.end());
}

/// The random vertices on tiles 0..3 of `graph`, one compute set, run `runs` times.
struct RandomGraph {
  std::map<std::string, std::vector<unsigned>> words; // per run, concatenated
  std::map<std::string, std::vector<float>> floats;

  static void build(Graph &graph, ComputeSet cs) {
    const unsigned contexts = graph.getTarget().getNumWorkerContexts();
    addVertex(graph, cs, "Uniform32", 0, {{"out", onTile(graph, UNSIGNED_INT, kSamples, 0, "u32")}});
    addVertex(graph, cs, "Uniform64", 0, {{"out", onTile(graph, UNSIGNED_INT, 2 * kSamples, 0, "u64")}});
    addVertex(graph, cs, "UniformFloat", 1,
              {{"out", onTile(graph, FLOAT, kSamples, 1, "f32")},
               {"hout", onTile(graph, HALF, kSamples, 1, "f16")}});
    addVertex(graph, cs, "Gaussian", 2,
              {{"out", onTile(graph, FLOAT, kSamples, 2, "g32")},
               {"hout", onTile(graph, HALF, kSamples, 2, "g16")}});
    addVertex(graph, cs, "UniformWorkers", 3,
              {{"out", onTile(graph, UNSIGNED_INT, 100 * contexts, 3, "workers")}});
  }

  void run(Graph &graph, Device &device, unsigned runs) {
    ComputeSet cs = graph.addComputeSet("random");
    build(graph, cs);
    const unsigned contexts = graph.getTarget().getNumWorkerContexts();
    Engine engine(graph, Execute(cs));
    engine.load(device);
    for (unsigned r = 0; r < runs; ++r) {
      engine.run(0);
      append(words["u32"], read<unsigned>(engine, "u32", kSamples));
      append(words["u64"], read<unsigned>(engine, "u64", 2 * kSamples));
      append(words["workers"], read<unsigned>(engine, "workers", 100 * contexts));
      append(floats["f32"], read<float>(engine, "f32", kSamples));
      append(floats["g32"], read<float>(engine, "g32", kSamples));
      append(floats["f16"], readHalf(engine, graph.getTarget(), "f16", kSamples));
      append(floats["g16"], readHalf(engine, graph.getTarget(), "g16", kSamples));
    }
  }
};

/// Checks `r` (from `runs` runs) against the host generators, sample for sample.
void checkAgainstHost(const RandomGraph &r, const Target &target, unsigned runs) {
  const unsigned contexts = target.getNumWorkerContexts();
  // Tile 0: Uniform32 on worker slot 0, Uniform64 on slot 1 (the packing's order).
  HostGenerator u32(0, 0, contexts), u64(0, 1, contexts), f(1, 0, contexts), g(2, 0, contexts);
  std::vector<HostGenerator> workers;
  for (unsigned w = 0; w < contexts; ++w)
    workers.emplace_back(3, w, contexts);
  for (unsigned run = 0; run < runs; ++run) {
    INFO("run " << run);
    for (std::size_t i = 0; i < kSamples; ++i) {
      INFO("sample " << i);
      REQUIRE(r.words.at("u32")[run * kSamples + i] == u32.u32());
      const std::uint64_t x = u64.next();
      REQUIRE(r.words.at("u64")[run * 2 * kSamples + 2 * i] == unsigned(x));
      REQUIRE(r.words.at("u64")[run * 2 * kSamples + 2 * i + 1] == unsigned(x >> 32));
    }
    for (std::size_t i = 0; i < kSamples; ++i)
      REQUIRE(r.floats.at("f32")[run * kSamples + i] == f.f32());
    for (std::size_t i = 0; i < kSamples; ++i)
      REQUIRE(r.floats.at("f16")[run * kSamples + i] == f.f16());
    for (std::size_t i = 0; i < kSamples; i += 2) {
      const auto [a, b] = g.gauss();
      REQUIRE(r.floats.at("g32")[run * kSamples + i] == a);
      REQUIRE(r.floats.at("g32")[run * kSamples + i + 1] == b);
    }
    for (std::size_t i = 0; i < kSamples; i += 2) {
      const auto [a, b] = g.gauss();
      REQUIRE(r.floats.at("g16")[run * kSamples + i] == roundHalf(target, a));
      REQUIRE(r.floats.at("g16")[run * kSamples + i + 1] == roundHalf(target, b));
    }
    for (unsigned w = 0; w < contexts; ++w)
      for (std::size_t i = 0; i < 100; ++i)
        REQUIRE(r.words.at("workers")[run * 100 * contexts + w * 100 + i] == workers[w].u32());
  }
}

} // namespace

TEST_CASE("builtins: the random builtins draw from each worker context's seeded generator",
          "[compat][codelets][builtins]") {
  onEveryBuildAndDevice("HwRandom.cpp", "-O2", [](Graph &graph, Device &device) {
    RandomGraph r;
    r.run(graph, device, 2); // the second run continues each generator
    checkAgainstHost(r, graph.getTarget(), 2);

    // Their distributions: uniform on [-0.5, 0.5) (variance 1/12), standard normal.
    const Moments f32(r.floats.at("f32")), f16(r.floats.at("f16"));
    for (const Moments &m : {f32, f16}) {
      REQUIRE(m.lo >= -0.5);
      REQUIRE(m.hi < 0.5);
      REQUIRE(std::fabs(m.mean) < 0.015); // 4 standard errors of 8,000 samples
      REQUIRE(m.variance == Approx(1.0 / 12).epsilon(0.05));
    }
    const Moments g32(r.floats.at("g32")), g16(r.floats.at("g16"));
    for (const Moments &m : {g32, g16}) {
      REQUIRE(std::fabs(m.mean) < 0.045);
      REQUIRE(m.variance == Approx(1.0).epsilon(0.05));
    }
    std::size_t within = 0;
    for (float x : r.floats.at("g32"))
      within += std::fabs(x) < 1.0f;
    REQUIRE(double(within) / double(r.floats.at("g32").size()) == Approx(0.6827).margin(0.02));
    // Every bit of urand32 is used about half the time.
    for (unsigned bit = 0; bit < 32; ++bit) {
      std::size_t ones = 0;
      for (unsigned x : r.words.at("u32"))
        ones += (x >> bit) & 1u;
      REQUIRE(double(ones) / double(r.words.at("u32").size()) == Approx(0.5).margin(0.03));
    }
  });
}

TEST_CASE("builtins: random samples do not depend on host threads, and repeat with the executable",
          "[compat][codelets][builtins]") {
  aspen::test::TempDir dir;
  const std::string gp = dir.path + "/r.gp";
  aspen::test::codelets::popcOk("-O2 " + aspen::test::compatCodeletFile("HwRandom.cpp") + " -o " + gp);
  std::vector<RandomGraph> results;
  for (int threads : {1, 2, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    Device device = aspen::test::codelets::makeDevice(aspen::test::codelets::DeviceKind::IPUModel);
    Graph graph(device.getTarget());
    REQUIRE(graph.addCodelets(gp));
    results.emplace_back().run(graph, device, 1);
  }
  for (const RandomGraph &r : results) {
    REQUIRE(r.words == results[0].words);
    REQUIRE(r.floats == results[0].floats);
  }
}

namespace {

struct ProfileStep {
  std::string name;
  std::uint64_t start, cycles;
};

/// The trace of the last run's profile.json in `dir`: each step executed, in order.
std::vector<ProfileStep> trace(const std::string &dir, std::map<std::string, std::uint64_t> &typeCycles) {
  std::ifstream in(dir + "/profile.json");
  REQUIRE(in.good());
  const nlohmann::json profile = nlohmann::json::parse(in);
  std::map<std::size_t, std::string> names; // step index -> name, for the steps executed
  for (const auto &s : profile.at("execution").at("steps"))
    names[s.at("step").get<std::size_t>()] = s.value("name", std::string());
  std::vector<ProfileStep> out;
  for (const auto &e : profile.at("execution").at("trace"))
    out.push_back(
        {names[e.at(0).get<std::size_t>()], e.at(2).get<std::uint64_t>(), e.at(3).get<std::uint64_t>()});
  for (const auto &t : profile.at("execution").at("vertexTypes"))
    typeCycles[t.at("name").get<std::string>()] = t.at("cycles").get<std::uint64_t>();
  return out;
}

std::uint64_t stamp(const std::vector<unsigned> &words, std::size_t at = 0) {
  return words[at] | std::uint64_t(words[at + 1]) << 32;
}

} // namespace

TEST_CASE("builtins: __builtin_ipu_get_scount_l/_h read the tile's simulated cycle counter",
          "[compat][codelets][builtins]") {
  onEveryBuildAndDevice("TileBuiltins.cpp", "-O2", [](Graph &graph, Device &device) {
    const unsigned workers = graph.getTarget().getNumWorkerContexts();
    constexpr unsigned kTiles = 4, kIterations = 4000;
    ComputeSet first = graph.addComputeSet("first"), loop = graph.addComputeSet("loop"),
               last = graph.addComputeSet("last");
    for (unsigned t = 0; t < kTiles; ++t) {
      addVertex(graph, first, "Stamp", t,
                {{"out", onTile(graph, UNSIGNED_INT, 2, t, "first" + std::to_string(t))}});
      addVertex(graph, last, "Stamp", t,
                {{"out", onTile(graph, UNSIGNED_INT, 2, t, "last" + std::to_string(t))}});
    }
    Tensor in = graph.addConstant(FLOAT, {8}, std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}.data(), "in");
    Tensor n = graph.addConstant(UNSIGNED_INT, {}, kIterations, "n");
    Tensor sum = graph.addVariable(FLOAT, {}, "sum");
    graph.setTileMapping(in, 0);
    graph.setTileMapping(n, 0);
    graph.setTileMapping(sum, 0);
    addVertex(graph, loop, "TimedLoop", 0,
              {{"in", in}, {"n", n}, {"sum", sum}, {"stamps", onTile(graph, UNSIGNED_INT, 4, 0, "loop")}});
    aspen::test::TempDir dir;
    const OptionFlags options{{"autoReport.outputExecutionProfile", "true"},
                              {"autoReport.directory", dir.path}};
    std::vector<std::uint64_t> firstRun;
    std::uint64_t lastOfRun0 = 0;
    for (unsigned run = 0; run < 2; ++run) {
      INFO("run " << run);
      std::vector<std::uint64_t> firsts, lasts;
      std::vector<unsigned> loopStamps;
      std::vector<ProfileStep> steps;
      std::map<std::string, std::uint64_t> typeCycles;
      {
        Engine engine(graph, Sequence({Execute(first), Execute(loop), Execute(last)}), options);
        engine.load(device);
        for (unsigned r = 0; r <= run; ++r) // run 1: the engine runs twice, the counter goes on
          engine.run(0);
        for (unsigned t = 0; t < kTiles; ++t) {
          firsts.push_back(stamp(read<unsigned>(engine, "first" + std::to_string(t), 2)));
          lasts.push_back(stamp(read<unsigned>(engine, "last" + std::to_string(t), 2)));
        }
        loopStamps = read<unsigned>(engine, "loop", 4);
      }
      steps = trace(dir.path, typeCycles);
      // The trace's last three steps are this run's compute sets.
      REQUIRE(steps.size() >= 3);
      const ProfileStep &s1 = steps[steps.size() - 3], &s2 = steps[steps.size() - 2], &s3 = steps.back();
      REQUIRE(s1.name == "first");
      REQUIRE(s2.name == "loop");
      REQUIRE(s3.name == "last");
      // Every tile's first vertex of a step reads the same clock (tiles are in step), within
      // the step's span on the profile's clock.
      for (unsigned t = 1; t < kTiles; ++t) {
        REQUIRE(firsts[t] == firsts[0]);
        REQUIRE(lasts[t] == lasts[0]);
      }
      REQUIRE(firsts[0] >= s1.start);
      REQUIRE(firsts[0] <= s1.start + s1.cycles);
      REQUIRE(lasts[0] >= s3.start);
      REQUIRE(lasts[0] <= s3.start + s3.cycles);
      // Two steps of the same shape: their readings are as far apart as the profile's steps.
      REQUIRE(lasts[0] - firsts[0] == s3.start - s1.start);
      // The loop: read before and after, in the loop step, increasing; the difference is the
      // cycles the vertex counted between them, in tile cycles (a worker issues every
      // `workers` cycles): at most what the profile gives the vertex, less only the code
      // after the second reading.
      const std::uint64_t before = stamp(loopStamps, 0), after = stamp(loopStamps, 2);
      REQUIRE(before >= s2.start);
      REQUIRE(before < after);
      REQUIRE(after <= s2.start + s2.cycles);
      REQUIRE(lasts[0] > after);
      const std::uint64_t counted = workers * typeCycles.at("TimedLoop") / (run + 1);
      INFO("loop: " << after - before << " tile cycles between the readings; the vertex: " << counted);
      REQUIRE(after - before <= counted);
      REQUIRE(after - before >= counted - workers * 100);
      REQUIRE(after - before >= workers * kIterations); // at least a cycle an iteration
      if (run == 0) {
        firstRun = firsts;
        lastOfRun0 = lasts[0];
      } else {
        // The second run of an engine continues the counter; a new engine starts it again.
        REQUIRE(firsts[0] > lastOfRun0);
        REQUIRE(firsts[0] >= s1.start);
      }
    }
  });
}

TEST_CASE("builtins: the generators are the hardware seeds of poplar::getHwSeeds and setHwSeeds",
          "[compat][codelets][builtins]") {
  onEveryBuildAndDevice("HwRandom.cpp", "-O2", [](Graph &graph, Device &device) {
    const Target &target = graph.getTarget();
    const unsigned tiles = target.getNumTiles(), contexts = target.getNumWorkerContexts();
    const std::size_t words = std::size_t(tiles) * contexts * 4;
    ComputeSet cs = graph.addComputeSet("random");
    RandomGraph::build(graph, cs);
    // Program 0: the seeds before and after the vertices draw. Program 1: seeds set from the
    // host, then the vertices draw.
    Sequence observe;
    Tensor before = getHwSeeds(graph, observe, "before");
    observe.add(Execute(cs));
    Tensor after = getHwSeeds(graph, observe, "after");
    graph.createHostRead("before", before);
    graph.createHostRead("after", after);
    Tensor chosen = graph.addVariable(UNSIGNED_INT, {tiles, contexts, 4}, "chosen");
    for (unsigned t = 0; t < tiles; ++t)
      graph.setTileMapping(chosen[t], t);
    graph.createHostWrite("chosen", chosen);
    Sequence seeded;
    setHwSeeds(graph, chosen, seeded, "seed");
    seeded.add(Execute(cs));
    Engine engine(graph, {observe, seeded});
    engine.load(device);

    // Unset, the seeds are the generators' default states, and drawing advances them.
    engine.run(0);
    const std::vector<unsigned> b = read<unsigned>(engine, "before", words),
                                a = read<unsigned>(engine, "after", words);
    const std::vector<unsigned> u32 = read<unsigned>(engine, "u32", kSamples);
    HostGenerator g0(0, 0, contexts);
    for (unsigned t = 0; t < tiles; ++t)
      for (unsigned w = 0; w < contexts; ++w)
        REQUIRE(std::vector<unsigned>(b.begin() + (t * contexts + w) * 4,
                                      b.begin() + (t * contexts + w + 1) * 4) ==
                HostGenerator(t, w, contexts).words());
    for (std::size_t i = 0; i < kSamples; ++i)
      REQUIRE(u32[i] == g0.u32());
    REQUIRE(std::vector<unsigned>(a.begin(), a.begin() + 4) == g0.words()); // tile 0, worker 0 after drawing
    REQUIRE(std::vector<unsigned>(a.begin() + 4 * contexts, a.end()) !=
            std::vector<unsigned>(b.begin() + 4 * contexts, b.end())); // tiles 1..3 drew too

    // Seeds from the host: the samples follow them, identically on every run.
    std::vector<unsigned> seeds(words);
    for (std::size_t i = 0; i < words; ++i)
      seeds[i] = static_cast<unsigned>(0x9E3779B9u * (i + 1) ^ 0x5bd1e995u);
    for (unsigned run = 0; run < 2; ++run) {
      engine.writeTensor("chosen", seeds.data(), seeds.data() + words);
      engine.run(1);
      HostGenerator g(&seeds[0]), f(&seeds[4 * contexts]);
      const std::vector<unsigned> again = read<unsigned>(engine, "u32", kSamples);
      const std::vector<float> f32 = read<float>(engine, "f32", kSamples);
      for (std::size_t i = 0; i < kSamples; ++i) {
        REQUIRE(again[i] == g.u32());
        REQUIRE(f32[i] == f.f32());
      }
    }
  });
}
