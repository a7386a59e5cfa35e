// Copyright (c) Aspen contributors.
// The debug information each public op of libops records at its entry
// (docs/debug-info.md): PopLibs' PoplibsOpDebugInfo under the library's own
// layer, with the op's arguments under "args".
//
//   poplar::Tensor popops::foo(..., const poplar::DebugContext &debugContextIn, ...) {
//     aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(a, b, options));
//     const poplar::DebugContext debugContext(di);   // everything below is made under di
#pragma once

#include "poputil/DebugInfo.hpp"

#include <sstream>
#include <string>
#include <vector>

#define ASPEN_OPS_DEBUG_INFO(Name, layer)                                                                    \
  class Name : public poputil::PoplibsOpDebugInfo {                                                          \
  public:                                                                                                    \
    Name(const poplar::DebugContext &debugContext, const std::vector<poputil::ArgType> &args = {},           \
         const std::string &api = __builtin_FUNCTION())                                                      \
        : PoplibsOpDebugInfo(debugContext, layer, args, api) {}                                              \
  }

namespace aspen::ops {

ASPEN_OPS_DEBUG_INFO(PopopsDebugInfo, "popops");
ASPEN_OPS_DEBUG_INFO(PoplinDebugInfo, "poplin");
ASPEN_OPS_DEBUG_INFO(PopnnDebugInfo, "popnn");
ASPEN_OPS_DEBUG_INFO(PoputilDebugInfo, "poputil");
ASPEN_OPS_DEBUG_INFO(PoprandDebugInfo, "poprand");
ASPEN_OPS_DEBUG_INFO(GclDebugInfo, "gcl");

/// An argument recorded as the text its operator<< prints (plans, parameters, enums).
template <class T> poplar::ProfileValue streamedProfileValue(const T &value) {
  std::ostringstream os;
  os << value;
  return poplar::ProfileValue(os.str());
}

} // namespace aspen::ops
