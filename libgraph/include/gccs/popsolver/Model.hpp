// Copyright (c) Aspen contributors. Support header of the gccs family (docs/gccs.md).
// popsolver: a small constraint solver over non-negative integers, for planners that choose
// a partition (splits, grain counts) minimising an estimate (cycles, bytes):
//
//   gccs::popsolver::Model m;
//   auto split = m.addVariable(1, 16, "split");
//   auto perTile = m.ceildiv(m.addConstant(100), split);
//   auto cycles = m.sum({m.product({perTile, m.addConstant(3)}), split});
//   auto s = m.minimize(cycles);      // or m.minimize({cycles, memory}): lexicographic
//   if (s.validSolution()) use(s[split].getAs<unsigned>());
//
// Every variable has a domain [min, max] of DataType values (64-bit unsigned). Derived
// variables (product, sum, ceildiv, call, ...) are created by the operations below and hold
// exactly the operation's value in every solution; an operation whose value is undefined
// (division by 0, sub below 0, a call returning no value) makes the assignment infeasible.
// minimize() returns an optimal solution (found by branch and bound with interval
// propagation, libgccs), or an invalid Solution when no assignment satisfies the model.
// C++17, as the planners that use it.
#ifndef GCCS_POPSOLVER_MODEL_HPP
#define GCCS_POPSOLVER_MODEL_HPP

#include <gccs/generic_id.hpp>

#include <cassert>
#include <cstdint>
#include <functional>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gccs {
namespace popsolver {

using Variable = gccs::generic_id<class VariableTag, std::uint32_t>;
using PriorityGroupID = gccs::generic_id<class PriorityGroupTag, std::uint32_t>;
/// How many constraint propagations a minimize() ran (a measure of the search's work).
using ConstraintEvaluationSummary = std::uint64_t;

/// A value of the model: a non-negative integer below 2^64. Made explicitly from any
/// non-negative integer or floating-point value (a fraction is truncated); `*v` is the value.
class DataType {
public:
  using UnderlyingType = std::uint64_t;

  constexpr DataType() = default;
  template <typename T, typename std::enable_if<std::is_integral<T>::value, int>::type = 0>
  constexpr explicit DataType(T x) : value_(static_cast<UnderlyingType>(x)) {
    assert(!negative(x) && "a negative value in popsolver::DataType");
  }
  template <typename T, typename std::enable_if<std::is_floating_point<T>::value, int>::type = 0>
  constexpr explicit DataType(T x) : value_(static_cast<UnderlyingType>(x)) {
    assert(x >= T(0) && "a negative value in popsolver::DataType");
  }

  static constexpr DataType min() { return DataType(std::numeric_limits<UnderlyingType>::min()); }
  static constexpr DataType max() { return DataType(std::numeric_limits<UnderlyingType>::max()); }

  constexpr UnderlyingType operator*() const { return value_; }
  constexpr explicit operator UnderlyingType() const { return value_; }
  explicit operator UnderlyingType &() { return value_; }

  /// The value as T (an integer type the value fits, a floating-point type or bool).
  template <typename T> T getAs() const {
    assert((std::is_floating_point<T>::value ||
            value_ <= static_cast<UnderlyingType>(std::numeric_limits<T>::max())) &&
           "popsolver::DataType value does not fit the type asked for");
    return static_cast<T>(value_);
  }

  DataType &operator++() {
    ++value_;
    return *this;
  }
  DataType &operator--() {
    --value_;
    return *this;
  }
  DataType operator++(int) {
    DataType old = *this;
    ++value_;
    return old;
  }
  DataType operator--(int) {
    DataType old = *this;
    --value_;
    return old;
  }
  DataType &operator+=(DataType r) {
    value_ += r.value_;
    return *this;
  }
  DataType &operator-=(DataType r) {
    value_ -= r.value_;
    return *this;
  }
  DataType &operator*=(DataType r) {
    value_ *= r.value_;
    return *this;
  }

  friend std::istream &operator>>(std::istream &is, DataType &x) { return is >> x.value_; }

private:
  template <typename T> static constexpr bool negative(T x) {
    if constexpr (std::is_signed<T>::value)
      return x < 0;
    else
      return false;
  }
  UnderlyingType value_ = 0;
};

inline constexpr DataType operator+(DataType l, DataType r) {
  return DataType(*l + *r);
}
inline constexpr DataType operator-(DataType l, DataType r) {
  return DataType(*l - *r);
}
inline constexpr DataType operator*(DataType l, DataType r) {
  return DataType(*l * *r);
}
inline constexpr DataType operator/(DataType l, DataType r) {
  return DataType(*l / *r);
}
inline constexpr DataType operator%(DataType l, DataType r) {
  return DataType(*l % *r);
}
inline constexpr bool operator==(DataType l, DataType r) {
  return *l == *r;
}
inline constexpr bool operator!=(DataType l, DataType r) {
  return *l != *r;
}
inline constexpr bool operator<(DataType l, DataType r) {
  return *l < *r;
}
inline constexpr bool operator<=(DataType l, DataType r) {
  return *l <= *r;
}
inline constexpr bool operator>(DataType l, DataType r) {
  return *l > *r;
}
inline constexpr bool operator>=(DataType l, DataType r) {
  return *l >= *r;
}
inline std::ostream &operator<<(std::ostream &os, DataType x) {
  return os << *x;
}

/// What a user function of Model::call returns: a value, or none (the inputs are not a
/// valid assignment). Made implicitly from a DataType, from std::nullopt, or from any
/// optional-like object (std::optional, boost::optional) holding a DataType.
class CallResult {
public:
  CallResult(DataType v) : has_(true), value_(v) {}
  CallResult(std::nullopt_t) {}
  template <typename Opt,
            typename = typename std::enable_if<
                !std::is_same<typename std::decay<Opt>::type, DataType>::value &&
                std::is_constructible<bool, const Opt &>::value &&
                std::is_convertible<decltype(*std::declval<const Opt &>()), DataType>::value>::type>
  CallResult(const Opt &o) {
    if (o) {
      has_ = true;
      value_ = *o;
    }
  }
  bool hasValue() const { return has_; }
  DataType value() const { return value_; }

private:
  bool has_ = false;
  DataType value_;
};

/// The closed interval of values a variable may still take.
class Domain {
public:
  Domain(DataType min, DataType max) : min_(min), max_(max) {}
  DataType min() const { return min_; }
  DataType max() const { return max_; }
  DataType val() const {
    assert(min_ == max_ && "popsolver::Domain::val of an unfixed variable");
    return min_;
  }
  /// max - min (0 once the variable is fixed).
  DataType size() const { return max_ - min_; }

  DataType min_;
  DataType max_;
};

class Model;

/// The values of every variable of a model in an optimal assignment, or none (invalid) when
/// the model has no feasible assignment.
class Solution {
public:
  Solution() = default;
  explicit Solution(std::vector<DataType> values) : values_(std::move(values)) {}
  DataType &operator[](Variable v) {
    assert(v.id < values_.size() && "popsolver::Solution has no such variable");
    return values_[v.id];
  }
  DataType operator[](Variable v) const {
    assert(v.id < values_.size() && "popsolver::Solution has no such variable");
    return values_[v.id];
  }
  bool validSolution() const { return !values_.empty(); }
  ConstraintEvaluationSummary constraintsEvaluated() const { return evaluated_; }

private:
  friend class Model;
  std::vector<DataType> values_;
  ConstraintEvaluationSummary evaluated_ = 0;
};

class Model {
public:
  Model();
  ~Model();
  Model(Model &&) noexcept;
  Model &operator=(Model &&) noexcept;
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  /// A variable in [0, DataType::max()].
  Variable addVariable(const std::string &debugName = "");
  /// A variable in [min, max] (min <= max).
  Variable addVariable(DataType min, DataType max, const std::string &debugName = "");
  Variable addVariable(DataType::UnderlyingType min, DataType::UnderlyingType max,
                       const std::string &debugName = "");
  /// A variable fixed to value (one per value: the same value gives the same variable).
  Variable addConstant(DataType value, const std::string &debugName = "");
  Variable addConstant(DataType::UnderlyingType value, const std::string &debugName = "");
  Variable zero();
  Variable one();

  /// The product of vars (1 for none).
  Variable product(const std::vector<Variable> &vars, const std::string &debugName = "");
  /// The sum of vars (0 for none).
  Variable sum(std::vector<Variable> vars, const std::string &debugName = "");
  /// The largest / smallest of vars (at least one).
  Variable max(std::vector<Variable> vars, const std::string &debugName = "");
  Variable min(std::vector<Variable> vars, const std::string &debugName = "");
  /// left / right rounded down / up; right must be at least 1 in a solution.
  Variable floordiv(Variable left, Variable right, const std::string &debugName = "");
  Variable ceildiv(Variable left, Variable right, const std::string &debugName = "");
  /// ceildiv(dividend, divisor), with divisor constrained to be the smallest divisor giving
  /// that quotient (so equivalent splits are not searched twice).
  Variable ceildivConstrainDivisor(Variable dividend, Variable divisor, const std::string &debugName = "");
  /// left % right; right must be at least 1 in a solution.
  Variable mod(Variable left, Variable right, const std::string &debugName = "");
  /// left - right; a solution has left >= right.
  Variable sub(Variable left, Variable right, const std::string &debugName = "");

  void less(Variable left, Variable right);
  void less(Variable left, DataType right);
  void less(DataType left, Variable right);
  void lessOrEqual(Variable left, Variable right);
  void lessOrEqual(Variable left, DataType right);
  void lessOrEqual(DataType left, Variable right);
  void equal(Variable left, Variable right);
  void equal(Variable left, DataType right);
  void equal(DataType left, Variable right);
  /// 1 if the relation holds, else 0 (not a constraint: both outcomes are feasible).
  Variable reifiedLess(Variable left, Variable right);
  Variable reifiedLessOrEqual(Variable left, Variable right);
  Variable reifiedEqual(Variable left, Variable right);
  /// right divides left (right >= 1).
  void factorOf(DataType left, Variable right);
  void factorOf(Variable left, Variable right);
  /// Boolean operations on values read as false (0) and true (anything else); the result is 0 or 1.
  Variable booleanOr(Variable left, Variable right);
  Variable booleanAnd(Variable left, Variable right);
  Variable booleanNot(Variable v);

  /// A variable whose value is f(values of vars), evaluated once every input is fixed; f
  /// returning none makes that assignment infeasible. Inputs are limited to the range of T
  /// (an unsigned integer type or DataType), which is the type f receives them as.
  template <typename T>
  Variable call(std::vector<Variable> vars, std::function<CallResult(const std::vector<T> &values)> f,
                const std::string &debugName = "") {
    static_assert(std::is_same<T, DataType>::value || std::is_unsigned<T>::value,
                  "popsolver call inputs are DataType or an unsigned integer type");
    DataType inputMax = DataType::max();
    if constexpr (!std::is_same<T, DataType>::value)
      inputMax = DataType(std::numeric_limits<T>::max());
    return addCall(
        std::move(vars),
        [f = std::move(f)](const std::vector<DataType> &in) {
          std::vector<T> args;
          args.reserve(in.size());
          for (DataType v : in) {
            if constexpr (std::is_same<T, DataType>::value)
              args.push_back(v);
            else
              args.push_back(static_cast<T>(*v));
          }
          return f(args);
        },
        inputMax, debugName);
  }

  /// Priority groups order the search (variables of a group prioritised over another are
  /// decided first); they do not change which value is optimal.
  PriorityGroupID getDefaultPriorityGroup() const;
  PriorityGroupID addPriorityGroup();
  void setPriorityGroup(Variable v, PriorityGroupID group);
  void prioritiseOver(PriorityGroupID a, PriorityGroupID b);

  /// An assignment minimising objectives lexicographically (the first, then among those the
  /// second, ...), or an invalid Solution when there is none.
  Solution minimize(const std::vector<Variable> &objectives);
  Solution minimize(Variable objective) { return minimize(std::vector<Variable>{objective}); }

  /// The number of variables and the name given to v ("" if none).
  std::size_t numVariables() const;
  const std::string &getDebugName(Variable v) const;

  struct Impl;

private:
  Variable addCall(std::vector<Variable> vars, std::function<CallResult(const std::vector<DataType> &)> f,
                   DataType inputMax, const std::string &debugName);
  std::unique_ptr<Impl> impl_;
};

} // namespace popsolver
} // namespace gccs

namespace std {
template <> struct hash<gccs::popsolver::DataType> {
  std::size_t operator()(gccs::popsolver::DataType v) const { return std::hash<std::uint64_t>()(*v); }
};
} // namespace std

#endif
