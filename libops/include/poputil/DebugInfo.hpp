// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file DebugInfo.hpp
/// How an operator library records each op's arguments as debug information
/// (PopLibs' `poputil::PoplibsOpDebugInfo`): the op makes one at its entry,
/// ```
/// poplar::Tensor myOp(poplar::Graph& graph, const poplar::Tensor &in, float scale,
///                     poplar::program::Sequence &prog, const poplar::DebugContext &debugContext) {
///   poputil::PoplibsOpDebugInfo di(debugContext, DI_ARGS(in, scale));
///   poplar::Tensor out = graph.clone(in, {di, "out"});
///   ...
///   di.addOutput(out);
///   return out;
/// }
/// ```
/// and passes `{di}` (or `{di, "name"}`) to what it creates, so that the
/// profile links each variable, compute set and program to the op, its layer,
/// its arguments and its caller (docs/debug-info.md).
#ifndef poputil_DebugInfo_hpp
#define poputil_DebugInfo_hpp

#include <poplar/DebugContext.hpp>
#include <poplar/GraphElements.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/TensorCloneMethod.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace poputil {

/// The ProfileValue of an op argument. Declared for every type; defined for the
/// types below (libpoputil) and specialised by each library for its own types
/// (enums as their names, parameter structs as Maps).
template <typename T> poplar::ProfileValue toProfileValue(const T &t);

// Numbers and strings.
template <> poplar::ProfileValue toProfileValue(const bool &v);
template <> poplar::ProfileValue toProfileValue(const int &v);
template <> poplar::ProfileValue toProfileValue(const unsigned int &v);
template <> poplar::ProfileValue toProfileValue(const long &v);
template <> poplar::ProfileValue toProfileValue(const unsigned long &v);
template <> poplar::ProfileValue toProfileValue(const long long &v);
template <> poplar::ProfileValue toProfileValue(const unsigned long long &v);
template <> poplar::ProfileValue toProfileValue(const float &v);
template <> poplar::ProfileValue toProfileValue(const double &v);
template <> poplar::ProfileValue toProfileValue(const std::string &v);
template <> poplar::ProfileValue toProfileValue(const poplar::ProfileValue &v);

// Poplar types: a Tensor as {"shape": "[2, 3]", "type": "float"}, a Type as its
// name, OptionFlags as a Map of strings, a ComputeSet as its id.
template <> poplar::ProfileValue toProfileValue(const poplar::ComputeSet &t);
template <> poplar::ProfileValue toProfileValue(const poplar::OptionFlags &t);
template <> poplar::ProfileValue toProfileValue(const poplar::program::Copy &t);
template <> poplar::ProfileValue toProfileValue(const poplar::Tensor &t);
template <> poplar::ProfileValue toProfileValue(const poplar::Type &t);
template <> poplar::ProfileValue toProfileValue(const poplar::TensorCloneMethod &t);

/// A pointer: what it points at, or "<nullptr>".
template <typename T> poplar::ProfileValue toProfileValue(const T *t) {
  return t == nullptr ? poplar::ProfileValue("<nullptr>") : toProfileValue(*t);
}
template <typename T> poplar::ProfileValue toProfileValue(T *const &t) {
  return t == nullptr ? poplar::ProfileValue("<nullptr>") : toProfileValue(*t);
}

/// A vector: a Map from "0", "1", ... to the elements (as PopLibs records it).
template <typename T> poplar::ProfileValue toProfileValue(const std::vector<T> &vec) {
  poplar::ProfileValue::Map v;
  for (std::size_t i = 0; i < vec.size(); ++i)
    v.insert(std::make_pair(std::to_string(i), toProfileValue(vec[i])));
  return v;
}
template <> poplar::ProfileValue toProfileValue(const std::vector<bool> &vec);

/// An ArrayRef: like a vector.
template <typename T> poplar::ProfileValue toProfileValue(const poplar::ArrayRef<T> &arr) {
  poplar::ProfileValue::Map v;
  for (std::size_t i = 0; i < arr.size(); ++i)
    v.insert(std::make_pair(std::to_string(i), toProfileValue(arr[i])));
  return v;
}

/// One named argument of an op.
class ArgType {
public:
  std::string n;
  poplar::ProfileValue pv;

  ArgType(const std::string &name, const poplar::ProfileValue &value) : n(name), pv(value) {}
  ArgType(std::string &&name, poplar::ProfileValue &&value) : n(std::move(name)), pv(std::move(value)) {}
  ArgType(const std::pair<std::string, const poplar::ProfileValue> &p) : n(p.first), pv(p.second) {}
};

/// The debug information of one op: layer "poplibs", value "api" = the op's name.
class OpDebugInfo : public poplar::DebugInfo {
public:
  OpDebugInfo(const poplar::DebugContext &debugContext, std::string api);
  OpDebugInfo &operator=(const OpDebugInfo &) = delete;
  OpDebugInfo(const OpDebugInfo &) = delete;
  virtual ~OpDebugInfo() = default;

  /// Records the arguments as a Map under `name` (nothing when `args` is empty).
  void add(const std::string &name, const std::vector<ArgType> &args);

protected:
  /// Aspen: the same with another layer ("popops", "poplin", ...).
  OpDebugInfo(const poplar::DebugContext &debugContext, std::string api, std::string layer);
};

/// An op's debug information with its arguments under "args"; `api` defaults
/// to the name of the calling function.
class PoplibsOpDebugInfo : public OpDebugInfo {
public:
#if defined(__GNUC__) || defined(__clang__)
  PoplibsOpDebugInfo(const poplar::DebugContext &debugContext, const std::vector<ArgType> &args = {},
                     const std::string &api = __builtin_FUNCTION());
#else
  PoplibsOpDebugInfo(const poplar::DebugContext &debugContext, const std::vector<ArgType> &args = {},
                     const std::string &api = "");
#endif
  PoplibsOpDebugInfo &operator=(const PoplibsOpDebugInfo &) = delete;
  PoplibsOpDebugInfo(const PoplibsOpDebugInfo &) = delete;
  virtual ~PoplibsOpDebugInfo() = default;

  /// Records named outputs under "outputs".
  void addOutputs(const std::vector<ArgType> &outputs);
  /// Records the single output under "output".
  void addOutput(const poplar::Tensor &output);

protected:
  /// Aspen: the same with another layer ("popops", "poplin", ...).
  PoplibsOpDebugInfo(const poplar::DebugContext &debugContext, std::string layer,
                     const std::vector<ArgType> &args, const std::string &api);
};

} // namespace poputil

// DI_ARGS(a, b, c) is {{"a", poputil::toProfileValue(a)}, {"b", ...}, {"c", ...}}: the
// arguments of PoplibsOpDebugInfo, named as written (up to 20).
#define POPUTIL_DI_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18,     \
                        _19, _20, N, ...)                                                                    \
  N
#define POPUTIL_DI_COUNT(...)                                                                                \
  POPUTIL_DI_PICK(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define POPUTIL_DI_JOIN_(a, b) a##b
#define POPUTIL_DI_JOIN(a, b) POPUTIL_DI_JOIN_(a, b)
#define POPUTIL_DI_EACH_1(x)                                                                                 \
  { #x, ::poputil::toProfileValue(x) }
#define POPUTIL_DI_EACH_2(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_1(__VA_ARGS__)
#define POPUTIL_DI_EACH_3(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_2(__VA_ARGS__)
#define POPUTIL_DI_EACH_4(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_3(__VA_ARGS__)
#define POPUTIL_DI_EACH_5(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_4(__VA_ARGS__)
#define POPUTIL_DI_EACH_6(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_5(__VA_ARGS__)
#define POPUTIL_DI_EACH_7(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_6(__VA_ARGS__)
#define POPUTIL_DI_EACH_8(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_7(__VA_ARGS__)
#define POPUTIL_DI_EACH_9(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_8(__VA_ARGS__)
#define POPUTIL_DI_EACH_10(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_9(__VA_ARGS__)
#define POPUTIL_DI_EACH_11(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_10(__VA_ARGS__)
#define POPUTIL_DI_EACH_12(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_11(__VA_ARGS__)
#define POPUTIL_DI_EACH_13(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_12(__VA_ARGS__)
#define POPUTIL_DI_EACH_14(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_13(__VA_ARGS__)
#define POPUTIL_DI_EACH_15(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_14(__VA_ARGS__)
#define POPUTIL_DI_EACH_16(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_15(__VA_ARGS__)
#define POPUTIL_DI_EACH_17(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_16(__VA_ARGS__)
#define POPUTIL_DI_EACH_18(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_17(__VA_ARGS__)
#define POPUTIL_DI_EACH_19(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_18(__VA_ARGS__)
#define POPUTIL_DI_EACH_20(x, ...) {#x, ::poputil::toProfileValue(x)}, POPUTIL_DI_EACH_19(__VA_ARGS__)
#define DI_ARGS(...)                                                                                         \
  { POPUTIL_DI_JOIN(POPUTIL_DI_EACH_, POPUTIL_DI_COUNT(__VA_ARGS__))(__VA_ARGS__) }

#endif // poputil_DebugInfo_hpp
