// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TYPE_HPP
#define POPLAR_TYPE_HPP

#include <poplar/StringRef.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace poplar {

/// An element type of a tensor or vertex field (`poplar::FLOAT`, `poplar::HALF`, ...).
/// Types compare by identity; `toString()` gives the C spelling used in vertex
/// names ("float", "unsigned int").
class Type {
public:
  /// Identifiers of the built-in types; the order is part of the executable format.
  enum class Id : std::uint8_t {
    Invalid,
    Bool,
    Char,
    SignedChar,
    UnsignedChar,
    Short,
    UnsignedShort,
    Int,
    UnsignedInt,
    Long,
    UnsignedLong,
    LongLong,
    UnsignedLongLong,
    Half,
    Float,
    Double,
    Quarter,
    QuarterMetadata,
  };
  constexpr Type() : id_(Id::Invalid) {}
  constexpr explicit Type(Id id) : id_(id) {}

  /// The C spelling of the type: "float", "half", "unsigned int", ...
  StringRef toString() const;
  /// Size of one element in bytes on the device.
  std::size_t size() const;
  bool isFloatingPoint() const;
  bool isIntegral() const;
  bool isSigned() const;
  bool valid() const { return id_ != Id::Invalid; }
  /// True for types whose tensors carry metadata (QUARTER: format and scale).
  bool requiresMetadata() const { return id_ == Id::Quarter; }
  Id id() const { return id_; }
  /// A stable hash of the type.
  std::size_t hash() const { return static_cast<std::size_t>(id_); }

  bool operator==(const Type &o) const { return id_ == o.id_; }
  bool operator!=(const Type &o) const { return id_ != o.id_; }
  bool operator<(const Type &o) const { return id_ < o.id_; }

private:
  Id id_;
};

std::ostream &operator<<(std::ostream &os, const Type &t);

extern const Type BOOL;
extern const Type CHAR;
extern const Type SIGNED_CHAR;
extern const Type UNSIGNED_CHAR;
extern const Type SHORT;
extern const Type UNSIGNED_SHORT;
extern const Type INT;
extern const Type UNSIGNED_INT;
extern const Type LONG;
extern const Type UNSIGNED_LONG;
extern const Type LONGLONG;
extern const Type UNSIGNED_LONGLONG;
extern const Type HALF;
extern const Type FLOAT;
extern const Type DOUBLE;
extern const Type QUARTER;
extern const Type QUARTER_METADATA;

/// Maps a host type to its device Type: `equivalent_device_type<float>().value == FLOAT`.
template <class T> struct equivalent_device_type {};
#define POPLAR_EQUIVALENT_DEVICE_TYPE(HostT, TypeId)                                                         \
  template <> struct equivalent_device_type<HostT> { const Type &value = TypeId; };
POPLAR_EQUIVALENT_DEVICE_TYPE(bool, BOOL)
POPLAR_EQUIVALENT_DEVICE_TYPE(char, CHAR)
POPLAR_EQUIVALENT_DEVICE_TYPE(signed char, SIGNED_CHAR)
POPLAR_EQUIVALENT_DEVICE_TYPE(unsigned char, UNSIGNED_CHAR)
POPLAR_EQUIVALENT_DEVICE_TYPE(short, SHORT)
POPLAR_EQUIVALENT_DEVICE_TYPE(unsigned short, UNSIGNED_SHORT)
POPLAR_EQUIVALENT_DEVICE_TYPE(int, INT)
POPLAR_EQUIVALENT_DEVICE_TYPE(unsigned int, UNSIGNED_INT)
POPLAR_EQUIVALENT_DEVICE_TYPE(long, LONG)
POPLAR_EQUIVALENT_DEVICE_TYPE(unsigned long, UNSIGNED_LONG)
POPLAR_EQUIVALENT_DEVICE_TYPE(long long, LONGLONG)
POPLAR_EQUIVALENT_DEVICE_TYPE(unsigned long long, UNSIGNED_LONGLONG)
POPLAR_EQUIVALENT_DEVICE_TYPE(float, FLOAT)
POPLAR_EQUIVALENT_DEVICE_TYPE(double, DOUBLE)
#undef POPLAR_EQUIVALENT_DEVICE_TYPE

} // namespace poplar

namespace std {
template <> struct hash<poplar::Type> {
  std::size_t operator()(const poplar::Type &t) const { return t.hash(); }
};
} // namespace std

#endif
