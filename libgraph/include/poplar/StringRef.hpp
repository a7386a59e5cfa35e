// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_STRINGREF_HPP
#define POPLAR_STRINGREF_HPP

#include <cassert> // as Poplar's brings it (PopLibs' popops/ExprOpUtil.cpp, through poplar/Type.hpp)
#include <cstring>
#include <ostream>
#include <string>

namespace poplar {

/// A non-owning view of characters, implicitly made from `const char *` and
/// `std::string`, and converting back to `std::string`.
class StringRef {
public:
  StringRef() : ptr_(""), size_(0) {}
  StringRef(const char *s) : ptr_(s ? s : ""), size_(s ? std::strlen(s) : 0) {}
  StringRef(const std::string &s) : ptr_(s.data()), size_(s.size()) {}
  StringRef(const char *s, std::size_t n) : ptr_(s), size_(n) {}

  const char *data() const { return ptr_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const char *begin() const { return ptr_; }
  const char *end() const { return ptr_ + size_; }
  char operator[](std::size_t i) const { return ptr_[i]; }
  std::string str() const { return std::string(ptr_, size_); }
  /// An owning copy of the characters.
  std::string cloneAsString() const { return str(); }
  operator std::string() const { return str(); }

private:
  const char *ptr_;
  std::size_t size_;
};

inline bool operator==(StringRef a, StringRef b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}
inline bool operator!=(StringRef a, StringRef b) {
  return !(a == b);
}
inline bool operator<(StringRef a, StringRef b) {
  return a.str() < b.str();
}
inline std::string operator+(const std::string &a, StringRef b) {
  return a + b.str();
}
inline std::string operator+(StringRef a, const std::string &b) {
  return a.str() + b;
}
inline std::string operator+(const char *a, StringRef b) {
  return std::string(a) + b.str();
}
inline std::string operator+(StringRef a, const char *b) {
  return a.str() + b;
}
inline std::ostream &operator<<(std::ostream &os, StringRef s) {
  return os.write(s.data(), static_cast<std::streamsize>(s.size()));
}

} // namespace poplar

#endif
