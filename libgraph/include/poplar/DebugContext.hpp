// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_DEBUGCONTEXT_HPP
#define POPLAR_DEBUGCONTEXT_HPP

#include <poplar/StringRef.hpp>

#include <cstdint>
#include <string>

namespace poplar {

/// Where in the user's source a graph element was made.
class SourceLocation {
public:
  SourceLocation() : function_(""), file_(""), line_(0), valid_(false) {}
  SourceLocation(const char *function, const char *file, unsigned line)
      : function_(function), file_(file), line_(line), valid_(true) {}
#if defined(__GNUC__) || defined(__clang__)
  static SourceLocation Current(const char *function = __builtin_FUNCTION(),
                                const char *file = __builtin_FILE(), unsigned line = __builtin_LINE()) {
    return SourceLocation(function, file, line);
  }
#else
  static SourceLocation Current() {
    return SourceLocation();
  }
#endif
  const char *getFunctionName() const {
    return function_;
  }
  const char *getFileName() const {
    return file_;
  }
  unsigned getLineNumber() const {
    return line_;
  }
  bool isValid() const {
    return valid_;
  }

private:
  const char *function_;
  const char *file_;
  unsigned line_;
  bool valid_;
};

using DebugId = std::uint64_t;

/// A name and id passed down from a caller's DebugContext.
class DebugNameAndId {
public:
  DebugNameAndId(StringRef name = "", DebugId id = 0) : name_(name.str()), id_(id) {}
  DebugNameAndId(const char *name) : name_(name ? name : ""), id_(0) {}
  DebugNameAndId(const std::string &name) : name_(name), id_(0) {}
  const std::string &getPathName() const { return name_; }
  DebugId getId() const { return id_; }

private:
  std::string name_;
  DebugId id_;
};

/// Names a graph element for error messages and profiles. Implicit from a
/// string; `{parent, "suffix"}` extends a parent's path with '/'.
class DebugContext {
public:
  DebugContext(SourceLocation loc = SourceLocation::Current()) : loc_(loc) {}
  DebugContext(const char *name, SourceLocation loc = SourceLocation::Current())
      : path_(name ? name : ""), loc_(loc) {}
  DebugContext(const std::string &name, SourceLocation loc = SourceLocation::Current())
      : path_(name), loc_(loc) {}
  DebugContext(StringRef name, SourceLocation loc = SourceLocation::Current())
      : path_(name.str()), loc_(loc) {}
  DebugContext(const DebugNameAndId &dnai, StringRef name = "",
               SourceLocation loc = SourceLocation::Current())
      : path_(join(dnai.getPathName(), name.str())), loc_(loc) {}
  DebugContext(const DebugContext &parent, StringRef name, SourceLocation loc = SourceLocation::Current())
      : path_(join(parent.path_, name.str())), loc_(loc) {}
  DebugContext(const DebugContext &) = default;
  DebugContext &operator=(const DebugContext &) = default;

  /// The full '/'-separated path of names.
  const std::string &getPathName() const { return path_; }
  const SourceLocation &getLocation() const { return loc_; }
  operator DebugNameAndId() const { return DebugNameAndId(path_); }

private:
  static std::string join(const std::string &a, const std::string &b) {
    if (a.empty())
      return b;
    if (b.empty())
      return a;
    return a + "/" + b;
  }
  std::string path_;
  SourceLocation loc_;
};

} // namespace poplar

#endif
