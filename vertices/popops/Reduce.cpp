// Copyright (c) Aspen contributors.
// popops' reduction vertices. ReduceInner reduces consecutive rows of `rowLen`
// elements of `in` into one output each; ReduceOuter reduces `in` viewed as rows
// of `stride` elements column-wise into `out` (out.size() columns). Both accumulate
// in float for half and write `TOut`; the library chains them into partial and
// final stages.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>
#include <popops/OperationDef.hpp>

#include "VertexUtil.hpp"

#include <cmath>
#include <limits>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

namespace {

template <typename T> struct Accum { using type = typename vertexutil::Compute<T>::type; };

/// The identity, per-element step and combine of each operation in accumulator type A.
template <Operation op, typename A> struct ReduceOp;

template <typename A> struct ReduceOp<Operation::ADD, A> {
  static A init() { return A(0); }
  static A step(A acc, A x) { return acc + x; }
  static A combine(A a, A b) { return step(a, b); }
};
template <typename A> struct ReduceOp<Operation::SQUARE_ADD, A> {
  static A init() { return A(0); }
  static A step(A acc, A x) { return acc + x * x; }
  static A combine(A a, A b) { return a + b; }
};
template <typename A> struct ReduceOp<Operation::MUL, A> {
  static A init() { return A(1); }
  static A step(A acc, A x) { return acc * x; }
  static A combine(A a, A b) { return step(a, b); }
};
template <typename A> struct ReduceOp<Operation::MIN, A> {
  static A init() {
    return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::max();
  }
  static A step(A acc, A x) { return x < acc ? x : acc; }
  static A combine(A a, A b) { return step(a, b); }
};
template <typename A> struct ReduceOp<Operation::MAX, A> {
  static A init() {
    return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                : std::numeric_limits<A>::lowest();
  }
  static A step(A acc, A x) { return x > acc ? x : acc; }
  static A combine(A a, A b) { return step(a, b); }
};
template <typename A> struct ReduceOp<Operation::LOGICAL_AND, A> {
  static A init() { return true; }
  static A step(A acc, A x) { return acc && x; }
  static A combine(A a, A b) { return step(a, b); }
};
template <typename A> struct ReduceOp<Operation::LOGICAL_OR, A> {
  static A init() { return false; }
  static A step(A acc, A x) { return acc || x; }
  static A combine(A a, A b) { return step(a, b); }
};
template <typename A> struct ReduceOp<Operation::LOG_ADD, A> {
  static A init() { return -std::numeric_limits<A>::infinity(); }
  static A step(A acc, A x) {
    const A hi = acc > x ? acc : x, lo = acc > x ? x : acc;
    if (lo == -std::numeric_limits<A>::infinity())
      return hi;
    return hi + std::log1p(std::exp(lo - hi));
  }
  static A combine(A a, A b) { return step(a, b); }
};

} // namespace

template <Operation op, typename TIn, typename TOut> class ReduceInner : public MultiVertex {
public:
  Input<Vector<TIn, VectorLayout::SPAN, 8>> in;
  Output<Vector<TOut, VectorLayout::SPAN, 8>> out;
  unsigned rowLen;

  void compute(unsigned wid) {
    using A = typename Accum<TIn>::type;
    using R = ReduceOp<op, A>;
    const unsigned rows = out.size();
    const TIn *src = &in[0];
    // Rows go to workers round-robin; the library splits long single rows into pieces.
    for (unsigned r = wid; r < rows; r += numWorkers()) {
      // Eight independent accumulators keep the loop from waiting on one dependency chain.
      A acc[8];
      for (unsigned k = 0; k < 8; ++k)
        acc[k] = R::init();
      const TIn *row = src + static_cast<std::size_t>(r) * rowLen;
      unsigned i = 0;
      for (; i + 8 <= rowLen; i += 8)
        for (unsigned k = 0; k < 8; ++k)
          acc[k] = R::step(acc[k], static_cast<A>(row[i + k]));
      for (; i < rowLen; ++i)
        acc[0] = R::step(acc[0], static_cast<A>(row[i]));
      A total = acc[0];
      for (unsigned k = 1; k < 8; ++k)
        total = R::combine(total, acc[k]);
      out[r] = static_cast<TOut>(total);
    }
  }
};

template <Operation op, typename TIn, typename TOut> class ReduceOuter : public MultiVertex {
public:
  Input<Vector<TIn, VectorLayout::SPAN, 8>> in;
  Output<Vector<TOut, VectorLayout::SPAN, 8>> out;
  unsigned stride;

  void compute(unsigned wid) {
    using A = typename Accum<TIn>::type;
    using R = ReduceOp<op, A>;
    const unsigned width = out.size();
    const unsigned numRows = width == 0 ? 0 : (in.size() - width) / stride + 1;
    unsigned begin, end;
    vertexutil::workerRange(width, wid, numWorkers(), begin, end);
    const TIn *src = &in[0];
    // Columns in blocks, so the inner loop runs along contiguous memory.
    constexpr unsigned block = 64;
    for (unsigned c0 = begin; c0 < end; c0 += block) {
      const unsigned c1 = c0 + block < end ? c0 + block : end;
      A acc[block];
      for (unsigned c = c0; c < c1; ++c)
        acc[c - c0] = R::init();
      for (unsigned r = 0; r < numRows; ++r) {
        const TIn *row = src + static_cast<std::size_t>(r) * stride;
        for (unsigned c = c0; c < c1; ++c)
          acc[c - c0] = R::step(acc[c - c0], static_cast<A>(row[c]));
      }
      for (unsigned c = c0; c < c1; ++c)
        out[c] = static_cast<TOut>(acc[c - c0]);
    }
  }
};

#define POPOPS_REDUCE(OP, IN, OUT)                                                                           \
  template class ReduceInner<Operation::OP, IN, OUT>;                                                        \
  template class ReduceOuter<Operation::OP, IN, OUT>;
#define POPOPS_REDUCE_ARITH(OP)                                                                              \
  POPOPS_REDUCE(OP, float, float)                                                                            \
  POPOPS_REDUCE(OP, half, float)                                                                             \
  POPOPS_REDUCE(OP, float, half)                                                                             \
  POPOPS_REDUCE(OP, half, half)                                                                              \
  POPOPS_REDUCE(OP, int, int)                                                                                \
  POPOPS_REDUCE(OP, unsigned int, unsigned int)
POPOPS_REDUCE_ARITH(ADD)
POPOPS_REDUCE_ARITH(SQUARE_ADD)
POPOPS_REDUCE_ARITH(MUL)
#define POPOPS_REDUCE_MINMAX(OP)                                                                             \
  POPOPS_REDUCE(OP, float, float)                                                                            \
  POPOPS_REDUCE(OP, half, half)                                                                              \
  POPOPS_REDUCE(OP, int, int)                                                                                \
  POPOPS_REDUCE(OP, unsigned int, unsigned int)
POPOPS_REDUCE_MINMAX(MIN)
POPOPS_REDUCE_MINMAX(MAX)
POPOPS_REDUCE(LOG_ADD, float, float)
POPOPS_REDUCE(LOG_ADD, half, float)
POPOPS_REDUCE(LOG_ADD, float, half)
POPOPS_REDUCE(LOG_ADD, half, half)
POPOPS_REDUCE(LOGICAL_AND, bool, bool)
POPOPS_REDUCE(LOGICAL_OR, bool, bool)

} // namespace popops
