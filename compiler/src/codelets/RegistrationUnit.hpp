// Copyright (c) Aspen contributors.
// Generates the C++ that registers a codelet source's vertex types: a unit that
// includes the source, describes every field with the compiler's own layout
// (RegistrationSupport.hpp) and exposes the entries through the C ABI of
// CodeletAbi.h. Each source gets one unit, its names made unique by a token (the
// units of separately compiled sources link together, docs/codelets.md "Linking");
// the entry unit, generated when the objects are linked into a shared object,
// defines the library's exported functions (entry table, ABI version, print sink).
#pragma once

#include "codelets/Introspect.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aspen::codelets {

/// The registration unit of a source; `token` (identifier characters) makes its names
/// unique among every unit a library may be linked with.
/// `notVertices` (explicit instantiations introspection did not take for vertex
/// types) are each checked by the host compiler: one that is a vertex type after
/// all fails the compile with kUnregisteredVertexMarker and its name.
std::string generateRegistrationUnit(const std::string &sourcePath,
                                     const std::vector<IntrospectedVertex> &vertices,
                                     const std::string &token,
                                     const std::vector<std::string> &notVertices = {});

/// The unit that gathers the entries of the units with `unitTokens` and defines the
/// library's exported functions. `unitFlags` (parallel to `unitTokens`; missing: 0) are
/// AspenVertexEntry flags the link decided for each unit's vertex types, added to theirs.
std::string generateEntryUnit(const std::vector<std::string> &unitTokens,
                              const std::vector<std::uint32_t> &unitFlags = {});

/// Precedes the name of a vertex type that introspection missed in the host
/// compiler's diagnostics: "<marker>'ns::Foo<float>'".
constexpr const char *kUnregisteredVertexMarker = "Aspen cannot register vertex type ";

} // namespace aspen::codelets
