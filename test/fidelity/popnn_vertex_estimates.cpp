// Copyright (c) Aspen contributors.
// Library vertices priced as PopLibs prices them (issue 23 item 2), popnn's part: the cycles
// Aspen's profile gives each popnn vertex on a one-tile ipu2 model (6 workers, 64-bit data path)
// against an independent evaluation, written here, of what PopLibs' published estimators give
// the same work, within 10%. Sources (graphcore/poplibs):
//   non-linearities: lib/popnn/popnnCycleEstimators.cpp (NonLinearity1DInPlace and
//     NonLinearityGrad1D estimators) with the per-operation cycles of
//     lib/popnn/PerformanceEstimation.hpp; the forward SIGMOID/RELU/TANH/GELU_ERF, which PopLibs
//     runs on popops' UnaryOp1DInPlace, from lib/popops/popopsCycleEstimators.{hpp,cpp};
//     HARD_SIGMOID (a popops map expression in PopLibs) from lib/popops/ExpressionGenerator.cpp
//     (the generated codelet's estimate);
//   softmax, log-softmax and the softmax gradient: the popops steps PopLibs' NonLinearity.cpp
//     and LogSoftmax.cpp build, each priced by popops' estimators (reductions:
//     lib/popops/reduction/CycleEstimationFunctions.cpp), summed;
//   loss: lib/popnn/PerformanceEstimation.hpp getLossTransformCycles plus one worker of the
//     continuous reduction of the rows; arg-max: ReduceMaxClassSparse; accuracy: CalcAccuracy;
//   pooling: lib/popnn/PoolVertices.cpp poolVertexCycleEstimate over getPoolingCycles.
// The shapes are those of PopLibs' tests (tests/popnn: NonLinearity1D's 1..80 elements,
// LossTransform's 20, pooling_layer's 16 channels over {9,14} with 2x2 windows at stride 2 and
// 1 channel over {50,50} with 3x3 windows at stride 2 padded by 1), and larger ones.
// docs/cost-model.md ("Library vertices") has the formulas and where Aspen's vertices differ.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <popnn/LogSoftmax.hpp>
#include <popnn/Loss.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/Pooling.hpp>
#include <popnn/codelets.hpp>
#include <popops/codelets.hpp>

#include "ExecutionProfile.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using u64 = std::uint64_t;
using popnn::NonLinearityType;

constexpr u64 W = 6; // ipu2's worker contexts

u64 cdiv(u64 a, u64 b) {
  return (a + b - 1) / b;
}

// Profile cycles of one vertex of each type, after building `build` on a one-tile ipu2 model.
std::map<std::string, double>
vertexCycles(const std::function<void(poplar::Graph &, poplar::program::Sequence &)> &build) {
  return fidelity::oneTileVertexCycles(
      [](poplar::Graph &g) {
        popops::addCodelets(g);
        popnn::addCodelets(g);
      },
      build);
}

poplar::Tensor var(poplar::Graph &graph, const poplar::Type &type, std::vector<std::size_t> shape,
                   const std::string &name) {
  poplar::Tensor t = graph.addVariable(type, shape, name);
  graph.setTileMapping(t, 0);
  return t;
}

void check(const std::map<std::string, double> &got, const std::string &vertex, const std::string &what,
           double popLibs) {
  fidelity::checkAgainstPopLibs(got, vertex, what, popLibs);
}

// --- PopLibs' estimators, transcribed -----------------------------------------------------------

// popops' UnaryOp1DInPlace: 55 cycles of worker start-up and the operation's loop over the
// worker's ceil(n / W) elements, `perTrip` cycles every `elems` elements; supervisor 9 + 11.
u64 popopsUnaryInPlace(u64 n, u64 perTrip, u64 elems) {
  return W * (55 + cdiv(cdiv(n, W), elems) * perTrip) + 20;
}
// The in-place loops of PopLibs' table (cycles, elements a trip) for the forward ops it runs
// on popops.
std::pair<u64, u64> inPlaceLoop(NonLinearityType nl, bool half) {
  switch (nl) {
  case NonLinearityType::SIGMOID:
    return half ? std::pair<u64, u64>{4, 4} : std::pair<u64, u64>{10, 2};
  case NonLinearityType::TANH:
    return half ? std::pair<u64, u64>{2, 4} : std::pair<u64, u64>{10, 2};
  case NonLinearityType::RELU:
    return {2, half ? 4 : 2};
  default: // GELU_ERF
    return {half ? 16u : 22u, 1};
  }
}

// A generated (fused) codelet's estimate: 20 + fusedOps * (n / v + n % v) per operand, rounded
// up to a multiple of the worker count.
u64 fusedEstimate(u64 n, u64 v, u64 ops, u64 operands) {
  const u64 e = 20 + operands * ops * (n / v + n % v);
  return cdiv(e, W) * W;
}

// PopLibs' NonLinearity1D estimate (in place), per its comments.
u64 nl1DInPlace(NonLinearityType nl, bool half, u64 n) {
  const bool fl = !half;
  const u64 v = half ? 4 : 2;
  u64 op = 0, vop = 0;
  if (nl == NonLinearityType::GELU) {
    op = vop = fl ? 10 : 5;
  } else { // SWISH
    op = fl ? 6 : 3;
    vop = fl ? 11 : 5;
  }
  const u64 vectors = n / v, rem = n % v, perWorker = (vectors + W - 1) / W;
  const u64 swishInPlace = nl == NonLinearityType::SWISH ? 1 : 0;
  u64 w = 3 + swishInPlace + 5 + 2 + 2 + 5 + 3;
  w += perWorker ? (2 + op + (perWorker - 1) * vop + 1 + op) : 0;
  if (fl)
    w += 3 + ((rem & 1) ? 2 + op : 0);
  else
    w += 2 + 1 + ((rem & 2) ? 2 + op : 0) + 1 + ((rem & 1) ? 3 + op : 0);
  return 9 + w * W;
}

// PopLibs' NonLinearityGrad1D estimate.
u64 nlGrad1D(NonLinearityType nl, bool half, u64 n) {
  const bool fl = !half;
  const u64 v = half ? 4 : 2;
  u64 op = 3, vop = 3;
  if (nl == NonLinearityType::GELU)
    op = vop = fl ? 10 : 5;
  else if (nl == NonLinearityType::GELU_ERF)
    op = vop = fl ? 30 : 15;
  else if (nl == NonLinearityType::SWISH) {
    op = fl ? 10 : 7;
    vop = fl ? 15 : 9;
  }
  const u64 vectors = n / v, rem = n % v, perWorker = (vectors + W - 1) / W;
  u64 w = 3 + 5 + 2 + 3 + 3 + 3 + 1;
  if (perWorker)
    w += 4 + (perWorker - 1) * vop + 1;
  if (fl)
    w += 2 + 2 + (rem ? op + 1 : 0);
  else
    w += 2 + 2 + ((rem & 2) ? op + 2 : 0) + 2 + ((rem & 1) ? op + 4 : 0);
  return 9 + w * W;
}

u64 nonLinearityFwd(NonLinearityType nl, bool half, u64 n) {
  switch (nl) {
  case NonLinearityType::GELU:
  case NonLinearityType::SWISH:
    return nl1DInPlace(nl, half, n);
  case NonLinearityType::HARD_SIGMOID:
    return fusedEstimate(n, half ? 4 : 2, 3, 1); // mul, add, clamp
  default: {
    const auto [c, k] = inPlaceLoop(nl, half);
    return popopsUnaryInPlace(n, c, k);
  }
  }
}

u64 nonLinearityBwd(NonLinearityType nl, bool half, u64 n) {
  if (nl == NonLinearityType::HARD_SIGMOID)
    return fusedEstimate(n, half ? 4 : 2, 4, 2); // abs, <=, two multiplies; two operands
  return nlGrad1D(nl, half, n);
}

// --- the popops steps of softmax ----------------------------------------------------------------

// getCycleEstimateReduceAllRegionsContinuous for one worker's `o` rows of `r` partials, `p` a
// load; Aspen's ReduceInner-equivalent is W such workers.
u64 continuousWorker(u64 o, u64 r, u64 p) {
  return o * (r / p) + (r % 2 ? 2 : 0) + 12 * o + 17;
}
u64 reduceRows(u64 rows, u64 r, bool halfPartials) {
  return W * continuousWorker(cdiv(rows, W), r, halfPartials ? 4 : 2);
}
// BinaryOp1D[InPlace] of ADD/SUBTRACT/MULTIPLY (hand-written: 1 cycle a vector + 2).
u64 fastBinary(u64 n, bool half, bool inPlace) {
  const u64 start = inPlace ? 58 : (half ? 26 : 29);
  return W * (start + cdiv(cdiv(n, W), half ? 4 : 2) * 3) + 11;
}
// UnaryOp1D[InPlace] EXPONENT (float 6 per 2, half 4 per 4) and float INVERSE (6 per 2).
u64 expOp(u64 n, bool half, bool inPlace) {
  const u64 start = inPlace ? 55 : 33;
  return W * (start + cdiv(cdiv(n, W), half ? 4 : 2) * (half ? 4 : 6)) + 20;
}
u64 inverseFloatInPlace(u64 n) {
  return W * (55 + cdiv(cdiv(n, W), 2) * 6) + 20;
}
// Cast1D float -> half: 4 a vector at 2 cycles, 19 + 18 per worker, 12 supervisor; the remainder
// one test per bit below 4 and 2 cycles each part left.
u64 castFloatToHalf(u64 n) {
  const u64 m = cdiv(n, W);
  u64 w = 19 + 2 * (m / 4) + 2 + ((m % 4) & 1 ? 2 : 0) + ((m % 4) & 2 ? 2 : 0);
  return 12 + W * (w + 18);
}

u64 softmax(bool half, u64 rows, u64 len) {
  const u64 n = rows * len;
  return reduceRows(rows, len, half) + fastBinary(n, half, true) + expOp(n, half, true) +
         reduceRows(rows, len, half) + inverseFloatInPlace(rows) + (half ? castFloatToHalf(rows) : 0) +
         fastBinary(n, half, true);
}
u64 logSoftmax(bool half, u64 rows, u64 len) {
  const u64 n = rows * len;
  return reduceRows(rows, len, half) + fastBinary(n, half, true) + expOp(n, half, false) +
         reduceRows(rows, len, half) + fusedEstimate(rows, 2, 1, 1) + fastBinary(n, half, true);
}
u64 softmaxGrad(bool half, u64 rows, u64 len) {
  const u64 n = rows * len;
  return fastBinary(n, half, false) + reduceRows(rows, len, half) + fastBinary(n, half, false) +
         fastBinary(n, half, true);
}

// --- loss -------------------------------------------------------------------------------------

u64 lossTransform(bool half, bool softmaxLoss, u64 size) {
  u64 c = 5 + (softmaxLoss ? 6 : 5) + 5 + (half ? 1 : 0) + 2 + 1;
  c += (softmaxLoss ? 9 : 4) * (half ? size / 2 : size);
  if (half)
    c += 2 + (size & 1 ? (softmaxLoss ? 11 : 6) : 0);
  return c + 1;
}
u64 lossVertex(bool half, bool crossEntropy, u64 rows, u64 classes) {
  return lossTransform(half, crossEntropy, rows * classes) + continuousWorker(rows, classes, half ? 4 : 2);
}

// --- pooling ----------------------------------------------------------------------------------

// poolVertexCycleEstimate: the output field's elements split evenly between the contexts, each
// context's share cut into partial rows, one work-list entry (its size - 1) per kernel position
// for each; getPoolingCycles with every unpack cost 2.
u64 pooling(bool half, bool isMax, bool bwd, u64 chans, u64 outH, u64 outW, u64 kernelPositions) {
  const u64 v = half ? 4 : 2;
  const u64 chanGroups = cdiv(chans, v);
  const u64 elements = outH * outW;
  std::vector<std::vector<u64>> workList; // per partial row: kernelPositions entries of size - 1
  std::vector<u64> startPos;
  for (u64 ctx = 0; ctx < W; ++ctx) {
    const u64 b = ctx * elements / W, e = (ctx + 1) * elements / W;
    if (b != e) {
      for (u64 row = b / outW; row <= (e - 1) / outW; ++row) {
        const u64 xb = row == b / outW ? b % outW : 0;
        const u64 xl = row == (e - 1) / outW ? (e - 1) % outW : outW - 1;
        workList.emplace_back(kernelPositions, xl - xb);
      }
    }
    startPos.push_back(workList.size());
  }
  const u64 initInfo = elements;
  u64 worst = 0;
  for (u64 wId = 0; wId < W; ++wId) {
    u64 c = 4 + 2 + 2 + 7 + 2 + 2;
    const u64 numElems = initInfo / W;
    c += (4 + numElems + (wId < initInfo - numElems * W ? 1 : 0)) * chanGroups;
    c += 5 + 1 + 2;
    const u64 first = wId == 0 ? 0 : startPos[wId - 1];
    const u64 numRows = startPos[wId] - first;
    if (numRows == 0) {
      worst = std::max(worst, c + 1);
      continue;
    }
    c += 2 + (isMax ? 1 : 2);
    if (bwd)
      c += 6 + 2 + 2;
    c += 3 + 2 + 2 * 2 + 1;
    for (u64 row = 0; row < numRows; ++row) {
      c += 13;
      for (const u64 n : workList[first + row]) {
        c += 20;
        for (u64 cg = 0; cg < chanGroups; ++cg) {
          if (cg != 0)
            c += 4 + (bwd ? 2 : 0);
          c += 1;
          c += 2 + (bwd ? 7 + 5 * n : isMax ? 4 + 3 * n : 5 + 3 * n) + 1;
          c += 1;
        }
        c += 3;
      }
      c += 2;
    }
    worst = std::max(worst, c + 1);
  }
  return 7 + worst * 6 + 6;
}

} // namespace

TEST_CASE("popnn non-linearities are priced as PopLibs prices them", "[fidelity][popnn]") {
  const NonLinearityType types[] = {NonLinearityType::SIGMOID,     NonLinearityType::RELU,
                                    NonLinearityType::TANH,        NonLinearityType::GELU,
                                    NonLinearityType::GELU_ERF,    NonLinearityType::SWISH,
                                    NonLinearityType::HARD_SIGMOID};
  const char *names[] = {"SIGMOID", "RELU", "TANH", "GELU", "GELU_ERF", "SWISH", "HARD_SIGMOID"};
  for (std::size_t k = 0; k < std::size(types); ++k) {
    const NonLinearityType nl = types[k];
    for (u64 n : {7u, 79u, 1000u}) {
      const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
        for (const poplar::Type &t : {poplar::FLOAT, poplar::HALF}) {
          const auto x = var(g, t, {n}, "x"), act = var(g, t, {n}, "act"), grad = var(g, t, {n}, "grad");
          popnn::nonLinearityInPlace(g, nl, x, prog);
          popnn::nonLinearityInputGradient(g, nl, act, grad, prog);
        }
      });
      for (const bool half : {false, true}) {
        const std::string t = half ? "half" : "float";
        const std::string what = std::string(names[k]) + " n=" + std::to_string(n);
        check(got, "popnn::NonLinearity<" + t + ">", what, double(nonLinearityFwd(nl, half, n)));
        check(got, "popnn::NonLinearityGrad<" + t + ">", what, double(nonLinearityBwd(nl, half, n)));
      }
    }
  }
}

TEST_CASE("popnn softmax, log-softmax and the softmax gradient are priced as PopLibs' steps",
          "[fidelity][popnn]") {
  for (const auto &shape : std::vector<std::pair<u64, u64>>{{1, 10}, {4, 10}, {32, 100}}) {
    const u64 rows = shape.first, len = shape.second; // (clang 14: lambdas cannot capture bindings)
    for (const bool logOutput : {false, true}) {
      const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
        for (const poplar::Type &t : {poplar::FLOAT, poplar::HALF}) {
          const auto x = var(g, t, {rows, len}, "x");
          if (logOutput) {
            popnn::logSoftmaxInPlace(g, x, prog);
          } else {
            popnn::nonLinearityInPlace(g, NonLinearityType::SOFTMAX_STABLE, x, prog);
            const auto act = var(g, t, {rows, len}, "act"), grad = var(g, t, {rows, len}, "grad");
            popnn::nonLinearityInputGradient(g, NonLinearityType::SOFTMAX_STABLE, act, grad, prog);
          }
        }
      });
      for (const bool half : {false, true}) {
        const std::string t = half ? "half" : "float";
        const std::string what = std::string(logOutput ? "log-softmax " : "softmax ") + std::to_string(rows) +
                                 "x" + std::to_string(len);
        check(got, "popnn::SoftmaxRows<" + t + ">", what,
              double(logOutput ? logSoftmax(half, rows, len) : softmax(half, rows, len)));
        if (!logOutput)
          check(got, "popnn::SoftmaxGradRows<" + t + ">", what, double(softmaxGrad(half, rows, len)));
      }
    }
  }
}

TEST_CASE("popnn loss, arg-max and accuracy vertices are priced as PopLibs prices them",
          "[fidelity][popnn]") {
  for (const auto &shape : std::vector<std::pair<u64, u64>>{{4, 5}, {1, 7}, {16, 10}, {32, 1000}}) {
    const u64 rows = shape.first, classes = shape.second; // (clang 14: lambdas cannot capture bindings)
    for (const bool crossEntropy : {false, true}) {
      const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
        for (const poplar::Type &t : {poplar::FLOAT, poplar::HALF}) {
          const auto probs = var(g, t, {rows, classes}, "probs");
          const auto labels = var(g, poplar::UNSIGNED_INT, {rows}, "labels");
          const auto loss = var(g, t, {rows}, "loss"), deltas = var(g, t, {rows, classes}, "deltas");
          const auto correct = var(g, poplar::UNSIGNED_INT, {1}, "correct");
          prog.add(popnn::calcLoss(g, probs, labels, loss, deltas, correct,
                                   crossEntropy ? popnn::CROSS_ENTROPY_LOSS : popnn::SUM_SQUARED_LOSS));
        }
        const auto ints = var(g, poplar::INT, {rows, classes}, "ints");
        popnn::argMax(g, ints, prog);
      });
      for (const bool half : {false, true}) {
        const std::string t = half ? "half" : "float";
        const std::string what = std::to_string(rows) + "x" + std::to_string(classes);
        check(got,
              std::string(crossEntropy ? "popnn::LossCrossEntropy<" : "popnn::LossSumSquared<") + t +
                  ",unsigned int>",
              what, double(lossVertex(half, crossEntropy, rows, classes)));
        check(got, "popnn::ReduceRowsWithIndex<" + t + ">", what, double(rows * (27 + 3 * (classes - 1))));
      }
      check(got, "popnn::ReduceRowsWithIndex<int>", std::to_string(rows) + "x" + std::to_string(classes),
            double(rows * (5 + 18 + 6 * classes)));
      check(got, "popnn::CalcAccuracy<unsigned int>", "batch " + std::to_string(rows),
            double(5 + 4 + 2 + 1 + 1 + 4 * rows + 1));
    }
  }
}

TEST_CASE("popnn pooling vertices are priced as PopLibs' pooling estimate prices them", "[fidelity][popnn]") {
  struct Shape {
    std::size_t chans, h, w, k, stride, pad;
  };
  for (const Shape &s : {Shape{16, 9, 14, 2, 2, 0}, Shape{1, 50, 50, 3, 2, 1}, Shape{8, 4, 4, 1, 1, 0}}) {
    for (const popnn::PoolingType type : {popnn::PoolingType::MAX, popnn::PoolingType::AVG}) {
      std::vector<std::size_t> outField;
      const auto got = vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog) {
        for (const poplar::Type &t : {poplar::FLOAT, poplar::HALF}) {
          const popnn::pooling::PoolParams params(
              type, {s.h, s.w}, {s.k, s.k}, {unsigned(s.stride), unsigned(s.stride)},
              {int(s.pad), int(s.pad)}, {int(s.pad), int(s.pad)}, s.chans, 1, t);
          outField = params.getOutputFieldShape();
          const auto in = var(g, t, {1, s.chans, s.h, s.w}, "in");
          const auto pooled = popnn::pooling::pool(g, params, in, prog);
          if (type == popnn::PoolingType::MAX) {
            popnn::pooling::poolInputGradient(g, params, in, pooled, pooled, false, prog);
          } else {
            popnn::pooling::poolInputGradient(g, params, 1u, pooled, prog);
          }
        }
      });
      for (const bool half : {false, true}) {
        const std::string t = half ? "half" : "float";
        const bool isMax = type == popnn::PoolingType::MAX;
        const std::string what = std::string(isMax ? "max " : "avg ") + std::to_string(s.chans) + "x" +
                                 std::to_string(s.h) + "x" + std::to_string(s.w) + " k" + std::to_string(s.k);
        check(got, "popnn::Pool2D<" + t + ">", what,
              double(pooling(half, isMax, false, s.chans, outField[0], outField[1], s.k * s.k)));
        check(got, std::string(isMax ? "popnn::MaxPool2DGrad<" : "popnn::SumPool2DGrad<") + t + ">", what,
              double(pooling(half, isMax, isMax, s.chans, s.h, s.w, s.k * s.k)));
      }
    }
  }
}
