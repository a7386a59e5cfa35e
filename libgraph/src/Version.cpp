// Copyright (c) Aspen contributors.
#include "poplar/Version.hpp"

namespace poplar {

std::string versionString() {
  return "3.3.0 (Aspen 0.1.0)";
}

std::string packageHash() {
  return "aspen-0.1.0";
}

} // namespace poplar
