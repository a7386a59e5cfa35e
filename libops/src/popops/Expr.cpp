// Copyright (c) Aspen contributors.
// The popops::expr classes: printing, naming and structural comparison.
#include "popops/Expr.hpp"
#include "popops/ExprOpUtils.hpp"

#include "Internal.hpp"

#include <poplar/Tensor.hpp>

#include <cmath>
#include <sstream>

namespace popops {
namespace expr {

Expr::~Expr() = default;

std::string binaryOpTypeToString(BinaryOpType op) {
  return aspen::ops::toString(op);
}
std::string unaryOpTypeToString(UnaryOpType op) {
  return aspen::ops::toString(op);
}

std::ostream &operator<<(std::ostream &os, const Expr &expr) {
  expr.print(os, 0, false);
  return os;
}

bool deepEquals(const Expr &a, const Expr &b) {
  return a.deepEquals(b);
}

const PlaceHolder _1(1);
const PlaceHolder _2(2);
const PlaceHolder _3(3);
const PlaceHolder _4(4);
const PlaceHolder _5(5);
const PlaceHolder _6(6);
const PlaceHolder _7(7);
const PlaceHolder _8(8);
const PlaceHolder _9(9);
const PlaceHolder _10(10);
const PlaceHolder _11(11);
const PlaceHolder _12(12);
const PlaceHolder _13(13);
const PlaceHolder _14(14);
const PlaceHolder _15(15);
const PlaceHolder _16(16);
const PlaceHolder _17(17);
const PlaceHolder _18(18);
const PlaceHolder _19(19);
const PlaceHolder _20(20);

std::string Const::printValue() const {
  std::ostringstream os;
  if (isFloat)
    os << floatValue;
  else if (type == poplar::UNSIGNED_INT || type == poplar::UNSIGNED_LONG || type == poplar::UNSIGNED_LONGLONG)
    os << static_cast<std::uint64_t>(intValue);
  else
    os << intValue;
  return os.str();
}

std::string Const::name(const std::vector<poplar::Tensor> &) const {
  return printValue();
}

bool Const::deepEquals(const Expr &other) const {
  const Const *o = other.getAs<Const>();
  if (!o || o->type != type || o->isFloat != isFloat)
    return false;
  return isFloat ? (o->floatValue == floatValue || (std::isnan(o->floatValue) && std::isnan(floatValue)))
                 : o->intValue == intValue;
}

void Const::print(std::ostream &os, unsigned, bool) const {
  os << "Const(" << printValue() << ")";
}

std::string Cast::name(const std::vector<poplar::Tensor> &inputs) const {
  return "Cast_" + a->name(inputs) + "_" + bType.toString().str();
}

bool Cast::deepEquals(const Expr &other) const {
  const Cast *o = other.getAs<Cast>();
  return o && o->bType == bType && a->deepEquals(*o->a);
}

void Cast::print(std::ostream &os, unsigned indent, bool prettyPrint) const {
  os << "Cast(";
  a->print(os, indent, prettyPrint);
  os << ", " << bType << ")";
}

std::string PlaceHolder::name(const std::vector<poplar::Tensor> &inputs) const {
  if (index >= 1 && index <= inputs.size() && inputs[index - 1].valid())
    return inputs[index - 1].shortString();
  return "_" + std::to_string(index);
}

bool PlaceHolder::deepEquals(const Expr &other) const {
  const PlaceHolder *o = other.getAs<PlaceHolder>();
  return o && o->index == index;
}

void PlaceHolder::print(std::ostream &os, unsigned, bool) const {
  os << "_" << index;
}

std::string UnaryOp::name(const std::vector<poplar::Tensor> &inputs) const {
  return aspen::ops::toString(type) + "_" + a->name(inputs);
}

bool UnaryOp::deepEquals(const Expr &other) const {
  const UnaryOp *o = other.getAs<UnaryOp>();
  return o && o->type == type && a->deepEquals(*o->a);
}

void UnaryOp::print(std::ostream &os, unsigned indent, bool prettyPrint) const {
  os << aspen::ops::toString(type) << "(";
  a->print(os, indent, prettyPrint);
  os << ")";
}

std::string BinaryOp::name(const std::vector<poplar::Tensor> &inputs) const {
  return aspen::ops::toString(type) + "_" + a->name(inputs) + "_" + b->name(inputs);
}

bool BinaryOp::deepEquals(const Expr &other) const {
  const BinaryOp *o = other.getAs<BinaryOp>();
  return o && o->type == type && a->deepEquals(*o->a) && b->deepEquals(*o->b);
}

void BinaryOp::print(std::ostream &os, unsigned indent, bool prettyPrint) const {
  os << aspen::ops::toString(type) << "(";
  a->print(os, indent, prettyPrint);
  os << ", ";
  b->print(os, indent, prettyPrint);
  os << ")";
}

std::string TernaryOp::name(const std::vector<poplar::Tensor> &inputs) const {
  return std::string(type == TernaryOpType::SELECT ? "SELECT" : "CLAMP") + "_" + a->name(inputs) + "_" +
         b->name(inputs) + "_" + c->name(inputs);
}

bool TernaryOp::deepEquals(const Expr &other) const {
  const TernaryOp *o = other.getAs<TernaryOp>();
  return o && o->type == type && a->deepEquals(*o->a) && b->deepEquals(*o->b) && c->deepEquals(*o->c);
}

void TernaryOp::print(std::ostream &os, unsigned indent, bool prettyPrint) const {
  os << (type == TernaryOpType::SELECT ? "SELECT" : "CLAMP") << "(";
  a->print(os, indent, prettyPrint);
  os << ", ";
  b->print(os, indent, prettyPrint);
  os << ", ";
  c->print(os, indent, prettyPrint);
  os << ")";
}

} // namespace expr
} // namespace popops
