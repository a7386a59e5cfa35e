// Copyright (c) Aspen contributors.
// Statistical and reproducibility tests of poprand (PopLibs <poprand/RandomGen.hpp>):
// each distribution's moments and range, seeds and seed modifiers, the graph's
// random state (setSeed, fresh numbers on every run), distinct numbers on every
// tile, and identical numbers whatever the number of host threads and after the
// executable is saved and reloaded.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::TestDevice;
using aspen::test::TestTarget;

namespace {

struct Moments {
  double mean = 0, sd = 0, min = INFINITY, max = -INFINITY;
};

Moments momentsOf(const std::vector<float> &v) {
  Moments m;
  for (float x : v) {
    m.mean += x;
    m.min = std::min(m.min, double(x));
    m.max = std::max(m.max, double(x));
  }
  m.mean /= double(v.size());
  for (float x : v)
    m.sd += (x - m.mean) * (x - m.mean);
  m.sd = std::sqrt(m.sd / double(v.size() - 1));
  return m;
}

/// A graph with one seed tensor (handle "seed") and a reference tensor of `n` elements mapped over all tiles.
struct RandomGraph {
  TestDevice dev;
  Graph graph;
  Tensor seed, reference;
  program::Sequence prog;

  RandomGraph(TestTarget kind, std::size_t n) : dev(kind), graph(dev.getTarget()) {
    poprand::addCodelets(graph);
    seed = graph.addVariable(UNSIGNED_INT, {2}, "seed");
    graph.setTileMapping(seed, 0);
    graph.createHostWrite("seed", seed);
    reference = graph.addVariable(FLOAT, {n}, "reference");
    poputil::mapTensorLinearly(graph, reference, 1, 1);
  }
  void read(const std::string &handle, const Tensor &t) { graph.createHostRead(handle, t); }
};

void writeSeed(Engine &engine, unsigned lo, unsigned hi) {
  const unsigned s[2] = {lo, hi};
  engine.writeTensor("seed", s, s + 2);
}

} // namespace

TEST_CASE("poprand_random: each distribution has the right moments and range", "[poprand]") {
  const std::size_t n = 40000;
  RandomGraph r(TestTarget::FewTiles, n);
  Graph &g = r.graph;
  const Tensor *seed = &r.seed;
  r.read("uniform", poprand::uniform(g, seed, 1, r.reference, FLOAT, -2.0, 3.0, r.prog));
  r.read("uniformHalf", poprand::uniform(g, seed, 1, r.reference, HALF, 0.0, 1.0, r.prog));
  r.read("uniformInt", poprand::uniform(g, seed, 1, r.reference, INT, -3.0, 4.0, r.prog));
  r.read("normal", poprand::normal(g, seed, 2, r.reference, FLOAT, 1.0, 2.0, r.prog));
  r.read("normalHalf", poprand::normal(g, seed, 2, r.reference, HALF, -1.0, 0.5, r.prog));
  r.read("truncated", poprand::truncatedNormal(g, seed, 3, r.reference, FLOAT, 0.5, 2.0, 1.5, r.prog));
  r.read("bernoulli", poprand::bernoulli(g, seed, 4, r.reference, FLOAT, 0.3, r.prog));
  r.read("bernoulliInt", poprand::bernoulli(g, seed, 4, r.reference, INT, 0.8, r.prog));
  r.read("logUniform", poprand::logUniform(g, seed, 5, r.reference, FLOAT, 1.0, 1000.0, r.prog, 10.0));
  Tensor ones = g.addConstant<float>(HALF, {n}, 1.0f, "ones");
  poputil::mapTensorLinearly(g, ones);
  r.read("dropout", poprand::dropout(g, seed, 6, ones, r.reference, 0.75, 1.0 / 0.75, r.prog));
  auto engine = r.dev.createEngine(g, {r.prog});
  writeSeed(*engine, 0x12345678u, 0x9abcdef0u);
  engine->run(0);
  const Target &target = g.getTarget();
  auto floats = [&](const char *h, const Type &t) {
    return aspen::test::readFloats(*engine, h, t, target, n);
  };
  auto ints = [&](const char *h) {
    std::vector<int> v(n);
    engine->readTensor(h, v.data(), v.data() + n);
    return std::vector<float>(v.begin(), v.end());
  };
  // Tolerances: 5 standard errors of the mean; 3% on standard deviations.
  const double se = 1.0 / std::sqrt(double(n));
  {
    const Moments m = momentsOf(floats("uniform", FLOAT));
    CHECK(m.min >= -2.0);
    CHECK(m.max <= 3.0);
    CHECK(std::fabs(m.mean - 0.5) < 5 * se * 5 / std::sqrt(12.0));
    CHECK(std::fabs(m.sd / (5 / std::sqrt(12.0)) - 1) < 0.03);
  }
  {
    const Moments m = momentsOf(floats("uniformHalf", HALF));
    CHECK(m.min >= 0.0);
    CHECK(m.max <= 1.0);
    CHECK(std::fabs(m.mean - 0.5) < 5 * se / std::sqrt(12.0));
  }
  {
    const auto v = ints("uniformInt");
    std::vector<std::size_t> counts(8, 0);
    for (float x : v) {
      REQUIRE(x >= -3);
      REQUIRE(x <= 4);
      ++counts[std::size_t(x + 3)];
    }
    for (std::size_t c : counts) // each of the 8 values about n/8 times
      CHECK(std::fabs(double(c) / double(n) - 0.125) < 5 * std::sqrt(0.125 * 0.875) * se);
  }
  {
    const Moments m = momentsOf(floats("normal", FLOAT));
    CHECK(std::fabs(m.mean - 1.0) < 5 * 2.0 * se);
    CHECK(std::fabs(m.sd / 2.0 - 1) < 0.03);
    const Moments h = momentsOf(floats("normalHalf", HALF));
    CHECK(std::fabs(h.mean + 1.0) < 5 * 0.5 * se);
    CHECK(std::fabs(h.sd / 0.5 - 1) < 0.03);
  }
  {
    // A normal truncated at +-1.5 sd has sd = sqrt(1 - 2 a phi(a) / (2 Phi(a) - 1)) ~= 0.7426 (a = 1.5).
    const double a = 1.5, phi = std::exp(-a * a / 2) / std::sqrt(2 * M_PI),
                 mass = std::erf(a / std::sqrt(2.0));
    const double sdRatio = std::sqrt(1 - 2 * a * phi / mass);
    const Moments m = momentsOf(floats("truncated", FLOAT));
    CHECK(m.min >= 0.5 - 1.5 * 2.0 - 1e-5);
    CHECK(m.max <= 0.5 + 1.5 * 2.0 + 1e-5);
    CHECK(std::fabs(m.mean - 0.5) < 5 * 2.0 * sdRatio * se);
    CHECK(std::fabs(m.sd / (2.0 * sdRatio) - 1) < 0.03);
  }
  {
    const auto v = floats("bernoulli", FLOAT);
    for (float x : v)
      REQUIRE((x == 0.0f || x == 1.0f));
    CHECK(std::fabs(momentsOf(v).mean - 0.3) < 5 * std::sqrt(0.3 * 0.7) * se);
    CHECK(std::fabs(momentsOf(ints("bernoulliInt")).mean - 0.8) < 5 * std::sqrt(0.8 * 0.2) * se);
  }
  {
    // log of a log-uniform value is uniform: mean ln(1000)/2, sd ln(1000)/sqrt(12).
    auto v = floats("logUniform", FLOAT);
    for (float &x : v) {
      REQUIRE(x >= 1.0f);
      REQUIRE(x <= 1000.0f * (1 + 1e-6f));
      x = std::log(x);
    }
    const Moments m = momentsOf(v);
    const double range = std::log(1000.0);
    CHECK(std::fabs(m.mean - range / 2) < 5 * se * range / std::sqrt(12.0));
    CHECK(std::fabs(m.sd / (range / std::sqrt(12.0)) - 1) < 0.03);
  }
  {
    const auto v = floats("dropout", HALF);
    std::size_t kept = 0;
    for (float x : v) {
      REQUIRE((x == 0.0f || std::fabs(x - 1.0f / 0.75f) < 1e-3f));
      kept += x != 0.0f;
    }
    CHECK(std::fabs(double(kept) / double(n) - 0.75) < 5 * std::sqrt(0.75 * 0.25) * se);
  }
}

TEST_CASE("poprand_random: seeds, modifiers and the graph's random state", "[poprand]") {
  const std::size_t n = 1000;
  RandomGraph r(TestTarget::FewTiles, n);
  Graph &g = r.graph;
  r.read("a", poprand::uniform(g, &r.seed, 7, r.reference, FLOAT, 0.0, 1.0, r.prog));
  r.read("sameSeed", poprand::uniform(g, &r.seed, 7, r.reference, FLOAT, 0.0, 1.0, r.prog));
  r.read("otherModifier", poprand::uniform(g, &r.seed, 8, r.reference, FLOAT, 0.0, 1.0, r.prog));
  r.read("state1", poprand::uniform(g, nullptr, 0, r.reference, FLOAT, 0.0, 1.0, r.prog));
  r.read("state2", poprand::uniform(g, nullptr, 0, r.reference, FLOAT, 0.0, 1.0, r.prog));
  program::Sequence reseed;
  poprand::setSeed(g, r.seed, 3, reseed);
  auto engine = r.dev.createEngine(g, {r.prog, reseed});
  const Target &target = g.getTarget();
  auto read = [&](const char *h) { return aspen::test::readFloats(*engine, h, FLOAT, target, n); };
  writeSeed(*engine, 11, 22);
  engine->run(0);
  const auto a = read("a"), state1 = read("state1"), state2 = read("state2");
  CHECK(read("sameSeed") == a);      // the same seed and modifier repeat the numbers
  CHECK(read("otherModifier") != a); // another modifier gives others
  CHECK(state1 != state2);           // each use of the state draws new numbers
  CHECK(state1 != a);
  engine->run(0);
  CHECK(read("a") == a);           // an explicit seed repeats across runs
  CHECK(read("state1") != state1); // the state moves on across runs
  // setSeed resets the state: the same seed gives the same sequence.
  engine->run(1);
  engine->run(0);
  const auto afterReseed = read("state1");
  engine->run(1);
  engine->run(0);
  CHECK(read("state1") == afterReseed);
  writeSeed(*engine, 12, 22);
  engine->run(1);
  engine->run(0);
  CHECK(read("state1") != afterReseed);
}

TEST_CASE("poprand_random: numbers differ between tiles and do not depend on host threads or reloading",
          "[poprand]") {
  const std::size_t n = 1472 * 8;
  RandomGraph r(TestTarget::FullIpu, n);
  Graph &g = r.graph;
  Tensor uniform = poprand::uniform(g, &r.seed, 1, r.reference, FLOAT, 0.0, 1.0, r.prog);
  poprand::setSeed(g, r.seed, 9, r.prog);
  Tensor normal = poprand::normal(g, nullptr, 0, r.reference, FLOAT, 0.0, 1.0, r.prog);
  r.read("uniform", uniform);
  r.read("normal", normal);
  const Target &target = g.getTarget();

  auto runOnce = [&](Engine &engine) {
    writeSeed(engine, 5, 6);
    engine.run(0);
    return std::make_pair(aspen::test::readFloats(engine, "uniform", FLOAT, target, n),
                          aspen::test::readFloats(engine, "normal", FLOAT, target, n));
  };
  std::pair<std::vector<float>, std::vector<float>> allThreads, oneThread;
  {
    auto engine = r.dev.createEngine(g, {r.prog});
    allThreads = runOnce(*engine);
    tbb::global_control single(tbb::global_control::max_allowed_parallelism, 1);
    oneThread = runOnce(*engine);
  }
  CHECK(oneThread.first == allThreads.first);
  CHECK(oneThread.second == allThreads.second);

  // Every tile holds 8 elements; no two tiles draw the same numbers.
  const auto mapping = g.getTileMapping(uniform);
  std::set<std::vector<float>> perTile;
  unsigned tilesUsed = 0;
  for (const auto &intervals : mapping) {
    if (intervals.empty())
      continue;
    ++tilesUsed;
    const Interval &i = intervals.front();
    perTile.insert(
        std::vector<float>(allThreads.first.begin() + i.begin(), allThreads.first.begin() + i.end()));
  }
  CHECK(tilesUsed == 1472);
  CHECK(perTile.size() == tilesUsed);

  // The same program compiled for 4 tiles, saved and reloaded, draws the same
  // numbers: they depend on element positions, not on where elements live.
  RandomGraph small(TestTarget::Reloaded, n);
  Tensor u = poprand::uniform(small.graph, &small.seed, 1, small.reference, FLOAT, 0.0, 1.0, small.prog);
  poprand::setSeed(small.graph, small.seed, 9, small.prog);
  Tensor nrm = poprand::normal(small.graph, nullptr, 0, small.reference, FLOAT, 0.0, 1.0, small.prog);
  small.read("uniform", u);
  small.read("normal", nrm);
  auto reloaded = small.dev.createEngine(small.graph, {small.prog});
  const auto fromReloaded = runOnce(*reloaded);
  CHECK(fromReloaded.first == allThreads.first);
  CHECK(fromReloaded.second == allThreads.second);
}
