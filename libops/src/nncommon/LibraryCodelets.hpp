// Copyright (c) Aspen contributors.
// Shared by poplin, popnn and poprand (header-only, so each library keeps its
// own copy): finding the library's vertex library (`<lib>.gp`) beside the
// shared object and adding it to a graph once, and the small naming helpers
// their graph builders share.
#pragma once

#include <poplar/Graph.hpp>
#include <poplar/Type.hpp>
#include <poplar/exceptions.hpp>

#include <dlfcn.h>

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace aspen::nn {

/// The path of `fileName` in the directory of the shared object holding
/// `addressInLibrary` (an object or function defined in that library).
inline std::string fileBesideLibrary(const void *addressInLibrary, const std::string &fileName) {
  Dl_info info{};
  if (dladdr(addressInLibrary, &info) == 0 || info.dli_fname == nullptr)
    throw poplar::graph_object_load_error("cannot locate the shared library that should hold " + fileName);
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" + fileName;
}

/// Adds the vertex library `gpName` beside the library holding
/// `addressInLibrary` to `graph`, unless `probeVertex` (one of its vertex
/// types) is already known to the graph.
inline void addLibraryCodelets(poplar::Graph &graph, const void *addressInLibrary, const std::string &gpName,
                               const std::string &probeVertex) {
  if (graph.hasCodelet(probeVertex))
    return;
  const std::string path = fileBesideLibrary(addressInLibrary, gpName);
  graph.addCodelets(poplar::StringRef(path));
}

/// A templated vertex type name in Poplar's canonical form:
/// `vertexName("popnn::NonLinearity", {HALF})` is "popnn::NonLinearity<half>".
inline std::string vertexName(const std::string &base, std::initializer_list<poplar::Type> types) {
  std::string name = base + "<";
  bool first = true;
  for (const auto &t : types) {
    if (!first)
      name += ",";
    name += t.toString().str();
    first = false;
  }
  return name + ">";
}

/// "{2,3}" for a shape.
inline std::string shapeString(const std::vector<std::size_t> &shape) {
  std::ostringstream os;
  os << "{";
  for (std::size_t i = 0; i < shape.size(); ++i)
    os << (i ? "," : "") << shape[i];
  os << "}";
  return os.str();
}

} // namespace aspen::nn
