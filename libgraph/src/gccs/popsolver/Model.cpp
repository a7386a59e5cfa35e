// Copyright (c) Aspen contributors.
// libgccs: popsolver's solver (gccs/popsolver/Model.hpp, docs/gccs.md).
//
// Search: depth-first branch and bound. Every node narrows each variable's interval
// [lo, hi] by running the constraints' propagators to a fixpoint (a constraint runs again
// whenever one of its variables narrows). A node with an empty interval is infeasible; a node
// where every variable is fixed is a solution. Otherwise the search decides a variable: first
// the variables made by addVariable, in priority-group order then creation order, trying
// small values first (each value of a domain of at most kEnumerate values, else the lower half
// before the upper half). Derived variables (product, call, ...) are fixed by propagation once
// their inputs are. After each solution, a bound constraint requires the objectives to be
// lexicographically smaller than the best so far, so the last solution found is optimal.
// Values saturate at DataType::max() (a product or sum too large for 64 bits is max()).
#include <gccs/popsolver/Model.hpp>

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>

namespace gccs {
namespace popsolver {

namespace {

using U = std::uint64_t;
constexpr U kMax = std::numeric_limits<U>::max();
// Domains of at most this many values are enumerated; larger ones are bisected.
constexpr U kEnumerate = 64;
// Propagator runs per fixpoint before the node is searched as is (bounds stay sound); this
// only matters for cycles of constraints that narrow a huge domain one value at a time.
constexpr U kMaxRunsPerFixpoint = 1u << 20;

U satAdd(U a, U b) {
  return a > kMax - b ? kMax : a + b;
}
U satMul(U a, U b) {
  if (a == 0 || b == 0)
    return 0;
  return a > kMax / b ? kMax : a * b;
}
U ceilDiv(U a, U b) {
  return a == 0 ? 0 : (a - 1) / b + 1;
}

struct Interval {
  U lo, hi;
  bool fixed() const { return lo == hi; }
};

struct State {
  std::vector<Interval> d;
  std::vector<std::uint32_t> changed;
  bool setMin(std::uint32_t v, U x) {
    if (x > d[v].hi)
      return false;
    if (x > d[v].lo) {
      d[v].lo = x;
      changed.push_back(v);
    }
    return true;
  }
  bool setMax(std::uint32_t v, U x) {
    if (x < d[v].lo)
      return false;
    if (x < d[v].hi) {
      d[v].hi = x;
      changed.push_back(v);
    }
    return true;
  }
  bool set(std::uint32_t v, U lo, U hi) { return setMin(v, lo) && setMax(v, hi); }
  bool fix(std::uint32_t v, U x) { return set(v, x, x); }
  const Interval &operator[](std::uint32_t v) const { return d[v]; }
};

class Constraint {
public:
  explicit Constraint(std::vector<std::uint32_t> vars) : vars(std::move(vars)) {}
  virtual ~Constraint() = default;
  // Narrows the domains; false when no assignment of the current domains satisfies it. With
  // every variable fixed, true exactly when the assignment satisfies the constraint.
  virtual bool propagate(State &s) const = 0;
  std::vector<std::uint32_t> vars;
};

std::vector<std::uint32_t> ids(const std::vector<Variable> &vs) {
  std::vector<std::uint32_t> out;
  out.reserve(vs.size());
  for (Variable v : vs)
    out.push_back(v.id);
  return out;
}

// r = product of xs (vars: xs..., r)
class Product : public Constraint {
public:
  using Constraint::Constraint;
  bool propagate(State &s) const override {
    const std::size_t n = vars.size() - 1;
    const std::uint32_t r = vars[n];
    U lo = 1, hi = 1;
    for (std::size_t i = 0; i < n; ++i) {
      lo = satMul(lo, s[vars[i]].lo);
      hi = satMul(hi, s[vars[i]].hi);
    }
    if (!s.set(r, lo, hi))
      return false;
    if (s[r].lo > 0)
      for (std::size_t i = 0; i < n; ++i)
        if (!s.setMin(vars[i], 1))
          return false;
    for (std::size_t i = 0; i < n; ++i) {
      U otherLo = 1, otherHi = 1;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) {
          otherLo = satMul(otherLo, s[vars[j]].lo);
          otherHi = satMul(otherHi, s[vars[j]].hi);
        }
      if (s[r].hi != kMax && otherLo > 0 && !s.setMax(vars[i], s[r].hi / otherLo))
        return false;
      if (otherHi != kMax && otherHi > 0 && !s.setMin(vars[i], ceilDiv(s[r].lo, otherHi)))
        return false;
      if (otherHi == 0 && s[r].lo > 0)
        return false;
    }
    return true;
  }
};

// r = sum of xs (vars: xs..., r)
class Sum : public Constraint {
public:
  using Constraint::Constraint;
  bool propagate(State &s) const override {
    const std::size_t n = vars.size() - 1;
    const std::uint32_t r = vars[n];
    U lo = 0, hi = 0;
    for (std::size_t i = 0; i < n; ++i) {
      lo = satAdd(lo, s[vars[i]].lo);
      hi = satAdd(hi, s[vars[i]].hi);
    }
    if (!s.set(r, lo, hi))
      return false;
    for (std::size_t i = 0; i < n; ++i) {
      U otherLo = 0, otherHi = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i) {
          otherLo = satAdd(otherLo, s[vars[j]].lo);
          otherHi = satAdd(otherHi, s[vars[j]].hi);
        }
      if (s[r].hi != kMax && !s.setMax(vars[i], s[r].hi >= otherLo ? s[r].hi - otherLo : 0))
        return false;
      if (otherHi != kMax && s[r].lo > otherHi && !s.setMin(vars[i], s[r].lo - otherHi))
        return false;
    }
    return true;
  }
};

// r = max or min of xs (vars: xs..., r)
class Extremum : public Constraint {
public:
  Extremum(std::vector<std::uint32_t> vars, bool isMax) : Constraint(std::move(vars)), isMax(isMax) {}
  bool propagate(State &s) const override {
    const std::size_t n = vars.size() - 1;
    const std::uint32_t r = vars[n];
    U lo = isMax ? 0 : kMax, hi = isMax ? 0 : kMax;
    for (std::size_t i = 0; i < n; ++i) {
      lo = isMax ? std::max(lo, s[vars[i]].lo) : std::min(lo, s[vars[i]].lo);
      hi = isMax ? std::max(hi, s[vars[i]].hi) : std::min(hi, s[vars[i]].hi);
    }
    if (!s.set(r, lo, hi))
      return false;
    for (std::size_t i = 0; i < n; ++i)
      if (!(isMax ? s.setMax(vars[i], s[r].hi) : s.setMin(vars[i], s[r].lo)))
        return false;
    // The extremum is attained: if one input alone can reach r, it must.
    std::size_t candidates = 0, last = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (isMax ? s[vars[i]].hi >= s[r].lo : s[vars[i]].lo <= s[r].hi) {
        ++candidates;
        last = i;
      }
    if (candidates == 0)
      return false;
    if (candidates == 1 && !(isMax ? s.setMin(vars[last], s[r].lo) : s.setMax(vars[last], s[r].hi)))
      return false;
    return true;
  }
  bool isMax;
};

enum class DivKind { Floor, Ceil, Mod };

// r = l / d rounded down or up, or l % d; d >= 1 (vars: l, d, r)
class Division : public Constraint {
public:
  Division(std::vector<std::uint32_t> vars, DivKind kind) : Constraint(std::move(vars)), kind(kind) {}
  bool propagate(State &s) const override {
    const std::uint32_t l = vars[0], d = vars[1], r = vars[2];
    if (!s.setMin(d, 1))
      return false;
    const Interval L = s[l], D = s[d];
    switch (kind) {
    case DivKind::Floor:
      if (!s.set(r, L.lo / D.hi, L.hi / D.lo))
        return false;
      if (!s.setMin(l, satMul(s[r].lo, s[d].lo)))
        return false;
      if (s[r].hi != kMax && satMul(s[r].hi + 1, s[d].hi) != kMax &&
          !s.setMax(l, (s[r].hi + 1) * s[d].hi - 1))
        return false;
      break;
    case DivKind::Ceil:
      if (!s.set(r, ceilDiv(L.lo, D.hi), ceilDiv(L.hi, D.lo)))
        return false;
      if (satMul(s[r].hi, s[d].hi) != kMax && !s.setMax(l, s[r].hi * s[d].hi))
        return false;
      if (s[r].lo > 0 && !s.setMin(l, satAdd(satMul(s[r].lo - 1, s[d].lo), 1)))
        return false;
      break;
    case DivKind::Mod:
      if (L.fixed() && D.fixed())
        return s.fix(r, L.lo % D.lo);
      if (!s.setMax(r, std::min(L.hi, D.hi - 1)))
        return false;
      if (L.hi < D.lo && !s.set(r, L.lo, L.hi)) // l < d: l % d == l
        return false;
      break;
    }
    return true;
  }
  DivKind kind;
};

// d == the smallest divisor giving ceildiv(a, d) (vars: a, d)
class SmallestDivisor : public Constraint {
public:
  using Constraint::Constraint;
  bool propagate(State &s) const override {
    const Interval a = s[vars[0]], d = s[vars[1]];
    if (!a.fixed() || !d.fixed())
      return true;
    if (d.lo == 0)
      return false;
    const U smallest = a.lo == 0 ? 1 : ceilDiv(a.lo, ceilDiv(a.lo, d.lo));
    return d.lo == smallest;
  }
};

// r = l - x, l >= x (vars: l, x, r)
class Sub : public Constraint {
public:
  using Constraint::Constraint;
  bool propagate(State &s) const override {
    const std::uint32_t l = vars[0], x = vars[1], r = vars[2];
    if (!s.setMin(l, s[x].lo) || !s.setMax(x, s[l].hi))
      return false;
    const U lo = s[l].lo > s[x].hi ? s[l].lo - s[x].hi : 0;
    if (!s.set(r, lo, s[l].hi - s[x].lo))
      return false;
    // l = r + x
    if (!s.setMin(l, satAdd(s[r].lo, s[x].lo)))
      return false;
    if (satAdd(s[r].hi, s[x].hi) != kMax && !s.setMax(l, s[r].hi + s[x].hi))
      return false;
    if (!s.setMax(x, s[l].hi >= s[r].lo ? s[l].hi - s[r].lo : 0))
      return false;
    if (s[l].lo > s[r].hi && !s.setMin(x, s[l].lo - s[r].hi))
      return false;
    return true;
  }
};

enum class Rel { Less, LessOrEqual, Equal };

bool applyRelation(State &s, Rel rel, std::uint32_t a, std::uint32_t b) {
  switch (rel) {
  case Rel::Less:
    if (s[b].hi == 0)
      return false;
    return s.setMax(a, s[b].hi - 1) && (s[a].lo == kMax ? false : s.setMin(b, s[a].lo + 1));
  case Rel::LessOrEqual:
    return s.setMax(a, s[b].hi) && s.setMin(b, s[a].lo);
  case Rel::Equal:
    return s.set(a, s[b].lo, s[b].hi) && s.set(b, s[a].lo, s[a].hi);
  }
  return true;
}

// a rel b (vars: a, b)
class Relation : public Constraint {
public:
  Relation(std::vector<std::uint32_t> vars, Rel rel) : Constraint(std::move(vars)), rel(rel) {}
  bool propagate(State &s) const override { return applyRelation(s, rel, vars[0], vars[1]); }
  Rel rel;
};

// r = (a rel b) ? 1 : 0 (vars: a, b, r)
class Reified : public Constraint {
public:
  Reified(std::vector<std::uint32_t> vars, Rel rel) : Constraint(std::move(vars)), rel(rel) {}
  bool propagate(State &s) const override {
    const std::uint32_t a = vars[0], b = vars[1], r = vars[2];
    if (!s.setMax(r, 1))
      return false;
    const Interval A = s[a], B = s[b];
    bool surelyTrue = false, surelyFalse = false;
    switch (rel) {
    case Rel::Less:
      surelyTrue = A.hi < B.lo;
      surelyFalse = A.lo >= B.hi;
      break;
    case Rel::LessOrEqual:
      surelyTrue = A.hi <= B.lo;
      surelyFalse = A.lo > B.hi;
      break;
    case Rel::Equal:
      surelyTrue = A.fixed() && B.fixed() && A.lo == B.lo;
      surelyFalse = A.hi < B.lo || B.hi < A.lo;
      break;
    }
    if (surelyTrue && !s.fix(r, 1))
      return false;
    if (surelyFalse && !s.fix(r, 0))
      return false;
    if (s[r].fixed()) {
      if (s[r].lo == 1)
        return applyRelation(s, rel, a, b);
      switch (rel) { // the negation
      case Rel::Less:
        return applyRelation(s, Rel::LessOrEqual, b, a);
      case Rel::LessOrEqual:
        return applyRelation(s, Rel::Less, b, a);
      case Rel::Equal:
        return !(s[a].fixed() && s[b].fixed() && s[a].lo == s[b].lo);
      }
    }
    return true;
  }
  Rel rel;
};

// d divides l, d >= 1 (vars: l, d)
class FactorOf : public Constraint {
public:
  using Constraint::Constraint;
  bool propagate(State &s) const override {
    const std::uint32_t l = vars[0], d = vars[1];
    if (!s.setMin(d, 1))
      return false;
    if (s[l].lo > 0 && !s.setMax(d, s[l].hi))
      return false;
    if (s[l].fixed() && s[d].fixed())
      return s[l].lo % s[d].lo == 0;
    return true;
  }
};

enum class BoolOp { And, Or, Not };

// r = op(a[, b]) on truth values (vars: a, [b,] r)
class Boolean : public Constraint {
public:
  Boolean(std::vector<std::uint32_t> vars, BoolOp op) : Constraint(std::move(vars)), op(op) {}
  bool propagate(State &s) const override {
    const std::uint32_t r = vars.back();
    if (!s.setMax(r, 1))
      return false;
    auto isTrue = [&](std::uint32_t v) { return s[v].lo >= 1; };
    auto isFalse = [&](std::uint32_t v) { return s[v].hi == 0; };
    const std::uint32_t a = vars[0];
    if (op == BoolOp::Not) {
      if (isTrue(a))
        return s.fix(r, 0);
      if (isFalse(a))
        return s.fix(r, 1);
      if (s[r].fixed())
        return s[r].lo == 1 ? s.fix(a, 0) : s.setMin(a, 1);
      return true;
    }
    const std::uint32_t b = vars[1];
    if (op == BoolOp::And) {
      if (isFalse(a) || isFalse(b))
        return s.fix(r, 0);
      if (isTrue(a) && isTrue(b))
        return s.fix(r, 1);
      if (s[r].fixed() && s[r].lo == 1)
        return s.setMin(a, 1) && s.setMin(b, 1);
      return true;
    }
    if (isTrue(a) || isTrue(b))
      return s.fix(r, 1);
    if (isFalse(a) && isFalse(b))
      return s.fix(r, 0);
    if (s[r].fixed() && s[r].lo == 0)
      return s.fix(a, 0) && s.fix(b, 0);
    return true;
  }
  BoolOp op;
};

// r = f(xs) once every x is fixed; every x <= inputMax (vars: xs..., r)
class Call : public Constraint {
public:
  Call(std::vector<std::uint32_t> vars, std::function<CallResult(const std::vector<DataType> &)> f,
       U inputMax)
      : Constraint(std::move(vars)), f(std::move(f)), inputMax(inputMax) {}
  bool propagate(State &s) const override {
    const std::size_t n = vars.size() - 1;
    bool allFixed = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (!s.setMax(vars[i], inputMax))
        return false;
      allFixed = allFixed && s[vars[i]].fixed();
    }
    if (!allFixed)
      return true;
    std::vector<U> key(n);
    for (std::size_t i = 0; i < n; ++i)
      key[i] = s[vars[i]].lo;
    auto it = cache.find(key);
    if (it == cache.end()) {
      std::vector<DataType> args;
      args.reserve(n);
      for (U v : key)
        args.push_back(DataType(v));
      const CallResult result = f(args);
      it = cache.emplace(std::move(key), result.hasValue() ? std::optional<U>(*result.value()) : std::nullopt)
               .first;
    }
    return it->second ? s.fix(vars[n], *it->second) : false;
  }
  std::function<CallResult(const std::vector<DataType> &)> f;
  U inputMax;
  // The functions are pure: one evaluation per input tuple per model.
  mutable std::map<std::vector<U>, std::optional<U>> cache;
};

// The objectives are lexicographically smaller than *best (when there is a best).
class Bound : public Constraint {
public:
  Bound(std::vector<std::uint32_t> vars, const std::vector<U> *best)
      : Constraint(std::move(vars)), best(best) {}
  bool propagate(State &s) const override {
    if (best->empty())
      return true;
    for (std::size_t i = 0; i < vars.size(); ++i) {
      const U b = (*best)[i];
      if (i + 1 == vars.size())
        return b > 0 && s.setMax(vars[i], b - 1);
      if (!s.setMax(vars[i], b))
        return false;
      if (s[vars[i]].lo < b)
        return true; // may already be smaller here: nothing more follows
    }
    return true;
  }
  const std::vector<U> *best;
};

} // namespace

struct Model::Impl {
  std::vector<Interval> initial;
  std::vector<std::string> names;
  std::vector<bool> decision;
  std::vector<std::uint32_t> group;
  std::uint32_t numGroups = 1;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> groupEdges;
  std::unordered_map<U, Variable> constants;
  std::vector<std::unique_ptr<Constraint>> constraints;

  Variable newVar(U lo, U hi, const std::string &name, bool isDecision) {
    if (lo > hi)
      throw std::invalid_argument("popsolver: variable '" + name + "' has an empty domain [" +
                                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    const Variable v(static_cast<std::uint32_t>(initial.size()));
    initial.push_back({lo, hi});
    names.push_back(name);
    decision.push_back(isDecision);
    group.push_back(0);
    return v;
  }
  void check(Variable v) const {
    if (v.id >= initial.size())
      throw std::invalid_argument("popsolver: variable " + std::to_string(v.id) + " is not of this model");
  }
  void check(const std::vector<Variable> &vs) const {
    for (Variable v : vs)
      check(v);
  }
  Variable derived(std::vector<Variable> inputs, const std::string &name,
                   const std::function<std::unique_ptr<Constraint>(std::vector<std::uint32_t>)> &make) {
    check(inputs);
    const Variable r = newVar(0, kMax, name, false);
    auto vs = ids(inputs);
    vs.push_back(r.id);
    constraints.push_back(make(std::move(vs)));
    return r;
  }
  void add(std::unique_ptr<Constraint> c) {
    for (auto v : c->vars)
      check(Variable(v));
    constraints.push_back(std::move(c));
  }
};

Model::Model() : impl_(new Impl) {}
Model::~Model() = default;
Model::Model(Model &&) noexcept = default;
Model &Model::operator=(Model &&) noexcept = default;

Variable Model::addVariable(const std::string &debugName) {
  return impl_->newVar(0, kMax, debugName, true);
}
Variable Model::addVariable(DataType min, DataType max, const std::string &debugName) {
  return impl_->newVar(*min, *max, debugName, true);
}
Variable Model::addVariable(DataType::UnderlyingType min, DataType::UnderlyingType max,
                            const std::string &debugName) {
  return impl_->newVar(min, max, debugName, true);
}
Variable Model::addConstant(DataType value, const std::string &debugName) {
  auto it = impl_->constants.find(*value);
  if (it != impl_->constants.end())
    return it->second;
  const Variable v = impl_->newVar(*value, *value, debugName, false);
  impl_->constants.emplace(*value, v);
  return v;
}
Variable Model::addConstant(DataType::UnderlyingType value, const std::string &debugName) {
  return addConstant(DataType(value), debugName);
}
Variable Model::zero() {
  return addConstant(DataType(0u));
}
Variable Model::one() {
  return addConstant(DataType(1u));
}

Variable Model::product(const std::vector<Variable> &vars, const std::string &debugName) {
  return impl_->derived(vars, debugName, [](auto vs) { return std::make_unique<Product>(std::move(vs)); });
}
Variable Model::sum(std::vector<Variable> vars, const std::string &debugName) {
  return impl_->derived(std::move(vars), debugName,
                        [](auto vs) { return std::make_unique<Sum>(std::move(vs)); });
}
Variable Model::max(std::vector<Variable> vars, const std::string &debugName) {
  if (vars.empty())
    throw std::invalid_argument("popsolver: max of no variables ('" + debugName + "')");
  return impl_->derived(std::move(vars), debugName,
                        [](auto vs) { return std::make_unique<Extremum>(std::move(vs), true); });
}
Variable Model::min(std::vector<Variable> vars, const std::string &debugName) {
  if (vars.empty())
    throw std::invalid_argument("popsolver: min of no variables ('" + debugName + "')");
  return impl_->derived(std::move(vars), debugName,
                        [](auto vs) { return std::make_unique<Extremum>(std::move(vs), false); });
}
Variable Model::floordiv(Variable left, Variable right, const std::string &debugName) {
  return impl_->derived({left, right}, debugName,
                        [](auto vs) { return std::make_unique<Division>(std::move(vs), DivKind::Floor); });
}
Variable Model::ceildiv(Variable left, Variable right, const std::string &debugName) {
  return impl_->derived({left, right}, debugName,
                        [](auto vs) { return std::make_unique<Division>(std::move(vs), DivKind::Ceil); });
}
Variable Model::ceildivConstrainDivisor(Variable dividend, Variable divisor, const std::string &debugName) {
  const Variable r = ceildiv(dividend, divisor, debugName);
  impl_->add(std::make_unique<SmallestDivisor>(std::vector<std::uint32_t>{dividend.id, divisor.id}));
  return r;
}
Variable Model::mod(Variable left, Variable right, const std::string &debugName) {
  return impl_->derived({left, right}, debugName,
                        [](auto vs) { return std::make_unique<Division>(std::move(vs), DivKind::Mod); });
}
Variable Model::sub(Variable left, Variable right, const std::string &debugName) {
  return impl_->derived({left, right}, debugName,
                        [](auto vs) { return std::make_unique<Sub>(std::move(vs)); });
}

void Model::less(Variable left, Variable right) {
  impl_->add(std::make_unique<Relation>(std::vector<std::uint32_t>{left.id, right.id}, Rel::Less));
}
void Model::less(Variable left, DataType right) {
  less(left, addConstant(right));
}
void Model::less(DataType left, Variable right) {
  less(addConstant(left), right);
}
void Model::lessOrEqual(Variable left, Variable right) {
  impl_->add(std::make_unique<Relation>(std::vector<std::uint32_t>{left.id, right.id}, Rel::LessOrEqual));
}
void Model::lessOrEqual(Variable left, DataType right) {
  lessOrEqual(left, addConstant(right));
}
void Model::lessOrEqual(DataType left, Variable right) {
  lessOrEqual(addConstant(left), right);
}
void Model::equal(Variable left, Variable right) {
  impl_->add(std::make_unique<Relation>(std::vector<std::uint32_t>{left.id, right.id}, Rel::Equal));
}
void Model::equal(Variable left, DataType right) {
  equal(left, addConstant(right));
}
void Model::equal(DataType left, Variable right) {
  equal(addConstant(left), right);
}
Variable Model::reifiedLess(Variable left, Variable right) {
  return impl_->derived({left, right}, "",
                        [](auto vs) { return std::make_unique<Reified>(std::move(vs), Rel::Less); });
}
Variable Model::reifiedLessOrEqual(Variable left, Variable right) {
  return impl_->derived({left, right}, "",
                        [](auto vs) { return std::make_unique<Reified>(std::move(vs), Rel::LessOrEqual); });
}
Variable Model::reifiedEqual(Variable left, Variable right) {
  return impl_->derived({left, right}, "",
                        [](auto vs) { return std::make_unique<Reified>(std::move(vs), Rel::Equal); });
}
void Model::factorOf(DataType left, Variable right) {
  factorOf(addConstant(left), right);
}
void Model::factorOf(Variable left, Variable right) {
  impl_->add(std::make_unique<FactorOf>(std::vector<std::uint32_t>{left.id, right.id}));
}
Variable Model::booleanOr(Variable left, Variable right) {
  return impl_->derived({left, right}, "",
                        [](auto vs) { return std::make_unique<Boolean>(std::move(vs), BoolOp::Or); });
}
Variable Model::booleanAnd(Variable left, Variable right) {
  return impl_->derived({left, right}, "",
                        [](auto vs) { return std::make_unique<Boolean>(std::move(vs), BoolOp::And); });
}
Variable Model::booleanNot(Variable v) {
  return impl_->derived({v}, "",
                        [](auto vs) { return std::make_unique<Boolean>(std::move(vs), BoolOp::Not); });
}

Variable Model::addCall(std::vector<Variable> vars,
                        std::function<CallResult(const std::vector<DataType> &)> f, DataType inputMax,
                        const std::string &debugName) {
  return impl_->derived(std::move(vars), debugName, [&](auto vs) {
    return std::make_unique<Call>(std::move(vs), std::move(f), *inputMax);
  });
}

PriorityGroupID Model::getDefaultPriorityGroup() const {
  return PriorityGroupID(0);
}
PriorityGroupID Model::addPriorityGroup() {
  return PriorityGroupID(impl_->numGroups++);
}
void Model::setPriorityGroup(Variable v, PriorityGroupID group) {
  impl_->check(v);
  if (group.id >= impl_->numGroups)
    throw std::invalid_argument("popsolver: priority group " + std::to_string(group.id) +
                                " is not of this model");
  impl_->group[v.id] = group.id;
}
void Model::prioritiseOver(PriorityGroupID a, PriorityGroupID b) {
  if (a.id >= impl_->numGroups || b.id >= impl_->numGroups)
    throw std::invalid_argument("popsolver: prioritiseOver names a priority group not of this model");
  impl_->groupEdges.emplace_back(a.id, b.id);
}

std::size_t Model::numVariables() const {
  return impl_->initial.size();
}
const std::string &Model::getDebugName(Variable v) const {
  impl_->check(v);
  return impl_->names[v.id];
}

namespace {

class Search {
public:
  Search(const Model::Impl &m, std::vector<std::uint32_t> objectives)
      : m(m), objectives(std::move(objectives)), bound(this->objectives, &best) {
    const std::size_t n = m.initial.size();
    watchers.resize(n);
    for (std::size_t c = 0; c < m.constraints.size(); ++c)
      for (auto v : m.constraints[c]->vars)
        watchers[v].push_back(static_cast<std::uint32_t>(c));
    boundIndex = static_cast<std::uint32_t>(m.constraints.size());
    for (auto v : bound.vars)
      watchers[v].push_back(boundIndex);
    queued.assign(m.constraints.size() + 1, false);
    // Decision order: priority rank (a group prioritised over another comes first), then id.
    std::vector<std::uint32_t> rank(m.numGroups, 0);
    for (std::uint32_t pass = 0; pass < m.numGroups; ++pass) // longest path, at most numGroups rounds
      for (auto [a, b] : m.groupEdges)
        if (rank[b] < rank[a] + 1 && rank[a] + 1 < m.numGroups + 1)
          rank[b] = rank[a] + 1;
    for (std::uint32_t v = 0; v < n; ++v)
      if (m.decision[v])
        order.push_back(v);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t x, std::uint32_t y) { return rank[m.group[x]] < rank[m.group[y]]; });
  }

  // The best assignment (empty when none) and the propagator runs it took.
  std::pair<std::vector<DataType>, ConstraintEvaluationSummary> run() {
    State s;
    s.d = m.initial;
    std::vector<std::uint32_t> all(m.constraints.size() + 1);
    for (std::uint32_t c = 0; c < all.size(); ++c)
      all[c] = c;
    if (propagate(s, all))
      explore(s);
    std::vector<DataType> values;
    values.reserve(bestValues.size());
    for (U v : bestValues)
      values.push_back(DataType(v));
    return {std::move(values), evaluated};
  }

private:
  const Constraint &constraint(std::uint32_t c) const {
    return c == boundIndex ? static_cast<const Constraint &>(bound) : *m.constraints[c];
  }

  bool propagate(State &s, const std::vector<std::uint32_t> &start) {
    std::deque<std::uint32_t> queue;
    std::fill(queued.begin(), queued.end(), false);
    for (auto c : start)
      if (!queued[c]) {
        queued[c] = true;
        queue.push_back(c);
      }
    U runs = 0;
    while (!queue.empty()) {
      if (++runs > kMaxRunsPerFixpoint)
        return true; // sound but not a fixpoint; leaves are checked in full
      const std::uint32_t c = queue.front();
      queue.pop_front();
      queued[c] = false;
      ++evaluated;
      s.changed.clear();
      if (!constraint(c).propagate(s))
        return false;
      for (auto v : s.changed)
        for (auto w : watchers[v])
          if (!queued[w]) {
            queued[w] = true;
            queue.push_back(w);
          }
    }
    return true;
  }

  // Every constraint holds for a fully fixed state.
  bool satisfied(State &s) {
    for (std::uint32_t c = 0; c <= boundIndex; ++c) {
      ++evaluated;
      s.changed.clear();
      if (!constraint(c).propagate(s) || !s.changed.empty())
        return false;
    }
    return true;
  }

  // The variable to decide next, or none (n) when all are fixed.
  std::uint32_t choose(const State &s) const {
    for (auto v : order)
      if (!s[v].fixed())
        return v;
    std::uint32_t pick = static_cast<std::uint32_t>(s.d.size());
    for (std::uint32_t v = 0; v < s.d.size(); ++v)
      if (!s[v].fixed() && (pick == s.d.size() || s[v].hi - s[v].lo < s[pick].hi - s[pick].lo))
        pick = v;
    return pick;
  }

  void explore(const State &s) {
    const std::uint32_t v = choose(s);
    if (v == s.d.size()) {
      State leaf = s;
      if (satisfied(leaf)) {
        best.clear();
        for (auto o : objectives)
          best.push_back(leaf[o].lo);
        bestValues.clear();
        for (const auto &i : leaf.d)
          bestValues.push_back(i.lo);
      }
      return;
    }
    const Interval dom = s[v];
    std::vector<std::uint32_t> start = watchers[v];
    start.push_back(boundIndex); // the bound may have tightened since s was propagated
    auto tryRange = [&](U lo, U hi) {
      State child = s;
      child.d[v] = {lo, hi};
      if (propagate(child, start))
        explore(child);
    };
    if (dom.hi - dom.lo < kEnumerate) {
      for (U x = dom.lo;; ++x) {
        tryRange(x, x);
        if (x == dom.hi)
          break;
      }
    } else {
      const U mid = dom.lo + (dom.hi - dom.lo) / 2;
      tryRange(dom.lo, mid);
      tryRange(mid + 1, dom.hi);
    }
  }

  const Model::Impl &m;
  std::vector<std::uint32_t> objectives;
  std::vector<U> best;
  std::vector<U> bestValues;
  Bound bound;
  std::uint32_t boundIndex = 0;
  std::vector<std::vector<std::uint32_t>> watchers;
  std::vector<bool> queued;
  std::vector<std::uint32_t> order;
  ConstraintEvaluationSummary evaluated = 0;
};

} // namespace

Solution Model::minimize(const std::vector<Variable> &objectives) {
  impl_->check(objectives);
  Search search(*impl_, ids(objectives));
  auto [values, evaluated] = search.run();
  Solution out(std::move(values));
  out.evaluated_ = evaluated;
  return out;
}

} // namespace popsolver
} // namespace gccs
