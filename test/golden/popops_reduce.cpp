// Copyright (c) Aspen contributors.
// popops::reduce / reduceWithOutput (Reduce.hpp) against host loops: every Operation,
// inner, outer, mixed and full reductions (with rows split across tiles), float and
// half (half accumulates in float), output types, scale and update, and the forms that
// return compute sets, on every test target.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <poplar/CycleCount.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

using namespace poplar;
using aspen::test::inputs;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using popops::Operation;

namespace {

double identity(Operation op) {
  switch (op) {
  case Operation::MUL:
    return 1;
  case Operation::MIN:
    return std::numeric_limits<double>::infinity();
  case Operation::MAX:
  case Operation::LOG_ADD:
    return -std::numeric_limits<double>::infinity();
  default:
    return 0;
  }
}

double combine(Operation op, double acc, double x) {
  switch (op) {
  case Operation::ADD:
    return acc + x;
  case Operation::SQUARE_ADD:
    return acc + x * x;
  case Operation::MUL:
    return acc * x;
  case Operation::MIN:
    return std::min(acc, x);
  case Operation::MAX:
    return std::max(acc, x);
  case Operation::LOG_ADD: {
    const double hi = std::max(acc, x), lo = std::min(acc, x);
    return lo == -std::numeric_limits<double>::infinity() ? hi : hi + std::log1p(std::exp(lo - hi));
  }
  default:
    return 0;
  }
}

// Reference: reduce a row-major tensor of `shape` over `dims`.
std::vector<float> hostReduce(const std::vector<float> &in, const std::vector<std::size_t> &shape,
                              const std::vector<std::size_t> &dims, Operation op) {
  std::vector<std::size_t> outShape;
  std::vector<bool> reduced(shape.size(), false);
  for (auto d : dims)
    reduced[d] = true;
  std::size_t outN = 1;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!reduced[d])
      outN *= shape[d];
  std::vector<double> acc(outN, identity(op));
  std::vector<std::size_t> idx(shape.size(), 0);
  for (std::size_t k = 0; k < in.size(); ++k) {
    std::size_t o = 0;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d])
        o = o * shape[d] + idx[d];
    acc[o] = combine(op, acc[o], in[k]);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d])
        break;
      idx[d] = 0;
    }
  }
  return std::vector<float>(acc.begin(), acc.end());
}

struct ReduceCase {
  std::vector<std::size_t> shape, dims;
  Operation op;
  float lo, hi;
  const char *what;
};

} // namespace

TEST_CASE("popops::reduce matches host reductions", "[popops][reduce]") {
  const std::vector<ReduceCase> cases{
      {{40, 300}, {1}, Operation::ADD, -1, 1, "ADD over rows (inner)"},
      {{300, 40}, {0}, Operation::ADD, -1, 1, "ADD over columns (outer)"},
      {{6, 20, 11}, {0, 2}, Operation::ADD, -1, 1, "ADD over interleaved dims"},
      {{50000}, {0}, Operation::ADD, -1, 1, "ADD of a long vector (rows split over tiles)"},
      {{3, 9000}, {1}, Operation::SQUARE_ADD, -1, 1, "SQUARE_ADD of long rows"},
      {{2000, 3}, {0}, Operation::MAX, -4, 4, "MAX over long columns"},
      {{17, 33}, {1}, Operation::MIN, -4, 4, "MIN"},
      {{16, 64}, {1}, Operation::MUL, 0.95f, 1.05f, "MUL"},
      {{12, 200}, {1}, Operation::LOG_ADD, -3, 3, "LOG_ADD"},
      {{5, 7}, {}, Operation::ADD, -1, 1, "no dimensions (a copy)"},
  };
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      program::Sequence prog;
      std::vector<std::vector<float>> inData(cases.size()), got(cases.size()), gotFloat(cases.size());
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto &c = cases[i];
        std::size_t n = 1;
        for (auto s : c.shape)
          n *= s;
        inData[i] = inputs(n, c.lo, c.hi, 100 + static_cast<unsigned>(i));
        Tensor in = mappedVariable(graph, type, c.shape, "in");
        Tensor out = popops::reduce(graph, in, c.dims, c.op, prog);
        // MIN and MAX keep the input type (PopLibs has no half -> float form for them).
        const bool keepsType = c.op == Operation::MIN || c.op == Operation::MAX;
        Tensor outF = popops::reduce(graph, in, keepsType ? type : FLOAT, c.dims, c.op, prog);
        dev.write(graph, in, inData[i]);
        dev.read(graph, out, got[i]);
        dev.read(graph, outF, gotFloat[i]);
      }
      dev.run(graph, prog);
      for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto want = hostReduce(inData[i], cases[i].shape, cases[i].dims, cases[i].op);
        std::vector<float> wantRounded = want;
        if (type == HALF)
          for (auto &w : wantRounded)
            w = aspen::test::roundToHalf(dev.getTarget(), w);
        requireClose(got[i], wantRounded, type == HALF ? 2e-3 : 2e-5, type == HALF ? 2e-3 : 1e-5,
                     cases[i].what);
        const bool keepsType = cases[i].op == Operation::MIN || cases[i].op == Operation::MAX;
        requireClose(gotFloat[i], keepsType ? wantRounded : want, 2e-5, 1e-4,
                     std::string(cases[i].what) + " (float output)");
      }
    });
  }
}

TEST_CASE("popops::reduce on bool and int, with scale and update, and into compute sets",
          "[popops][reduce]") {
  aspen::test::forEachTarget([&](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    program::Sequence prog;
    const std::size_t rows = 30, cols = 70;
    std::vector<unsigned char> flags(rows * cols);
    std::vector<int> ints(rows * cols);
    for (std::size_t k = 0; k < flags.size(); ++k) {
      flags[k] = (k % 13) != 0 || (k / cols) % 3 == 0;
      ints[k] = static_cast<int>(k % 23) - 11;
    }
    const auto x = inputs(rows * cols, -1.0f, 1.0f, 31), init = inputs(cols, -1.0f, 1.0f, 32);
    Tensor B = mappedVariable(graph, BOOL, {rows, cols}, "flags");
    Tensor I = mappedVariable(graph, INT, {rows, cols}, "ints");
    Tensor X = mappedVariable(graph, FLOAT, {rows, cols}, "x");
    Tensor acc = mappedVariable(graph, FLOAT, {cols}, "acc");
    Tensor scale = graph.addConstant(FLOAT, {}, 0.5f, "scale");
    graph.setTileMapping(scale, 0);
    Tensor all = popops::reduce(graph, B, {1}, Operation::LOGICAL_AND, prog);
    Tensor any = popops::reduce(graph, B, {0}, Operation::LOGICAL_OR, prog);
    Tensor isum = popops::reduce(graph, I, {0, 1}, Operation::ADD, prog);
    // acc = acc + 0.5 * sum over rows
    popops::reduceWithOutput(graph, X, acc, {0}, popops::ReduceParams(Operation::ADD, true, scale), prog);
    // Two reductions sharing compute sets.
    std::vector<ComputeSet> css;
    Tensor rowMax = popops::reduce(graph, X, {1}, Operation::MAX, css);
    Tensor colSq = popops::reduce(graph, X, {0}, Operation::SQUARE_ADD, css);
    for (const auto &cs : css)
      prog.add(program::Execute(cs));
    std::vector<unsigned char> gotAll, gotAny;
    std::vector<int> gotSum;
    std::vector<float> gotAcc, gotRowMax, gotColSq;
    dev.read(graph, all, gotAll);
    dev.read(graph, any, gotAny);
    dev.read(graph, isum, gotSum);
    dev.read(graph, acc, gotAcc);
    dev.read(graph, rowMax, gotRowMax);
    dev.read(graph, colSq, gotColSq);
    dev.write(graph, B, flags);
    dev.write(graph, I, ints);
    dev.write(graph, X, x);
    dev.write(graph, acc, init);
    dev.run(graph, prog);
    REQUIRE(gotSum.size() == 1);
    long long sum = 0;
    for (int v : ints)
      sum += v;
    REQUIRE(gotSum[0] == sum);
    for (std::size_t r = 0; r < rows; ++r) {
      bool a = true;
      for (std::size_t c = 0; c < cols; ++c)
        a = a && flags[r * cols + c];
      REQUIRE(static_cast<bool>(gotAll[r]) == a);
    }
    for (std::size_t c = 0; c < cols; ++c) {
      bool o = false;
      for (std::size_t r = 0; r < rows; ++r)
        o = o || flags[r * cols + c];
      REQUIRE(static_cast<bool>(gotAny[c]) == o);
    }
    const auto colSum = hostReduce(x, {rows, cols}, {0}, Operation::ADD);
    std::vector<float> wantAcc(cols);
    for (std::size_t c = 0; c < cols; ++c)
      wantAcc[c] = init[c] + 0.5f * colSum[c];
    requireClose(gotAcc, wantAcc, 1e-5, 1e-5, "scaled update");
    requireClose(gotRowMax, hostReduce(x, {rows, cols}, {1}, Operation::MAX), 0, 0, "MAX into compute sets");
    requireClose(gotColSq, hostReduce(x, {rows, cols}, {0}, Operation::SQUARE_ADD), 1e-5, 1e-5,
                 "SQUARE_ADD into compute sets");
  });
}

TEST_CASE("popops::reduce over the outer dimension of a large tensor spreads its second stage",
          "[popops][reduce]") {
  // {512, 1024} float over dim 0, mapped linearly: every column's partials used to be
  // reduced on the tile holding row 0 (2.1 MB of edge buffers there: out of memory).
  TestDevice dev(aspen::test::TestTarget::FullIpu);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  program::Sequence prog;
  const std::vector<std::size_t> shape{512, 1024};
  const std::vector<float> inData = inputs(512 * 1024, -1, 1, 7);
  Tensor in = mappedVariable(graph, FLOAT, shape, "in");
  Tensor out = popops::reduce(graph, in, {0}, Operation::ADD, prog);
  // The result is spread too: no tile holds more than a few columns.
  std::size_t mostOnOneTile = 0;
  for (const auto &intervals : graph.getTileMapping(out)) {
    std::size_t n = 0;
    for (const auto &i : intervals)
      n += i.size();
    mostOnOneTile = std::max(mostOnOneTile, n);
  }
  CHECK(mostOnOneTile <= 8);
  dev.write(graph, in, inData);
  std::vector<float> got;
  dev.read(graph, out, got);
  dev.run(graph, prog);
  requireClose(got, hostReduce(inData, shape, {0}, Operation::ADD), 2e-5, 1e-4, "outer ADD of {512,1024}");
}

TEST_CASE("popops::reduce of one row spread over every tile gathers from few tiles in each stage",
          "[popops][reduce]") {
  // 64 floats on each of the IPU's tiles, summed to one. Stage 1 leaves a partial on each tile;
  // one tile gathering all of them would pay the exchange's per-source cost (exchangeSourceCycles,
  // 56: docs/cost-model.md, "Exchange") 1,472 times, 82,432 cycles. The planner reduces them
  // through intermediate stages instead, each receiving tile gathering from a few tiles.
  TestDevice dev(aspen::test::TestTarget::FullIpu);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  const std::size_t tiles = dev.getTarget().getNumTiles(), n = tiles * 64;
  const std::vector<float> inData = inputs(n, -1, 1, 11);
  Tensor in = mappedVariable(graph, FLOAT, {n}, "in");
  std::vector<ComputeSet> css;
  Tensor out = popops::reduce(graph, in, {0}, Operation::ADD, css, "sum");
  CHECK(css.size() >= 3); // stage 1, at least one intermediate stage, the final one
  program::Sequence prog;
  for (const auto &cs : css)
    prog.add(program::Execute(cs));
  Tensor cycles = cycleCount(graph, prog, 0, SyncType::INTERNAL, "cycles");
  dev.write(graph, in, inData);
  std::vector<float> got;
  std::vector<unsigned> counted;
  dev.read(graph, out, got);
  dev.read(graph, cycles, counted);
  dev.run(graph, prog);
  requireClose(got, hostReduce(inData, {n}, {0}, Operation::ADD), 2e-5, 1e-4, "sum over every tile");
  REQUIRE(counted.size() == 2);
  const std::uint64_t total = counted[0] | (std::uint64_t(counted[1]) << 32);
  INFO("simulated cycles " << total);
  // Far below the single gathering tile's per-source cost alone.
  CHECK(total < tiles * 56 / 8);
}

TEST_CASE("popops::reduce over the outer dimension with rows on every tile reduces in several stages",
          "[popops][reduce]") {
  // [R, 4] floats, 16 rows on each tile, summed over the rows: each tile's stage-1 partial is a
  // row of 4, and the partials of 1,472 tiles go through intermediate stages (reduceSources with
  // width > 1 and more than one level), checked against the host loop.
  TestDevice dev(aspen::test::TestTarget::FullIpu);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  const std::size_t tiles = dev.getTarget().getNumTiles(), cols = 4, rows = tiles * 16;
  const std::vector<std::size_t> shape{rows, cols};
  const std::vector<float> inData = inputs(rows * cols, -1, 1, 13);
  Tensor in = mappedVariable(graph, FLOAT, shape, "in");
  std::vector<ComputeSet> css;
  Tensor out = popops::reduce(graph, in, {0}, Operation::ADD, css, "columns");
  CHECK(css.size() >= 3); // stage 1, at least one intermediate stage, the final one
  program::Sequence prog;
  for (const auto &cs : css)
    prog.add(program::Execute(cs));
  dev.write(graph, in, inData);
  std::vector<float> got;
  dev.read(graph, out, got);
  dev.run(graph, prog);
  std::vector<double> sums(cols, 0.0); // the host loop
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c)
      sums[c] += inData[r * cols + c];
  REQUIRE(got.size() == cols);
  for (std::size_t c = 0; c < cols; ++c) {
    INFO("column " << c);
    CHECK(std::abs(got[c] - sums[c]) <= 1e-4 + 2e-5 * std::abs(sums[c]));
  }
}
