// Copyright (c) Aspen contributors. PopLibs-compatible public API.
// Names of templated vertex types, spelled the way the codelet compiler
// registers them: the class name, then the template arguments separated by
// commas without spaces.
//
//   poputil::templateVertex("popops::Fill", poplar::FLOAT)          // "popops::Fill<float>"
//   poputil::templateVertex("ns::Bar", poplar::UNSIGNED_INT, true)  // "ns::Bar<unsigned int,true>"
//   poputil::templateVertex("Baz", 3, "popops::Op::ADD")           // "Baz<3,popops::Op::ADD>"
//
// Other argument types (enums) are spelled by a `VertexTemplateToString<T>`
// specialisation with a static `std::string to_string(const T &)`.
#ifndef POPUTIL_VERTEXTEMPLATES_HPP
#define POPUTIL_VERTEXTEMPLATES_HPP

#include <poplar/StringRef.hpp>
#include <poplar/Type.hpp>

#include <string>
#include <utility>

namespace poputil {

/// How a template argument of type T is spelled in a vertex name. The primary
/// template uses std::to_string (integers); specialise it for enumerations.
template <typename T> struct VertexTemplateToString {
  static std::string to_string(const T &x) { return std::to_string(x); }
};

template <> struct VertexTemplateToString<poplar::Type> {
  static std::string to_string(const poplar::Type &t) { return t.toString().str(); }
};

template <> struct VertexTemplateToString<bool> {
  static std::string to_string(const bool &b) { return b ? "true" : "false"; }
};

template <> struct VertexTemplateToString<std::string> {
  static std::string to_string(const std::string &s) { return s; }
};

template <> struct VertexTemplateToString<poplar::StringRef> {
  static std::string to_string(const poplar::StringRef &s) { return s.str(); }
};

template <> struct VertexTemplateToString<const char *> {
  static std::string to_string(const char *const &s) { return s; }
};

template <> struct VertexTemplateToString<char *> {
  static std::string to_string(char *const &s) { return s; }
};

namespace detail {

// String literals arrive as arrays; spell them as strings.
template <typename T> struct TemplateArgType { typedef T type; };
template <std::size_t N> struct TemplateArgType<char[N]> { typedef const char *type; };
template <std::size_t N> struct TemplateArgType<const char[N]> { typedef const char *type; };

template <typename T> std::string templateArgString(const T &value) {
  typedef typename TemplateArgType<T>::type Arg;
  return VertexTemplateToString<Arg>::to_string(value);
}

inline std::string templateArgs() {
  return std::string();
}

template <typename T, typename... Rest> std::string templateArgs(const T &first, const Rest &...rest) {
  return templateArgString(first) + (sizeof...(Rest) == 0 ? std::string() : "," + templateArgs(rest...));
}

} // namespace detail

/// The template-argument list `<a,b,c>` (empty with no arguments).
template <typename... Args> std::string templateVertexParams(const Args &...args) {
  if (sizeof...(Args) == 0)
    return std::string();
  return "<" + detail::templateArgs(args...) + ">";
}

/// `name<args...>`: the vertex type name of a template instantiation.
template <typename... Args> std::string templateVertex(const std::string &name, const Args &...args) {
  return name + templateVertexParams(args...);
}

} // namespace poputil

#endif
