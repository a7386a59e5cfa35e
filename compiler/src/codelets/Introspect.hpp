// Copyright (c) Aspen contributors.
// Finds the vertex types of a codelet source with libclang: classes deriving
// (directly or not) from poplar::Vertex, MultiVertex or SupervisorVertex, and
// the explicit instantiations of such class templates, each with its field
// names. Everything else about a field (kind, element type, layout, offset) is
// taken from the host compiler by the generated registration unit, so that it
// always agrees with the code that runs.
#pragma once

#include <string>
#include <vector>

namespace aspen::codelets {

struct IntrospectedVertex {
  /// Poplar's canonical spelling, also valid C++ naming the class:
  /// "Foo", "ns::Bar<unsigned int,true>", "Baz<popops::Op::ADD,float>".
  std::string name;
  /// The name as the source wrote it when it left defaulted template arguments out
  /// ("Foo<float>" for "Foo<float,2>"), else empty; the graph accepts both.
  std::string alias;
  /// Data members in layout order, those of base classes first.
  std::vector<std::string> fields;
  /// The fields' C++ types as libclang spells them (parallel to `fields`), for messages.
  std::vector<std::string> fieldTypes;
  std::string file; // where the class or the explicit instantiation is written
  unsigned line = 0;
  /// A base of the class template could not be resolved from its pattern (a dependent
  /// base such as `std::conditional_t<C, SupervisorVertex, MultiVertex>`) but its spelling
  /// names a vertex base: the host compiler decides, on the instantiated type, whether it is
  /// a vertex type and which base it has; one that is not is left unregistered.
  bool baseDeferred = false;
  /// compute has several overloads (`compute()` and `compute(unsigned)`): the generated unit
  /// calls the one the vertex's base runs instead of taking compute's address.
  bool computeOverloaded = false;
};

struct IntrospectionResult {
  std::vector<IntrospectedVertex> vertices;
  /// Explicit instantiations and specializations that introspection did not take
  /// for vertex types (no vertex base or no compute found). The generated unit has
  /// the host compiler confirm each, so a vertex type introspection missed is an
  /// error naming it, never a silently missing vertex.
  std::vector<std::string> notVertices;
  /// Errors libclang reported ("file:line:col: error: ..."). The host compiler
  /// has the last word on whether a codelet compiles; these only explain a
  /// vertex type that could not be found.
  std::string errors;
};

/// Parses `sourcePath` as C++ with `clangArgs` (language level, -I, -D, -U) and
/// returns its vertex types in source order, without duplicates.
IntrospectionResult introspectCodelets(const std::string &sourcePath,
                                       const std::vector<std::string> &clangArgs);

} // namespace aspen::codelets
