// Copyright (c) Aspen contributors.
// popops vertex estimates following PopLibs' published cycle estimators (graphcore/poplibs,
// lib/popops/popopsCycleEstimators.{hpp,cpp} and lib/popops/PerformanceEstimation.cpp). The
// numbers are what those estimators compute for each operation and type; the code is Aspen's
// own. docs/cost-model.md ("Library vertices") lists each formula and its source.
#include "VertexCosts.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace popops::cost {

using expr::BinaryOpType;
using expr::UnaryOpType;

namespace {

// One trip of a vertex's inner loop: `cycles` for `elements` elements. `elements` 0 means one
// vector of the type's natural width (64 bits); `bookkeeping` says whether the loop's load,
// store and branch cycles come on top of `cycles` (PopLibs measured the unrolled loops whole).
struct Loop {
  unsigned cycles;
  unsigned elements;
  bool bookkeeping;
};
constexpr Loop vec(unsigned c) {
  return {c, 0, true};
}
constexpr Loop each(unsigned c) {
  return {c, 1, true};
}
constexpr Loop unrolled(unsigned c, unsigned k) {
  return {c, k, false};
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

bool isFloatData(const poplar::Type &t) {
  return t == poplar::FLOAT || t == poplar::HALF;
}
bool isHalf(const poplar::Type &t) {
  return t == poplar::HALF;
}

// Cycles of `loop` over `n` elements, with `extra` bookkeeping cycles a trip when it has any.
std::uint64_t loopCycles(const poplar::Target &target, const poplar::Type &type, const Loop &loop,
                         std::uint64_t n, unsigned extra) {
  const unsigned width = loop.elements ? loop.elements : target.getVectorWidth(type);
  return ceilDiv(n, width) * (loop.cycles + (loop.bookkeeping ? extra : 0));
}

Loop unaryLoop(UnaryOpType op, const poplar::Type &t, Form form) {
  const bool h = isHalf(t), f = isFloatData(t), inPlace = form == Form::InPlace;
  switch (op) {
  case UnaryOpType::ABSOLUTE:
    return f ? (inPlace ? vec(1) : each(1)) : each(2);
  case UnaryOpType::ASIN:
    return each(102);
  case UnaryOpType::BITWISE_NOT:
  case UnaryOpType::COUNT_LEADING_ZEROS:
  case UnaryOpType::POPCOUNT:
    return op == UnaryOpType::BITWISE_NOT ? vec(1) : each(1);
  case UnaryOpType::CBRT:
    return vec(h ? 17 : 27);
  case UnaryOpType::CEIL:
  case UnaryOpType::FLOOR:
  case UnaryOpType::NEARBY_INT:
  case UnaryOpType::ROUND:
    return vec(2);
  case UnaryOpType::COS:
  case UnaryOpType::SIN:
    return h ? unrolled(25, 1) : each(2300);
  case UnaryOpType::INVERSE:
    return h ? unrolled(15, 4) : unrolled(6, 2);
  case UnaryOpType::ERF:
    return unrolled(h ? 13 : 41, 1);
  case UnaryOpType::GELU_ERF:
    return unrolled(h ? 16 : 22, 1);
  case UnaryOpType::EXPONENT:
  case UnaryOpType::EXPONENT2:
    return h ? unrolled(4, 4) : unrolled(6, 2);
  case UnaryOpType::EXPONENT_MINUS_ONE:
    return h ? vec(5) : each(4);
  case UnaryOpType::IS_FINITE:
    return vec(5);
  case UnaryOpType::IS_INF:
    return vec(h ? 5 : 3);
  case UnaryOpType::IS_NAN:
    return vec(3);
  case UnaryOpType::LOGARITHM:
    return h ? unrolled(inPlace ? 6 : 4, 4) : unrolled(inPlace ? 14 : 12, 2);
  case UnaryOpType::LOGARITHM_ONE_PLUS:
    return vec(h && inPlace ? 17 : 18);
  case UnaryOpType::LOGICAL_NOT:
    return inPlace ? vec(17) : each(17);
  case UnaryOpType::NEGATE:
    return f ? unrolled(inPlace ? 3 : 2, h ? 4 : 2) : each(2);
  case UnaryOpType::SIGNUM:
    return f ? vec(5) : each(5);
  case UnaryOpType::SQRT:
    return f ? (h ? unrolled(23, 4) : unrolled(10, 2)) : each(110);
  case UnaryOpType::SQUARE:
    return f ? unrolled(2, h ? 4 : 2) : vec(1);
  case UnaryOpType::TAN:
    return unrolled(h ? 5700 : 5100, 1);
  case UnaryOpType::TANH:
    return h ? unrolled(inPlace ? 2 : 4, 4) : unrolled(inPlace ? 10 : 12, 2);
  case UnaryOpType::TRUNC:
    return h ? unrolled(11, 4) : unrolled(inPlace ? 4 : 3, 2);
  case UnaryOpType::SIGMOID:
    return h ? unrolled(inPlace ? 4 : 6, 4) : unrolled(inPlace ? 10 : 12, 2);
  case UnaryOpType::RSQRT:
    return h ? unrolled(19, 4) : unrolled(8, 2);
  case UnaryOpType::RELU:
    return unrolled(inPlace ? 2 : 3, h ? 4 : 2);
  }
  return each(2);
}

bool isComparison(BinaryOpType op) {
  switch (op) {
  case BinaryOpType::EQUAL:
  case BinaryOpType::NOT_EQUAL:
  case BinaryOpType::GREATER_THAN:
  case BinaryOpType::GREATER_THAN_EQUAL:
  case BinaryOpType::LESS_THAN:
  case BinaryOpType::LESS_THAN_EQUAL:
    return true;
  default:
    return false;
  }
}

// ADD, SUBTRACT and MULTIPLY of float and half have hand-written inner loops.
bool isFastArithmetic(BinaryOpType op, const poplar::Type &t) {
  return isFloatData(t) &&
         (op == BinaryOpType::ADD || op == BinaryOpType::SUBTRACT || op == BinaryOpType::MULTIPLY);
}

// Tensor-tensor (`broadcast` false) or tensor-scalar loop of a binary operator.
Loop binaryLoop(BinaryOpType op, const poplar::Type &t, Form form, bool broadcast) {
  const bool h = isHalf(t), inPlace = form == Form::InPlace;
  const bool unsignedInt = t == poplar::UNSIGNED_INT;
  if (isFastArithmetic(op, t))
    return vec(1);
  if (t == poplar::BOOL) {
    // Logical operators and comparisons of bools, four a trip.
    unsigned c = 5;
    switch (op) {
    case BinaryOpType::EQUAL:
      c = broadcast ? (inPlace ? 5 : 14) : 6;
      break;
    case BinaryOpType::NOT_EQUAL:
      c = broadcast ? 4 : 5;
      break;
    case BinaryOpType::GREATER_THAN:
      c = broadcast ? 12 : 31;
      break;
    case BinaryOpType::GREATER_THAN_EQUAL:
      c = broadcast ? 12 : 28;
      break;
    case BinaryOpType::LESS_THAN:
    case BinaryOpType::LESS_THAN_EQUAL:
      c = broadcast ? 16 : 28;
      break;
    default: // LOGICAL_AND, LOGICAL_OR
      c = broadcast ? 4 : 5;
      break;
    }
    return unrolled(c, 4);
  }
  if (isFloatData(t)) {
    switch (op) {
    case BinaryOpType::DIVIDE:
      return broadcast ? unrolled(h ? 8 : 6, 2) : (h ? unrolled(21, 4) : unrolled(10, 2));
    case BinaryOpType::MAXIMUM:
    case BinaryOpType::MINIMUM:
      return h ? unrolled(broadcast ? 3 : 4, 4) : unrolled(inPlace && !broadcast ? 4 : 3, 2);
    case BinaryOpType::POWER:
      return unrolled(h ? 325 : 312, 1);
    case BinaryOpType::ATAN2:
      return h ? unrolled(578, 4) : unrolled(272, 2);
    case BinaryOpType::REMAINDER:
      return h ? unrolled(broadcast ? 225 : 300, 4) : unrolled(broadcast ? 93 : 133, 2);
    case BinaryOpType::VARIANCE_TO_INV_STD_DEV:
      return h ? unrolled(24, 4) : unrolled(12, 2);
    case BinaryOpType::INV_STD_DEV_TO_VARIANCE:
      return h ? unrolled(10, 2) : (inPlace ? vec(7) : unrolled(11, 2));
    case BinaryOpType::NOT_EQUAL:
      return unrolled(h ? (broadcast ? 10 : 11) : (broadcast ? 18 : 20), 4);
    default:
      if (isComparison(op))
        return unrolled(h ? (broadcast ? 8 : 9) : (broadcast ? 12 : 14), 4);
      return unrolled(h ? 4 : 3, h ? 4 : 2);
    }
  }
  // 32-bit integers: one element a trip; a scalar operand saves a load.
  switch (op) {
  case BinaryOpType::DIVIDE:
    return unrolled(unsignedInt ? (broadcast ? 260 : 265) : 277, 1);
  case BinaryOpType::REMAINDER:
    return unrolled(unsignedInt ? (broadcast ? 267 : 282) : (broadcast ? 280 : 292), 1);
  case BinaryOpType::POWER:
    return unrolled(broadcast ? (inPlace ? 25 : 23) : 32, 1);
  case BinaryOpType::MAXIMUM:
    return unrolled(unsignedInt ? (broadcast ? 7 : 8) : (broadcast ? 6 : 7), 1);
  case BinaryOpType::MINIMUM:
    return unrolled(unsignedInt ? 8 : (broadcast ? 6 : 7), 1);
  case BinaryOpType::GREATER_THAN_EQUAL:
  case BinaryOpType::LESS_THAN_EQUAL:
    return unrolled(broadcast ? 20 : 26, 4);
  default:
    if (isComparison(op))
      return unrolled(broadcast ? 16 : 22, 4);
    return unrolled(broadcast ? 6 : 7, 1);
  }
}

// What every MultiVertex of popops pays to start its workers.
constexpr std::uint64_t kSupervisorCycles = 11;

} // namespace

std::uint64_t unaryOp1D(const poplar::Target &target, UnaryOpType op, const poplar::Type &type, std::size_t n,
                        Form form) {
  const unsigned workers = target.getNumWorkerContexts();
  const std::uint64_t start = form == Form::InPlace ? 55 : (op == UnaryOpType::EXPONENT ? 33 : 17);
  const std::uint64_t perWorker =
      start + loopCycles(target, type, unaryLoop(op, type, form), ceilDiv(n, workers), 4);
  return workers * perWorker + 9 + kSupervisorCycles;
}

std::uint64_t binaryOp1D(const poplar::Target &target, BinaryOpType op, const poplar::Type &type,
                         std::size_t n, Form form) {
  const unsigned workers = target.getNumWorkerContexts();
  const std::uint64_t start = form == Form::InPlace ? 58 : (type == poplar::FLOAT ? 29 : 26);
  const unsigned bookkeeping = isFastArithmetic(op, type) ? 2 : 5;
  const std::uint64_t perWorker =
      start + loopCycles(target, type, binaryLoop(op, type, form, false), ceilDiv(n, workers), bookkeeping);
  return workers * perWorker + kSupervisorCycles;
}

std::uint64_t broadcastScalar1D(const poplar::Target &target, BinaryOpType op, const poplar::Type &type,
                                std::size_t n, Form form) {
  const unsigned workers = target.getNumWorkerContexts();
  const unsigned bookkeeping = isFastArithmetic(op, type) ? 1 : 4;
  const std::uint64_t perWorker =
      20 + loopCycles(target, type, binaryLoop(op, type, form, true), ceilDiv(n, workers), bookkeeping);
  return workers * perWorker + kSupervisorCycles;
}

namespace {

// One worker casting `n` elements.
std::uint64_t castWorker(const poplar::Target &target, const poplar::Type &from, const poplar::Type &to,
                         std::uint64_t n) {
  const unsigned pathBytes = target.getDataPathWidth() / 8;
  const unsigned loadWidth = std::max<unsigned>(1, pathBytes / static_cast<unsigned>(from.size()));
  const unsigned storeWidth = std::max<unsigned>(1, pathBytes / static_cast<unsigned>(to.size()));
  // Conversions between float and half run on the floating-point pipeline, as wide as two
  // loads or one store allow; every other conversion is one element at a time plus a cycle.
  const bool floatPipe = isFloatData(from) && isFloatData(to);
  const unsigned width = floatPipe ? std::min(2 * loadWidth, storeWidth) : 1;
  const unsigned loadTrips = width / std::min(width, loadWidth);
  const unsigned storeTrips = width / std::min(width, storeWidth);
  const unsigned perVector = std::max(loadTrips, storeTrips) + (floatPipe ? 0 : 1);
  std::uint64_t cycles = 19 + perVector * (n / width);
  // The remainder: a test for each power of two below the width, 2 cycles when that part is left.
  const std::uint64_t rest = n % width;
  for (unsigned bit = 1; bit < width; bit <<= 1)
    cycles += 1 + ((rest & bit) ? 2 : 0);
  return cycles;
}

} // namespace

std::uint64_t cast1D(const poplar::Target &target, const poplar::Type &from, const poplar::Type &to,
                     std::size_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  return 12 + workers * (castWorker(target, from, to, ceilDiv(n, workers)) + 18);
}

namespace {

// One worker filling `n` elements of `type` (PopLibs' Fill worker vertex).
std::uint64_t fillWorker(const poplar::Target &target, const poplar::Type &type, std::uint64_t n) {
  const std::size_t size = type.size();
  if (size == 8)
    return 5 + n;
  if (size == 1)
    return n < 64 ? 28 + n / 4 : 39 + n / 8;
  const unsigned width = target.getDataPathWidth() / (size == 2 ? 16 : 32);
  if (size == 2)
    return n == 1 ? 15 : n == 2 ? 21 : 26 + n / width;
  return 23 + n / width + (n % width == 1 ? 1 : 0);
}

} // namespace

std::uint64_t fill(const poplar::Target &target, const poplar::Type &type, std::size_t n) {
  // Aspen's Fill is one MultiVertex whose workers each fill a sixth; PopLibs gives each worker
  // its own Fill vertex. Either way the tile's workers run in turn: W times one worker's share.
  const unsigned workers = target.getNumWorkerContexts();
  return workers * fillWorker(target, type, ceilDiv(n, workers));
}

namespace {

// The worker loop of half data with float scales (aXPlusbY<half, float>): pairs of elements.
std::uint64_t mixedWorker(std::uint64_t count) {
  std::uint64_t cycles = 4;
  const std::uint64_t over = count >= 4 ? count - 4 : 0;
  if (over) {
    // Set-up and drain of the pipelined pair loop, 5 cycles a further pair, 9 for an odd one.
    cycles += 15 + 5 * (over / 2) - (over >= 2 ? 5 : 0) + (over % 2 ? 9 : 0);
  } else {
    cycles += 1 + (count == 1 ? 14 : count == 2 ? 13 : count == 3 ? 22 : 0);
  }
  return cycles + 1;
}

std::uint64_t mixedScaledAdd(const poplar::Target &target, std::uint64_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  std::uint64_t supervisor = 1 + 6 + 10 + 15 * 6 + 14 + 28;
  const std::uint64_t count = (n / workers / 2) * 2;
  const std::uint64_t final = n % workers;
  const std::uint64_t rem = (n / workers) % workers + ceilDiv(final, 2);
  if (final == 0)
    supervisor += 5;
  std::uint64_t worst = 0;
  for (unsigned w = 0; w < workers; ++w) {
    const std::uint64_t c = count + (w <= rem ? 2 : 0) + (w == rem ? final : 0);
    worst = std::max(worst, 19 + mixedWorker(c) + (w == rem ? 1 : 0));
  }
  return supervisor + worst * workers;
}

} // namespace

std::uint64_t scaledAdd(const poplar::Target &target, const poplar::Type &aType, const poplar::Type &bType,
                        const poplar::Type &scaleType, ScaledOp op, std::size_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  const bool scalesA =
      op == ScaledOp::AXPlusBY || op == ScaledOp::AXMinusBY || op == ScaledOp::XMinusAXPlusBY;
  if (!isFloatData(aType)) {
    // Integers: three elements a 26-cycle trip on one worker.
    std::uint64_t c = 53 + 26 * (n / 3) + 6 + 26 * (n % 3) + 8 + 6;
    return c + (op == ScaledOp::Subtract ? 1 : 0);
  }
  if (scalesA && aType == poplar::HALF && bType == poplar::HALF && scaleType == poplar::FLOAT)
    return mixedScaledAdd(target, n);
  const unsigned width = target.getVectorWidth(aType);
  const std::uint64_t vectors = n / width;
  const std::uint64_t restElems = n % width;
  const std::uint64_t perWorker = vectors / workers;
  const std::uint64_t restVectors = vectors % workers;
  std::uint64_t supervisor = 21 + kSupervisorCycles + (restElems == 0 ? 7 : 13) + 12 + 6;
  if (op == ScaledOp::AXPlusBY || op == ScaledOp::XMinusAXPlusBY)
    supervisor += 12;
  if (op == ScaledOp::Subtract)
    supervisor += 7;
  const bool floatAxBy = aType == poplar::FLOAT && scalesA;
  std::uint64_t worst = 0;
  if (aType == poplar::HALF && bType == poplar::FLOAT) {
    // Half A with float B: five cycles a vector.
    if (op == ScaledOp::Subtract)
      supervisor += 1;
    for (unsigned w = 0; w < workers; ++w) {
      const std::uint64_t nv = perWorker + (w < restVectors ? 1 : 0);
      std::uint64_t c = 16 + (nv ? 9 + 5 * (nv - 1) : 0) + 2 + 1;
      if (w == restVectors) {
        c += 1;
        if (restElems)
          c += 2 + (restElems >= 2 ? 5 : 0) + 2 + (restElems % 2 ? 6 : 0);
      }
      worst = std::max(worst, c);
    }
  } else {
    const unsigned inner = floatAxBy ? 3 : (aType == bType ? 3 : 4);
    for (unsigned w = 0; w < workers; ++w) {
      std::uint64_t c =
          (floatAxBy ? 16 : 15) + (perWorker ? 6 + inner * (perWorker - 1) : 0) + (floatAxBy ? 0 : 2) + 1;
      if (w == restVectors) {
        c += 1;
        if (restElems) {
          if (floatAxBy)
            c += 5;
          else if (aType == poplar::FLOAT)
            c += 8;
          else
            c += 5 + (restElems >= 2 ? 7 + (restElems == 3 ? 6 : 0) : 0);
        }
      }
      worst = std::max(worst, c);
    }
  }
  return supervisor + worst * workers;
}

std::uint64_t dynamicSlice1D(const poplar::Target &target, const poplar::Type &type, std::size_t regionSize,
                             std::size_t numSubElements) {
  // PopLibs' DynamicSlice1D is a MultiVertex whose workers share the region; Aspen's is one
  // worker that copies all of it, priced as one of PopLibs' workers given the whole region:
  // 64 bits every 2 cycles (8-bit data: 4 bytes), a per-row and a per-vertex overhead.
  const std::size_t size = type.size();
  const std::uint64_t elements = regionSize * (size == 8 ? 2 : 1);
  if (size == 1)
    return 76 + (72 + 2 * (elements / 4)) * numSubElements;
  const unsigned width = target.getDataPathWidth() / (size == 2 ? 16 : 32);
  return 39 + (24 + 2 * (elements / width)) * numSubElements;
}

std::uint64_t multiSlice(const poplar::Type &type, std::size_t regionSize, std::size_t numOffsets,
                         bool update) {
  // PopLibs' MultiSlice / MultiUpdate estimate for one worker with every offset in range: a
  // prologue, 19 cycles an offset and its row at 2 cycles a 64-bit (or 2-element) copy, 3 cycles
  // a 4-byte copy for 8-bit data. Aspen's vertex is one worker doing every offset.
  const std::size_t size = type.size();
  const unsigned width = size == 1   ? 4
                         : size == 2 ? 2
                                     : 8 / static_cast<unsigned>(std::min<std::size_t>(size, 8));
  const unsigned perCopy = size == 1 ? 3 : 2;
  return (update ? 29 : 30) + numOffsets * (19 + ceilDiv(regionSize, width) * perCopy);
}

namespace {

// Partials one accumulator instruction takes (PopLibs' reductions: 8 halves or 4 floats, one
// element for other types), and the 64-bit load's width in partials.
unsigned accumulatorWidth(const poplar::Type &partials) {
  return partials == poplar::HALF ? 8 : partials == poplar::FLOAT ? 4 : 1;
}
unsigned loadWidth(const poplar::Target &target, const poplar::Type &partials) {
  return std::max<unsigned>(1, target.getDataPathWidth() / (8 * static_cast<unsigned>(partials.size())));
}

} // namespace

std::uint64_t reduceInner(const poplar::Target &target, Operation op, const poplar::Type &partials,
                          const poplar::Type &, std::size_t rows, std::size_t rowLen) {
  // PopLibs' continuous reduction (every region one contiguous row) for one worker's rows: a
  // cycle per load of the row's partials (LOG_ADD: C++, 20 cycles a partial), 12 a row, 2 more
  // for odd rows, 17 of call and set-up. Aspen's ReduceInner is a MultiVertex whose workers take
  // rows in turn: W times one worker's share.
  const unsigned workers = target.getNumWorkerContexts();
  const bool logAdd = op == Operation::LOG_ADD;
  const unsigned perLoop = logAdd ? 1 : std::min(accumulatorWidth(partials), loadWidth(target, partials));
  const std::uint64_t cyclesPerLoop = logAdd ? 20 : 1;
  const std::uint64_t outputs = ceilDiv(rows, workers);
  const std::uint64_t worker =
      cyclesPerLoop * outputs * (rowLen / perLoop) + (rowLen % 2 ? 2 : 0) + 12 * outputs + 17;
  return workers * worker;
}

std::uint64_t reduceOuter(const poplar::Target &target, Operation op, const poplar::Type &partials,
                          const poplar::Type &out, std::size_t width, std::size_t numRows,
                          std::size_t stride) {
  // PopLibs' strided reduction for one worker's columns: set-up, then for each group of columns
  // one trip along the rows (a cycle a row; LOG_ADD 13 for half, 23 for float) and storing the
  // results. Aspen's ReduceOuter is a MultiVertex sharing the columns: W times one share.
  const unsigned workers = target.getNumWorkerContexts();
  const bool logAdd = op == Operation::LOG_ADD;
  const bool half = partials == poplar::HALF;
  const unsigned opWidth = logAdd ? (half ? 4 : 2) : accumulatorWidth(partials);
  const std::uint64_t perRow = logAdd ? (half ? 13 : 23) : 1;
  std::uint64_t store;
  if (half) {
    store = 1 + (out == poplar::FLOAT && op == Operation::ADD ? 6 : 7);
  } else {
    store = (op == Operation::ADD ? 3 : 2) + (out == poplar::HALF || out == poplar::FLOAT ? 2 : 0);
  }
  const std::uint64_t perGroup = 3 + store + 3 + perRow * (numRows ? numRows - 1 : 0);
  const std::uint64_t columns = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::gcd(std::min(opWidth, loadWidth(target, partials)),
                                             static_cast<unsigned>(std::max<std::size_t>(stride, 1)))));
  const std::uint64_t worker = 5 + 11 + perGroup * ceilDiv(ceilDiv(width, workers), columns);
  return workers * worker;
}

} // namespace popops::cost

namespace popops::cost {

namespace {

// PopLibs' loop of `c` cycles a group of `k` elements over `n` elements, as its estimators round
// it: c (n + k - 1) / k.
std::uint64_t groupLoop(std::uint64_t n, unsigned k, unsigned c) {
  return c * (n + k - 1) / k;
}

} // namespace

std::uint64_t select(const poplar::Target &target, const poplar::Type &, std::size_t n) {
  // PopLibs' Select is a worker vertex (three loads, a conditional move and a store, 5 cycles an
  // element, 6 of set-up and 5 of call); Aspen's is a MultiVertex whose workers take a sixth
  // each: W such workers in turn.
  const unsigned workers = target.getNumWorkerContexts();
  return workers * (5 + 6 + groupLoop(ceilDiv(n, workers), 1, 5));
}

std::uint64_t clamp(const poplar::Target &target, const poplar::Type &type, std::size_t n) {
  // PopLibs' Clamp worker: float and half 2 cycles a 64-bit vector, int 7 an element, other
  // types 1; W workers in turn as for Select.
  const unsigned workers = target.getNumWorkerContexts();
  unsigned width = 1, perGroup = 1;
  if (isFloatData(type)) {
    width = target.getVectorWidth(type);
    perGroup = 2;
  } else if (type == poplar::INT) {
    perGroup = 7;
  }
  return workers * (5 + 6 + groupLoop(ceilDiv(n, workers), width, perGroup));
}

std::uint64_t fusedExpression(const poplar::Target &target, const poplar::Type &type, std::size_t n,
                              std::size_t numOps, std::size_t vectorOperands, std::size_t scalarOperands) {
  // PopLibs prices a generated MultiVertex at 20 plus, for each operand, one cycle a fused
  // operator for each 64-bit vector and each element left over, rounded up to whole turns of
  // the workers.
  const unsigned workers = target.getNumWorkerContexts();
  const unsigned width = target.getVectorWidth(type);
  const std::uint64_t perOperand = (n / width + n % width) * numOps;
  const std::uint64_t estimate = 20 + vectorOperands * perOperand + scalarOperands * numOps;
  return ceilDiv(estimate, workers) * workers;
}

std::uint64_t multiUpdateOp(const poplar::Target &target, const poplar::Type &type,
                            const poplar::Type &scaleType, std::size_t regionSize, std::size_t numOffsets) {
  // PopLibs' MultiUpdateOp / ScaledMultiUpdateOp for one worker with every offset in range: 3
  // cycles of entry, 29 (32-bit data) or 30 of set-up, the scale's loads, then per offset 11 or 12
  // cycles and 3 (4 with a wider scale) a further atom of the row; a row that needs sub-word
  // writes (odd half rows) 20 cycles an element. Aspen's vertex is one worker doing all offsets.
  const bool scaled = scaleType.valid();
  const bool word = type.size() == 4;
  const unsigned atom = std::max<unsigned>(1, target.getAtomicStoreGranularity());
  const unsigned elemsPerAtom = std::max<unsigned>(1, atom / static_cast<unsigned>(type.size()));
  const bool scaleWider = scaled && type == poplar::HALF && scaleType != poplar::HALF;
  const bool special =
      scaled && ((word && (regionSize == 2 || regionSize == 4)) || (type.size() == 2 && regionSize == 4));
  std::uint64_t cycles = 3 + (word ? 29 : 30) - (special ? 1 : 0);
  if (scaled)
    cycles += 4 + (word ? 2 : 0);
  std::uint64_t perOffset = (word ? 11 : 12) + (!word && scaled ? 1 : 0);
  if (regionSize % elemsPerAtom != 0)
    perOffset += 20 * regionSize;
  else if (special)
    perOffset = word ? (regionSize == 2 ? 8 : 16) : (scaleWider ? 12 : 9);
  else
    perOffset += (regionSize / elemsPerAtom - 1) * (3 + (scaleWider ? 1 : 0));
  return cycles + perOffset * numOffsets;
}

std::uint64_t sortRows(std::size_t rows, std::size_t rowLength, bool keyValue) {
  // PopLibs' on-tile sort of a run by one worker, HeapSortVertex (HeapSortVertexKV twice it):
  // 8 (19 n floor(log2 n) + 6 n + 2), every worst case taken. PopLibs' popops::sort itself now
  // sorts by bitonic compare-and-swap steps across compute sets; Aspen sorts each row on one
  // worker, which is the heap-sort vertex's work.
  const std::uint64_t n = rowLength;
  const std::uint64_t levels =
      n > 1 ? static_cast<std::uint64_t>(std::floor(std::log2(static_cast<double>(n)))) : 0;
  const std::uint64_t perRow = 8 * (19 * n * levels + 6 * n + 2);
  return rows * perRow * (keyValue ? 2 : 1);
}

std::uint64_t topKRows(std::size_t rows, std::size_t rowLength, std::size_t k, bool sorted) {
  // PopLibs' one-worker top-k, popnn's ReduceMaxNClassSparse (a heap of k; every element a
  // push in the worst case, 13 + 20 ln(k) cycles; the first k 13 + 20 ln(i); 8 a result to
  // store; sorted output pops the heap, 10 + 20 ln(i)), for each row. The estimator adds its
  // fractional terms to an integer count one at a time; so does this.
  std::uint64_t perRow = 10 + 2 + 23;
  if (k == 0 || k > rowLength)
    return rows * perRow;
  for (std::size_t i = 1; i < k; ++i)
    perRow =
        static_cast<std::uint64_t>(static_cast<double>(perRow) + 13 + std::log(static_cast<double>(i)) * 20);
  perRow = static_cast<std::uint64_t>(static_cast<double>(perRow) +
                                      static_cast<double>(rowLength - k) *
                                          (13 + std::log(static_cast<double>(k)) * 20));
  perRow += 8 * k;
  if (sorted)
    for (std::size_t i = k; i >= 1; --i) {
      perRow += 10;
      perRow =
          static_cast<std::uint64_t>(static_cast<double>(perRow) + 20 * std::log(static_cast<double>(i)));
    }
  return rows * perRow;
}

} // namespace popops::cost
