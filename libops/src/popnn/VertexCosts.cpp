// Copyright (c) Aspen contributors.
// popnn vertex estimates following PopLibs' published cycle estimators (graphcore/poplibs,
// lib/popnn/popnnCycleEstimators.cpp and lib/popnn/PerformanceEstimation.hpp; for what PopLibs
// builds from popops vertices, popops' estimators through popops/VertexCosts). The numbers are
// what those estimators compute; the code is Aspen's own. docs/cost-model.md ("Library vertices")
// lists each formula and its source.
#include "VertexCosts.hpp"

#include "popops/VertexCosts.hpp"

#include <algorithm>
#include <vector>

namespace popnn::cost {

namespace pc = popops::cost;
using popops::expr::BinaryOpType;
using popops::expr::UnaryOpType;

namespace {

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

// Cycles of one non-linearity operation in PopLibs' hand-written loops, for one element
// (`vector` false) or one 64-bit vector a trip of the pipelined loop.
std::uint64_t opCycles(NonLinearityType nl, bool isFloat, bool vector) {
  switch (nl) {
  case NonLinearityType::RELU:
    return 1;
  case NonLinearityType::SIGMOID:
    return (isFloat ? 5 : 2) * (vector ? 2 : 1);
  case NonLinearityType::TANH:
    return (isFloat ? 5 : 1) * (vector ? 2 : 1);
  case NonLinearityType::GELU:
    return isFloat ? 10 : 5;
  case NonLinearityType::GELU_ERF:
    return isFloat ? 30 : 15;
  case NonLinearityType::SWISH:
    return isFloat ? (vector ? 11 : 6) : (vector ? 5 : 3);
  default:
    return 1;
  }
}

std::uint64_t gradOpCycles(NonLinearityType nl, bool isFloat, bool vector) {
  switch (nl) {
  case NonLinearityType::GELU:
    return isFloat ? 10 : 5;
  case NonLinearityType::GELU_ERF:
    return isFloat ? 30 : 15;
  case NonLinearityType::SWISH:
    return isFloat ? (vector ? 15 : 10) : (vector ? 9 : 7);
  default: // RELU, SIGMOID, TANH
    return 3;
  }
}

// PopLibs' NonLinearity1DInPlace: each worker takes whole vectors (the first ones one more), one
// worker the elements left over; a 9-cycle supervisor.
std::uint64_t nonLinearity1D(const poplar::Target &target, NonLinearityType nl, const poplar::Type &type,
                             std::size_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  const bool isFloat = type == poplar::FLOAT;
  const unsigned width = target.getVectorWidth(type);
  const std::uint64_t perWorker = ceilDiv(n / width, workers), rest = n % width;
  const std::uint64_t op = opCycles(nl, isFloat, false), vecOp = opCycles(nl, isFloat, true);
  // Pointers and size, work split, worker id, alignment test, remainders (the in-place SWISH
  // entry branches into shared code: one cycle more).
  std::uint64_t worker = 20 + (nl == NonLinearityType::SWISH ? 1 : 0);
  if (perWorker)
    worker += 2 + op + (perWorker - 1) * vecOp + 1 + op;
  if (isFloat)
    worker += 3 + ((rest & 1) ? 2 + op : 0);
  else
    worker += 4 + ((rest & 2) ? 2 + op : 0) + ((rest & 1) ? 3 + op : 0);
  return 9 + workers * worker;
}

// A PopLibs map expression fused into one generated MultiVertex (HARD_SIGMOID).
std::uint64_t fused(const poplar::Target &target, const poplar::Type &type, std::size_t n, std::size_t ops,
                    std::size_t operands) {
  return pc::fusedExpression(target, type, n, ops, operands, 0);
}

} // namespace

std::uint64_t nonLinearity(const poplar::Target &target, NonLinearityType nl, const poplar::Type &type,
                           std::size_t n) {
  // PopLibs runs SIGMOID, RELU, TANH and GELU_ERF on popops' UnaryOp1DInPlace, HARD_SIGMOID as a
  // fused clamp(x * 0.2 + 0.5, 0, 1) (three operators), GELU and SWISH on NonLinearity1DInPlace.
  switch (nl) {
  case NonLinearityType::SIGMOID:
    return pc::unaryOp1D(target, UnaryOpType::SIGMOID, type, n, pc::Form::InPlace);
  case NonLinearityType::RELU:
    return pc::unaryOp1D(target, UnaryOpType::RELU, type, n, pc::Form::InPlace);
  case NonLinearityType::TANH:
    return pc::unaryOp1D(target, UnaryOpType::TANH, type, n, pc::Form::InPlace);
  case NonLinearityType::GELU_ERF:
    return pc::unaryOp1D(target, UnaryOpType::GELU_ERF, type, n, pc::Form::InPlace);
  case NonLinearityType::HARD_SIGMOID:
    return fused(target, type, n, 3, 1);
  default:
    return nonLinearity1D(target, nl, type, n);
  }
}

std::uint64_t nonLinearityGrad(const poplar::Target &target, NonLinearityType nl, const poplar::Type &type,
                               std::size_t n) {
  // HARD_SIGMOID's gradient is PopLibs' fused (|y| <= 2.5) * 0.2 * g: four operators over two
  // operands. The others are NonLinearityGrad1D.
  if (nl == NonLinearityType::HARD_SIGMOID)
    return fused(target, type, n, 4, 2);
  const unsigned workers = target.getNumWorkerContexts();
  const bool isFloat = type == poplar::FLOAT;
  const unsigned width = target.getVectorWidth(type);
  const std::uint64_t perWorker = ceilDiv(n / width, workers), rest = n % width;
  const std::uint64_t op = gradOpCycles(nl, isFloat, false), vecOp = gradOpCycles(nl, isFloat, true);
  std::uint64_t worker = 20;
  if (perWorker)
    worker += 4 + (perWorker - 1) * vecOp + 1;
  if (isFloat)
    worker += 4 + (rest ? op + 1 : 0);
  else
    worker += 6 + ((rest & 2) ? op + 2 : 0) + ((rest & 1) ? op + 4 : 0);
  return 9 + workers * worker;
}

std::uint64_t softmaxRows(const poplar::Target &target, const poplar::Type &type, std::size_t rows,
                          std::size_t rowLength, bool logOutput, bool scaled) {
  // PopLibs' (stable) softmax and log-softmax are popops steps; Aspen's one vertex does their
  // work, priced as their sum on the tile: the rows' maxima, x - max, exp, the rows' float sums,
  // then 1 / sum (scaled: times the scale; half: cast) and x * (1 / sum), or log(sum) (a fused
  // map) and x - log(sum). The per-row operand of the broadcast steps is priced as a tensor.
  const std::size_t n = rows * rowLength;
  std::uint64_t c = pc::reduceInner(target, popops::Operation::MAX, type, type, rows, rowLength);
  c += pc::binaryOp1D(target, BinaryOpType::SUBTRACT, type, n, pc::Form::InPlace);
  c += pc::unaryOp1D(target, UnaryOpType::EXPONENT, type, n, logOutput ? pc::Form::Out : pc::Form::InPlace);
  c += pc::reduceInner(target, popops::Operation::ADD, type, poplar::FLOAT, rows, rowLength);
  if (logOutput) {
    c += pc::fusedExpression(target, poplar::FLOAT, rows, 1, 1, 0);
    c += pc::binaryOp1D(target, BinaryOpType::SUBTRACT, type, n, pc::Form::InPlace);
    return c;
  }
  c += pc::unaryOp1D(target, UnaryOpType::INVERSE, poplar::FLOAT, rows, pc::Form::InPlace);
  if (scaled)
    c += pc::broadcastScalar1D(target, BinaryOpType::MULTIPLY, poplar::FLOAT, rows, pc::Form::InPlace);
  if (type == poplar::HALF)
    c += pc::cast1D(target, poplar::FLOAT, poplar::HALF, rows);
  c += pc::binaryOp1D(target, BinaryOpType::MULTIPLY, type, n, pc::Form::InPlace);
  return c;
}

std::uint64_t softmaxGradRows(const poplar::Target &target, const poplar::Type &type, std::size_t rows,
                              std::size_t rowLength) {
  // PopLibs: g * y, its rows' sums, y * sum, and (g * y) - (y * sum) in place.
  const std::size_t n = rows * rowLength;
  return 2 * pc::binaryOp1D(target, BinaryOpType::MULTIPLY, type, n, pc::Form::Out) +
         pc::reduceInner(target, popops::Operation::ADD, type, type, rows, rowLength) +
         pc::binaryOp1D(target, BinaryOpType::SUBTRACT, type, n, pc::Form::InPlace);
}

std::uint64_t loss(const poplar::Target &target, const poplar::Type &type, bool crossEntropy,
                   std::size_t rows, std::size_t classes) {
  // PopLibs' LossSumSquaredTransform / LossCrossEntropyTransform over the elements, then a
  // continuous ADD reduction of the rows, both priced for one worker doing all of it (Aspen's
  // vertex is one worker). PopLibs' one-hot encoding and cross-entropy masking steps, which
  // Aspen's vertex folds in, are not added.
  const bool isFloat = type == poplar::FLOAT;
  const std::uint64_t size = rows * classes;
  std::uint64_t transform = 5 + (crossEntropy ? 6 : 5) + 5 + (isFloat ? 0 : 1) + 2 + 1 +
                            (crossEntropy ? 9 : 4) * (isFloat ? size : size / 2) + 1;
  if (!isFloat)
    transform += 2 + ((size & 1) ? (crossEntropy ? 11 : 6) : 0);
  // The continuous reduction's worker (reduceInner's formula, one worker taking every row).
  const unsigned perLoad = std::min<unsigned>(
      type == poplar::HALF ? 8 : 4,
      std::max<unsigned>(1, target.getDataPathWidth() / (8 * static_cast<unsigned>(type.size()))));
  const std::uint64_t reduce = rows * (classes / perLoad) + ((classes % 2) ? 2 : 0) + 12 * rows + 17;
  return transform + reduce;
}

std::uint64_t reduceRowsWithIndex(const poplar::Type &type, std::size_t rows, std::size_t rowLength) {
  // PopLibs' ReduceMaxClassSparse / ReduceMinClassSparse for each row: float and half 27 + 3 a
  // further element, other types (compiled) 23 + 6 an element.
  const bool fp = type == poplar::FLOAT || type == poplar::HALF;
  const std::uint64_t perRow = fp ? 27 + 3 * (rowLength ? rowLength - 1 : 0) : 23 + 6 * rowLength;
  return rows * perRow;
}

std::uint64_t calcAccuracy(std::size_t batch) {
  // PopLibs' CalcAccuracy: 5 + 8 of set-up, 4 a label, 1 to store.
  return 14 + 4 * static_cast<std::uint64_t>(batch);
}

std::uint64_t pool(const poplar::Target &target, const poplar::Type &type, PoolPass pass, std::size_t planes,
                   std::size_t outHeight, std::size_t outWidth, std::size_t kernelPositions) {
  // PopLibs' planner estimate of a pooling vertex (PoolVertices.cpp, poolVertexCycleEstimate,
  // over getPoolingCycles of PerformanceEstimation.hpp) for the same work laid out as PopLibs
  // lays it: the tile's planes as channels, one 64-bit vector of them a group; the output
  // field's rows split between the workers by elements; one work-list entry a kernel position
  // for each (partial) row; default unpack costs of 2.
  const unsigned workers = target.getNumWorkerContexts();
  const unsigned width = target.getVectorWidth(type);
  const bool isMax = pass == PoolPass::MaxForward || pass == PoolPass::MaxGrad;
  const bool bwd = pass == PoolPass::MaxGrad;
  const std::uint64_t chanGroups = std::max<std::uint64_t>(1, ceilDiv(planes, width));
  const std::uint64_t initInfo = outHeight * outWidth;
  const std::uint64_t total = outHeight * outWidth;
  constexpr std::uint64_t unpack = 2;
  std::uint64_t slowest = 0;
  for (unsigned w = 0; w < workers; ++w) {
    // The partial rows of the elements [begin, end) of the output field.
    std::vector<std::uint64_t> rowSizes;
    const std::uint64_t begin = w * total / workers, end = (w + 1) * total / workers;
    for (std::uint64_t e = begin; e < end;) {
      const std::uint64_t rowEnd = std::min(end, (e / outWidth + 1) * outWidth);
      rowSizes.push_back(rowEnd - e);
      e = rowEnd;
    }
    std::uint64_t c = 17 + unpack;
    const std::uint64_t base = initInfo / workers;
    const std::uint64_t initElems = base + (w < initInfo - base * workers ? 1 : 0);
    c += (4 + initElems) * chanGroups;
    c += 6 + unpack;
    if (rowSizes.empty()) {
      slowest = std::max(slowest, c + 1);
      continue;
    }
    c += 2 + (isMax ? 1 : 2);
    if (bwd)
      c += 6 + 2 * unpack;
    c += 6 + 2 * unpack;
    for (const std::uint64_t size : rowSizes) {
      c += 13;
      const std::uint64_t n = size - 1;
      const std::uint64_t rpt = bwd ? 7 + 5 * n : isMax ? 4 + 3 * n : 5 + 3 * n;
      const std::uint64_t group = 1 + (2 + rpt + 1) + 1;
      const std::uint64_t item = 20 + chanGroups * group + (chanGroups - 1) * (4 + (bwd ? 2 : 0)) + 3;
      c += kernelPositions * item + 2;
    }
    slowest = std::max(slowest, c + 1);
  }
  return 7 + slowest * 6 + 6;
}

} // namespace popnn::cost
