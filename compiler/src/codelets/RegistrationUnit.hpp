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
/// `notVertices` (explicit instantiations introspection did not take for vertex
/// types) are each checked by the host compiler: one that is a vertex type after
/// all fails the compile with kUnregisteredVertexMarker and its name.
std::string generateRegistrationUnit(const std::string &sourcePath,
                                     const std::vector<IntrospectedVertex> &vertices, unsigned unitIndex,
                                     unsigned numUnits, const std::vector<std::string> &notVertices = {});

/// Precedes the name of a vertex type that introspection missed in the host
/// compiler's diagnostics: "<marker>'ns::Foo<float>'".
constexpr const char *kUnregisteredVertexMarker = "Aspen cannot register vertex type ";

} // namespace aspen::codelets
