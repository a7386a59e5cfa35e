// Copyright (c) Aspen contributors. Support header of the gccs family (docs/gccs.md).
// Integer helpers for tiling arithmetic: division rounding up or down, alignment to a
// multiple, logarithms and balanced splits. Arguments are non-negative integers; the result
// has the type the built-in operators give the two arguments (their common type).
#ifndef GCCS_ALGORITHM_HPP
#define GCCS_ALGORITHM_HPP

#include <type_traits>
#include <utility>

namespace gccs {

/// x / y rounded up; y must not be 0. `ceildiv(7u, 2u) == 4`.
template <typename T, typename U> constexpr auto ceildiv(T x, U y) {
  static_assert(std::is_integral<T>::value && std::is_integral<U>::value, "ceildiv takes integers");
  return x == 0 ? (x + y) * 0 : (x - 1) / y + 1;
}

/// x / y rounded up, and 0 when x and y are both 0 (y == 0 with x != 0 is not allowed).
template <typename T, typename U> constexpr auto ceildiv0(T x, U y) {
  return y == 0 ? (x + y) * 0 : ceildiv(x, y);
}

/// x / y rounded down; y must not be 0.
template <typename T, typename U> constexpr auto floordiv(T x, U y) {
  static_assert(std::is_integral<T>::value && std::is_integral<U>::value, "floordiv takes integers");
  return x / y;
}

/// The smallest multiple of `alignment` that is at least x. `alignNext(10u, 4u) == 12`.
template <typename T, typename U> constexpr auto alignNext(T x, U alignment) {
  return ceildiv(x, alignment) * alignment;
}

/// The largest multiple of `alignment` that is at most x. `alignPrev(10u, 4u) == 8`.
template <typename T, typename U> constexpr auto alignPrev(T x, U alignment) {
  return floordiv(x, alignment) * alignment;
}

/// The smallest k with 2^k >= n (0 for n <= 1). `ceilLog2(5u) == 3`.
template <typename T> constexpr unsigned ceilLog2(T n) {
  unsigned k = 0;
  while (n > 1 && (T(1) << k) < n)
    ++k;
  return k;
}

/// The largest k with 2^k <= n; n must be at least 1. `floorLog2(5u) == 2`.
template <typename T> constexpr unsigned floorLog2(T n) {
  unsigned k = 0;
  while (n > 1) {
    n >>= 1;
    ++k;
  }
  return k;
}

/// Whether n is a power of two (0 is not).
template <typename T> constexpr bool isPowerOf2(T n) {
  return n != 0 && (n & (n - 1)) == 0;
}

/// 0 + 1 + ... + n.
template <typename T> constexpr T nthTriangular(T n) {
  return n * (n + 1) / 2;
}

/// Splits n items into d parts whose sizes differ by at most one: {number of parts of
/// ceildiv(n, d) items, number of parts of n / d items}; every part is of the first kind
/// when d divides n, and both are 0 when d is 0.
template <typename T> constexpr std::pair<T, T> balancedPartition(T n, T d) {
  if (d == 0)
    return {T(0), T(0)};
  const T big = ceildiv(n, d);
  const T smallParts = big * d - n;
  return {T(d - smallParts), smallParts};
}

} // namespace gccs

#endif
