// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TYPETRAITS_HPP
#define POPLAR_TYPETRAITS_HPP

#include <cstddef>
#include <limits>
#include <type_traits>

namespace poplar {

/// Size, alignment and kind of a host type, as PopLibs' expression constants
/// record them. Example: `TypeTraits t = TypeTraits::make<float>(); // size 4, isFloat`
struct TypeTraits {
  std::size_t align = 0;
  std::size_t size = 0;
  bool isIntegral = false;
  bool isFloat = false;
  bool isSigned = false;

  TypeTraits() = default;
  TypeTraits(std::size_t align, std::size_t size, bool isIntegral, bool isFloat, bool isSigned)
      : align(align), size(size), isIntegral(isIntegral), isFloat(isFloat), isSigned(isSigned) {}

  /// The traits of host type `T`.
  template <typename T> static TypeTraits make() {
    return TypeTraits(alignof(T), sizeof(T), std::is_integral<T>::value, std::is_floating_point<T>::value,
                      std::is_signed<T>::value);
  }

  /// True for the arithmetic types a constant can hold (integers, bool, floating point).
  template <typename T> static constexpr bool isSimpleType() {
    return std::is_integral<T>::value || std::is_floating_point<T>::value;
  }
};

inline bool operator==(const TypeTraits &a, const TypeTraits &b) {
  return a.align == b.align && a.size == b.size && a.isIntegral == b.isIntegral && a.isFloat == b.isFloat &&
         a.isSigned == b.isSigned;
}
inline bool operator!=(const TypeTraits &a, const TypeTraits &b) {
  return !(a == b);
}

} // namespace poplar

#endif
