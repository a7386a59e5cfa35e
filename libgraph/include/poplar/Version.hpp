// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_VERSION_HPP
#define POPLAR_VERSION_HPP

#include <string>

namespace poplar {

/// The version of the Poplar API Aspen provides, followed by Aspen's own
/// version: "3.3.0 (Aspen 0.1.0)".
std::string versionString();

/// An identifier of this build of the library (Poplar's is a git hash).
std::string packageHash();

} // namespace poplar

#endif
