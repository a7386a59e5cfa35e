// Copyright (c) Aspen contributors.
// Library vertices priced as PopLibs prices them (issue 23 item 2): the cycles Aspen's profile
// gives each popops vertex of an operation on a one-tile ipu2 model (6 workers, 64-bit data
// path) against an independent evaluation, written here, of the estimator PopLibs publishes for
// the same vertex and work, within 10%. Sources (graphcore/poplibs):
//   element-wise: lib/popops/popopsCycleEstimators.cpp, the UnaryOp1D, UnaryOp1DInPlace,
//     BinaryOp1D, BinaryOp1DInPlace and BroadcastScalar1D[InPlace] estimators, with the per-op
//     loop costs of lib/popops/popopsCycleEstimators.hpp (unaryOpPerfInfo and its siblings);
//   cast: lib/popops/PerformanceEstimation.cpp, getCast1DCycleEstimate;
//   fill: the same file, getFill1DCycleEstimate (one per worker: Aspen's Fill is a MultiVertex);
//   scaled add: the same file, getScaledArithmeticSupervisorCycleEstimate;
//   reduce: lib/popops/reduction/CycleEstimationFunctions.cpp,
//     getCycleEstimateReduceAllRegionsContinuous (rows) and getCyclesEstimateForStridedReduce
//     (columns), for one worker's share (Aspen's ReduceInner/ReduceOuter are MultiVertices);
//   dynamic slice: the same file, getDynamicSlice1DEstimate (one worker given the whole region:
//     Aspen's DynamicSlice1D is a worker vertex), and getMultiSliceCycleEstimate (one worker with
//     every offset in range: Aspen's MultiSlice/MultiUpdate are worker vertices).
// docs/cost-model.md ("Library vertices") has the formulas.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/Cast.hpp>
#include <popops/DynamicSlice.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Fill.hpp>
#include <popops/Reduce.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Sort.hpp>
#include <popops/TopK.hpp>
#include <popops/codelets.hpp>

#include "ExecutionProfile.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <unistd.h>

namespace {

namespace pe = popops::expr;
using u64 = std::uint64_t;

constexpr u64 W = 6; // ipu2's worker contexts

u64 cdiv(u64 a, u64 b) {
  return (a + b - 1) / b;
}

// Profile cycles of one vertex of each type, after building `build` on a one-tile ipu2 model.
std::map<std::string, double>
vertexCycles(const std::function<void(poplar::Graph &, poplar::program::Sequence &)> &build) {
  return fidelity::oneTileVertexCycles([](poplar::Graph &g) { popops::addCodelets(g); }, build);
}

poplar::Tensor var(poplar::Graph &graph, const poplar::Type &type, std::size_t n, const std::string &name) {
  poplar::Tensor t = graph.addVariable(type, {n}, name);
  graph.setTileMapping(t, 0);
  return t;
}

void check(const std::map<std::string, double> &got, const std::string &vertex, double popLibs) {
  fidelity::checkAgainstPopLibs(got, vertex, "", popLibs);
}

const std::string kUnary = "popops::UnaryOp1D<popops::expr::UnaryOpType::";
const std::string kUnaryInPlace = "popops::UnaryOp1DInPlace<popops::expr::UnaryOpType::";
const std::string kBinary = "popops::BinaryOp1D<popops::expr::BinaryOpType::";
const std::string kBinaryInPlace = "popops::BinaryOp1DInPlace<popops::expr::BinaryOpType::";
const std::string kScalar = "popops::BroadcastScalar1D<popops::expr::BinaryOpType::";
const std::string kScalarInPlace = "popops::BroadcastScalar1DInPlace<popops::expr::BinaryOpType::";

// --- PopLibs' estimators, transcribed for the cases below (m = elements per worker) ------------

// UnaryOp1D: workers run a start-up (33 for EXPONENT, else 17; 55 in place) and the op's loop;
// the supervisor adds 9 + 11.
u64 unary(u64 start, u64 loop) {
  return W * (start + loop) + 9 + 11;
}
// BinaryOp1D: start-up 29 (float) / 26 (others), 58 in place; the supervisor adds 11.
u64 binary(u64 start, u64 loop) {
  return W * (start + loop) + 11;
}
// BroadcastScalar1D[InPlace]: start-up 20.
u64 scalar(u64 loop) {
  return W * (20 + loop) + 11;
}

// getCast1DCycleEstimate's worker: 19 cycles of prologue, `perVector` a vector of `width`,
// and for a remainder one test per bit below the width plus 2 for each part left.
u64 castWorker(u64 m, u64 width, u64 perVector) {
  u64 c = 19 + perVector * (m / width);
  for (u64 bit = 1; bit < width; bit <<= 1)
    c += 1 + ((m % width) & bit ? 2 : 0);
  return c;
}
u64 cast(u64 n, u64 width, u64 perVector) {
  return 12 + W * (castWorker(cdiv(n, W), width, perVector) + 18);
}

// getFill1DCycleEstimate, once per worker.
u64 fillFloat(u64 n) {
  const u64 m = cdiv(n, W);
  return W * (16 + m / 2 + 6 + (m % 2 == 1) + 1);
}
u64 fillHalf(u64 n) {
  const u64 m = cdiv(n, W);
  return W * (m == 1 ? 15 : m == 2 ? 21 : 26 + m / 4);
}

// getScaledArithmeticSupervisorCycleEstimate for float or half data of one type, ADD or
// AXPLUSBY (not memory-constrained, no ScaledPtr64 operands): the supervisor's fixed cycles and
// the slowest worker, the one that also does the remainder.
u64 scaledAdd(u64 n, u64 width, bool isFloat, bool axPlusBy) {
  const u64 vectors = n / width, rest = n % width, perWorker = vectors / W;
  u64 supervisor = 21 + 11 + (rest == 0 ? 7 : 13) + 12 + 6 + (axPlusBy ? 12 : 0);
  u64 worker;
  if (isFloat && axPlusBy)
    worker = 16 + (perWorker ? 6 + 3 * (perWorker - 1) : 0) + 1 + (rest ? 5 : 0) + 1;
  else
    worker = 15 + (perWorker ? 6 + 3 * (perWorker - 1) : 0) + 2 + 1 +
             (rest == 0 ? 0
              : isFloat ? 8
                        : 5 + (rest >= 2 ? 7 : 0) + (rest == 3 ? 6 : 0)) +
             1;
  return supervisor + W * worker;
}

// PopLibs' aXPlusbY of half data with float scales (popopsCycleEstimators.cpp,
// aXPlusbYMixedSupervisorCycleEstimate and aXPlusbYMixedCoreCycleEstimate; not memory-
// constrained, no ScaledPtr64): workers take pairs, one takes the odd elements.
u64 mixedCore(u64 count) {
  u64 c = 4;
  const u64 over = count >= 4 ? count - 4 : 0;
  if (over)
    c += 11 + (over / 2 - 1) * 5 + 4 + (over & 1 ? 9 : 0);
  else
    c += 1 + (count == 1 ? 4 + 10 : count == 2 ? 12 + 1 : count == 3 ? 12 + 10 : 0);
  return c + 1;
}
u64 mixedAXPlusBY(u64 n) {
  const u64 count = (n / W / 2) * 2, final = n % W, rem = (n / W) % W + cdiv(final, 2);
  const u64 supervisor = 1 + 6 + 10 + 15 * 6 + 9 + 5 + 28 + (final == 0 ? 5 : 0);
  u64 worst = 0;
  for (u64 w = 0; w < W; ++w)
    worst = std::max(worst, 19 + mixedCore(count + (w <= rem ? 2 : 0) + (w == rem ? final : 0)) + (w == rem));
  return supervisor + worst * W;
}

} // namespace

TEST_CASE("popops element-wise vertices are priced as PopLibs' estimators price them", "[fidelity][popops]") {
  for (u64 n : {6u, 100u, 1001u, 4096u}) {
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto f = var(g, poplar::FLOAT, n, "f"), f2 = var(g, poplar::FLOAT, n, "f2");
      const auto h = var(g, poplar::HALF, n, "h"), h2 = var(g, poplar::HALF, n, "h2");
      const auto i = var(g, poplar::INT, n, "i"), i2 = var(g, poplar::INT, n, "i2");
      const auto fs = var(g, poplar::FLOAT, 1, "fs"), hs = var(g, poplar::HALF, 1, "hs");
      const auto fi = var(g, poplar::FLOAT, n, "fi"), hi = var(g, poplar::HALF, n, "hi");
      const auto fm = var(g, poplar::FLOAT, n, "fm"), hb = var(g, poplar::HALF, n, "hb");
      popops::map(g, pe::Exp(pe::_1), {f}, prog);
      popops::map(g, pe::Exp(pe::_1), {h}, prog);
      popops::map(g, pe::Abs(pe::_1), {f}, prog);
      popops::map(g, pe::Tanh(pe::_1), {h}, prog);
      popops::mapInPlace(g, pe::Sqrt(pe::_1), {fi}, prog);
      popops::mapInPlace(g, pe::Sqrt(pe::_1), {hi}, prog);
      popops::map(g, pe::Add(pe::_1, pe::_2), {f, f2}, prog);
      popops::map(g, pe::Add(pe::_1, pe::_2), {h, h2}, prog);
      popops::map(g, pe::Add(pe::_1, pe::_2), {i, i2}, prog);
      popops::map(g, pe::Divide(pe::_1, pe::_2), {f, f2}, prog);
      popops::map(g, pe::Divide(pe::_1, pe::_2), {h, h2}, prog);
      popops::map(g, pe::Max(pe::_1, pe::_2), {h, h2}, prog);
      popops::map(g, pe::Lt(pe::_1, pe::_2), {f, f2}, prog);
      popops::mapInPlace(g, pe::Mul(pe::_1, pe::_2), {fm, f2}, prog);
      if (n > 1) {
        popops::map(g, pe::Mul(pe::_1, pe::_2), {f, fs}, prog);
        popops::map(g, pe::Divide(pe::_1, pe::_2), {h, hs}, prog);
        popops::mapInPlace(g, pe::Add(pe::_1, pe::_2), {hb, hs}, prog);
      }
    });
    const u64 m = cdiv(n, W);
    INFO("n = " << n);
    // Loops: (cycles per trip + bookkeeping) x trips; unrolled loops have no bookkeeping.
    check(got, kUnary + "EXPONENT,float>", unary(33, cdiv(m, 2) * 6));
    check(got, kUnary + "EXPONENT,half>", unary(33, cdiv(m, 4) * 4));
    check(got, kUnary + "ABSOLUTE,float>", unary(17, m * (1 + 4)));
    check(got, kUnary + "TANH,half>", unary(17, cdiv(m, 4) * 4));
    check(got, kUnaryInPlace + "SQRT,float>", unary(55, cdiv(m, 2) * 10));
    check(got, kUnaryInPlace + "SQRT,half>", unary(55, cdiv(m, 4) * 23));
    check(got, kBinary + "ADD,float>", binary(29, cdiv(m, 2) * (1 + 2)));
    check(got, kBinary + "ADD,half>", binary(26, cdiv(m, 4) * (1 + 2)));
    check(got, kBinary + "ADD,int>", binary(26, m * 7));
    check(got, kBinary + "DIVIDE,float>", binary(29, cdiv(m, 2) * 10));
    check(got, kBinary + "DIVIDE,half>", binary(26, cdiv(m, 4) * 21));
    check(got, kBinary + "MAXIMUM,half>", binary(26, cdiv(m, 4) * 4));
    check(got, kBinary + "LESS_THAN,float>", binary(29, cdiv(m, 4) * 14));
    check(got, kBinaryInPlace + "MULTIPLY,float>", binary(58, cdiv(m, 2) * (1 + 2)));
    if (n > 1) {
      check(got, kScalar + "MULTIPLY,float>", scalar(cdiv(m, 2) * (1 + 1)));
      check(got, kScalar + "DIVIDE,half>", scalar(cdiv(m, 2) * 8));
      check(got, kScalarInPlace + "ADD,half>", scalar(cdiv(m, 4) * (1 + 1)));
    }
  }
}

TEST_CASE("popops cast, fill and scaled-add vertices are priced as PopLibs' estimators price them",
          "[fidelity][popops]") {
  for (u64 n : {6u, 101u, 1000u, 4098u}) {
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto f = var(g, poplar::FLOAT, n, "f"), f2 = var(g, poplar::FLOAT, n, "f2");
      const auto h = var(g, poplar::HALF, n, "h"), h2 = var(g, poplar::HALF, n, "h2");
      const auto i = var(g, poplar::INT, n, "i");
      popops::cast(g, f, poplar::HALF, prog);
      popops::cast(g, h, poplar::FLOAT, prog);
      popops::cast(g, i, poplar::FLOAT, prog);
      popops::fill(g, f2, prog, 1.5f);
      popops::fill(g, h2, prog, 2.0f);
      popops::scaledAddTo(g, f, f2, 0.5f, prog);
    });
    INFO("n = " << n);
    // float -> half: 4 a vector (two 64-bit loads, one store), 2 cycles; half -> float: 2 a
    // vector, 1 cycle; int -> float: one element a cycle plus one (not the float pipeline).
    check(got, "popops::Cast1D<float,half>", cast(n, 4, 2));
    check(got, "popops::Cast1D<half,float>", cast(n, 2, 1));
    check(got, "popops::Cast1D<int,float>", cast(n, 1, 2));
    check(got, "popops::Fill<float>", fillFloat(n));
    check(got, "popops::Fill<half>", fillHalf(n));
    check(got, "popops::ScaledAdd<float,float,float>", scaledAdd(n, 2, true, false));
  }
  // A second graph: aXPlusbY shares ScaledAdd<float,float,float> with the plain scaled add, and
  // a half scale tensor brings a cast of the constant scaleA (one more Cast1D<float,half>).
  for (u64 n : {48u, 600u, 4092u}) {
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto f = var(g, poplar::FLOAT, n, "f"), f2 = var(g, poplar::FLOAT, n, "f2");
      const auto h = var(g, poplar::HALF, n, "h"), h2 = var(g, poplar::HALF, n, "h2");
      popops::scaledAddTo(g, f, 0.25f, f2, 0.75f, prog);
      popops::scaledAddTo(g, h, h2, var(g, poplar::HALF, 1, "hScale"), prog);
      const auto h3 = var(g, poplar::HALF, n, "h3"), h4 = var(g, poplar::HALF, n, "h4");
      popops::scaledAddTo(g, h3, 0.25f, h4, 0.75f, prog);
    });
    INFO("n = " << n);
    check(got, "popops::ScaledAdd<float,float,float>", scaledAdd(n, 2, true, true));
    check(got, "popops::ScaledAdd<half,half,half>", scaledAdd(n, 4, false, false));
    check(got, "popops::ScaledAdd<half,half,float>", mixedAXPlusBY(n));
  }
}

TEST_CASE("popops dynamic-slice vertices are priced as PopLibs' estimators price them",
          "[fidelity][popops]") {
  for (u64 cols : {3u, 64u, 1001u}) {
    const u64 rows = 8, numSub = 2, numOffsets = 5;
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      poplar::Tensor tf = g.addVariable(poplar::FLOAT, {rows, cols}, "tf");
      poplar::Tensor th = g.addVariable(poplar::HALF, {rows, cols}, "th");
      poplar::Tensor ti = g.addVariable(poplar::INT, {rows, cols}, "ti");
      poplar::Tensor off = g.addVariable(poplar::UNSIGNED_INT, {1}, "off");
      poplar::Tensor offs = g.addVariable(poplar::UNSIGNED_INT, {numOffsets, 1}, "offs");
      for (const auto &t : {tf, th, ti, off, offs})
        g.setTileMapping(t, 0);
      popops::dynamicSlice(g, tf, off, {0}, {numSub}, prog);
      const poplar::Tensor sh = popops::dynamicSlice(g, th, off, {0}, {numSub}, prog);
      popops::dynamicUpdate(g, th, sh, off, {0}, {numSub}, prog);
      popops::multiSlice(g, tf, offs, {0}, {1}, prog, popops::SlicePlan(), {});
      const poplar::Tensor si = popops::multiSlice(g, ti, offs, {0}, {1}, prog, popops::SlicePlan(), {});
      popops::multiUpdate(g, ti, si, offs, {0}, {1}, prog, popops::SlicePlan(), {});
    });
    INFO("columns = " << cols);
    // getDynamicSlice1DEstimate's worker given the whole region: 39 + (24 + 2 per 64 bits) a row.
    check(got, "popops::DynamicSlice1D<float>", 39 + (24 + 2 * (cols / 2)) * numSub);
    check(got, "popops::DynamicSlice1D<half>", 39 + (24 + 2 * (cols / 4)) * numSub);
    check(got, "popops::DynamicUpdateSlice1D<half>", 39 + (24 + 2 * (cols / 4)) * numSub);
    // getMultiSliceCycleEstimate for one worker: 30 (29 to update) + 19 an offset + 2 a
    // 2-element copy of 32-bit data.
    check(got, "popops::MultiSlice<float>", 30 + numOffsets * (19 + cdiv(cols, 2) * 2));
    check(got, "popops::MultiSlice<int>", 30 + numOffsets * (19 + cdiv(cols, 2) * 2));
    check(got, "popops::MultiUpdate<int>", 29 + numOffsets * (19 + cdiv(cols, 2) * 2));
  }
}

// PopLibs' continuous reduction for one worker reducing `outputs` rows of `len` partials that
// load `perLoad` at a time, times the workers (Aspen's ReduceInner is a MultiVertex). PopLibs'
// vertex passes its numOutputsM1 field as the count; Aspen counts every output.
u64 continuousReduce(u64 rows, u64 len, u64 perLoad) {
  const u64 outputs = cdiv(rows, W);
  return W * (outputs * (len / perLoad) + (len & 1 ? 2 : 0) + 12 * outputs + 10 + 7);
}
// PopLibs' strided reduction of `cols` columns of `rows` partials, one worker's share of the
// columns, `perLoop` columns a trip, `store` cycles to finish a trip.
u64 stridedReduce(u64 cols, u64 rows, u64 perLoop, u64 store) {
  const u64 outer = 3 + store + (3 + (rows - 1));
  return W * (3 + 2 + 6 + 5 + outer * cdiv(cdiv(cols, W), perLoop));
}

TEST_CASE("popops reduce vertices are priced as PopLibs' estimators price them", "[fidelity][popops]") {
  for (const auto &shape : {std::pair<u64, u64>{6, 8}, {12, 100}, {60, 1000}, {7, 4096}}) {
    // Named copies, not structured bindings: clang 14 cannot capture those in a lambda.
    const u64 rows = shape.first, cols = shape.second;
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto f = g.addVariable(poplar::FLOAT, {rows, cols}, "f");
      const auto h = g.addVariable(poplar::HALF, {rows, cols}, "h");
      g.setTileMapping(f, 0);
      g.setTileMapping(h, 0);
      popops::reduce(g, f, {1}, popops::ReduceParams(popops::Operation::ADD), prog);
      popops::reduce(g, h, poplar::FLOAT, {1}, popops::ReduceParams(popops::Operation::ADD), prog);
      popops::reduce(g, f, {0}, popops::ReduceParams(popops::Operation::MAX), prog);
      popops::reduce(g, h, poplar::FLOAT, {0}, popops::ReduceParams(popops::Operation::ADD), prog);
    });
    INFO("rows = " << rows << ", columns = " << cols);
    // Rows: the accumulators take 4 floats or 8 halves, a 64-bit load 2 floats or 4 halves.
    check(got, "popops::ReduceInner<popops::Operation::ADD,float,float>", continuousReduce(rows, cols, 2));
    check(got, "popops::ReduceInner<popops::Operation::ADD,half,float>", continuousReduce(rows, cols, 4));
    // Columns: float partials finish a trip in 2 (MAX) + 2 cycles; half partials to float ADD in
    // 1 + 6.
    check(got, "popops::ReduceOuter<popops::Operation::MAX,float,float>", stridedReduce(cols, rows, 2, 4));
    check(got, "popops::ReduceOuter<popops::Operation::ADD,half,float>", stridedReduce(cols, rows, 4, 7));
  }
}

// --- Select, Clamp (lib/popops/popopsCycleEstimators.cpp: the Select and Clamp worker
// estimators; Aspen's are MultiVertices, priced as W such workers each given a sixth) ---------

// basicOpLoopCycles: c (n + k - 1) / k, integer division last.
u64 basicLoop(u64 n, u64 k, u64 c) {
  return c * (n + k - 1) / k;
}
u64 selectWorkers(u64 n) {
  return W * (5 + 6 + basicLoop(cdiv(n, W), 1, 5));
}
u64 clampWorkers(u64 n, u64 k, u64 c) {
  return W * (5 + 6 + basicLoop(cdiv(n, W), k, c));
}

TEST_CASE("popops Select and Clamp vertices are priced as PopLibs' estimators price them",
          "[fidelity][popops]") {
  for (u64 n : {6u, 101u, 1000u, 4099u}) {
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto cond = var(g, poplar::BOOL, n, "cond");
      for (const poplar::Type &t : {poplar::FLOAT, poplar::HALF, poplar::INT}) {
        const auto a = var(g, t, n, "a"), b = var(g, t, n, "b"), c = var(g, t, n, "c");
        popops::map(g, pe::Select(pe::_1, pe::_2, pe::_3), {a, b, cond}, prog);
        popops::map(g, pe::Clamp(pe::_1, pe::_2, pe::_3), {a, b, c}, prog);
        const auto d = var(g, t, n, "d");
        popops::mapInPlace(g, pe::Clamp(pe::_1, pe::_2, pe::_3), {d, b, c}, prog);
      }
    });
    INFO("n = " << n);
    for (const char *t : {"float", "half", "int"})
      check(got, std::string("popops::Select<") + t + ">", selectWorkers(n));
    // Clamp: float and half 2 cycles a 64-bit vector, int 7 an element.
    check(got, "popops::Clamp<float>", clampWorkers(n, 2, 2));
    check(got, "popops::Clamp<half>", clampWorkers(n, 4, 2));
    check(got, "popops::Clamp<int>", clampWorkers(n, 1, 7));
    check(got, "popops::ClampInPlace<half>", clampWorkers(n, 4, 2));
  }
}

// --- MultiUpdateAdd / MultiUpdateMax (lib/popops/PerformanceEstimation.cpp,
// getMultiUpdateOpCycleEstimate, for one worker with every offset in range: Aspen's vertices are
// worker vertices) ------------------------------------------------------------------------------

// `bytes` the element size, `scaled` for MultiUpdateAdd, `wideScale` a float scale of half data.
u64 multiUpdateOp(u64 bytes, bool scaled, bool wideScale, u64 region, u64 offsets) {
  const bool four = bytes == 4;
  const u64 perAtom = 4 / bytes; // ipu2 writes 4-byte atoms
  const bool special64 = scaled && ((four && (region == 2 || region == 4)) || (bytes == 2 && region == 4));
  u64 c = 3 + (four ? 29 : 30) - (special64 ? 1 : 0);
  if (scaled)
    c += 2 + 2 + (four ? 2 : 0);
  u64 perOffset = (four ? 11 : 12) + (!four && scaled ? 1 : 0);
  if (region % perAtom)
    perOffset += 20 * region; // sub-word writes: the C++ path
  else if (special64)
    perOffset = four ? (region == 2 ? 8 : 16) : (wideScale ? 12 : 9);
  else
    perOffset += (region / perAtom - 1) * (3 + (wideScale ? 1 : 0));
  return c + perOffset * offsets;
}

TEST_CASE("popops MultiUpdateAdd and MultiUpdateMax are priced as PopLibs' estimator prices them",
          "[fidelity][popops]") {
  for (u64 cols : {2u, 3u, 4u, 64u, 1001u}) {
    const u64 rows = 8, numOffsets = 5;
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      poplar::Tensor offs = g.addVariable(poplar::UNSIGNED_INT, {numOffsets, 1}, "offs");
      g.setTileMapping(offs, 0);
      for (const poplar::Type &t : {poplar::FLOAT, poplar::HALF, poplar::INT}) {
        poplar::Tensor base = g.addVariable(t, {rows, cols}, "base");
        poplar::Tensor s = g.addVariable(t, {numOffsets, cols}, "s");
        poplar::Tensor scale = g.addVariable(t == poplar::INT ? poplar::INT : poplar::FLOAT, {}, "scale");
        for (const auto &x : {base, s, scale})
          g.setTileMapping(x, 0);
        if (t != poplar::INT)
          popops::multiUpdateAdd(g, base, s.expand({1}), offs, scale, {0}, {1}, prog, popops::SlicePlan(),
                                 {});
        popops::multiUpdateMax(g, base, s.expand({1}), offs, {0}, {1}, prog, popops::SlicePlan(), {});
      }
    });
    INFO("columns = " << cols);
    check(got, "popops::MultiUpdateAdd<float,float>", multiUpdateOp(4, true, false, cols, numOffsets));
    check(got, "popops::MultiUpdateAdd<half,float>", multiUpdateOp(2, true, true, cols, numOffsets));
    check(got, "popops::MultiUpdateMax<float>", multiUpdateOp(4, false, false, cols, numOffsets));
    check(got, "popops::MultiUpdateMax<half>", multiUpdateOp(2, false, false, cols, numOffsets));
    check(got, "popops::MultiUpdateMax<int>", multiUpdateOp(4, false, false, cols, numOffsets));
  }
}

// --- fused map expressions (lib/popops/ExpressionGenerator.cpp: a generated MultiVertex is
// priced 20 + one cycle a fused operator for each 64-bit vector and each element left over of
// each operand, rounded up to a multiple of the workers) ------------------------------------------

u64 fusedMultiVertex(u64 n, u64 width, u64 ops, u64 operands) {
  return cdiv(20 + operands * ops * (n / width + n % width), W) * W;
}

TEST_CASE("popops fused map expressions are priced as PopLibs prices generated codelets",
          "[fidelity][popops]") {
  for (u64 n : {5u, 100u, 1001u, 4096u}) {
    std::vector<std::string> names;
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto f = var(g, poplar::FLOAT, n, "f"), f2 = var(g, poplar::FLOAT, n, "f2");
      const auto f3 = var(g, poplar::FLOAT, n, "f3");
      const auto h = var(g, poplar::HALF, n, "h"), h2 = var(g, poplar::HALF, n, "h2");
      // Two operators over three float operands.
      popops::map(g, pe::Add(pe::Mul(pe::_1, pe::_2), pe::_3), {f, f2, f3}, prog);
      // Four operators over one half operand, in place (constants are not operands).
      popops::mapInPlace(g, pe::Sqrt(pe::Add(pe::Mul(pe::Exp(pe::_1), pe::Const(2.0f)), pe::Const(1.0f))),
                         {h}, prog);
      // Three operators, two half operands and a cast (not an operator).
      popops::map(g, pe::Cast(pe::Max(pe::Abs(pe::_1), pe::Neg(pe::_2)), poplar::FLOAT), {h, h2}, prog);
    });
    INFO("n = " << n);
    std::vector<double> fused;
    for (const auto &[name, cycles] : got)
      if (name.rfind("popops::map::", 0) == 0)
        fused.push_back(cycles);
    REQUIRE(fused.size() == 3);
    std::vector<double> expected{double(fusedMultiVertex(n, 2, 2, 3)), double(fusedMultiVertex(n, 4, 4, 1)),
                                 double(fusedMultiVertex(n, 4, 3, 2))};
    std::sort(fused.begin(), fused.end());
    std::sort(expected.begin(), expected.end());
    for (std::size_t k = 0; k < 3; ++k) {
      std::printf("%-64s PopLibs %8.0f  Aspen %8.0f  ratio %.3f\n", "popops::map::<generated>", expected[k],
                  fused[k], fused[k] / expected[k]);
      CHECK(fused[k] / expected[k] > 0.9);
      CHECK(fused[k] / expected[k] < 1.1);
    }
  }
}

// --- sort and top-k (worker vertices, one row at a time): PopLibs' HeapSortVertex[KV]
// (lib/popops/popopsCycleEstimators.cpp) and popnn's ReduceMaxNClassSparse
// (lib/popnn/popnnCycleEstimators.cpp), per row -------------------------------------------------

u64 heapSort(u64 n) {
  return 8 * (19 * n * u64(std::floor(std::log2(double(n)))) + 6 * n + 2);
}
// The estimator's arithmetic: an integer count to which double terms are added one by one.
u64 maxNClassSparse(u64 n, int numK, bool sorted) {
  std::uint64_t cycles = 10 + 2;
  cycles += 23;
  for (int i = 1; i < numK; ++i)
    cycles += 13 + std::log(i) * 20;
  cycles += (n - numK) * (13 + std::log(numK) * 20);
  cycles += 8 * numK;
  if (sorted)
    for (int i = numK; i >= 1; --i) {
      cycles += 10;
      cycles += 20 * std::log(i);
    }
  return cycles;
}

TEST_CASE("popops sort and top-k vertices are priced as PopLibs' one-worker estimators price them",
          "[fidelity][popops]") {
  for (const auto &shape : {std::pair<u64, u64>{4, 16}, {3, 100}, {1, 1000}}) {
    const u64 rows = shape.first, len = shape.second;
    const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
      const auto f = g.addVariable(poplar::FLOAT, {rows, len}, "f");
      const auto h = g.addVariable(poplar::HALF, {rows, len}, "h");
      const auto i = g.addVariable(poplar::INT, {rows, len}, "i");
      for (const auto &t : {f, h, i})
        g.setTileMapping(t, 0);
      popops::sortInPlace(g, f, 1, prog);
      popops::sortKeyValueInPlace(g, h, i, 1, prog);
      popops::topK(g, prog, i, popops::TopKParams(5, true, popops::SortOrder::DESCENDING));
      popops::topK(g, prog, f, popops::TopKParams(3, false, popops::SortOrder::NONE));
    });
    INFO("rows = " << rows << ", length = " << len);
    check(got, "popops::SortRows<float>", rows * heapSort(len));
    check(got, "popops::SortRowsKeyValue<half,int>", rows * 2 * heapSort(len));
    check(got, "popops::TopK<int>", rows * maxNClassSparse(len, 5, true));
    check(got, "popops::TopK<float>", rows * maxNClassSparse(len, 3, false));
  }
}
