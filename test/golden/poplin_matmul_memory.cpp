// Copyright (c) Aspen contributors.
// Issue 23 item 3: the matMul planner's per-tile memory estimate against what the compiler's
// allocator then places, for plans of every kind (one pass, serial passes over rows, columns and
// the inner dimension; float and half).
#include "OpsTestUtil.hpp"

#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <sstream>

using namespace poplar;

namespace {

std::uint64_t reportNumber(const std::string &text, const std::string &pattern) {
  std::smatch match;
  REQUIRE(std::regex_search(text, match, std::regex(pattern)));
  return std::stoull(match[1]);
}

/// Bytes of alignment padding between a tile's objects that are not a gap.
constexpr std::uint64_t kPadding = 64;

struct Measured {
  std::uint64_t estimate = 0, compiled = 0;
  /// On the fullest tile: always-live bytes plus the peak of the others (no gaps between them).
  std::uint64_t compiledWithoutGaps = 0;
  std::string plan;
};

Measured measure(unsigned tiles, unsigned bytesPerTile, const Type &type, std::size_t m, std::size_t k,
                 std::size_t n, const std::string &constraints, bool planLaidOut) {
  IPUModel model("ipu1");
  model.tilesPerIPU = tiles;
  model.memoryBytesPerTile = bytesPerTile;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  poplin::addCodelets(graph);
  OptionFlags options;
  if (!constraints.empty())
    options.set("planConstraints", constraints);
  std::ostringstream plan;
  poplin::matMulReportPlan(plan, graph, type, type, {m, k}, {k, n}, options);
  Measured r;
  r.plan = plan.str();
  r.estimate = reportNumber(r.plan, "estimated peak ([0-9]+) bytes");
  program::Sequence prog;
  Tensor A, B;
  if (planLaidOut) {
    A = poplin::createMatMulInputLHS(graph, type, {m, k}, {k, n}, "A", options);
    B = poplin::createMatMulInputRHS(graph, type, {m, k}, {k, n}, "B", options);
  } else {
    A = aspen::test::mappedVariable(graph, type, {m, k}, "A");
    B = aspen::test::mappedVariable(graph, type, {k, n}, "B");
  }
  Tensor C = poplin::matMul(graph, A, B, prog, type, "C", options);
  graph.createHostWrite("A", A);
  graph.createHostWrite("B", B);
  graph.createHostRead("C", C);
  Engine engine(graph, prog, {{"debug.allowOutOfMemory", "true"}});
  // Poplar 1.x's graph profile: the compiled memory report, per tile (deprecated in Poplar; still
  // the shortest way to the per-tile peak).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  const ProfileValue profile = engine.getGraphProfile();
#pragma GCC diagnostic pop
  const auto &peaks = profile["memory"]["byTile"]["totalIncludingGaps"].asVector();
  const auto &withoutGaps = profile["memory"]["byTile"]["total"].asVector();
  for (std::size_t t = 0; t < peaks.size(); ++t)
    if (peaks[t].asUint() > r.compiled) {
      r.compiled = peaks[t].asUint();
      r.compiledWithoutGaps = withoutGaps[t].asUint();
    }
  return r;
}

} // namespace

TEST_CASE("poplin_matmul_memory: the planner's per-tile estimate is what the allocator places",
          "[poplin][memory]") {
  // Operands laid out by createMatMulInputLHS/RHS (the estimate's assumption). Every kind of plan:
  // one pass, an inner split over tiles (partial sums reduced), serial passes over the rows, the
  // columns and the inner dimension (partial sums kept across them; half: kept in float and cast),
  // sizes that do not divide evenly. Margin: 2 % of the compiled peak (measured: within 0.5 %).
  const char *inner4 = R"({"0": {"partition": {"inChanSplit": {"serial": 4}}}})";
  const char *cols4 = R"({"0": {"partition": {"outChanSplit": {"serial": 4}}}})";
  const char *rows3 =
      R"({"0": {"transform": {"swapOperands": true}, "partition": {"outChanSplit": {"serial": 3}}}})";
  const char *depth4 = R"({"0": {"partition": {"inChanSplit": {"parallel": 4}}}})";
  const char *inner3depth2 = R"({"0": {"partition": {"inChanSplit": {"serial": 3, "parallel": 2}}}})";
  struct Case {
    Type type;
    std::size_t m, k, n;
    const char *constraints;
  } cases[] = {
      {FLOAT, 256, 256, 256, ""},          {HALF, 256, 256, 256, ""},
      {FLOAT, 256, 512, 256, inner4},      {HALF, 256, 512, 256, inner4},
      {FLOAT, 256, 512, 256, cols4},       {HALF, 256, 512, 256, cols4},
      {FLOAT, 256, 512, 256, rows3},       {HALF, 250, 410, 130, rows3},
      {FLOAT, 64, 4096, 64, depth4},       {FLOAT, 250, 410, 130, inner3depth2},
      {HALF, 250, 410, 130, inner3depth2}, {FLOAT, 250, 410, 130, ""},
  };
  for (const Case &c : cases) {
    const Measured r = measure(16, 256 * 1024, c.type, c.m, c.k, c.n, c.constraints, true);
    INFO(c.type << " {" << c.m << "," << c.k << "} x {" << c.k << "," << c.n << "} " << c.constraints << "\n"
                << r.plan << "compiled peak " << r.compiled);
    CHECK(double(r.estimate) >= 0.98 * double(r.compiled));
    CHECK(double(r.estimate) <= 1.02 * double(r.compiled));
    // No gaps but alignment: the fullest tile holds its always-live bytes and its peak of the
    // others, and at most a few bytes of padding between objects.
    CHECK(r.compiled - r.compiledWithoutGaps <= kPadding);
  }
}

TEST_CASE("poplin_matmul_memory: serial passes over the inner dimension leave no gaps between passes",
          "[poplin][memory]") {
  // Partial sums kept across the passes and each pass's operand blocks (a few bytes more or less
  // than the last's: 410 inner elements in 3 passes of 136/137): the allocator places the partial
  // sums below the blocks, so a pass's blocks reuse the last's place. Operands mapped linearly.
  const Measured r = measure(16, 256 * 1024, FLOAT, 250, 410, 130,
                             R"({"0": {"partition": {"inChanSplit": {"serial": 3, "parallel": 2}}}})", false);
  INFO(r.plan << "compiled peak " << r.compiled);
  CHECK(r.compiled - r.compiledWithoutGaps <= kPadding);
}
