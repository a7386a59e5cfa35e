// Copyright (c) Aspen contributors.
// Printing and parsing of popops::Operation and SortOrder.
#include "popops/Operation.hpp"
#include "popops/SortOrder.hpp"

#include "Internal.hpp"

#include <istream>
#include <ostream>

namespace popops {

std::string toString(Operation op) {
  return aspen::ops::toString(op);
}

std::ostream &operator<<(std::ostream &os, const Operation &op) {
  return os << toString(op);
}

std::istream &operator>>(std::istream &is, Operation &op) {
  std::string s;
  is >> s;
  for (Operation o : {Operation::ADD, Operation::MUL, Operation::MIN, Operation::MAX, Operation::LOGICAL_AND,
                      Operation::LOGICAL_OR, Operation::SQUARE_ADD, Operation::LOG_ADD})
    if (toString(o) == s) {
      op = o;
      return is;
    }
  throw poputil::poplibs_error("Unrecognised popops::Operation '" + s + "'");
}

std::ostream &operator<<(std::ostream &os, const SortOrder &o) {
  switch (o) {
  case SortOrder::NONE:
    return os << "none";
  case SortOrder::ASCENDING:
    return os << "ascending";
  case SortOrder::DESCENDING:
    return os << "descending";
  }
  return os;
}

} // namespace popops
