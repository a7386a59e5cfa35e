// Copyright (c) Aspen contributors.
#include "poplar/TargetType.hpp"

namespace poplar {

std::string toString(TargetType t) {
  switch (t) {
  case TargetType::IPU:
    return "IPU";
  case TargetType::IPU_MODEL:
    return "IPU_MODEL";
  case TargetType::CPU:
    return "CPU";
  }
  return "UNKNOWN";
}

} // namespace poplar
