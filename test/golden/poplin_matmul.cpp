// Copyright (c) Aspen contributors.
// Golden tests of poplin (PopLibs <poplin/MatMul.hpp>): matMul, matMulWithOutput,
// matMulAcc, matMulGrouped and the operand creators, in float and half,
// against Eigen, on a 4-tile model, the 1,472-tile model and a reloaded
// executable.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <Eigen/Dense>
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::TestDevice;
using aspen::test::TestTarget;
using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace {

/// Uniform values in [-1, 1], already rounded to `type` so the reference sees the device's inputs.
RowMatrix randomMatrix(std::size_t rows, std::size_t cols, unsigned seed, const Type &type,
                       const Target &target) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  RowMatrix m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i)
    m.data()[i] = aspen::test::roundTo(type, target, dist(gen));
  return m;
}

std::vector<float> toVector(const RowMatrix &m) {
  return std::vector<float>(m.data(), m.data() + m.size());
}

/// `|m|`, element by element: with |A| * |B| the magnitude that rounding errors scale with.
RowMatrix absOf(const RowMatrix &m) {
  return m.cwiseAbs();
}

/// Every element within the rounding error the computation may make, and no more: the
/// output's own rounding (half-ulp: 2^-11 relative for half, 2^-24 for float), float
/// accumulation of `depth` products (a few sqrt(depth) float roundings of the magnitude
/// |A| * |B|), and `halfRoundings` roundings of partial sums to half (each within 2^-11 of
/// the magnitude). A product left out or counted twice exceeds this.
void checkClose(const std::vector<float> &actual, const RowMatrix &expected, const RowMatrix &magnitude,
                const Type &outType, std::size_t depth, unsigned halfRoundings, const std::string &what) {
  REQUIRE(actual.size() == std::size_t(expected.size()));
  const double outRounding = outType == HALF ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
  const double perMagnitude =
      4.0 * std::sqrt(double(depth)) * std::ldexp(1.0, -24) + halfRoundings * std::ldexp(1.0, -11);
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double e = expected.data()[i];
    const double allowed = outRounding * std::fabs(e) + perMagnitude * magnitude.data()[i] + 1e-7;
    if (std::fabs(actual[i] - e) > allowed) {
      INFO(what << ": element " << i << " is " << actual[i] << ", expected " << e << " (allowed error "
                << allowed << ")");
      CHECK(std::fabs(actual[i] - e) <= allowed);
      return;
    }
  }
}

/// The number after `key` in a matMulReportPlan description.
unsigned planField(const std::string &description, const std::string &key) {
  std::smatch match;
  REQUIRE(std::regex_search(description, match, std::regex(key + " ([0-9]+)")));
  return unsigned(std::stoul(match[1]));
}

struct Case {
  std::size_t m, k, n;
  Type inType, outType;
  bool transposeA, transposeB;
};

} // namespace

TEST_CASE("poplin_matmul: matMul matches Eigen for float and half on every target", "[poplin]") {
  const std::vector<Case> cases = {
      {5, 7, 3, FLOAT, FLOAT, false, false},   {33, 65, 17, FLOAT, FLOAT, false, false},
      {64, 96, 48, FLOAT, FLOAT, true, false}, {20, 40, 30, FLOAT, FLOAT, false, true},
      {24, 50, 40, HALF, HALF, false, false},  {17, 33, 9, HALF, FLOAT, true, true},
      {1, 64, 1, FLOAT, HALF, false, false},
  };
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      poplin::addCodelets(graph);
      poplin::addCodelets(graph); // a second call is harmless
      program::Sequence prog;
      std::vector<RowMatrix> as, bs;
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const Case &tc = cases[c];
        as.push_back(randomMatrix(tc.m, tc.k, 10 + unsigned(c), tc.inType, graph.getTarget()));
        bs.push_back(randomMatrix(tc.k, tc.n, 20 + unsigned(c), tc.inType, graph.getTarget()));
        // Stored transposed when the case multiplies a transposed view.
        Tensor a = tc.transposeA ? graph.addVariable(tc.inType, {tc.k, tc.m}, "aT")
                                 : graph.addVariable(tc.inType, {tc.m, tc.k}, "a");
        Tensor b = tc.transposeB ? graph.addVariable(tc.inType, {tc.n, tc.k}, "bT")
                                 : graph.addVariable(tc.inType, {tc.k, tc.n}, "b");
        poputil::mapTensorLinearly(graph, a);
        poputil::mapTensorLinearly(graph, b);
        graph.createHostWrite("a" + std::to_string(c), a);
        graph.createHostWrite("b" + std::to_string(c), b);
        Tensor result =
            poplin::matMul(graph, tc.transposeA ? a.transpose() : a, tc.transposeB ? b.transpose() : b, prog,
                           tc.outType, "mm" + std::to_string(c));
        REQUIRE(result.shape() == std::vector<std::size_t>{tc.m, tc.n});
        REQUIRE(result.elementType() == tc.outType);
        graph.createHostRead("c" + std::to_string(c), result);
      }
      auto engine = dev.createEngine(graph, {prog});
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const Case &tc = cases[c];
        const RowMatrix aStored = tc.transposeA ? RowMatrix(as[c].transpose()) : as[c];
        const RowMatrix bStored = tc.transposeB ? RowMatrix(bs[c].transpose()) : bs[c];
        aspen::test::writeFloats(*engine, "a" + std::to_string(c), tc.inType, graph.getTarget(),
                                 toVector(aStored));
        aspen::test::writeFloats(*engine, "b" + std::to_string(c), tc.inType, graph.getTarget(),
                                 toVector(bStored));
      }
      engine->run(0);
      for (std::size_t c = 0; c < cases.size(); ++c) {
        const Case &tc = cases[c];
        const RowMatrix expected = as[c] * bs[c];
        const auto actual = aspen::test::readFloats(*engine, "c" + std::to_string(c), tc.outType,
                                                    graph.getTarget(), tc.m * tc.n);
        checkClose(actual, expected, absOf(as[c]) * absOf(bs[c]), tc.outType, tc.k, 0,
                   "case " + std::to_string(c));
      }
    }
  }
}

TEST_CASE("poplin_matmul: matMulAcc adds k * A * B with a constant or tensor scale", "[poplin]") {
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      poplin::addCodelets(graph);
      const Target &target = graph.getTarget();
      program::Sequence prog;
      const RowMatrix a = randomMatrix(12, 30, 1, FLOAT, target), b = randomMatrix(30, 10, 2, FLOAT, target);
      const RowMatrix c0 = randomMatrix(12, 10, 3, FLOAT, target);
      const RowMatrix ah = randomMatrix(9, 16, 4, HALF, target), bh = randomMatrix(16, 8, 5, HALF, target);
      const RowMatrix ch0 = randomMatrix(9, 8, 6, HALF, target);
      Tensor A = graph.addVariable(FLOAT, {12, 30}, "A"), B = graph.addVariable(FLOAT, {30, 10}, "B");
      Tensor C = graph.addVariable(FLOAT, {12, 10}, "C");
      Tensor Ah = graph.addVariable(HALF, {9, 16}, "Ah"), Bh = graph.addVariable(HALF, {16, 8}, "Bh");
      Tensor Ch = graph.addVariable(HALF, {9, 8}, "Ch");
      Tensor k = graph.addConstant<float>(HALF, {1}, {0.25f}, "k");
      graph.setTileMapping(k, 1);
      for (const Tensor &t : {A, B, C, Ah, Bh, Ch})
        poputil::mapTensorLinearly(graph, t);
      graph.createHostWrite("A", A);
      graph.createHostWrite("B", B);
      graph.createHostWrite("C", C);
      graph.createHostRead("C", C);
      graph.createHostWrite("Ah", Ah);
      graph.createHostWrite("Bh", Bh);
      graph.createHostWrite("Ch", Ch);
      graph.createHostRead("Ch", Ch);
      poplin::matMulAcc(graph, C, -1.5f, A, B, prog, "accFloat");
      poplin::matMulAcc(graph, Ch, k, Ah, Bh, prog, "accHalf");
      auto engine = dev.createEngine(graph, {prog});
      aspen::test::writeFloats(*engine, "A", FLOAT, target, toVector(a));
      aspen::test::writeFloats(*engine, "B", FLOAT, target, toVector(b));
      aspen::test::writeFloats(*engine, "C", FLOAT, target, toVector(c0));
      aspen::test::writeFloats(*engine, "Ah", HALF, target, toVector(ah));
      aspen::test::writeFloats(*engine, "Bh", HALF, target, toVector(bh));
      aspen::test::writeFloats(*engine, "Ch", HALF, target, toVector(ch0));
      engine->run(0);
      const RowMatrix magnitude = absOf(c0) + 1.5f * absOf(a) * absOf(b);
      checkClose(aspen::test::readFloats(*engine, "C", FLOAT, target, 120), c0 - 1.5f * a * b, magnitude,
                 FLOAT, 30, 0, "float acc");
      checkClose(aspen::test::readFloats(*engine, "Ch", HALF, target, 72), ch0 + 0.25f * ah * bh,
                 absOf(ch0) + 0.25f * absOf(ah) * absOf(bh), HALF, 16, 0, "half acc");
      // Running again accumulates again.
      engine->run(0);
      checkClose(aspen::test::readFloats(*engine, "C", FLOAT, target, 120), c0 - 3.0f * a * b,
                 magnitude + 1.5f * absOf(a) * absOf(b), FLOAT, 60, 0, "float acc twice");
    }
  }
}

TEST_CASE("poplin_matmul: matMulGrouped multiplies each group", "[poplin]") {
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      poplin::addCodelets(graph);
      const Target &target = graph.getTarget();
      const std::size_t G = 3, m = 7, k = 11, n = 5;
      program::Sequence prog;
      Tensor A = poplin::createMatMulGroupedInputLHS(graph, FLOAT, FLOAT, {G, m, k}, {G, k, n}, "A");
      Tensor B = poplin::createMatMulGroupedInputRHS(graph, FLOAT, FLOAT, {G, m, k}, {G, k, n}, "B");
      REQUIRE(A.shape() == std::vector<std::size_t>{G, m, k});
      REQUIRE(B.shape() == std::vector<std::size_t>{G, k, n});
      Tensor C = poplin::matMulGrouped(graph, A, B, prog, FLOAT, "bmm");
      // The same product through a grouped output and transposed views of transposes.
      Tensor D = poplin::createMatMulGroupedOutput(graph, FLOAT, FLOAT, {G, m, k}, {G, k, n}, "D");
      poplin::matMulGroupedWithOutput(
          graph, poplin::transposeGroupedMatrix(poplin::transposeGroupedMatrix(A)), B, D, prog, "bmmOut");
      // E = C + 2 * A * B, accumulated.
      Tensor E = graph.clone(C, "E");
      prog.add(program::Copy(C, E));
      poplin::matMulGroupedAcc(graph, E, 2.0f, A, B, prog, "bmmAcc");
      graph.createHostWrite("A", A);
      graph.createHostWrite("B", B);
      graph.createHostRead("C", C);
      graph.createHostRead("D", D);
      graph.createHostRead("E", E);
      std::vector<RowMatrix> a, b;
      std::vector<float> aFlat, bFlat;
      for (unsigned g = 0; g < G; ++g) {
        a.push_back(randomMatrix(m, k, 30 + g, FLOAT, target));
        b.push_back(randomMatrix(k, n, 40 + g, FLOAT, target));
        const auto av = toVector(a.back()), bv = toVector(b.back());
        aFlat.insert(aFlat.end(), av.begin(), av.end());
        bFlat.insert(bFlat.end(), bv.begin(), bv.end());
      }
      auto engine = dev.createEngine(graph, {prog});
      aspen::test::writeFloats(*engine, "A", FLOAT, target, aFlat);
      aspen::test::writeFloats(*engine, "B", FLOAT, target, bFlat);
      engine->run(0);
      for (const char *handle : {"C", "D"}) {
        const auto c = aspen::test::readFloats(*engine, handle, FLOAT, target, G * m * n);
        for (unsigned g = 0; g < G; ++g)
          checkClose(std::vector<float>(c.begin() + g * m * n, c.begin() + (g + 1) * m * n), a[g] * b[g],
                     absOf(a[g]) * absOf(b[g]), FLOAT, k, 0,
                     std::string(handle) + " group " + std::to_string(g));
      }
      const auto e = aspen::test::readFloats(*engine, "E", FLOAT, target, G * m * n);
      for (unsigned g = 0; g < G; ++g)
        checkClose(std::vector<float>(e.begin() + g * m * n, e.begin() + (g + 1) * m * n), 3.0f * a[g] * b[g],
                   3.0f * absOf(a[g]) * absOf(b[g]), FLOAT, 2 * k, 0,
                   "matMulGroupedAcc group " + std::to_string(g));
    }
  }
}

TEST_CASE("poplin_matmul: created operands are mapped and matMulWithOutput fills a given tensor",
          "[poplin]") {
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  poplin::addCodelets(graph);
  const Target &target = graph.getTarget();
  const std::size_t m = 40, k = 24, n = 32;
  Tensor A = poplin::createMatMulInputLHS(graph, HALF, FLOAT, {m, k}, {k, n}, "A");
  Tensor B = poplin::createMatMulInputRHS(graph, HALF, FLOAT, {m, k}, {k, n}, "B");
  Tensor C = poplin::createMatMulOutput(graph, HALF, FLOAT, {m, k}, {k, n}, "C");
  REQUIRE(A.elementType() == HALF);
  REQUIRE(C.elementType() == FLOAT);
  for (const Tensor &t : {A, B, C}) {
    bool complete = false;
    graph.getTileMapping(t, &complete);
    CHECK(complete);
  }
  program::Sequence prog;
  poplin::matMulWithOutput(graph, A, B, C, prog, "withOutput");
  graph.createHostWrite("A", A);
  graph.createHostWrite("B", B);
  graph.createHostRead("C", C);
  const RowMatrix a = randomMatrix(m, k, 7, HALF, target), b = randomMatrix(k, n, 8, HALF, target);
  auto engine = dev.createEngine(graph, {prog});
  aspen::test::writeFloats(*engine, "A", HALF, target, toVector(a));
  aspen::test::writeFloats(*engine, "B", HALF, target, toVector(b));
  engine->run(0);
  // Half inputs, float partials and output: only the float sums' rounding.
  checkClose(aspen::test::readFloats(*engine, "C", FLOAT, target, m * n), a * b, absOf(a) * absOf(b), FLOAT,
             k, 0, "half in, float out");
}

TEST_CASE("poplin_matmul: a split inner dimension is reduced in float or half partials", "[poplin]") {
  for (const Type &inType : {FLOAT, HALF}) {
    for (const char *partials : {"float", "half"}) {
      DYNAMIC_SECTION(inType << " inputs, partialsType " << partials) {
        TestDevice dev(TestTarget::FewTiles);
        Graph graph(dev.getTarget());
        poplin::addCodelets(graph);
        const Target &target = graph.getTarget();
        const std::size_t m = 4, k = 4096, n = 4;
        const OptionFlags options{{"partialsType", partials}};
        std::ostringstream plan;
        poplin::matMulReportPlan(plan, graph, inType, inType, {m, k}, {k, n}, options);
        INFO(plan.str());
        // A long inner dimension with a tiny output is best split over the tiles.
        REQUIRE(planField(plan.str(), "inner") > 1);
        Tensor A = graph.addVariable(inType, {m, k}, "A"), B = graph.addVariable(inType, {k, n}, "B");
        poputil::mapTensorLinearly(graph, A);
        poputil::mapTensorLinearly(graph, B);
        program::Sequence prog;
        Tensor C = poplin::matMul(graph, A, B, prog, "long", options);
        graph.createHostWrite("A", A);
        graph.createHostWrite("B", B);
        graph.createHostRead("C", C);
        const RowMatrix a = randomMatrix(m, k, 11, inType, target),
                        b = randomMatrix(k, n, 12, inType, target);
        auto engine = dev.createEngine(graph, {prog});
        aspen::test::writeFloats(*engine, "A", inType, target, toVector(a));
        aspen::test::writeFloats(*engine, "B", inType, target, toVector(b));
        engine->run(0);
        const auto c = aspen::test::readFloats(*engine, "C", inType, target, m * n);
        // Half partials are rounded to half once each when stored and once per addition when
        // reduced.
        const unsigned numPartials = planField(plan.str(), "inner");
        const unsigned halfRoundings = std::string(partials) == "half" ? 2 * numPartials : 0;
        checkClose(c, a * b, absOf(a) * absOf(b), inType, k, halfRoundings,
                   std::string("partials ") + partials);
      }
    }
  }
}

TEST_CASE("poplin_matmul: the planner uses the tiles and honours availableMemoryProportion", "[poplin]") {
  Target target = Target::createIPUTarget(1, 1472, "ipu2");
  Graph graph(target);
  poplin::PlanningCache cache;
  std::ostringstream plan;
  poplin::matMulReportPlan(plan, graph, FLOAT, FLOAT, {1024, 1024}, {1024, 1024}, {}, &cache);
  INFO(plan.str());
  const unsigned tiles = planField(plan.str(), "tiles used:");
  CHECK(tiles > 1000);
  CHECK(tiles <= 1472);
  CHECK(plan.str().find("over budget") == std::string::npos);
  CHECK(cache.size() == 1);
  std::ostringstream again;
  poplin::matMulReportPlan(again, graph, FLOAT, FLOAT, {1024, 1024}, {1024, 1024}, {}, &cache);
  CHECK(again.str() == plan.str());
  CHECK(cache.size() == 1);

  // On 4 tiles a large product cannot fit a tiny budget: the planner takes the
  // plan needing least memory and says so; a generous budget fits.
  Graph small(Target::createIPUTarget(1, 4, "ipu2"));
  std::ostringstream tight, loose;
  poplin::matMulReportPlan(tight, small, FLOAT, FLOAT, {512, 512}, {512, 512},
                           {{"availableMemoryProportion", "0.01"}});
  poplin::matMulReportPlan(loose, small, FLOAT, FLOAT, {64, 64}, {64, 64},
                           {{"availableMemoryProportion", "1"}});
  INFO(tight.str() << loose.str());
  CHECK(tight.str().find("over budget") != std::string::npos);
  CHECK(loose.str().find("over budget") == std::string::npos);
}

TEST_CASE("poplin_matmul: a product too large for one superstep runs in serial passes", "[poplin]") {
  // 128 x 128 x 128 floats on 4 tiles of 128 KiB with availableMemoryProportion 0.4 (52 KB):
  // every one-pass split needs at least 64 KB of operand copies and partials on a tile; two
  // passes over the columns need 48 KB.
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  model.memoryBytesPerTile = 128 * 1024;
  poplar::Device device = model.createDevice();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  const Target &target = graph.getTarget();
  const std::size_t m = 128, k = 128, n = 128;
  const OptionFlags options{{"availableMemoryProportion", "0.4"}};
  std::ostringstream plan;
  poplin::matMulReportPlan(plan, graph, FLOAT, FLOAT, {m, k}, {k, n}, options);
  INFO(plan.str());
  std::smatch passes;
  const std::string description = plan.str();
  REQUIRE(std::regex_search(description, passes, std::regex("in ([0-9]+) serial passes over")));
  REQUIRE(std::stoul(passes[1]) > 1);
  REQUIRE(plan.str().find("over budget") == std::string::npos);
  program::Sequence prog;
  Tensor A = poplin::createMatMulInputLHS(graph, FLOAT, {m, k}, {k, n}, "A", options);
  Tensor B = poplin::createMatMulInputRHS(graph, FLOAT, {m, k}, {k, n}, "B", options);
  Tensor C = poplin::matMul(graph, A, B, prog, FLOAT, "serial", options);
  graph.createHostWrite("A", A);
  graph.createHostWrite("B", B);
  graph.createHostRead("C", C);
  const RowMatrix a = randomMatrix(m, k, 21, FLOAT, target), b = randomMatrix(k, n, 22, FLOAT, target);
  poplar::Engine engine(graph, prog);
  engine.load(device);
  aspen::test::writeFloats(engine, "A", FLOAT, target, toVector(a));
  aspen::test::writeFloats(engine, "B", FLOAT, target, toVector(b));
  engine.run(0);
  checkClose(aspen::test::readFloats(engine, "C", FLOAT, target, m * n), a * b, absOf(a) * absOf(b), FLOAT, k,
             0, "serial passes");
}

TEST_CASE("poplin_matmul: products PopLibs plans on ipu1 plan within its memory", "[poplin]") {
  // fp32 1536^3 and 2048^3 and half 2048^3 on a GC2 (1,216 tiles of 256 KiB): one pass needs
  // more than a tile's memory; serial passes fit under the budget.
  Graph graph(Target::createIPUTarget(1, "ipu1"));
  for (const auto &c : {std::make_pair(FLOAT, std::size_t(1536)), std::make_pair(FLOAT, std::size_t(2048)),
                        std::make_pair(HALF, std::size_t(2048))}) {
    const std::size_t n = c.second;
    std::ostringstream plan;
    poplin::matMulReportPlan(plan, graph, c.first, c.first, {n, n}, {n, n}, {});
    INFO(plan.str());
    CHECK(plan.str().find("over budget") == std::string::npos);
    CHECK(plan.str().find("serial passes") != std::string::npos);
  }
}

namespace {

/// Runs `a` x `b` (float) on a 16-tile ipu2 model with `options` and checks the result; returns
/// the plan matMulReportPlan describes for the same options.
std::string runConstrained(std::size_t m, std::size_t k, std::size_t n, const OptionFlags &options,
                           const std::string &what) {
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = 16;
  poplar::Device device = model.createDevice();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  const Target &target = graph.getTarget();
  std::ostringstream plan;
  poplin::matMulReportPlan(plan, graph, FLOAT, FLOAT, {m, k}, {k, n}, options);
  program::Sequence prog;
  Tensor A = poplin::createMatMulInputLHS(graph, FLOAT, {m, k}, {k, n}, "A", options);
  Tensor B = poplin::createMatMulInputRHS(graph, FLOAT, {m, k}, {k, n}, "B", options);
  Tensor C = poplin::matMul(graph, A, B, prog, FLOAT, "constrained", options);
  graph.createHostWrite("A", A);
  graph.createHostWrite("B", B);
  graph.createHostRead("C", C);
  const RowMatrix a = randomMatrix(m, k, 31, FLOAT, target), b = randomMatrix(k, n, 32, FLOAT, target);
  poplar::Engine engine(graph, prog);
  engine.load(device);
  aspen::test::writeFloats(engine, "A", FLOAT, target, toVector(a));
  aspen::test::writeFloats(engine, "B", FLOAT, target, toVector(b));
  engine.run(0);
  checkClose(aspen::test::readFloats(engine, "C", FLOAT, target, m * n), a * b, absOf(a) * absOf(b), FLOAT, k,
             0, what);
  return plan.str();
}

} // namespace

TEST_CASE("poplin_matmul: planConstraints fix the splits they name, as PopLibs maps a product",
          "[poplin][planConstraints]") {
  // PopLibs plans {m, k} x {k, n} as a convolution with batch m, k input and n output channels:
  // batchSplit splits the rows, outChanSplit the columns (serial: passes), inChanSplit the inner
  // dimension, convGroupSplit the groups.
  const std::size_t m = 40, k = 48, n = 36;
  {
    const std::string plan = runConstrained(
        m, k, n,
        {{"planConstraints",
          R"({"0": {"partition": {"batchSplit": 2, "outChanSplit": {"parallel": 3}, "inChanSplit": {"parallel": 2}}}})"}},
        "batch 2, out 3, in 2");
    INFO(plan);
    CHECK(planField(plan, "rows") == 2);
    CHECK(planField(plan, "columns") == 3);
    CHECK(planField(plan, "inner") == 2);
    CHECK(plan.find("0.partition.batchSplit = 2") != std::string::npos);
  }
  {
    // Uneven: 5 row pieces of 8 for a split of 5; a serial split of 3 passes over the columns.
    const std::string plan = runConstrained(
        m, k, n,
        {{"planConstraints",
          R"({"0": {"partition": {"batchSplit": 5, "outChanSplit": {"serial": 3, "parallel": 1}}}})"}},
        "batch 5, 3 serial passes");
    INFO(plan);
    CHECK(planField(plan, "rows") == 5);
    CHECK(planField(plan, "columns") == 1);
    CHECK(planField(plan, "in") == 3); // "in 3 serial passes over columns"
  }
  {
    // inChanSplit.serial: passes over the inner dimension, each adding into the result.
    const std::string plan = runConstrained(
        m, k, n, {{"planConstraints", R"({"0": {"partition": {"inChanSplit": {"serial": 3}}}})"}},
        "3 inner serial passes");
    INFO(plan);
    CHECK(planField(plan, "in") == 3);
    CHECK(plan.find("in 3 serial passes over the inner dimension") != std::string::npos);
    CHECK(plan.find("0.partition.inChanSplit.serial = 3") != std::string::npos);
  }
  {
    // With the inner dimension also split over tiles: partial sums kept across the passes on
    // their tiles, reduced once at the end.
    const std::string plan = runConstrained(
        m, k, n,
        {{"planConstraints",
          R"({"0": {"partition": {"batchSplit": 2, "inChanSplit": {"serial": 2, "parallel": 3}}}})"}},
        "2 inner serial passes, inner 3");
    INFO(plan);
    CHECK(planField(plan, "inner") == 3);
    CHECK(plan.find("in 2 serial passes over the inner dimension") != std::string::npos);
  }
  {
    // swapOperands with outChanSplit.serial: passes over the rows (PopLibs' transposed product's
    // output channels).
    const std::string plan = runConstrained(
        m, k, n,
        {{"planConstraints",
          R"({"0": {"transform": {"swapOperands": true}, "partition": {"outChanSplit": {"serial": 3, "parallel": 2}}}})"}},
        "3 serial passes over rows");
    INFO(plan);
    CHECK(planField(plan, "rows") == 2);
    CHECK(plan.find("in 3 serial passes over rows") != std::string::npos);
  }
  {
    // swapOperands: PopLibs' transposed product (batch n, output channels m).
    const std::string plan = runConstrained(
        m, k, n,
        {{"planConstraints",
          R"({"0": {"transform": {"swapOperands": true}, "partition": {"batchSplit": 4, "outChanSplit": {"parallel": 2}}}})"}},
        "swapped");
    INFO(plan);
    CHECK(planField(plan, "rows") == 2);
    CHECK(planField(plan, "columns") == 4);
  }
  {
    // Keys PopLibs accepts that name choices Aspen's planner does not make: accepted, listed.
    const std::string plan = runConstrained(
        m, k, n,
        {{"planConstraints",
          R"({"method": {"type": "AMP", "convUnits": 8}, "inChansPerGroup": 16, "0": {"transform": {"expandDims": []}}, "1": {"partition": {"batchSplit": 1}}})"}},
        "ignored keys");
    INFO(plan);
    CHECK(plan.find("planConstraints ignored (not chosen by Aspen's planner): 0.transform.expandDims "
                    "1.partition.batchSplit inChansPerGroup method.convUnits method.type") !=
          std::string::npos);
    CHECK(plan.find("planConstraints honoured") == std::string::npos);
  }
  // Without constraints the planner chooses otherwise, so the constrained plans above were forced.
  Graph graph(Target::createIPUTarget(1, 16, "ipu2"));
  std::ostringstream free;
  poplin::matMulReportPlan(free, graph, FLOAT, FLOAT, {m, k}, {k, n}, {});
  INFO(free.str());
  CHECK(!(planField(free.str(), "rows") == 5 && planField(free.str(), "columns") == 1));
}

TEST_CASE("poplin_matmul: a product that fits only in serial passes over the inner dimension",
          "[poplin][planConstraints]") {
  // {16, 2048} x {2048, 16} floats on 4 tiles of 128 KiB, budget 0.2 (26 KB): a pass over rows or
  // columns needs at least one row of A and all 16 columns of B (or the converse) over a quarter
  // of the inner dimension on each tile (34 KB); one pass 64 KB. Three passes over the inner
  // dimension copy a third of that each (23 KB). The operands are mapped linearly (not where
  // the plan wants them), so the copies are real.
  const std::size_t m = 16, k = 2048, n = 16;
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  model.memoryBytesPerTile = 128 * 1024;
  Device device = model.createDevice();
  for (const Type &type : {FLOAT, HALF}) {
    // Half: the same passes asked for (half partial sums kept in float, cast once at the end).
    const Type inType = type, outType = type;
    OptionFlags options{{"availableMemoryProportion", "0.2"}};
    if (type == HALF)
      options.set("planConstraints", R"({"0": {"partition": {"inChanSplit": {"serial": 4}}}})");
    INFO("type " << type);
    Graph graph(device.getTarget());
    poplin::addCodelets(graph);
    const Target &target = graph.getTarget();
    std::ostringstream plan;
    poplin::matMulReportPlan(plan, graph, inType, outType, {m, k}, {k, n}, options);
    INFO(plan.str());
    REQUIRE(plan.str().find("serial passes over the inner dimension") != std::string::npos);
    REQUIRE(plan.str().find("over budget") == std::string::npos);
    if (type == FLOAT) { // without passes over the inner dimension nothing fits the budget
      std::ostringstream other;
      OptionFlags noInner = options;
      noInner.set("planConstraints", R"({"0": {"partition": {"inChanSplit": {"serial": 1}}}})");
      poplin::matMulReportPlan(other, graph, inType, outType, {m, k}, {k, n}, noInner);
      INFO(other.str());
      CHECK(other.str().find("over budget") != std::string::npos);
    }

    program::Sequence prog;
    Tensor A = graph.addVariable(inType, {m, k}, "A"), B = graph.addVariable(inType, {k, n}, "B");
    poputil::mapTensorLinearly(graph, A);
    poputil::mapTensorLinearly(graph, B);
    Tensor C = poplin::matMul(graph, A, B, prog, outType, "inner passes", options);
    // matMulAcc in the same passes: C2 = C2 + 0.5 A B, partial sums in float, one final add.
    Tensor C2 = graph.clone(outType, C, "C2");
    poplin::matMulAcc(graph, C2, 0.5f, A, B, prog, "inner passes acc", options);
    graph.createHostWrite("A", A);
    graph.createHostWrite("B", B);
    graph.createHostWrite("C2", C2);
    graph.createHostRead("C", C);
    graph.createHostRead("C2", C2);
    const RowMatrix a = randomMatrix(m, k, 51, inType, target), b = randomMatrix(k, n, 52, inType, target),
                    c2 = randomMatrix(m, n, 53, outType, target);
    Engine engine(graph, prog); // compiles within the tiles' memory
    engine.load(device);
    aspen::test::writeFloats(engine, "A", inType, target, toVector(a));
    aspen::test::writeFloats(engine, "B", inType, target, toVector(b));
    aspen::test::writeFloats(engine, "C2", outType, target, toVector(c2));
    engine.run(0);
    checkClose(aspen::test::readFloats(engine, "C", outType, target, m * n), a * b, absOf(a) * absOf(b),
               outType, k, 0, "inner serial passes");
    const RowMatrix acc = c2 + 0.5f * (a * b);
    checkClose(aspen::test::readFloats(engine, "C2", outType, target, m * n), acc,
               c2.cwiseAbs() + 0.5f * (absOf(a) * absOf(b)), outType, k, 0, "inner serial passes, matMulAcc");
  }
}
