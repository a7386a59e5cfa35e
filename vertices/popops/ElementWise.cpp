// Copyright (c) Aspen contributors.
// popops' element-wise vertices: one operator over 1-D regions (out = a op b,
// a op= b, a op scalar, unary f(a)), and the ternary select and clamp. Every
// vertex is a MultiVertex whose workers take contiguous chunks of the region.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>
#include <popops/ExprOp.hpp>

#include "VertexUtil.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

using expr::BinaryOpType;
using expr::UnaryOpType;
using vertexutil::Compute;
using vertexutil::workerRange;

namespace {

// Operations whose spelling differs between floating point and integer types.
//
// Integer division and remainder are defined for every input, with RISC-V's rules: x / 0 is
// all ones (-1, or the largest unsigned), x % 0 is x, and INT_MIN / -1 wraps to INT_MIN with
// remainder 0. The host's division instruction would trap and end the process instead.
inline float divOf(float a, float b) {
  return a / b;
}
inline int divOf(int a, int b) {
  return b == 0 ? -1 : b == -1 ? static_cast<int>(0u - static_cast<unsigned>(a)) : a / b;
}
inline unsigned divOf(unsigned a, unsigned b) {
  return b == 0 ? ~0u : a / b;
}
inline float remOf(float a, float b) {
  return std::fmod(a, b);
}
inline int remOf(int a, int b) {
  return b == 0 ? a : b == -1 ? 0 : a % b;
}
inline unsigned remOf(unsigned a, unsigned b) {
  return b == 0 ? a : a % b;
}
// Shift counts use their low 5 bits (a 32-bit shift by 32 or more is undefined in C++).
template <typename T> inline T shiftLeftOf(T a, T b) {
  return static_cast<T>(static_cast<unsigned>(a) << (static_cast<unsigned>(b) & 31u));
}
template <typename T> inline T shiftRightOf(T a, T b) {
  return static_cast<T>(static_cast<unsigned>(a) >> (static_cast<unsigned>(b) & 31u));
}
inline int shiftRightSignExtendOf(int a, int b) {
  return a >> (static_cast<unsigned>(b) & 31u);
}
inline float absOf(float a) {
  return std::fabs(a);
}
inline int absOf(int a) {
  return a < 0 ? -a : a;
}
inline unsigned absOf(unsigned a) {
  return a;
}
template <typename T> inline T signumOf(T a) {
  return T((T(0) < a) - (a < T(0)));
}
inline unsigned clzOf(unsigned a) {
  return a ? __builtin_clz(a) : 32u;
}
inline int clzOf(int a) {
  return static_cast<int>(clzOf(static_cast<unsigned>(a)));
}
inline unsigned popcountOf(unsigned a) {
  return __builtin_popcount(a);
}
inline int popcountOf(int a) {
  return __builtin_popcount(static_cast<unsigned>(a));
}
inline float sigmoidOf(float a) {
  return 1.0f / (1.0f + std::exp(-a));
}
inline float geluErfOf(float a) {
  return 0.5f * a * (1.0f + std::erf(a * 0.70710678118654752f));
}

} // namespace

/// The result of `a op b` for element type T; `Out` is bool for comparisons.
template <BinaryOpType op, typename T> struct BinaryOpFn;

#define POPOPS_BINARY_FN(OP, OUT, EXPR)                                                                      \
  template <typename T> struct BinaryOpFn<BinaryOpType::OP, T> {                                             \
    using Out = OUT;                                                                                         \
    static Out apply(T x, T y) {                                                                             \
      using C = typename Compute<T>::type;                                                                   \
      const C a = static_cast<C>(x), b = static_cast<C>(y);                                                  \
      return static_cast<Out>(EXPR);                                                                         \
    }                                                                                                        \
  };

POPOPS_BINARY_FN(ADD, T, a + b)
POPOPS_BINARY_FN(SUBTRACT, T, a - b)
POPOPS_BINARY_FN(MULTIPLY, T, a *b)
POPOPS_BINARY_FN(DIVIDE, T, divOf(a, b))
POPOPS_BINARY_FN(MAXIMUM, T, a > b ? a : b)
POPOPS_BINARY_FN(MINIMUM, T, a < b ? a : b)
POPOPS_BINARY_FN(REMAINDER, T, remOf(a, b))
POPOPS_BINARY_FN(POWER, T, std::pow(a, b))
POPOPS_BINARY_FN(ATAN2, T, std::atan2(a, b))
POPOPS_BINARY_FN(INV_STD_DEV_TO_VARIANCE, T, 1 / (a * a) - b)
POPOPS_BINARY_FN(VARIANCE_TO_INV_STD_DEV, T, 1 / std::sqrt(a + b))
POPOPS_BINARY_FN(BITWISE_AND, T, a &b)
POPOPS_BINARY_FN(BITWISE_OR, T, a | b)
POPOPS_BINARY_FN(BITWISE_XOR, T, a ^ b)
POPOPS_BINARY_FN(BITWISE_XNOR, T, ~(a ^ b))
POPOPS_BINARY_FN(SHIFT_LEFT, T, shiftLeftOf(a, b))
POPOPS_BINARY_FN(SHIFT_RIGHT, T, shiftRightOf(a, b))
POPOPS_BINARY_FN(SHIFT_RIGHT_SIGN_EXTEND, T, shiftRightSignExtendOf(a, b))
POPOPS_BINARY_FN(EQUAL, bool, a == b)
POPOPS_BINARY_FN(NOT_EQUAL, bool, a != b)
POPOPS_BINARY_FN(GREATER_THAN, bool, a > b)
POPOPS_BINARY_FN(GREATER_THAN_EQUAL, bool, a >= b)
POPOPS_BINARY_FN(LESS_THAN, bool, a < b)
POPOPS_BINARY_FN(LESS_THAN_EQUAL, bool, a <= b)
POPOPS_BINARY_FN(LOGICAL_AND, bool, a &&b)
POPOPS_BINARY_FN(LOGICAL_OR, bool, a || b)
#undef POPOPS_BINARY_FN

/// The result of `op(a)` for element type T; `Out` is bool for the IS_* tests.
template <UnaryOpType op, typename T> struct UnaryOpFn;

#define POPOPS_UNARY_FN(OP, OUT, EXPR)                                                                       \
  template <typename T> struct UnaryOpFn<UnaryOpType::OP, T> {                                               \
    using Out = OUT;                                                                                         \
    static Out apply(T x) {                                                                                  \
      using C = typename Compute<T>::type;                                                                   \
      const C a = static_cast<C>(x);                                                                         \
      return static_cast<Out>(EXPR);                                                                         \
    }                                                                                                        \
  };

POPOPS_UNARY_FN(ABSOLUTE, T, absOf(a))
POPOPS_UNARY_FN(ASIN, T, std::asin(a))
POPOPS_UNARY_FN(BITWISE_NOT, T, ~a)
POPOPS_UNARY_FN(CBRT, T, std::cbrt(a))
POPOPS_UNARY_FN(CEIL, T, std::ceil(a))
POPOPS_UNARY_FN(COS, T, std::cos(a))
POPOPS_UNARY_FN(COUNT_LEADING_ZEROS, T, clzOf(a))
POPOPS_UNARY_FN(ERF, T, std::erf(a))
POPOPS_UNARY_FN(EXPONENT, T, std::exp(a))
POPOPS_UNARY_FN(EXPONENT_MINUS_ONE, T, std::expm1(a))
POPOPS_UNARY_FN(EXPONENT2, T, std::exp2(a))
POPOPS_UNARY_FN(FLOOR, T, std::floor(a))
POPOPS_UNARY_FN(GELU_ERF, T, geluErfOf(a))
POPOPS_UNARY_FN(INVERSE, T, 1 / a)
POPOPS_UNARY_FN(IS_FINITE, bool, std::isfinite(a))
POPOPS_UNARY_FN(IS_INF, bool, std::isinf(a))
POPOPS_UNARY_FN(IS_NAN, bool, std::isnan(a))
POPOPS_UNARY_FN(LOGARITHM, T, std::log(a))
POPOPS_UNARY_FN(LOGARITHM_ONE_PLUS, T, std::log1p(a))
POPOPS_UNARY_FN(LOGICAL_NOT, T, !a)
POPOPS_UNARY_FN(NEARBY_INT, T, std::nearbyint(a))
POPOPS_UNARY_FN(NEGATE, T, -a)
POPOPS_UNARY_FN(POPCOUNT, T, popcountOf(a))
POPOPS_UNARY_FN(RELU, T, a > 0 ? a : 0)
POPOPS_UNARY_FN(ROUND, T, std::round(a))
POPOPS_UNARY_FN(SIGNUM, T, signumOf(a))
POPOPS_UNARY_FN(SIN, T, std::sin(a))
POPOPS_UNARY_FN(TAN, T, std::tan(a))
POPOPS_UNARY_FN(TANH, T, std::tanh(a))
POPOPS_UNARY_FN(TRUNC, T, std::trunc(a))
POPOPS_UNARY_FN(SQRT, T, std::sqrt(a))
POPOPS_UNARY_FN(SQUARE, T, a *a)
POPOPS_UNARY_FN(SIGMOID, T, sigmoidOf(a))
POPOPS_UNARY_FN(RSQRT, T, 1 / std::sqrt(a))
#undef POPOPS_UNARY_FN

/// out = op(in).
template <UnaryOpType op, typename T> class UnaryOp1D : public MultiVertex {
public:
  using OutT = typename UnaryOpFn<op, T>::Out;
  Input<Vector<T, VectorLayout::SPAN, 8>> in;
  Output<Vector<OutT, VectorLayout::SPAN, 8>> out;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(out.size(), wid, numWorkers(), begin, end);
    const T *src = &in[0];
    OutT *dst = &out[0];
    for (unsigned i = begin; i < end; ++i)
      dst[i] = UnaryOpFn<op, T>::apply(src[i]);
  }
};

/// inOut = op(inOut).
template <UnaryOpType op, typename T> class UnaryOp1DInPlace : public MultiVertex {
public:
  InOut<Vector<T, VectorLayout::SPAN, 8>> inOut;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(inOut.size(), wid, numWorkers(), begin, end);
    T *data = &inOut[0];
    for (unsigned i = begin; i < end; ++i)
      data[i] = UnaryOpFn<op, T>::apply(data[i]);
  }
};

/// out = in1 op in2 (same length).
template <BinaryOpType op, typename T> class BinaryOp1D : public MultiVertex {
public:
  using OutT = typename BinaryOpFn<op, T>::Out;
  Input<Vector<T, VectorLayout::SPAN, 8>> in1;
  Input<Vector<T, VectorLayout::SPAN, 8>> in2;
  Output<Vector<OutT, VectorLayout::SPAN, 8>> out;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(out.size(), wid, numWorkers(), begin, end);
    const T *a = &in1[0];
    const T *b = &in2[0];
    OutT *dst = &out[0];
    for (unsigned i = begin; i < end; ++i)
      dst[i] = BinaryOpFn<op, T>::apply(a[i], b[i]);
  }
};

/// in1Out = in1Out op in2.
template <BinaryOpType op, typename T> class BinaryOp1DInPlace : public MultiVertex {
public:
  InOut<Vector<T, VectorLayout::SPAN, 8>> in1Out;
  Input<Vector<T, VectorLayout::SPAN, 8>> in2;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(in1Out.size(), wid, numWorkers(), begin, end);
    T *a = &in1Out[0];
    const T *b = &in2[0];
    for (unsigned i = begin; i < end; ++i)
      a[i] = BinaryOpFn<op, T>::apply(a[i], b[i]);
  }
};

/// out = data op B for a scalar B.
template <BinaryOpType op, typename T> class BroadcastScalar1D : public MultiVertex {
public:
  using OutT = typename BinaryOpFn<op, T>::Out;
  Input<Vector<T, VectorLayout::SPAN, 8>> data;
  Input<T> B;
  Output<Vector<OutT, VectorLayout::SPAN, 8>> out;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(out.size(), wid, numWorkers(), begin, end);
    const T b = *B;
    const T *a = &data[0];
    OutT *dst = &out[0];
    for (unsigned i = begin; i < end; ++i)
      dst[i] = BinaryOpFn<op, T>::apply(a[i], b);
  }
};

/// data = data op B for a scalar B.
template <BinaryOpType op, typename T> class BroadcastScalar1DInPlace : public MultiVertex {
public:
  InOut<Vector<T, VectorLayout::SPAN, 8>> data;
  Input<T> B;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(data.size(), wid, numWorkers(), begin, end);
    const T b = *B;
    T *a = &data[0];
    for (unsigned i = begin; i < end; ++i)
      a[i] = BinaryOpFn<op, T>::apply(a[i], b);
  }
};

/// out = in3 ? in1 : in2.
template <typename T> class Select : public MultiVertex {
public:
  Input<Vector<T, VectorLayout::SPAN, 8>> in1;
  Input<Vector<T, VectorLayout::SPAN, 8>> in2;
  Input<Vector<bool, VectorLayout::SPAN, 8>> in3;
  Output<Vector<T, VectorLayout::SPAN, 8>> out;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(out.size(), wid, numWorkers(), begin, end);
    for (unsigned i = begin; i < end; ++i)
      out[i] = in3[i] ? in1[i] : in2[i];
  }
};

/// in1Out = in3 ? in1Out : in2.
template <typename T> class SelectInPlace : public MultiVertex {
public:
  InOut<Vector<T, VectorLayout::SPAN, 8>> in1Out;
  Input<Vector<T, VectorLayout::SPAN, 8>> in2;
  Input<Vector<bool, VectorLayout::SPAN, 8>> in3;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(in1Out.size(), wid, numWorkers(), begin, end);
    for (unsigned i = begin; i < end; ++i)
      if (!in3[i])
        in1Out[i] = in2[i];
  }
};

/// out = min(max(in1, in2), in3).
template <typename T> class Clamp : public MultiVertex {
public:
  Input<Vector<T, VectorLayout::SPAN, 8>> in1;
  Input<Vector<T, VectorLayout::SPAN, 8>> in2;
  Input<Vector<T, VectorLayout::SPAN, 8>> in3;
  Output<Vector<T, VectorLayout::SPAN, 8>> out;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(out.size(), wid, numWorkers(), begin, end);
    using C = typename Compute<T>::type;
    for (unsigned i = begin; i < end; ++i) {
      C x = static_cast<C>(in1[i]);
      const C lo = static_cast<C>(in2[i]), hi = static_cast<C>(in3[i]);
      x = x < lo ? lo : x;
      out[i] = static_cast<T>(x > hi ? hi : x);
    }
  }
};

/// in1Out = min(max(in1Out, in2), in3).
template <typename T> class ClampInPlace : public MultiVertex {
public:
  InOut<Vector<T, VectorLayout::SPAN, 8>> in1Out;
  Input<Vector<T, VectorLayout::SPAN, 8>> in2;
  Input<Vector<T, VectorLayout::SPAN, 8>> in3;

  void compute(unsigned wid) {
    unsigned begin, end;
    workerRange(in1Out.size(), wid, numWorkers(), begin, end);
    using C = typename Compute<T>::type;
    for (unsigned i = begin; i < end; ++i) {
      C x = static_cast<C>(in1Out[i]);
      const C lo = static_cast<C>(in2[i]), hi = static_cast<C>(in3[i]);
      x = x < lo ? lo : x;
      in1Out[i] = static_cast<T>(x > hi ? hi : x);
    }
  }
};

// --- instantiations ----------------------------------------------------------------------
// Binary operators: every family, for the types the operator supports. Comparisons have
// no in-place form (their result is bool) except on bool operands.
#define POPOPS_BINARY_ALL(OP, T)                                                                             \
  template class BinaryOp1D<BinaryOpType::OP, T>;                                                            \
  template class BinaryOp1DInPlace<BinaryOpType::OP, T>;                                                     \
  template class BroadcastScalar1D<BinaryOpType::OP, T>;                                                     \
  template class BroadcastScalar1DInPlace<BinaryOpType::OP, T>;
#define POPOPS_BINARY_OUT(OP, T)                                                                             \
  template class BinaryOp1D<BinaryOpType::OP, T>;                                                            \
  template class BroadcastScalar1D<BinaryOpType::OP, T>;
#define POPOPS_FOR_FHIU(M, OP) M(OP, float) M(OP, half) M(OP, int) M(OP, unsigned int)
#define POPOPS_FOR_FH(M, OP) M(OP, float) M(OP, half)
#define POPOPS_FOR_IU(M, OP) M(OP, int) M(OP, unsigned int)

POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, ADD)
POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, SUBTRACT)
POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, MULTIPLY)
POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, DIVIDE)
POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, MAXIMUM)
POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, MINIMUM)
POPOPS_FOR_FHIU(POPOPS_BINARY_ALL, REMAINDER)
POPOPS_FOR_FH(POPOPS_BINARY_ALL, POWER)
POPOPS_FOR_FH(POPOPS_BINARY_ALL, ATAN2)
POPOPS_FOR_FH(POPOPS_BINARY_ALL, INV_STD_DEV_TO_VARIANCE)
POPOPS_FOR_FH(POPOPS_BINARY_ALL, VARIANCE_TO_INV_STD_DEV)
POPOPS_FOR_IU(POPOPS_BINARY_ALL, BITWISE_AND)
POPOPS_FOR_IU(POPOPS_BINARY_ALL, BITWISE_OR)
POPOPS_FOR_IU(POPOPS_BINARY_ALL, BITWISE_XOR)
POPOPS_FOR_IU(POPOPS_BINARY_ALL, BITWISE_XNOR)
POPOPS_FOR_IU(POPOPS_BINARY_ALL, SHIFT_LEFT)
POPOPS_FOR_IU(POPOPS_BINARY_ALL, SHIFT_RIGHT)
POPOPS_BINARY_ALL(SHIFT_RIGHT_SIGN_EXTEND, int)
POPOPS_FOR_FHIU(POPOPS_BINARY_OUT, EQUAL)
POPOPS_FOR_FHIU(POPOPS_BINARY_OUT, NOT_EQUAL)
POPOPS_FOR_FHIU(POPOPS_BINARY_OUT, GREATER_THAN)
POPOPS_FOR_FHIU(POPOPS_BINARY_OUT, GREATER_THAN_EQUAL)
POPOPS_FOR_FHIU(POPOPS_BINARY_OUT, LESS_THAN)
POPOPS_FOR_FHIU(POPOPS_BINARY_OUT, LESS_THAN_EQUAL)
POPOPS_BINARY_ALL(EQUAL, bool)
POPOPS_BINARY_ALL(NOT_EQUAL, bool)
POPOPS_BINARY_ALL(LOGICAL_AND, bool)
POPOPS_BINARY_ALL(LOGICAL_OR, bool)

#define POPOPS_UNARY_ALL(OP, T)                                                                              \
  template class UnaryOp1D<UnaryOpType::OP, T>;                                                              \
  template class UnaryOp1DInPlace<UnaryOpType::OP, T>;
#define POPOPS_UNARY_OUT(OP, T) template class UnaryOp1D<UnaryOpType::OP, T>;

POPOPS_FOR_FH(POPOPS_UNARY_ALL, ASIN)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, CBRT)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, CEIL)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, COS)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, ERF)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, EXPONENT)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, EXPONENT_MINUS_ONE)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, EXPONENT2)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, FLOOR)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, GELU_ERF)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, INVERSE)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, LOGARITHM)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, LOGARITHM_ONE_PLUS)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, NEARBY_INT)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, ROUND)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, SIN)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, TAN)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, TANH)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, TRUNC)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, SQRT)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, SIGMOID)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, RSQRT)
POPOPS_FOR_FH(POPOPS_UNARY_ALL, RELU)
POPOPS_FOR_FH(POPOPS_UNARY_OUT, IS_FINITE)
POPOPS_FOR_FH(POPOPS_UNARY_OUT, IS_INF)
POPOPS_FOR_FH(POPOPS_UNARY_OUT, IS_NAN)
POPOPS_FOR_FHIU(POPOPS_UNARY_ALL, ABSOLUTE)
POPOPS_FOR_FHIU(POPOPS_UNARY_ALL, SQUARE)
POPOPS_UNARY_ALL(NEGATE, float)
POPOPS_UNARY_ALL(NEGATE, half)
POPOPS_UNARY_ALL(NEGATE, int)
POPOPS_UNARY_ALL(SIGNUM, float)
POPOPS_UNARY_ALL(SIGNUM, half)
POPOPS_UNARY_ALL(SIGNUM, int)
POPOPS_FOR_IU(POPOPS_UNARY_ALL, BITWISE_NOT)
POPOPS_FOR_IU(POPOPS_UNARY_ALL, COUNT_LEADING_ZEROS)
POPOPS_FOR_IU(POPOPS_UNARY_ALL, POPCOUNT)
POPOPS_UNARY_ALL(LOGICAL_NOT, bool)

#define POPOPS_TERNARY(T)                                                                                    \
  template class Select<T>;                                                                                  \
  template class SelectInPlace<T>;                                                                           \
  template class Clamp<T>;                                                                                   \
  template class ClampInPlace<T>;
POPOPS_TERNARY(float)
POPOPS_TERNARY(half)
POPOPS_TERNARY(int)
POPOPS_TERNARY(unsigned int)
template class Select<bool>;
template class SelectInPlace<bool>;

} // namespace popops
