// Copyright (c) Aspen contributors. Support header of the gccs family (docs/gccs.md).
// poplar::ArrayRef is this class (poplar/ArrayRef.hpp names it in namespace poplar), so a
// gccs::ArrayRef passes wherever Poplar's API takes an ArrayRef. C++11, as Poplar's headers.
#ifndef GCCS_ARRAYREF_HPP
#define GCCS_ARRAYREF_HPP

#include <array>
#include <cstddef>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace gccs {

/// A non-owning view of a contiguous array, implicitly made from a vector, an
/// initializer list, a C array, a std::array or (pointer, size).
/// Example: `void f(ArrayRef<std::size_t> shape); f({2, 3});`
/// `ArrayRef<const T>` is the same view as `ArrayRef<T>` (both read only), and each converts
/// to the other, as PopLibs passes `ArrayRef<const float>` where Poplar takes `ArrayRef<float>`.
template <class T> class ArrayRef {
  using Elem = typename std::remove_const<T>::type;

public:
  using value_type = T;
  using const_iterator = const T *;
  using iterator = const T *;

  ArrayRef() : ptr_(nullptr), size_(0) {}
  ArrayRef(std::nullptr_t) : ptr_(nullptr), size_(0) {}
  ArrayRef(const T *p, std::size_t n) : ptr_(p), size_(n) {}
  ArrayRef(const T &one) : ptr_(&one), size_(1) {}
  template <class A> ArrayRef(const std::vector<T, A> &v) : ptr_(v.data()), size_(v.size()) {}
  /// An ArrayRef<const T> of a std::vector<T> (the constructor above deduces T for CTAD).
  template <
      class U, class A,
      typename std::enable_if<std::is_same<const U, T>::value && !std::is_same<U, T>::value, int>::type = 0>
  ArrayRef(const std::vector<U, A> &v) : ptr_(v.data()), size_(v.size()) {}
  /// From the view of the same elements with or without const.
  template <class U, typename std::enable_if<std::is_same<typename std::remove_const<U>::type, Elem>::value &&
                                                 !std::is_same<U, T>::value,
                                             int>::type = 0>
  ArrayRef(ArrayRef<U> other) : ptr_(other.data()), size_(other.size()) {}
  // The list must outlive the ArrayRef, as for any argument; taking the pointer
  // through a function keeps GCC's -Winit-list-lifetime quiet about that.
  ArrayRef(const std::initializer_list<T> &l) : ptr_(firstOf(l)), size_(l.size()) {}
  template <std::size_t N> ArrayRef(const T (&a)[N]) : ptr_(a), size_(N) {}
  template <std::size_t N> ArrayRef(const std::array<T, N> &a) : ptr_(a.data()), size_(N) {}

  const T *data() const { return ptr_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T *begin() const { return ptr_; }
  const T *end() const { return ptr_ + size_; }
  const T *cbegin() const { return ptr_; }
  const T *cend() const { return ptr_ + size_; }
  const T &front() const { return ptr_[0]; }
  const T &back() const { return ptr_[size_ - 1]; }
  const T &operator[](std::size_t i) const { return ptr_[i]; }
  std::vector<Elem> vec() const { return std::vector<Elem>(begin(), end()); }
  operator std::vector<Elem>() const { return vec(); }

private:
  static const T *firstOf(const std::initializer_list<T> &l) { return l.size() ? l.begin() : nullptr; }
  const T *ptr_;
  std::size_t size_;
};

template <class T> bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  if (a.size() != b.size())
    return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i]))
      return false;
  return true;
}
template <class T> bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
  return !(a == b);
}

} // namespace gccs

#endif
