// Copyright (c) Aspen contributors.
// gccs::popsolver (libgccs) on its own: small models whose optimum a brute-force host loop
// over the decision variables finds, infeasible models, lexicographic objectives, user
// functions (call), the relations, reified and boolean operations, and priority groups.
#include <catch2/catch.hpp>

#include <gccs/popsolver/Model.hpp>

#include <boost/optional.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <tuple>

namespace popsolver = gccs::popsolver;
using popsolver::DataType;
using popsolver::Model;
using popsolver::Variable;

namespace {
std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}
unsigned val(const popsolver::Solution &s, Variable v) {
  return s[v].getAs<unsigned>();
}
} // namespace

TEST_CASE("popsolver: a tiling plan is optimal against brute force", "[gccs][popsolver]") {
  // Split an N x M problem over tiles: cycles = ceil(N/a) * ceil(M/b) * 3 + a*b (exchange),
  // with a * b <= tiles. Checked for several sizes against every (a, b).
  for (auto [n, mSize, tiles] : {std::tuple<unsigned, unsigned, unsigned>{100, 37, 16},
                                 {7, 7, 4},
                                 {64, 1, 32},
                                 {1000, 250, 24},
                                 {5, 13, 1}}) {
    Model m;
    const auto a = m.addVariable(1, n, "a");
    const auto b = m.addVariable(1, mSize, "b");
    m.lessOrEqual(m.product({a, b}), DataType(tiles));
    const auto work =
        m.product({m.ceildiv(m.addConstant(n), a), m.ceildiv(m.addConstant(mSize), b), m.addConstant(3)});
    const auto cycles = m.sum({work, m.product({a, b})}, "cycles");
    const auto s = m.minimize(cycles);
    REQUIRE(s.validSolution());

    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    for (unsigned x = 1; x <= n; ++x)
      for (unsigned y = 1; y <= mSize; ++y)
        if (x * y <= tiles)
          best = std::min<std::uint64_t>(best, ceilDiv(n, x) * ceilDiv(mSize, y) * 3 + x * y);
    CAPTURE(n, mSize, tiles);
    CHECK(*s[cycles] == best);
    // The solution is consistent: derived values are what the operations give.
    CHECK(val(s, a) * val(s, b) <= tiles);
    CHECK(*s[work] == ceilDiv(n, val(s, a)) * ceilDiv(mSize, val(s, b)) * 3);
    CHECK(s.constraintsEvaluated() > 0);
  }
}

TEST_CASE("popsolver: random models over every operation match brute force", "[gccs][popsolver]") {
  std::mt19937 rng(24);
  for (int trial = 0; trial < 60; ++trial) {
    const unsigned xMax = 1 + rng() % 12, yMax = 1 + rng() % 12, zMax = rng() % 6;
    const unsigned c1 = rng() % 40, c2 = 1 + rng() % 9;
    const unsigned limit = rng() % 50;
    Model m;
    const auto x = m.addVariable(1, xMax);
    const auto y = m.addVariable(1, yMax);
    const auto z = m.addVariable(0, zMax);
    const auto cc1 = m.addConstant(c1);
    const auto cc2 = m.addConstant(c2);
    // objective = max(ceil(c1/x), floor(c1/y)) + (x*y) % c2 + min(z, y) + (x + y - z when x+y >= z)
    const auto t1 = m.max({m.ceildiv(cc1, x), m.floordiv(cc1, y)});
    const auto t2 = m.mod(m.product({x, y}), cc2);
    const auto t3 = m.min({z, y});
    const auto t4 = m.sub(m.sum({x, y}), z);
    const auto obj = m.sum({t1, t2, t3, t4});
    m.lessOrEqual(m.sum({x, y, z}), DataType(limit));
    m.less(z, x);
    const auto s = m.minimize(obj);

    bool found = false;
    std::uint64_t best = 0;
    for (unsigned xv = 1; xv <= xMax; ++xv)
      for (unsigned yv = 1; yv <= yMax; ++yv)
        for (unsigned zv = 0; zv <= zMax; ++zv) {
          if (xv + yv + zv > limit || !(zv < xv))
            continue;
          const std::uint64_t o = std::max<std::uint64_t>(ceilDiv(c1, xv), c1 / yv) + (xv * yv) % c2 +
                                  std::min(zv, yv) + (xv + yv - zv);
          if (!found || o < best)
            best = o;
          found = true;
        }
    CAPTURE(trial, xMax, yMax, zMax, c1, c2, limit);
    REQUIRE(s.validSolution() == found);
    if (found) {
      CHECK(*s[obj] == best);
      const unsigned xv = val(s, x), yv = val(s, y), zv = val(s, z);
      CHECK(xv + yv + zv <= limit);
      CHECK(zv < xv);
      CHECK(*s[t2] == (xv * yv) % c2);
    }
  }
}

TEST_CASE("popsolver: infeasible models give an invalid solution", "[gccs][popsolver]") {
  {
    Model m;
    const auto a = m.addVariable(2, 5);
    m.less(a, DataType(2u));
    CHECK_FALSE(m.minimize(a).validSolution());
  }
  {
    Model m; // a * b == 7 with a, b in [2, 6]: 7 is prime
    const auto a = m.addVariable(2, 6), b = m.addVariable(2, 6);
    m.equal(m.product({a, b}), DataType(7u));
    CHECK_FALSE(m.minimize(a).validSolution());
  }
  {
    Model m; // sub below zero is not a solution
    const auto a = m.addVariable(0, 3), b = m.addVariable(5, 9);
    CHECK_FALSE(m.minimize(m.sub(a, b)).validSolution());
  }
  {
    Model m; // division by zero is not a solution
    const auto d = m.addVariable(0, 0);
    CHECK_FALSE(m.minimize(m.ceildiv(m.addConstant(10), d)).validSolution());
  }
  {
    Model m; // a user function rejecting every input
    const auto a = m.addVariable(0, 9);
    const auto r = m.call<unsigned>({a}, [](const std::vector<unsigned> &) { return std::nullopt; });
    CHECK_FALSE(m.minimize(r).validSolution());
  }
}

TEST_CASE("popsolver: lexicographic objectives", "[gccs][popsolver]") {
  // cycles = ceil(48/a) + ceil(48/b); memory = a * b * 2 + 48 / min-split: many plans tie on
  // cycles, and the second objective picks among them.
  Model m;
  const auto a = m.addVariable(1, 8), b = m.addVariable(1, 8);
  const auto cycles = m.sum({m.ceildiv(m.addConstant(48), a), m.ceildiv(m.addConstant(48), b)});
  const auto memory = m.sum({m.product({a, b}), m.product({a, m.addConstant(3)})});
  const auto byCycles = m.minimize({cycles, memory});
  const auto byMemory = m.minimize({memory, cycles});
  REQUIRE(byCycles.validSolution());
  REQUIRE(byMemory.validSolution());

  std::pair<unsigned, unsigned> bestCM{~0u, ~0u}, bestMC{~0u, ~0u};
  for (unsigned x = 1; x <= 8; ++x)
    for (unsigned y = 1; y <= 8; ++y) {
      const unsigned c = ceilDiv(48, x) + ceilDiv(48, y), mem = x * y + 3 * x;
      bestCM = std::min(bestCM, {c, mem});
      bestMC = std::min(bestMC, {mem, c});
    }
  CHECK(val(byCycles, cycles) == bestCM.first);
  CHECK(val(byCycles, memory) == bestCM.second);
  CHECK(val(byMemory, memory) == bestMC.first);
  CHECK(val(byMemory, cycles) == bestMC.second);
  // Minimizing one variable is the one-objective case.
  CHECK(val(m.minimize(memory), memory) == bestMC.first);
}

TEST_CASE("popsolver: user functions of unsigned, uint64_t and DataType", "[gccs][popsolver]") {
  Model m;
  const auto a = m.addVariable(1, 20), b = m.addVariable(0, 20);
  // A cost table no interval reasoning sees through, written as PopLibs' planners write calls.
  auto cost = [](unsigned x, unsigned y) { return (x * 7 + y * 3) % 11 + (x > y ? x - y : y - x); };
  const auto c1 = m.call<unsigned>(
      {a, b}, [&](const std::vector<unsigned> &v) -> DataType { return DataType(cost(v[0], v[1])); });
  // Optional results, boost's and std's: odd a is rejected.
  const auto c2 =
      m.call<std::uint64_t>({a}, [](const std::vector<std::uint64_t> &v) -> boost::optional<DataType> {
        if (v[0] % 2)
          return boost::none;
        return DataType(v[0] / 2);
      });
  const auto c3 =
      m.call<DataType>({b}, [](const auto &v) -> std::optional<DataType> { return DataType(*v[0] + 1); });
  const auto obj = m.sum({c1, c2, c3});
  const auto s = m.minimize(obj);
  REQUIRE(s.validSolution());
  unsigned best = ~0u;
  for (unsigned x = 2; x <= 20; x += 2)
    for (unsigned y = 0; y <= 20; ++y)
      best = std::min(best, cost(x, y) + x / 2 + y + 1);
  CHECK(val(s, obj) == best);
  CHECK(val(s, a) % 2 == 0);

  // Inputs are limited to the range of the call's type.
  Model small;
  const auto big = small.addVariable(250, 300);
  const auto r =
      small.call<std::uint8_t>({big}, [](const std::vector<std::uint8_t> &v) { return DataType(v[0]); });
  const auto sr = small.minimize(small.sub(small.addConstant(1000), r));
  REQUIRE(sr.validSolution());
  CHECK(val(sr, big) == 255);
}

TEST_CASE("popsolver: relations, reified relations and booleans", "[gccs][popsolver]") {
  for (unsigned lo = 0; lo < 4; ++lo) {
    Model m;
    const auto a = m.addVariable(lo, 6), b = m.addVariable(1, 4);
    const auto lt = m.reifiedLess(a, b), le = m.reifiedLessOrEqual(a, b), eq = m.reifiedEqual(a, b);
    const auto both = m.booleanAnd(lt, m.booleanNot(eq));
    const auto either = m.booleanOr(eq, lt);
    m.factorOf(DataType(12u), b);
    // Maximise a - b + 10 * (a <= b) by minimising its complement.
    const auto score = m.sum({a, m.product({le, m.addConstant(10)})});
    const auto obj = m.sub(m.addConstant(100), m.sub(m.sum({score, m.addConstant(10)}), b));
    const auto s = m.minimize(obj);
    REQUIRE(s.validSolution());
    unsigned bestScore = 0;
    for (unsigned x = lo; x <= 6; ++x)
      for (unsigned y = 1; y <= 4; ++y)
        if (12 % y == 0)
          bestScore = std::max(bestScore, x + 10 * (x <= y) + 10 - y);
    CAPTURE(lo);
    CHECK(100 - val(s, obj) == bestScore);
    const unsigned x = val(s, a), y = val(s, b);
    CHECK(val(s, lt) == (x < y));
    CHECK(val(s, le) == (x <= y));
    CHECK(val(s, eq) == (x == y));
    CHECK(val(s, both) == (x < y && x != y));
    CHECK(val(s, either) == (x <= y));
    CHECK(12 % y == 0);
  }
  Model m; // equal between variables and constants, from either side
  const auto a = m.addVariable(0, 100), b = m.addVariable(0, 100);
  m.equal(DataType(42u), a);
  m.equal(a, b);
  m.less(DataType(3u), b);
  const auto s = m.minimize(b);
  REQUIRE(s.validSolution());
  CHECK(val(s, b) == 42);
}

TEST_CASE("popsolver: ceildivConstrainDivisor keeps the smallest divisor", "[gccs][popsolver]") {
  // Feasible exactly when split is the smallest divisor with its quotient.
  for (unsigned k = 1; k <= 10; ++k) {
    Model m;
    const auto split = m.addVariable(1, 10);
    const auto perPart = m.ceildivConstrainDivisor(m.addConstant(10), split);
    m.equal(split, DataType(k));
    const auto s = m.minimize(perPart);
    CAPTURE(k);
    CHECK(s.validSolution() == (k == ceilDiv(10, ceilDiv(10, k))));
    if (s.validSolution())
      CHECK(val(s, perPart) == ceilDiv(10, k));
  }
  Model m2;
  const auto split2 = m2.addVariable(1, 10);
  const auto q = m2.ceildivConstrainDivisor(m2.addConstant(10), split2);
  m2.equal(q, DataType(3u));
  const auto s2 = m2.minimize(m2.sub(m2.addConstant(10), split2)); // the largest split with quotient 3
  REQUIRE(s2.validSolution());
  CHECK(val(s2, split2) == 4); // ceildiv(10, 4) == 3; 5 gives 2
}

TEST_CASE("popsolver: constants, unbounded variables, priority groups and names", "[gccs][popsolver]") {
  Model m;
  CHECK(m.addConstant(5u) == m.addConstant(DataType(5u)));
  CHECK(m.zero() == m.addConstant(0));
  const auto free = m.addVariable("free"); // [0, max]: found by bisection
  m.lessOrEqual(DataType(123456789u), free);
  const auto group = m.addPriorityGroup();
  CHECK(group != m.getDefaultPriorityGroup());
  const auto x = m.addVariable(1, 9, "x");
  m.setPriorityGroup(x, group);
  m.prioritiseOver(group, m.getDefaultPriorityGroup());
  const auto obj = m.sum({free, m.ceildiv(m.addConstant(17), x)});
  const auto s = m.minimize(obj);
  REQUIRE(s.validSolution());
  CHECK(*s[free] == 123456789u);
  CHECK(val(s, x) == 9);
  CHECK(m.getDebugName(free) == "free");
  CHECK(m.numVariables() >= 5);
  CHECK_THROWS_AS(m.addVariable(3, 2, "backwards"), std::invalid_argument);
  CHECK_THROWS_AS(m.minimize(Variable(9999)), std::invalid_argument);

  // DataType: arithmetic, comparisons, conversions.
  DataType d(7u);
  d += DataType(3u);
  CHECK(*d == 10);
  CHECK(d.getAs<double>() == 10.0);
  CHECK(DataType(2.9) == DataType(2));
  CHECK(DataType::max() > d);
  CHECK(std::hash<DataType>()(d) == std::hash<std::uint64_t>()(10));
}
