// Copyright (c) Aspen contributors. Support header of the gccs family (docs/gccs.md).
// Comparisons of a struct over a list of its members, named once:
//   static constexpr auto helper = gccs::makeStructHelper(&Params::a, &Params::b);
//   bool operator<(const Params &x, const Params &y) { return helper.lt(x, y); }
// lt compares the members lexicographically in the order given (each with its operator<),
// eq compares them all with operator==.
#ifndef GCCS_STRUCTHELPER_HPP
#define GCCS_STRUCTHELPER_HPP

#include <cstddef>
#include <functional>
#include <tuple>
#include <utility>

namespace gccs {

template <typename... MemberPtrs> class StructHelper {
public:
  constexpr explicit StructHelper(MemberPtrs... members) : members_(members...) {}

  /// Whether x orders before y, comparing the members lexicographically.
  template <typename S> bool lt(const S &x, const S &y) const { return ltFrom<0>(x, y); }
  /// Whether every member of x equals the same member of y.
  template <typename S> bool eq(const S &x, const S &y) const {
    return eqFrom(x, y, std::index_sequence_for<MemberPtrs...>());
  }
  template <typename S> bool ne(const S &x, const S &y) const { return !eq(x, y); }
  /// The members of s as a tuple of references (for hashing or printing).
  template <typename S> auto tie(const S &s) const {
    return tieFrom(s, std::index_sequence_for<MemberPtrs...>());
  }

private:
  template <std::size_t I, typename S> bool ltFrom(const S &x, const S &y) const {
    if constexpr (I == sizeof...(MemberPtrs)) {
      return false;
    } else {
      const auto member = std::get<I>(members_);
      if (x.*member < y.*member)
        return true;
      if (y.*member < x.*member)
        return false;
      return ltFrom<I + 1>(x, y);
    }
  }
  template <typename S, std::size_t... I>
  bool eqFrom(const S &x, const S &y, std::index_sequence<I...>) const {
    return ((x.*std::get<I>(members_) == y.*std::get<I>(members_)) && ...);
  }
  template <typename S, std::size_t... I> auto tieFrom(const S &s, std::index_sequence<I...>) const {
    return std::tie(s.*std::get<I>(members_)...);
  }

  std::tuple<MemberPtrs...> members_;
};

/// A StructHelper over the given pointers to members.
template <typename... MemberPtrs>
constexpr StructHelper<MemberPtrs...> makeStructHelper(MemberPtrs... members) {
  return StructHelper<MemberPtrs...>(members...);
}

} // namespace gccs

#endif
