// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_EXPR_HPP
#define POPOPS_EXPR_HPP

#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>
#include <poplar/TypeTraits.hpp>
#include <popops/ExprOp.hpp>

#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace poplar {
class Tensor;
}

namespace popops {
namespace expr {

/// An element-wise expression over the elements of tensors, built from
/// placeholders (`_1`, `_2`, ...), constants and operators, and evaluated by
/// `popops::map` / `mapInPlace` / `mapWithOutput`.
///
/// Example: `popops::map(graph, expr::Const(0.9f) * expr::_1 + expr::Const(0.1f) * expr::_2, {a, b}, prog);`
class Expr {
protected:
  using ExprClassID = void (*)(void);
  ExprClassID classId;
  explicit Expr(ExprClassID classId) : classId(classId) {}

public:
  virtual ~Expr();

  template <class T> bool isA() const { return classId == T::getClassId(); }
  template <class T> T *getAs() { return isA<T>() ? static_cast<T *>(this) : nullptr; }
  template <class T> const T *getAs() const { return isA<T>() ? static_cast<const T *>(this) : nullptr; }

  virtual std::unique_ptr<Expr> clone() const = 0;
  /// A name for the expression applied to `inputs` (used in debug names).
  virtual std::string name(const std::vector<poplar::Tensor> &inputs) const = 0;
  /// Structural equality (same operators, constants and placeholders).
  virtual bool deepEquals(const Expr &other) const = 0;
  /// Writes the expression, e.g. `Add(_1, Const(2))`.
  virtual void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const = 0;
};

std::ostream &operator<<(std::ostream &os, const Expr &expr);
bool deepEquals(const Expr &a, const Expr &b);

/// Gives each expression class a unique identity for `isA`.
template <class T> class ExprType : public Expr {
  static void loc() {}

public:
  static ExprClassID getClassId() { return &loc; }
  ExprType() : Expr(getClassId()) {}
};

/// A constant; in an operation with a tensor operand it takes that operand's type.
class Const : public ExprType<Const> {
  poplar::Type type;
  std::int64_t intValue;
  double floatValue;
  bool isFloat;

  // The value truncated to an integer; 0 for NaN, infinities and values beyond 64 bits, which
  // have none (casting them would be undefined behaviour). Ops that need the integer of such a
  // constant reject it by name.
  static std::int64_t truncatedOrZero(double d) {
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 ? static_cast<std::int64_t>(d) : 0;
  }
  template <class T> void init(T x, bool isHalfType, std::true_type /*floating*/) {
    type = isHalfType ? poplar::HALF : poplar::equivalent_device_type<T>().value;
    floatValue = static_cast<double>(x);
    intValue = truncatedOrZero(floatValue);
    isFloat = true;
  }
  template <class T> void init(T x, bool, std::false_type) {
    type = poplar::equivalent_device_type<T>().value;
    floatValue = static_cast<double>(x);
    intValue = static_cast<std::int64_t>(x);
    isFloat = false;
  }

public:
  template <typename T, typename = typename std::enable_if<std::is_arithmetic<T>::value>::type>
  Const(T x, bool isHalfType = false) {
    init(x, isHalfType, typename std::is_floating_point<T>::type());
  }
  Const(poplar::Type type, double floatValue, std::int64_t intValue, bool isFloat)
      : type(type), intValue(intValue), floatValue(floatValue), isFloat(isFloat) {}

  const poplar::Type &getType() const { return type; }
  /// The value as written ("2", "0.5").
  std::string printValue() const;
  double getDataAsDouble() const { return isFloat ? floatValue : static_cast<double>(intValue); }
  std::uint64_t getDataForUnsignedIntegral() const { return static_cast<std::uint64_t>(intValue); }
  std::int64_t getDataAsInt64() const { return isFloat ? truncatedOrZero(floatValue) : intValue; }
  bool isFloatingPoint() const { return isFloat; }

  std::unique_ptr<Expr> clone() const override {
    return std::unique_ptr<Expr>(new Const(type, floatValue, intValue, isFloat));
  }
  std::string name(const std::vector<poplar::Tensor> &) const override;
  bool deepEquals(const Expr &other) const override;
  void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const override;
};

/// A constant of type half.
class ConstHalf : public Const {
public:
  ConstHalf(float x) : Const(x, true) {}
};

inline ConstHalf operator"" _half(long double x) {
  return ConstHalf(static_cast<float>(x));
}

/// Converts its operand to `rType`.
class Cast : public ExprType<Cast> {
  std::unique_ptr<Expr> a;
  poplar::Type bType;

public:
  Cast(const Expr &a_, const poplar::Type bType_) : a(a_.clone()), bType(bType_) {}
  Cast(const Cast &other) : ExprType<Cast>(), a(other.a->clone()), bType(other.bType) {}
  const Expr &getLHS() const { return *a; }
  const poplar::Type &getRHSType() const { return bType; }
  std::unique_ptr<Expr> clone() const override { return std::unique_ptr<Expr>(new Cast(*a, bType)); }
  std::string name(const std::vector<poplar::Tensor> &inputs) const override;
  bool deepEquals(const Expr &other) const override;
  void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const override;
};

/// The element of the `index`-th tensor (1-based) passed to `map`.
class PlaceHolder : public ExprType<PlaceHolder> {
  unsigned index;

public:
  PlaceHolder(unsigned index) : index(index) {}
  unsigned getIndex() const { return index; }
  std::unique_ptr<Expr> clone() const override { return std::unique_ptr<Expr>(new PlaceHolder(index)); }
  std::string name(const std::vector<poplar::Tensor> &inputs) const override;
  bool deepEquals(const Expr &other) const override;
  void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const override;
};

extern const PlaceHolder _1;
extern const PlaceHolder _2;
extern const PlaceHolder _3;
extern const PlaceHolder _4;
extern const PlaceHolder _5;
extern const PlaceHolder _6;
extern const PlaceHolder _7;
extern const PlaceHolder _8;
extern const PlaceHolder _9;
extern const PlaceHolder _10;
extern const PlaceHolder _11;
extern const PlaceHolder _12;
extern const PlaceHolder _13;
extern const PlaceHolder _14;
extern const PlaceHolder _15;
extern const PlaceHolder _16;
extern const PlaceHolder _17;
extern const PlaceHolder _18;
extern const PlaceHolder _19;
extern const PlaceHolder _20;

/// A unary operator applied to an expression.
class UnaryOp : public ExprType<UnaryOp> {
  UnaryOpType type;
  std::unique_ptr<Expr> a;

public:
  UnaryOp(UnaryOpType type, const Expr &a) : type(type), a(a.clone()) {}
  UnaryOp(const UnaryOp &other) : ExprType<UnaryOp>(), type(other.type), a(other.a->clone()) {}
  UnaryOpType getOpType() const { return type; }
  const Expr &getArg() const { return *a; }
  std::unique_ptr<Expr> clone() const override { return std::unique_ptr<Expr>(new UnaryOp(type, *a)); }
  std::string name(const std::vector<poplar::Tensor> &inputs) const override;
  bool deepEquals(const Expr &other) const override;
  void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const override;
};

#define POPOPS_DEFINE_EXPR_UNARY_OP(Name, Op)                                                                \
  class Name : public UnaryOp {                                                                              \
  public:                                                                                                    \
    Name(const Expr &a) : UnaryOp(UnaryOpType::Op, a) {}                                                     \
  };

POPOPS_DEFINE_EXPR_UNARY_OP(Abs, ABSOLUTE)
POPOPS_DEFINE_EXPR_UNARY_OP(Asin, ASIN)
POPOPS_DEFINE_EXPR_UNARY_OP(BitwiseNot, BITWISE_NOT)
POPOPS_DEFINE_EXPR_UNARY_OP(Cbrt, CBRT)
POPOPS_DEFINE_EXPR_UNARY_OP(Ceil, CEIL)
POPOPS_DEFINE_EXPR_UNARY_OP(Cos, COS)
POPOPS_DEFINE_EXPR_UNARY_OP(Erf, ERF)
POPOPS_DEFINE_EXPR_UNARY_OP(Exp, EXPONENT)
POPOPS_DEFINE_EXPR_UNARY_OP(Expm1, EXPONENT_MINUS_ONE)
POPOPS_DEFINE_EXPR_UNARY_OP(Exp2, EXPONENT2)
POPOPS_DEFINE_EXPR_UNARY_OP(Floor, FLOOR)
POPOPS_DEFINE_EXPR_UNARY_OP(GeluErf, GELU_ERF)
POPOPS_DEFINE_EXPR_UNARY_OP(Inv, INVERSE)
POPOPS_DEFINE_EXPR_UNARY_OP(IsFinite, IS_FINITE)
POPOPS_DEFINE_EXPR_UNARY_OP(IsInf, IS_INF)
POPOPS_DEFINE_EXPR_UNARY_OP(IsNaN, IS_NAN)
POPOPS_DEFINE_EXPR_UNARY_OP(Log, LOGARITHM)
POPOPS_DEFINE_EXPR_UNARY_OP(Log1p, LOGARITHM_ONE_PLUS)
POPOPS_DEFINE_EXPR_UNARY_OP(Not, LOGICAL_NOT)
POPOPS_DEFINE_EXPR_UNARY_OP(Neg, NEGATE)
POPOPS_DEFINE_EXPR_UNARY_OP(NearbyInt, NEARBY_INT)
POPOPS_DEFINE_EXPR_UNARY_OP(Popcount, POPCOUNT)
POPOPS_DEFINE_EXPR_UNARY_OP(Relu, RELU)
POPOPS_DEFINE_EXPR_UNARY_OP(Signum, SIGNUM)
POPOPS_DEFINE_EXPR_UNARY_OP(Sin, SIN)
POPOPS_DEFINE_EXPR_UNARY_OP(Tan, TAN)
POPOPS_DEFINE_EXPR_UNARY_OP(Tanh, TANH)
POPOPS_DEFINE_EXPR_UNARY_OP(Round, ROUND)
POPOPS_DEFINE_EXPR_UNARY_OP(Trunc, TRUNC)
POPOPS_DEFINE_EXPR_UNARY_OP(Sqrt, SQRT)
POPOPS_DEFINE_EXPR_UNARY_OP(Square, SQUARE)
POPOPS_DEFINE_EXPR_UNARY_OP(Sigmoid, SIGMOID)
POPOPS_DEFINE_EXPR_UNARY_OP(Rsqrt, RSQRT)
#undef POPOPS_DEFINE_EXPR_UNARY_OP

/// A binary operator applied to two expressions.
class BinaryOp : public ExprType<BinaryOp> {
  BinaryOpType type;
  std::unique_ptr<Expr> a, b;

public:
  BinaryOp(BinaryOpType type, const Expr &a, const Expr &b) : type(type), a(a.clone()), b(b.clone()) {}
  BinaryOp(const BinaryOp &other)
      : ExprType<BinaryOp>(), type(other.type), a(other.a->clone()), b(other.b->clone()) {}
  BinaryOpType getOpType() const { return type; }
  const Expr &getLHS() const { return *a; }
  const Expr &getRHS() const { return *b; }
  std::unique_ptr<Expr> clone() const override { return std::unique_ptr<Expr>(new BinaryOp(type, *a, *b)); }
  std::string name(const std::vector<poplar::Tensor> &inputs) const override;
  bool deepEquals(const Expr &other) const override;
  void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const override;
};

#define POPOPS_DEFINE_EXPR_BINARY_OP(Name, Op)                                                               \
  class Name : public BinaryOp {                                                                             \
  public:                                                                                                    \
    Name(const Expr &a, const Expr &b) : BinaryOp(BinaryOpType::Op, a, b) {}                                 \
  };

POPOPS_DEFINE_EXPR_BINARY_OP(Add, ADD)
POPOPS_DEFINE_EXPR_BINARY_OP(Atan2, ATAN2)
POPOPS_DEFINE_EXPR_BINARY_OP(BitwiseAnd, BITWISE_AND)
POPOPS_DEFINE_EXPR_BINARY_OP(BitwiseOr, BITWISE_OR)
POPOPS_DEFINE_EXPR_BINARY_OP(BitwiseXor, BITWISE_XOR)
POPOPS_DEFINE_EXPR_BINARY_OP(BitwiseXnor, BITWISE_XNOR)
POPOPS_DEFINE_EXPR_BINARY_OP(Divide, DIVIDE)
POPOPS_DEFINE_EXPR_BINARY_OP(Equal, EQUAL)
POPOPS_DEFINE_EXPR_BINARY_OP(Gte, GREATER_THAN_EQUAL)
POPOPS_DEFINE_EXPR_BINARY_OP(Gt, GREATER_THAN)
POPOPS_DEFINE_EXPR_BINARY_OP(InvStdDevToVariance, INV_STD_DEV_TO_VARIANCE)
POPOPS_DEFINE_EXPR_BINARY_OP(Lte, LESS_THAN_EQUAL)
POPOPS_DEFINE_EXPR_BINARY_OP(And, LOGICAL_AND)
POPOPS_DEFINE_EXPR_BINARY_OP(Or, LOGICAL_OR)
POPOPS_DEFINE_EXPR_BINARY_OP(Lt, LESS_THAN)
POPOPS_DEFINE_EXPR_BINARY_OP(Max, MAXIMUM)
POPOPS_DEFINE_EXPR_BINARY_OP(Min, MINIMUM)
POPOPS_DEFINE_EXPR_BINARY_OP(Mul, MULTIPLY)
POPOPS_DEFINE_EXPR_BINARY_OP(NotEqual, NOT_EQUAL)
POPOPS_DEFINE_EXPR_BINARY_OP(Pow, POWER)
POPOPS_DEFINE_EXPR_BINARY_OP(Rem, REMAINDER)
POPOPS_DEFINE_EXPR_BINARY_OP(Shl, SHIFT_LEFT)
POPOPS_DEFINE_EXPR_BINARY_OP(Shr, SHIFT_RIGHT)
POPOPS_DEFINE_EXPR_BINARY_OP(ShrSE, SHIFT_RIGHT_SIGN_EXTEND)
POPOPS_DEFINE_EXPR_BINARY_OP(Sub, SUBTRACT)
POPOPS_DEFINE_EXPR_BINARY_OP(VarianceToInvStdDev, VARIANCE_TO_INV_STD_DEV)
#undef POPOPS_DEFINE_EXPR_BINARY_OP

/// A ternary operator applied to three expressions.
class TernaryOp : public ExprType<TernaryOp> {
  TernaryOpType type;
  std::unique_ptr<Expr> a, b, c;

public:
  TernaryOp(TernaryOpType type, const Expr &a, const Expr &b, const Expr &c)
      : type(type), a(a.clone()), b(b.clone()), c(c.clone()) {}
  TernaryOp(const TernaryOp &other)
      : ExprType<TernaryOp>(), type(other.type), a(other.a->clone()), b(other.b->clone()),
        c(other.c->clone()) {}
  TernaryOpType getOpType() const { return type; }
  const Expr &getArg0() const { return *a; }
  const Expr &getArg1() const { return *b; }
  const Expr &getArg2() const { return *c; }
  std::unique_ptr<Expr> clone() const override {
    return std::unique_ptr<Expr>(new TernaryOp(type, *a, *b, *c));
  }
  std::string name(const std::vector<poplar::Tensor> &inputs) const override;
  bool deepEquals(const Expr &other) const override;
  void print(std::ostream &os, unsigned indent = 0, bool prettyPrint = true) const override;
};

/// `Select(a, b, cond)` = `cond ? a : b`.
class Select : public TernaryOp {
public:
  Select(const Expr &a, const Expr &b, const Expr &c) : TernaryOp(TernaryOpType::SELECT, a, b, c) {}
};
/// `Clamp(x, lo, hi)` = `min(max(x, lo), hi)`.
class Clamp : public TernaryOp {
public:
  Clamp(const Expr &a, const Expr &b, const Expr &c) : TernaryOp(TernaryOpType::CLAMP, a, b, c) {}
};

// --- operators ---------------------------------------------------------------
inline Neg operator-(const Expr &a) {
  return Neg(a);
}
inline Not operator!(const Expr &a) {
  return Not(a);
}
inline BitwiseNot operator~(const Expr &a) {
  return BitwiseNot(a);
}

#define POPOPS_DEFINE_EXPR_OPERATOR(Op, Name)                                                                \
  inline Name operator Op(const Expr &a, const Expr &b) {                                                    \
    return Name(a, b);                                                                                       \
  }                                                                                                          \
  template <class T>                                                                                         \
  inline typename std::enable_if<std::is_arithmetic<T>::value, Name>::type operator Op(const T &a,           \
                                                                                       const Expr &b) {      \
    return Name(Const(a), b);                                                                                \
  }                                                                                                          \
  template <class T>                                                                                         \
  inline typename std::enable_if<std::is_arithmetic<T>::value, Name>::type operator Op(const Expr &a,        \
                                                                                       const T &b) {         \
    return Name(a, Const(b));                                                                                \
  }

POPOPS_DEFINE_EXPR_OPERATOR(+, Add)
POPOPS_DEFINE_EXPR_OPERATOR(-, Sub)
POPOPS_DEFINE_EXPR_OPERATOR(*, Mul)
POPOPS_DEFINE_EXPR_OPERATOR(/, Divide)
POPOPS_DEFINE_EXPR_OPERATOR(%, Rem)
POPOPS_DEFINE_EXPR_OPERATOR(==, Equal)
POPOPS_DEFINE_EXPR_OPERATOR(!=, NotEqual)
POPOPS_DEFINE_EXPR_OPERATOR(<, Lt)
POPOPS_DEFINE_EXPR_OPERATOR(<=, Lte)
POPOPS_DEFINE_EXPR_OPERATOR(>, Gt)
POPOPS_DEFINE_EXPR_OPERATOR(>=, Gte)
POPOPS_DEFINE_EXPR_OPERATOR(&&, And)
POPOPS_DEFINE_EXPR_OPERATOR(||, Or)
POPOPS_DEFINE_EXPR_OPERATOR(&, BitwiseAnd)
POPOPS_DEFINE_EXPR_OPERATOR(|, BitwiseOr)
POPOPS_DEFINE_EXPR_OPERATOR(^, BitwiseXor)
POPOPS_DEFINE_EXPR_OPERATOR(<<, Shl)
POPOPS_DEFINE_EXPR_OPERATOR(>>, Shr)
#undef POPOPS_DEFINE_EXPR_OPERATOR

/// A copy of any expression, so that expressions of different classes can share one
/// container: the several results of a multi-output `popops::map`.
///
/// Example: `std::vector<expr::Any> exprs{expr::_1 + expr::_2, expr::_1 * expr::_2};`
class Any {
public:
  Any(const Expr &expr) : held(expr.clone()) {}
  Any(const Any &other) : held(other.held->clone()) {}
  Any(Any &&other) = default;
  Any &operator=(const Any &other) {
    held = other.held->clone();
    return *this;
  }
  Any &operator=(Any &&other) = default;
  operator Expr &() { return *held; }
  operator const Expr &() const { return *held; }
  /// A name for the expression applied to `inputs` (used in debug names).
  std::string name(const std::vector<poplar::Tensor> &inputs) const { return held->name(inputs); }

private:
  std::unique_ptr<Expr> held;
};

} // namespace expr
} // namespace popops

#endif
