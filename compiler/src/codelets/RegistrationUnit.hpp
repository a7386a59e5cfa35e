// Copyright (c) Aspen contributors.
// Generates the C++ that registers a codelet source's vertex types: a unit that
// includes the source, describes every field with the compiler's own layout
// (RegistrationSupport.hpp) and exposes the entries through the C ABI of
// CodeletAbi.h. Each source gets one unit; the last one also defines the
// library's exported functions (entry table, ABI version, print sink).
#pragma once

#include "codelets/Introspect.hpp"

#include <string>
#include <vector>

namespace aspen::codelets {

/// The registration unit for source number `unitIndex` (0-based) of `numUnits`.
std::string generateRegistrationUnit(const std::string &sourcePath,
                                     const std::vector<IntrospectedVertex> &vertices, unsigned unitIndex,
                                     unsigned numUnits);

} // namespace aspen::codelets
