// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_INTERVAL_HPP
#define POPLAR_INTERVAL_HPP

#include <cstddef>
#include <map> // as Poplar's brings it (PopLibs' poplibs_support/Algorithms.cpp relies on it)
#include <ostream>

namespace poplar {

/// A half-open interval `[begin, end)`.
template <class T> class GenericInterval {
public:
  GenericInterval() : begin_(), end_() {}
  GenericInterval(T begin, T end) : begin_(begin), end_(end) {}
  const T &begin() const { return begin_; }
  const T &end() const { return end_; }
  T size() const { return end_ - begin_; }
  const T &lower() const { return begin_; }
  const T &upper() const { return end_; }

private:
  T begin_;
  T end_;
};

template <class T> bool operator==(const GenericInterval<T> &a, const GenericInterval<T> &b) {
  return a.begin() == b.begin() && a.end() == b.end();
}
template <class T> bool operator!=(const GenericInterval<T> &a, const GenericInterval<T> &b) {
  return !(a == b);
}
template <class T> bool operator<(const GenericInterval<T> &a, const GenericInterval<T> &b) {
  return a.begin() < b.begin() || (a.begin() == b.begin() && a.end() < b.end());
}
template <class T> std::ostream &operator<<(std::ostream &os, const GenericInterval<T> &i) {
  return os << '[' << i.begin() << ", " << i.end() << ')';
}

using Interval = GenericInterval<std::size_t>;

} // namespace poplar

#endif
