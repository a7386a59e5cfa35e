// Copyright (c) Aspen contributors.
#include "ExpressionGenerator.hpp"

#include "Internal.hpp"

#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace aspen::ops {

using popops::expr::BinaryOp;
using popops::expr::BinaryOpType;
using popops::expr::Cast;
using popops::expr::Const;
using popops::expr::Expr;
using popops::expr::PlaceHolder;
using popops::expr::TernaryOp;
using popops::expr::TernaryOpType;
using popops::expr::UnaryOp;
using popops::expr::UnaryOpType;

namespace {

enum class TypeClass { FloatOnly, IntegralOnly, BoolOnly, Numeric, NumericOrBool };

TypeClass classOf(UnaryOpType op) {
  switch (op) {
  case UnaryOpType::BITWISE_NOT:
  case UnaryOpType::COUNT_LEADING_ZEROS:
  case UnaryOpType::POPCOUNT:
    return TypeClass::IntegralOnly;
  case UnaryOpType::LOGICAL_NOT:
    return TypeClass::BoolOnly;
  case UnaryOpType::ABSOLUTE:
  case UnaryOpType::NEGATE:
  case UnaryOpType::SIGNUM:
  case UnaryOpType::SQUARE:
    return TypeClass::Numeric;
  default:
    return TypeClass::FloatOnly;
  }
}

TypeClass classOf(BinaryOpType op) {
  switch (op) {
  case BinaryOpType::ADD:
  case BinaryOpType::SUBTRACT:
  case BinaryOpType::MULTIPLY:
  case BinaryOpType::DIVIDE:
  case BinaryOpType::MAXIMUM:
  case BinaryOpType::MINIMUM:
  case BinaryOpType::REMAINDER:
  case BinaryOpType::GREATER_THAN:
  case BinaryOpType::GREATER_THAN_EQUAL:
  case BinaryOpType::LESS_THAN:
  case BinaryOpType::LESS_THAN_EQUAL:
    return TypeClass::Numeric;
  case BinaryOpType::EQUAL:
  case BinaryOpType::NOT_EQUAL:
    return TypeClass::NumericOrBool;
  case BinaryOpType::BITWISE_AND:
  case BinaryOpType::BITWISE_OR:
  case BinaryOpType::BITWISE_XOR:
  case BinaryOpType::BITWISE_XNOR:
  case BinaryOpType::SHIFT_LEFT:
  case BinaryOpType::SHIFT_RIGHT:
  case BinaryOpType::SHIFT_RIGHT_SIGN_EXTEND:
    return TypeClass::IntegralOnly;
  case BinaryOpType::LOGICAL_AND:
  case BinaryOpType::LOGICAL_OR:
    return TypeClass::BoolOnly;
  default:
    return TypeClass::FloatOnly;
  }
}

bool isSupportedElementType(const poplar::Type &t) {
  return t == poplar::FLOAT || t == poplar::HALF || t == poplar::INT || t == poplar::UNSIGNED_INT ||
         t == poplar::BOOL;
}

bool fits(TypeClass c, const poplar::Type &t) {
  const bool isFloat = t == poplar::FLOAT || t == poplar::HALF;
  const bool isInt = t == poplar::INT || t == poplar::UNSIGNED_INT;
  switch (c) {
  case TypeClass::FloatOnly:
    return isFloat;
  case TypeClass::IntegralOnly:
    return isInt;
  case TypeClass::BoolOnly:
    return t == poplar::BOOL;
  case TypeClass::Numeric:
    return isFloat || isInt;
  case TypeClass::NumericOrBool:
    return isFloat || isInt || t == poplar::BOOL;
  }
  return false;
}

std::string className(TypeClass c) {
  switch (c) {
  case TypeClass::FloatOnly:
    return "float or half";
  case TypeClass::IntegralOnly:
    return "int or unsigned int";
  case TypeClass::BoolOnly:
    return "bool";
  case TypeClass::Numeric:
    return "float, half, int or unsigned int";
  case TypeClass::NumericOrBool:
    return "float, half, int, unsigned int or bool";
  }
  return "";
}

void checkFits(TypeClass c, const poplar::Type &t, const std::string &opName, const std::string &what) {
  if (!fits(c, t))
    throw poputil::poplibs_error(opName + ": " + what + " needs " + className(c) + " operands, got " +
                                 t.toString().str());
}

} // namespace

bool isPredicate(BinaryOpType op) {
  switch (op) {
  case BinaryOpType::EQUAL:
  case BinaryOpType::NOT_EQUAL:
  case BinaryOpType::GREATER_THAN:
  case BinaryOpType::GREATER_THAN_EQUAL:
  case BinaryOpType::LESS_THAN:
  case BinaryOpType::LESS_THAN_EQUAL:
  case BinaryOpType::LOGICAL_AND:
  case BinaryOpType::LOGICAL_OR:
    return true;
  default:
    return false;
  }
}

bool isPredicate(UnaryOpType op) {
  return op == UnaryOpType::IS_FINITE || op == UnaryOpType::IS_INF || op == UnaryOpType::IS_NAN;
}

poplar::Type inferExprType(const Expr &expr, const std::vector<poplar::Type> &inputTypes,
                           const poplar::Type &hint, const std::string &opName) {
  if (const auto *p = expr.getAs<PlaceHolder>()) {
    if (p->getIndex() == 0 || p->getIndex() > inputTypes.size())
      throw poputil::poplibs_error(opName + ": the expression uses placeholder _" +
                                   std::to_string(p->getIndex()) + " but only " +
                                   std::to_string(inputTypes.size()) + " tensor(s) were given");
    const poplar::Type t = inputTypes[p->getIndex() - 1];
    if (!isSupportedElementType(t))
      throw poputil::poplibs_error(opName + ": element type " + t.toString().str() + " of tensor _" +
                                   std::to_string(p->getIndex()) +
                                   " is not supported (float, half, int, unsigned int, bool)");
    return t;
  }
  if (const auto *c = expr.getAs<Const>())
    return hint.valid() ? hint : c->getType();
  if (const auto *c = expr.getAs<Cast>()) {
    inferExprType(c->getLHS(), inputTypes, poplar::Type(), opName);
    if (!isSupportedElementType(c->getRHSType()))
      throw poputil::poplibs_error(opName + ": Cast to " + c->getRHSType().toString().str() +
                                   " is not supported");
    return c->getRHSType();
  }
  if (const auto *u = expr.getAs<UnaryOp>()) {
    const poplar::Type t =
        inferExprType(u->getArg(), inputTypes, isPredicate(u->getOpType()) ? poplar::Type() : hint, opName);
    checkFits(classOf(u->getOpType()), t, opName, toString(u->getOpType()));
    return isPredicate(u->getOpType()) ? poplar::BOOL : t;
  }
  if (const auto *b = expr.getAs<BinaryOp>()) {
    const BinaryOpType op = b->getOpType();
    const poplar::Type operandHint = isPredicate(op) ? poplar::Type() : hint;
    poplar::Type lhs, rhs;
    // A constant takes the type of the other operand.
    if (b->getLHS().isA<Const>() && !b->getRHS().isA<Const>()) {
      rhs = inferExprType(b->getRHS(), inputTypes, operandHint, opName);
      lhs = inferExprType(b->getLHS(), inputTypes, rhs, opName);
    } else {
      lhs = inferExprType(b->getLHS(), inputTypes, operandHint, opName);
      rhs = inferExprType(b->getRHS(), inputTypes, lhs, opName);
    }
    if (lhs != rhs)
      throw poputil::poplibs_error(opName + ": operands of " + toString(op) + " have different types (" +
                                   lhs.toString().str() + " and " + rhs.toString().str() + ")");
    checkFits(classOf(op), lhs, opName, toString(op));
    return isPredicate(op) ? poplar::BOOL : lhs;
  }
  if (const auto *t = expr.getAs<TernaryOp>()) {
    const bool select = t->getOpType() == TernaryOpType::SELECT;
    // SELECT(a, b, cond); CLAMP(x, lo, hi).
    const Expr &a = t->getArg0();
    const Expr &b = t->getArg1();
    poplar::Type ta, tb;
    if (a.isA<Const>() && !b.isA<Const>()) {
      tb = inferExprType(b, inputTypes, hint, opName);
      ta = inferExprType(a, inputTypes, tb, opName);
    } else {
      ta = inferExprType(a, inputTypes, hint, opName);
      tb = inferExprType(b, inputTypes, ta, opName);
    }
    const poplar::Type tc = inferExprType(t->getArg2(), inputTypes, select ? poplar::BOOL : ta, opName);
    const std::string name = select ? "SELECT" : "CLAMP";
    if (ta != tb || (!select && tc != ta))
      throw poputil::poplibs_error(opName + ": operands of " + name + " have different types (" +
                                   ta.toString().str() + ", " + tb.toString().str() +
                                   (select ? "" : ", " + tc.toString().str()) + ")");
    if (select && tc != poplar::BOOL)
      throw poputil::poplibs_error(opName + ": the condition of SELECT must be bool, got " +
                                   tc.toString().str());
    if (!select)
      checkFits(TypeClass::Numeric, ta, opName, name);
    return ta;
  }
  throw poputil::poplibs_error(opName + ": unknown kind of expression node");
}

double opCycles(UnaryOpType op, const poplar::Type &type) {
  const double scale = type == poplar::HALF ? 1.0 : 1.0;
  switch (op) {
  case UnaryOpType::ABSOLUTE:
  case UnaryOpType::NEGATE:
  case UnaryOpType::SQUARE:
  case UnaryOpType::BITWISE_NOT:
  case UnaryOpType::LOGICAL_NOT:
  case UnaryOpType::RELU:
  case UnaryOpType::SIGNUM:
    return 1.0 * scale;
  case UnaryOpType::CEIL:
  case UnaryOpType::FLOOR:
  case UnaryOpType::ROUND:
  case UnaryOpType::TRUNC:
  case UnaryOpType::NEARBY_INT:
  case UnaryOpType::IS_FINITE:
  case UnaryOpType::IS_INF:
  case UnaryOpType::IS_NAN:
  case UnaryOpType::COUNT_LEADING_ZEROS:
  case UnaryOpType::POPCOUNT:
    return 2.0 * scale;
  case UnaryOpType::INVERSE:
  case UnaryOpType::SQRT:
  case UnaryOpType::RSQRT:
    return 6.0 * scale;
  default:
    return 12.0 * scale; // transcendental functions
  }
}

double opCycles(BinaryOpType op, const poplar::Type &) {
  switch (op) {
  case BinaryOpType::DIVIDE:
  case BinaryOpType::REMAINDER:
  case BinaryOpType::VARIANCE_TO_INV_STD_DEV:
  case BinaryOpType::INV_STD_DEV_TO_VARIANCE:
    return 6.0;
  case BinaryOpType::POWER:
  case BinaryOpType::ATAN2:
    return 24.0;
  default:
    return 1.0;
  }
}

unsigned opFlops(UnaryOpType op) {
  switch (op) {
  case UnaryOpType::BITWISE_NOT:
  case UnaryOpType::LOGICAL_NOT:
  case UnaryOpType::COUNT_LEADING_ZEROS:
  case UnaryOpType::POPCOUNT:
  case UnaryOpType::IS_FINITE:
  case UnaryOpType::IS_INF:
  case UnaryOpType::IS_NAN:
    return 0;
  default:
    return 1;
  }
}

unsigned opFlops(BinaryOpType op) {
  switch (op) {
  case BinaryOpType::BITWISE_AND:
  case BinaryOpType::BITWISE_OR:
  case BinaryOpType::BITWISE_XOR:
  case BinaryOpType::BITWISE_XNOR:
  case BinaryOpType::SHIFT_LEFT:
  case BinaryOpType::SHIFT_RIGHT:
  case BinaryOpType::SHIFT_RIGHT_SIGN_EXTEND:
  case BinaryOpType::LOGICAL_AND:
  case BinaryOpType::LOGICAL_OR:
    return 0;
  default:
    return 1;
  }
}

namespace {

// Operators whose generated text the host compiler turns into straight-line vector code (no
// library call, no branch, no integer division): an expression of only these is vectorised at
// 8 lanes (below, "widen").
bool vectorisesWide(UnaryOpType op) {
  switch (op) {
  case UnaryOpType::ABSOLUTE:
  case UnaryOpType::BITWISE_NOT:
  case UnaryOpType::CEIL:
  case UnaryOpType::FLOOR:
  case UnaryOpType::INVERSE:
  case UnaryOpType::LOGICAL_NOT:
  case UnaryOpType::NEGATE:
  case UnaryOpType::RELU:
  case UnaryOpType::RSQRT:
  case UnaryOpType::SIGNUM:
  case UnaryOpType::SQRT:
  case UnaryOpType::SQUARE:
  case UnaryOpType::TRUNC:
    return true;
  default:
    return false;
  }
}

bool vectorisesWide(BinaryOpType op, const poplar::Type &type) {
  switch (op) {
  case BinaryOpType::DIVIDE:
    return type == poplar::FLOAT || type == poplar::HALF;
  case BinaryOpType::ATAN2:
  case BinaryOpType::POWER:
  case BinaryOpType::REMAINDER:
    return false;
  default:
    return true;
  }
}

// Arithmetic runs in the "compute" C++ type: float for half (rounded back to half
// precision after each operation, as the IPU's half arithmetic does).
std::string computeType(const poplar::Type &t) {
  if (t == poplar::FLOAT || t == poplar::HALF)
    return "float";
  if (t == poplar::INT)
    return "int";
  if (t == poplar::UNSIGNED_INT)
    return "unsigned";
  return "bool";
}

std::string storageType(const poplar::Type &t) {
  if (t == poplar::HALF)
    return "half";
  if (t == poplar::UNSIGNED_INT)
    return "unsigned int";
  return t.toString().str();
}

std::string hexFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// The text of a constant of `type` (HALF values are rounded to half precision now).
std::string constantText(const poplar::Target &target, const Const &c, const poplar::Type &type) {
  if (type == poplar::BOOL)
    return c.getDataAsDouble() != 0.0 ? "true" : "false";
  if (type == poplar::INT)
    return "static_cast<int>(" + std::to_string(c.getDataAsInt64()) + "ll)";
  if (type == poplar::UNSIGNED_INT)
    return "static_cast<unsigned>(" + std::to_string(static_cast<unsigned long long>(c.getDataAsInt64())) +
           "ull)";
  float f = static_cast<float>(c.getDataAsDouble());
  if (type == poplar::HALF) {
    std::uint16_t bits;
    poplar::copyFloatToDeviceHalf(target, &f, &bits, 1);
    poplar::copyDeviceHalfToFloat(target, &bits, &f, 1);
  }
  if (f != f)
    return "__builtin_nanf(\"\")";
  if (f == std::numeric_limits<float>::infinity())
    return "__builtin_inff()";
  if (f == -std::numeric_limits<float>::infinity())
    return "(-__builtin_inff())";
  return "static_cast<float>(" + hexFloat(f) + ")";
}

std::string unaryText(UnaryOpType op, const std::string &a) {
  switch (op) {
  case UnaryOpType::ABSOLUTE:
    return "aspen_abs(" + a + ")";
  case UnaryOpType::ASIN:
    return "std::asin(" + a + ")";
  case UnaryOpType::BITWISE_NOT:
    return "(~" + a + ")";
  case UnaryOpType::CBRT:
    return "std::cbrt(" + a + ")";
  case UnaryOpType::CEIL:
    return "std::ceil(" + a + ")";
  case UnaryOpType::COS:
    return "std::cos(" + a + ")";
  case UnaryOpType::COUNT_LEADING_ZEROS:
    return "aspen_clz(" + a + ")";
  case UnaryOpType::ERF:
    return "std::erf(" + a + ")";
  case UnaryOpType::EXPONENT:
    return "std::exp(" + a + ")";
  case UnaryOpType::EXPONENT_MINUS_ONE:
    return "std::expm1(" + a + ")";
  case UnaryOpType::EXPONENT2:
    return "std::exp2(" + a + ")";
  case UnaryOpType::FLOOR:
    return "std::floor(" + a + ")";
  case UnaryOpType::GELU_ERF:
    return "(0.5f * " + a + " * (1.0f + std::erf(" + a + " * 0.70710678118654752f)))";
  case UnaryOpType::INVERSE:
    return "(1.0f / " + a + ")";
  case UnaryOpType::IS_FINITE:
    return "static_cast<bool>(std::isfinite(" + a + "))";
  case UnaryOpType::IS_INF:
    return "static_cast<bool>(std::isinf(" + a + "))";
  case UnaryOpType::IS_NAN:
    return "static_cast<bool>(std::isnan(" + a + "))";
  case UnaryOpType::LOGARITHM:
    return "std::log(" + a + ")";
  case UnaryOpType::LOGARITHM_ONE_PLUS:
    return "std::log1p(" + a + ")";
  case UnaryOpType::LOGICAL_NOT:
    return "(!" + a + ")";
  case UnaryOpType::NEARBY_INT:
    return "std::nearbyint(" + a + ")";
  case UnaryOpType::NEGATE:
    return "(-" + a + ")";
  case UnaryOpType::POPCOUNT:
    return "aspen_popcount(" + a + ")";
  case UnaryOpType::RELU:
    return "(" + a + " > 0 ? " + a + " : 0.0f)";
  case UnaryOpType::ROUND:
    return "std::round(" + a + ")";
  case UnaryOpType::SIGNUM:
    return "aspen_signum(" + a + ")";
  case UnaryOpType::SIN:
    return "std::sin(" + a + ")";
  case UnaryOpType::TAN:
    return "std::tan(" + a + ")";
  case UnaryOpType::TANH:
    return "std::tanh(" + a + ")";
  case UnaryOpType::TRUNC:
    return "std::trunc(" + a + ")";
  case UnaryOpType::SQRT:
    return "std::sqrt(" + a + ")";
  case UnaryOpType::SQUARE:
    return "(" + a + " * " + a + ")";
  case UnaryOpType::SIGMOID:
    return "(1.0f / (1.0f + std::exp(-" + a + ")))";
  case UnaryOpType::RSQRT:
    return "(1.0f / std::sqrt(" + a + "))";
  }
  return a;
}

std::string binaryText(BinaryOpType op, const std::string &a, const std::string &b) {
  switch (op) {
  case BinaryOpType::ADD:
    return "(" + a + " + " + b + ")";
  case BinaryOpType::ATAN2:
    return "std::atan2(" + a + ", " + b + ")";
  case BinaryOpType::BITWISE_AND:
    return "(" + a + " & " + b + ")";
  case BinaryOpType::BITWISE_OR:
    return "(" + a + " | " + b + ")";
  case BinaryOpType::BITWISE_XOR:
    return "(" + a + " ^ " + b + ")";
  case BinaryOpType::BITWISE_XNOR:
    return "(~(" + a + " ^ " + b + "))";
  case BinaryOpType::DIVIDE:
    return "aspen_div(" + a + ", " + b + ")";
  case BinaryOpType::EQUAL:
    return "(" + a + " == " + b + ")";
  case BinaryOpType::GREATER_THAN_EQUAL:
    return "(" + a + " >= " + b + ")";
  case BinaryOpType::GREATER_THAN:
    return "(" + a + " > " + b + ")";
  case BinaryOpType::INV_STD_DEV_TO_VARIANCE:
    return "(1.0f / (" + a + " * " + a + ") - " + b + ")";
  case BinaryOpType::LESS_THAN_EQUAL:
    return "(" + a + " <= " + b + ")";
  case BinaryOpType::LOGICAL_AND:
    return "(" + a + " && " + b + ")";
  case BinaryOpType::LOGICAL_OR:
    return "(" + a + " || " + b + ")";
  case BinaryOpType::LESS_THAN:
    return "(" + a + " < " + b + ")";
  case BinaryOpType::MAXIMUM:
    return "aspen_max(" + a + ", " + b + ")";
  case BinaryOpType::MINIMUM:
    return "aspen_min(" + a + ", " + b + ")";
  case BinaryOpType::MULTIPLY:
    return "(" + a + " * " + b + ")";
  case BinaryOpType::NOT_EQUAL:
    return "(" + a + " != " + b + ")";
  case BinaryOpType::POWER:
    return "std::pow(" + a + ", " + b + ")";
  case BinaryOpType::REMAINDER:
    return "aspen_rem(" + a + ", " + b + ")";
  case BinaryOpType::SHIFT_LEFT:
    return "aspen_shl(" + a + ", " + b + ")";
  case BinaryOpType::SHIFT_RIGHT:
    return "aspen_shr(" + a + ", " + b + ")";
  case BinaryOpType::SHIFT_RIGHT_SIGN_EXTEND:
    return "aspen_sra(" + a + ", " + b + ")";
  case BinaryOpType::SUBTRACT:
    return "(" + a + " - " + b + ")";
  case BinaryOpType::VARIANCE_TO_INV_STD_DEV:
    return "(1.0f / std::sqrt(" + a + " + " + b + "))";
  }
  return a;
}

const char *kPrelude = R"(#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>

namespace {
#if defined(__clang__)
// A loop the vectoriser cannot widen as asked stays as it is, without a warning.
#pragma clang diagnostic ignored "-Wpass-failed"
#endif
inline float aspen_rh(float x) { return static_cast<float>(poplar::half(x)); }
inline float aspen_abs(float a) { return std::fabs(a); }
inline int aspen_abs(int a) { return a < 0 ? -a : a; }
inline unsigned aspen_abs(unsigned a) { return a; }
// Integer division is defined for every input, as in popops' vertices (RISC-V's rules);
// shift counts use their low 5 bits.
inline float aspen_div(float a, float b) { return a / b; }
inline int aspen_div(int a, int b) {
  return b == 0 ? -1 : b == -1 ? static_cast<int>(0u - static_cast<unsigned>(a)) : a / b;
}
inline unsigned aspen_div(unsigned a, unsigned b) { return b == 0 ? ~0u : a / b; }
inline float aspen_rem(float a, float b) { return std::fmod(a, b); }
inline int aspen_rem(int a, int b) { return b == 0 ? a : b == -1 ? 0 : a % b; }
inline unsigned aspen_rem(unsigned a, unsigned b) { return b == 0 ? a : a % b; }
inline int aspen_shl(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) << (static_cast<unsigned>(b) & 31u));
}
inline unsigned aspen_shl(unsigned a, unsigned b) { return a << (b & 31u); }
inline int aspen_sra(int a, int b) { return a >> (static_cast<unsigned>(b) & 31u); }
inline unsigned aspen_sra(unsigned a, unsigned b) { return a >> (b & 31u); }
template <class T> inline T aspen_max(T a, T b) { return a > b ? a : b; }
template <class T> inline T aspen_min(T a, T b) { return a < b ? a : b; }
template <class T> inline T aspen_signum(T a) { return static_cast<T>((T(0) < a) - (a < T(0))); }
inline int aspen_shr(int a, int b) {
  return static_cast<int>(static_cast<unsigned>(a) >> (static_cast<unsigned>(b) & 31u));
}
inline unsigned aspen_shr(unsigned a, unsigned b) { return a >> (b & 31u); }
inline unsigned aspen_clz(unsigned a) { return a ? __builtin_clz(a) : 32u; }
inline int aspen_clz(int a) { return static_cast<int>(aspen_clz(static_cast<unsigned>(a))); }
inline unsigned aspen_popcount(unsigned a) { return __builtin_popcount(a); }
inline int aspen_popcount(int a) { return __builtin_popcount(static_cast<unsigned>(a)); }
} // namespace
)";

// Emits SSA statements computing an expression; values are held in compute types.
class Emitter {
public:
  Emitter(const poplar::Target &target, const std::vector<poplar::Type> &types,
          const std::vector<OperandKind> &kinds, std::size_t numOutputs)
      : target_(target), types_(types), kinds_(kinds), numOutputs_(numOutputs) {}

  struct Value {
    std::string name;
    poplar::Type type;
  };

  Value emit(const Expr &e, const poplar::Type &hint) {
    if (const auto *p = e.getAs<PlaceHolder>())
      return load(p->getIndex());
    if (const auto *c = e.getAs<Const>()) {
      const poplar::Type t = hint.valid() ? hint : c->getType();
      return {constantText(target_, *c, t), t};
    }
    if (const auto *c = e.getAs<Cast>()) {
      const Value v = emit(c->getLHS(), poplar::Type());
      const poplar::Type to = c->getRHSType();
      std::string text;
      if (to == poplar::BOOL)
        text = "(" + v.name + " != 0)";
      else if (to == poplar::HALF)
        text = "aspen_rh(static_cast<float>(" + v.name + "))";
      else
        text = "static_cast<" + computeType(to) + ">(" + v.name + ")";
      return define(text, to);
    }
    if (const auto *u = e.getAs<UnaryOp>()) {
      const Value a = emit(u->getArg(), isPredicate(u->getOpType()) ? poplar::Type() : hint);
      cycles_ += opCycles(u->getOpType(), a.type);
      flops_ += opFlops(u->getOpType());
      wide_ = wide_ && vectorisesWide(u->getOpType());
      const poplar::Type rt = isPredicate(u->getOpType()) ? poplar::BOOL : a.type;
      return define(round(unaryText(u->getOpType(), a.name), rt), rt);
    }
    if (const auto *b = e.getAs<BinaryOp>()) {
      const BinaryOpType op = b->getOpType();
      const poplar::Type operandHint = isPredicate(op) ? poplar::Type() : hint;
      Value l, r;
      if (b->getLHS().isA<Const>() && !b->getRHS().isA<Const>()) {
        r = emit(b->getRHS(), operandHint);
        l = emit(b->getLHS(), r.type);
      } else {
        l = emit(b->getLHS(), operandHint);
        r = emit(b->getRHS(), l.type);
      }
      cycles_ += opCycles(op, l.type);
      flops_ += opFlops(op);
      wide_ = wide_ && vectorisesWide(op, l.type);
      const poplar::Type rt = isPredicate(op) ? poplar::BOOL : l.type;
      return define(round(binaryText(op, l.name, r.name), rt), rt);
    }
    const auto *t = e.getAs<TernaryOp>();
    const bool select = t->getOpType() == TernaryOpType::SELECT;
    Value a, b;
    if (t->getArg0().isA<Const>() && !t->getArg1().isA<Const>()) {
      b = emit(t->getArg1(), hint);
      a = emit(t->getArg0(), b.type);
    } else {
      a = emit(t->getArg0(), hint);
      b = emit(t->getArg1(), a.type);
    }
    const Value c = emit(t->getArg2(), select ? poplar::BOOL : a.type);
    cycles_ += select ? 1.0 : 2.0;
    flops_ += select ? 0 : 2;
    if (select)
      return define("(" + c.name + " ? " + a.name + " : " + b.name + ")", a.type);
    return define("aspen_min(aspen_max(" + a.name + ", " + b.name + "), " + c.name + ")", a.type);
  }

  std::string scalarLoads;
  std::string body;
  double cycles() const { return cycles_; }
  unsigned flops() const { return flops_; }
  bool wide() const { return wide_; }

private:
  static std::string round(const std::string &text, const poplar::Type &t) {
    return t == poplar::HALF ? "aspen_rh(" + text + ")" : text;
  }
  Value define(const std::string &text, const poplar::Type &t) {
    const std::string name = "v" + std::to_string(next_++);
    body += "      const " + computeType(t) + " " + name + " = " + text + ";\n";
    return {name, t};
  }
  Value load(unsigned index) {
    auto it = loaded_.find(index);
    if (it != loaded_.end())
      return it->second;
    const poplar::Type t = types_[index - 1];
    const OperandKind kind = kinds_[index - 1];
    const std::string field =
        kind == OperandKind::Output ? outputField(index - 1, numOutputs_) : "in" + std::to_string(index);
    Value v;
    if (kind == OperandKind::Scalar) {
      v = {"s" + std::to_string(index), t};
      scalarLoads += "    const " + computeType(t) + " " + v.name + " = static_cast<" + computeType(t) +
                     ">(*" + field + ");\n";
    } else {
      v = {"x" + std::to_string(index), t};
      body += "      const " + computeType(t) + " " + v.name + " = static_cast<" + computeType(t) + ">(" +
              field + "[i]);\n";
    }
    loaded_[index] = v;
    return v;
  }

  const poplar::Target &target_;
  const std::vector<poplar::Type> &types_;
  const std::vector<OperandKind> &kinds_;
  std::size_t numOutputs_;
  std::map<unsigned, Value> loaded_;
  unsigned next_ = 0;
  double cycles_ = 0;
  unsigned flops_ = 0;
  bool wide_ = true;
};

std::string hex64(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::uint64_t fnv1a(const std::string &s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace

std::string outputField(std::size_t index, std::size_t numOutputs) {
  return numOutputs == 1 ? std::string("out") : "out" + std::to_string(index + 1);
}

GeneratedCodelet generateMapCodelet(const poplar::Target &target, const std::vector<const Expr *> &exprs,
                                    const std::vector<poplar::Type> &inputTypes,
                                    const std::vector<OperandKind> &kinds,
                                    const std::vector<poplar::Type> &outTypes) {
  const std::size_t numOutputs = exprs.size();
  Emitter emitter(target, inputTypes, kinds, numOutputs);
  // Every result is computed (reading the inputs) before any is stored: in place, output k
  // overwrites input k+1, which a later expression may still read.
  std::vector<Emitter::Value> results;
  for (std::size_t j = 0; j < numOutputs; ++j)
    results.push_back(emitter.emit(*exprs[j], outTypes[j]));

  std::ostringstream fields;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const std::string t = storageType(inputTypes[k]);
    if (kinds[k] == OperandKind::Vector)
      fields << "  poplar::Input<poplar::Vector<" << t << ", poplar::VectorLayout::SPAN, 8>> in" << k + 1
             << ";\n";
    else if (kinds[k] == OperandKind::Scalar)
      fields << "  poplar::Input<" << t << "> in" << k + 1 << ";\n";
  }
  std::string stores;
  for (std::size_t j = 0; j < numOutputs; ++j) {
    const bool inPlace = j < kinds.size() && kinds[j] == OperandKind::Output;
    const std::string field = outputField(j, numOutputs);
    fields << "  poplar::" << (inPlace ? "InOut" : "Output") << "<poplar::Vector<" << storageType(outTypes[j])
           << ", poplar::VectorLayout::SPAN, 8>> " << field << ";\n";
    const std::string value = outTypes[j] == poplar::HALF
                                  ? "poplar::half(static_cast<float>(" + results[j].name + "))"
                                  : "static_cast<" + storageType(outTypes[j]) + ">(" + results[j].name + ")";
    stores += "      " + field + "[i] = " + value + ";\n";
  }

  // Widen: clang's vectoriser picks its lane count by the widest type in the loop, and with
  // cycle counting (docs/cost-model.md) that is the function's 64-bit cycle counter, an add
  // reduction the loop carries: 4 lanes, 128-bit vectors, half the width the codelets are
  // compiled for (-mavx2) and the width a native loop over the same floats gets. So: 8 lanes,
  // 2 interleaved (16 elements an iteration; 4 interleaved spill vector registers), when the
  // expression has only operators that vectorise without calls or branches. The count does
  // not change: it is the sum of the scalar iterations' costs however the loop is vectorised.
  // (GCC, the fallback codelet compiler, counts nothing and ignores the pragma.)
  const std::string widen =
      emitter.wide()
          ? "#if defined(__clang__)\n#pragma clang loop vectorize_width(8) interleave_count(2)\n#endif\n"
          : "";
  // Each worker takes whole groups of elements: 16, one iteration of the widened loop, so that
  // only the region's last worker runs a scalar remainder (up to 15 elements, ~45 host cycles,
  // in each of the 8,832 calls of popops_bench's map); else 4.
  const unsigned group = emitter.wide() ? 16 : 4;

  // The class body, with the name left open so the name can be a hash of the body.
  std::ostringstream body;
  body << "public:\n"
       << fields.str() << "\n"
       << "  void compute(unsigned wid) {\n"
       << "    const unsigned n = " << outputField(0, numOutputs) << ".size();\n"
       << "    const unsigned groups = (n + " << group - 1 << ") / " << group
       << ", per = groups / numWorkers(), extra = groups % numWorkers();\n"
       << "    const unsigned g0 = wid * per + (wid < extra ? wid : extra);\n"
       << "    const unsigned g1 = g0 + per + (wid < extra ? 1 : 0);\n"
       << "    const unsigned begin = g0 * " << group << " < n ? g0 * " << group << " : n, end = g1 * "
       << group << " < n ? g1 * " << group << " : n;\n"
       << emitter.scalarLoads << widen << "    for (unsigned i = begin; i < end; ++i) {\n"
       << emitter.body << stores << "    }\n"
       << "  }\n";
  const std::string bodyText = body.str();
  const std::string cls = "Expr_" + hex64(fnv1a(bodyText));

  std::ostringstream src;
  src << "// Generated by popops::map for:";
  for (const Expr *e : exprs) {
    src << " ";
    e->print(src, 0, false);
  }
  src << "\n"
      << kPrelude << "\nnamespace popops {\nnamespace map {\n\n"
      << "class " << cls << " : public poplar::MultiVertex {\n"
      << bodyText << "};\n\n} // namespace map\n} // namespace popops\n";

  GeneratedCodelet g;
  g.vertexName = "popops::map::" + cls;
  g.source = src.str();
  g.cyclesPerElement = std::max(1.0, emitter.cycles());
  g.flopsPerElement = emitter.flops();
  return g;
}

} // namespace aspen::ops
