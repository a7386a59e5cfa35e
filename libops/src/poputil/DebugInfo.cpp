// Copyright (c) Aspen contributors.
// poputil/DebugInfo.hpp: the ProfileValues of op arguments and the op debug
// information every libops library records (docs/debug-info.md).
#include "poputil/DebugInfo.hpp"

#include <string>
#include <utility>

namespace poputil {

template <> poplar::ProfileValue toProfileValue(const bool &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const int &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const unsigned int &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const long &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const unsigned long &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const long long &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const unsigned long long &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const float &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const double &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const std::string &v) {
  return poplar::ProfileValue(v);
}
template <> poplar::ProfileValue toProfileValue(const poplar::ProfileValue &v) {
  return v;
}

template <> poplar::ProfileValue toProfileValue(const poplar::ComputeSet &cs) {
  return poplar::ProfileValue(cs.getId());
}
template <> poplar::ProfileValue toProfileValue(const poplar::OptionFlags &flags) {
  return poplar::getAsProfileValue(flags);
}
template <> poplar::ProfileValue toProfileValue(const poplar::program::Copy &) {
  return poplar::ProfileValue("program::Copy");
}
template <> poplar::ProfileValue toProfileValue(const poplar::Tensor &t) {
  poplar::ProfileValue::Map v;
  if (!t.valid()) {
    v.emplace("shape", poplar::ProfileValue("<invalid>"));
    return v;
  }
  std::string shape = "[";
  const std::vector<std::size_t> dims = t.shape();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i)
      shape += ", ";
    shape += std::to_string(dims[i]);
  }
  shape += "]";
  v.emplace("shape", poplar::ProfileValue(std::move(shape)));
  v.emplace("type", poplar::ProfileValue(t.elementType().toString().str()));
  return v;
}
template <> poplar::ProfileValue toProfileValue(const poplar::Type &t) {
  return poplar::ProfileValue(t.toString().str());
}
template <> poplar::ProfileValue toProfileValue(const poplar::TensorCloneMethod &m) {
  static const char *const names[] = {"PRESERVE_ORDER_AND_ALIASES", "CREATE_NEW_ORDER",
                                      "PRESERVE_ORDER_UNLESS_ALIASES",
                                      "GATHER_AND_PRESERVE_TILE_ORDER_AND_ALIASES"};
  const auto i = static_cast<std::size_t>(m);
  return poplar::ProfileValue(i < 4 ? names[i] : "?");
}
template <> poplar::ProfileValue toProfileValue(const std::vector<bool> &vec) {
  poplar::ProfileValue::Map v;
  for (std::size_t i = 0; i < vec.size(); ++i)
    v.emplace(std::to_string(i), poplar::ProfileValue(static_cast<bool>(vec[i])));
  return v;
}

OpDebugInfo::OpDebugInfo(const poplar::DebugContext &debugContext, std::string api)
    : OpDebugInfo(debugContext, std::move(api), "poplibs") {}

OpDebugInfo::OpDebugInfo(const poplar::DebugContext &debugContext, std::string api, std::string layer)
    : poplar::DebugInfo(debugContext, std::move(layer)) {
  setValue("api", std::move(api));
}

void OpDebugInfo::add(const std::string &name, const std::vector<ArgType> &args) {
  if (args.empty())
    return;
  poplar::ProfileValue::Map m;
  for (const ArgType &a : args)
    m.emplace(a.n, a.pv);
  setValue(name, poplar::ProfileValue(std::move(m)));
}

PoplibsOpDebugInfo::PoplibsOpDebugInfo(const poplar::DebugContext &debugContext,
                                       const std::vector<ArgType> &args, const std::string &api)
    : OpDebugInfo(debugContext, api) {
  add("args", args);
}

PoplibsOpDebugInfo::PoplibsOpDebugInfo(const poplar::DebugContext &debugContext, std::string layer,
                                       const std::vector<ArgType> &args, const std::string &api)
    : OpDebugInfo(debugContext, api, std::move(layer)) {
  add("args", args);
}

void PoplibsOpDebugInfo::addOutputs(const std::vector<ArgType> &outputs) {
  add("outputs", outputs);
}

void PoplibsOpDebugInfo::addOutput(const poplar::Tensor &output) {
  setValue("output", toProfileValue(output));
}

} // namespace poputil
