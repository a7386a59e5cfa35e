// Copyright (c) Aspen contributors.
// Who made an executable: the Aspen release and the exact compiler build.
#pragma once

#include <string>

namespace aspen::exe {

/// "Aspen <version>": the package an executable was made by (checked by
/// Executable::deserialize when checkPackageHash is true).
const std::string &packageVersion();

/// A hex digest of the bytes of the loaded libpoplar.so (computed once per
/// process): any rebuild of the compiler gives a new id. Part of the compile
/// cache key and recorded in every executable.
const std::string &compilerBuildId();

} // namespace aspen::exe
