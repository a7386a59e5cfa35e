// Copyright (c) Aspen contributors.
// Issue 23 item 3: the products PopLibs plans on a GC2 (ipu1: 1,216 tiles of 256 KiB) plan and
// run on Aspen's ipu1 model too: fp32 1536^3 and 2048^3, half 2048^3, in serial passes, with
// results checked against a host reference on whole rows and columns of the result.
#include "OpsTestUtil.hpp"

#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <iterator>
#include <random>
#include <sstream>
#include <vector>

using namespace poplar;

namespace {

std::vector<float> randomValues(std::size_t n, unsigned seed, const Type &type, const Target &target) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = aspen::test::roundTo(type, target, dist(gen));
  return v;
}

void runOnIpu1(const Type &type, std::size_t n) {
  INFO(type << " " << n << "^3");
  IPUModel model("ipu1");
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  const Target &target = graph.getTarget();
  REQUIRE(target.getNumTiles() == 1216);
  std::ostringstream plan;
  poplin::matMulReportPlan(plan, graph, type, type, {n, n}, {n, n}, {});
  INFO(plan.str());
  REQUIRE(plan.str().find("serial passes") != std::string::npos);
  REQUIRE(plan.str().find("over budget") == std::string::npos);
  program::Sequence prog;
  Tensor A = poplin::createMatMulInputLHS(graph, type, {n, n}, {n, n}, "A");
  Tensor B = poplin::createMatMulInputRHS(graph, type, {n, n}, {n, n}, "B");
  Tensor C = poplin::matMul(graph, A, B, prog, type, "C");
  graph.createHostWrite("A", A);
  graph.createHostWrite("B", B);
  graph.createHostRead("C", C);
  const std::vector<float> a = randomValues(n * n, 41, type, target),
                           b = randomValues(n * n, 42, type, target);
  Engine engine(graph, prog); // compiles within the tiles' memory, or throws naming the tiles
  engine.load(device);
  aspen::test::writeFloats(engine, "A", type, target, a);
  aspen::test::writeFloats(engine, "B", type, target, b);
  engine.run(0);
  const std::vector<float> c = aspen::test::readFloats(engine, "C", type, target, n * n);
  // Rows and columns spread over the serial passes and the tiles' blocks, every element of each.
  const std::size_t lines[] = {0, 1, n / 3, n / 2 + 7, n - 2, n - 1};
  const double tolerance =
      type == HALF ? std::ldexp(1.0, -10) : 8.0 * std::sqrt(double(n)) * std::ldexp(1.0, -24);
  auto check = [&](std::size_t i, std::size_t j) {
    double expected = 0, magnitude = 0;
    for (std::size_t d = 0; d < n; ++d) {
      expected += double(a[i * n + d]) * b[d * n + j];
      magnitude += std::fabs(double(a[i * n + d]) * b[d * n + j]);
    }
    const double got = c[i * n + j];
    if (std::fabs(got - expected) > tolerance * magnitude + 1e-6) {
      INFO("C[" << i << "][" << j << "] = " << got << ", expected " << expected);
      CHECK(std::fabs(got - expected) <= tolerance * magnitude + 1e-6);
      return false;
    }
    return true;
  };
  std::size_t checked = 0;
  for (std::size_t line : lines)
    for (std::size_t k = 0; k < n; ++k) {
      if (!check(line, k) || !check(k, line))
        return;
      checked += 2;
    }
  CHECK(checked == 2 * std::size(lines) * n);
}

} // namespace

TEST_CASE("poplin_matmul_ipu1: fp32 1536^3 runs on ipu1", "[poplin][ipu1]") {
  runOnIpu1(FLOAT, 1536);
}
TEST_CASE("poplin_matmul_ipu1: fp32 2048^3 runs on ipu1", "[poplin][ipu1]") {
  runOnIpu1(FLOAT, 2048);
}
TEST_CASE("poplin_matmul_ipu1: half 2048^3 runs on ipu1", "[poplin][ipu1]") {
  runOnIpu1(HALF, 2048);
}
