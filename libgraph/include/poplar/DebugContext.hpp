// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_DEBUGCONTEXT_HPP
#define POPLAR_DEBUGCONTEXT_HPP

#include <poplar/ProfileValue.hpp>
#include <poplar/StringRef.hpp>

#include <cstdint>
#include <memory>
#include <ostream>
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

class DebugContext;

/// Debug information of one layer (an application, a library op) for the
/// profile: a unique id, the path name of its DebugContext, and named values.
///
/// ```
/// poplar::DebugInfo di(debugContext, "myLib");
/// di.setValue("shape", poplar::ProfileValue::Vector{2, 3});
/// graph.addVariable(FLOAT, {2, 3}, {poplar::DebugNameAndId(di), "weights"});
/// ```
/// The file format of `DebugInfo::initializeStreamer`.
enum class DebugSerializationFormat { JSON, CBOR };

class DebugInfo {
public:
  DebugInfo(const DebugContext &debugContext, std::string layer);

  /// Every DebugInfo destroyed from now until `closeStreamer` is written to
  /// `fileName` (`{"contexts": [{"id", "layer", "path", "location", values...}]}`),
  /// as JSON or as CBOR. Throws `poplar_error` naming a file that cannot be written.
  static void initializeStreamer(const std::string &fileName,
                                 const DebugSerializationFormat &format = DebugSerializationFormat::JSON);
  /// Writes and closes the file of `initializeStreamer`.
  static void closeStreamer();
  DebugInfo(const DebugInfo &) = delete;
  DebugInfo &operator=(const DebugInfo &) = delete;
  virtual ~DebugInfo();

  /// Unique in the process; never 0.
  DebugId getId() const;
  /// The DebugContext's path name ('/'-separated).
  std::string getPathName() const;
  /// The layer given at construction ("poplar", "popops", "app", ...).
  const std::string &getLayer() const;
  /// Records `value` under `name`; returns false (and keeps the first value)
  /// when `name` was set before.
  bool setValue(std::string name, ProfileValue value);
  /// Every value set, with "layer", "api"-style keys as given.
  const ProfileValue::Map &getValues() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A name and id passed down from a caller's DebugContext.
class DebugNameAndId {
public:
  DebugNameAndId(StringRef name = "", DebugId id = 0) : name_(name.str()), id_(id) {}
  /// `name` under `parentPath` ('/'-joined).
  DebugNameAndId(const std::string &name, DebugId id, const std::string &parentPath)
      : name_(parentPath.empty() ? name : (name.empty() ? parentPath : parentPath + "/" + name)), id_(id) {}
  DebugNameAndId(const char *name) : name_(name ? name : ""), id_(0) {}
  DebugNameAndId(const std::string &name) : name_(name), id_(0) {}
  explicit DebugNameAndId(DebugId id) : id_(id) {}
  /// `parent`'s path with `name` appended, and its id.
  DebugNameAndId(const DebugNameAndId &parent, StringRef name)
      : name_(parent.name_.empty() ? name.str()
                                   : (name.empty() ? parent.name_ : parent.name_ + "/" + name.str())),
        id_(parent.id_) {}
  DebugNameAndId(const DebugNameAndId &) = default;
  DebugNameAndId &operator=(const DebugNameAndId &) = default;
  /// The DebugInfo's id and path name, with `name` appended when given.
  DebugNameAndId(const DebugInfo &debugInfo, StringRef name = "")
      : name_(name.empty() ? debugInfo.getPathName()
                           : (debugInfo.getPathName().empty() ? name.str()
                                                              : debugInfo.getPathName() + "/" + name.str())),
        id_(debugInfo.getId()) {}
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
      : path_(join(dnai.getPathName(), name.str())), loc_(loc), id_(dnai.getId()) {}
  DebugContext(const DebugInfo &debugInfo, StringRef name = "",
               SourceLocation loc = SourceLocation::Current())
      : path_(join(debugInfo.getPathName(), name.str())), loc_(loc), id_(debugInfo.getId()) {}
  DebugContext(const DebugContext &parent, StringRef name, SourceLocation loc = SourceLocation::Current())
      : path_(join(parent.path_, name.str())), loc_(loc), id_(parent.id_) {}
  DebugContext(const DebugContext &) = default;
  DebugContext &operator=(const DebugContext &) = default;

  /// The full '/'-separated path of names.
  const std::string &getPathName() const { return path_; }
  const SourceLocation &getLocation() const { return loc_; }
  /// The id of the DebugInfo this context was made from (0 when none).
  DebugId getId() const { return id_; }
  operator DebugNameAndId() const { return DebugNameAndId(path_, id_); }

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
  DebugId id_ = 0;
};

/// Prints the context's path name.
inline std::ostream &operator<<(std::ostream &os, const DebugContext &dc) {
  return os << dc.getPathName();
}

} // namespace poplar

#endif
