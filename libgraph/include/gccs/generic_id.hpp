// Copyright (c) Aspen contributors. Support header of the gccs family (docs/gccs.md).
// A strongly typed integer identifier: ids with different tags do not mix, and an id is not
// an integer unless asked.
//   using NodeId = gccs::generic_id<struct NodeTag, std::uint32_t>;
#ifndef GCCS_GENERIC_ID_HPP
#define GCCS_GENERIC_ID_HPP

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>

namespace gccs {

template <typename Tag, typename T = std::uint32_t> struct generic_id {
  using underlying_type = T;
  /// The identifier's value (0 for a default-constructed id).
  T id = T();

  constexpr generic_id() = default;
  constexpr explicit generic_id(T value) : id(value) {}
  constexpr explicit operator T() const { return id; }
  constexpr T value() const { return id; }

  friend constexpr bool operator==(generic_id a, generic_id b) { return a.id == b.id; }
  friend constexpr bool operator!=(generic_id a, generic_id b) { return a.id != b.id; }
  friend constexpr bool operator<(generic_id a, generic_id b) { return a.id < b.id; }
  friend constexpr bool operator<=(generic_id a, generic_id b) { return a.id <= b.id; }
  friend constexpr bool operator>(generic_id a, generic_id b) { return a.id > b.id; }
  friend constexpr bool operator>=(generic_id a, generic_id b) { return a.id >= b.id; }
  friend std::ostream &operator<<(std::ostream &os, generic_id v) { return os << v.id; }
};

} // namespace gccs

namespace std {
template <typename Tag, typename T> struct hash<gccs::generic_id<Tag, T>> {
  std::size_t operator()(gccs::generic_id<Tag, T> v) const { return std::hash<T>()(v.id); }
};
} // namespace std

#endif
