// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TARGETTYPE_HPP
#define POPLAR_TARGETTYPE_HPP

#include <string>

namespace poplar {

enum class TargetType { IPU, IPU_MODEL, CPU };

/// "IPU", "IPU_MODEL" or "CPU".
std::string toString(TargetType t);

} // namespace poplar

#endif
