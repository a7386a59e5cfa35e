// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_PROFILEVALUE_HPP
#define POPLAR_PROFILEVALUE_HPP

#include <poplar/StringRef.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace poplar {

/// A tree of values in debug information and profiles: a Boolean, a Number, a
/// String, a Vector of values or a Map from names to values.
///
/// ```
/// ProfileValue::Map args{{"shape", ProfileValue::Vector{2, 3}}, {"inPlace", true}};
/// ProfileValue v(args);
/// v["shape"][1].asUint(); // 3
/// ```
class ProfileValue {
public:
  using Boolean = bool;
  using Number = double;
  using String = std::string;
  using Vector = std::vector<ProfileValue>;
  using Map = std::map<std::string, ProfileValue>;
  enum class Type { BOOL_, STRING, NUMBER, VECTOR, MAP };

  ProfileValue() : type_(Type::MAP), map_(std::make_shared<Map>()) {}
  ProfileValue(const char *s) : type_(Type::STRING), string_(s ? s : "") {}
  ProfileValue(const std::string &s) : type_(Type::STRING), string_(s) {}
  ProfileValue(std::string &&s) : type_(Type::STRING), string_(std::move(s)) {}
  ProfileValue(StringRef s) : type_(Type::STRING), string_(s.str()) {}
  ProfileValue(const Vector &v) : type_(Type::VECTOR), vector_(std::make_shared<Vector>(v)) {}
  ProfileValue(const Map &m) : type_(Type::MAP), map_(std::make_shared<Map>(m)) {}
  ProfileValue(Vector &&v) : type_(Type::VECTOR), vector_(std::make_shared<Vector>(std::move(v))) {}
  ProfileValue(Map &&m) : type_(Type::MAP), map_(std::make_shared<Map>(std::move(m))) {}
  ProfileValue(bool b) : type_(Type::BOOL_), bool_(b) {}
  /// Any arithmetic value other than bool is a Number.
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value && !std::is_same<T, bool>::value,
                                                int>::type = 0>
  ProfileValue(T n) : type_(Type::NUMBER), number_(static_cast<double>(n)) {}

  // A value never changes once made: copies share their Vector or Map.
  ProfileValue(const ProfileValue &) = default;
  ProfileValue(ProfileValue &&) = default;
  ProfileValue &operator=(const ProfileValue &) = default;
  ProfileValue &operator=(ProfileValue &&) = default;
  ~ProfileValue() = default;

  Type type() const { return type_; }
  bool isBool() const { return type_ == Type::BOOL_; }
  bool isNumber() const { return type_ == Type::NUMBER; }
  bool isString() const { return type_ == Type::STRING; }
  bool isVector() const { return type_ == Type::VECTOR; }
  bool isMap() const { return type_ == Type::MAP; }

  /// Each accessor throws `poplar_error` naming both types when the value is of another type.
  bool asBool() const;
  double asDouble() const;
  std::int64_t asInt() const;
  std::uint64_t asUint() const;
  const std::string &asString() const;
  const Vector &asVector() const;
  const Map &asMap() const;

  /// Element `i` of a Vector.
  const ProfileValue &operator[](std::size_t i) const;
  /// The value of `key` in a Map; throws `poplar_error` naming an absent key.
  const ProfileValue &operator[](StringRef key) const;
  const ProfileValue &operator[](const char *key) const { return (*this)[StringRef(key)]; }
  /// The value of `key` in a Map, or null when it has none (or is not a Map).
  const ProfileValue *getOrNull(StringRef key) const;
  /// Elements of a Vector or entries of a Map (0 for other values).
  std::size_t size() const;
  /// A Vector of Numbers as unsigned integers.
  std::vector<std::uint64_t> toUintVector() const;
  /// Sums of a Vector of Numbers.
  double sumDouble() const;
  std::int64_t sumInt() const;
  std::uint64_t sumUint() const;

  bool operator==(const ProfileValue &o) const;
  bool operator!=(const ProfileValue &o) const { return !(*this == o); }

private:
  Type type_;
  bool bool_ = false;
  double number_ = 0;
  std::string string_;
  std::shared_ptr<const Vector> vector_;
  std::shared_ptr<const Map> map_;
};

/// Writes `value` as JSON (numbers as numbers, Maps as objects).
void serializeToJSON(std::ostream &out, const ProfileValue &value, bool prettyPrint = false);
/// The same JSON.
std::ostream &operator<<(std::ostream &os, const ProfileValue &value);

} // namespace poplar

#endif
