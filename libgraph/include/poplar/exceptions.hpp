// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_EXCEPTIONS_HPP
#define POPLAR_EXCEPTIONS_HPP

#include <stdexcept>
#include <string>

namespace poplar {

/// Base of every error Aspen reports for a user's mistake. `what()` names the
/// tensor, vertex, field, tile, option or file at fault.
struct poplar_error : std::runtime_error {
  std::string type;
  explicit poplar_error(const std::string &s);
  explicit poplar_error(const char *s);
  poplar_error(const std::string &s, const std::string &typeName);
};

/// An option key or value that is not recognised; the message names the key.
struct invalid_option : poplar_error {
  explicit invalid_option(const std::string &s);
  explicit invalid_option(const char *s);
};

/// Variables, vertex state or buffers that do not fit in a tile's memory.
struct graph_memory_allocation_error : poplar_error {
  explicit graph_memory_allocation_error(const std::string &s);
  explicit graph_memory_allocation_error(const char *s);
  /// Directory holding the memory report written for the failure, if any.
  std::string profilePath;
};

/// A vertex field left unconnected, or connected to a tensor of the wrong size or type.
struct graph_connection_error : poplar_error {
  explicit graph_connection_error(const std::string &s);
  explicit graph_connection_error(const char *s);
};

/// A cycle in the program or function call graph.
struct graph_cycle_error : poplar_error {
  explicit graph_cycle_error(const std::string &s);
  explicit graph_cycle_error(const char *s);
};

/// A codelet that cannot be compiled, or a graph object that cannot be made.
struct graph_object_creation_error : poplar_error {
  explicit graph_object_creation_error(const std::string &s);
  explicit graph_object_creation_error(const char *s);
};

/// A vertex library (.gp) or executable that cannot be loaded.
struct graph_object_load_error : poplar_error {
  explicit graph_object_load_error(const std::string &s);
  explicit graph_object_load_error(const char *s);
};

/// An index, slice bound, dimension or permutation out of range.
struct index_error : poplar_error {
  explicit index_error(const std::string &s);
  explicit index_error(const char *s);
};

/// A tile number beyond the target, or a tensor left unmapped.
struct invalid_tile_mapping : poplar_error {
  explicit invalid_tile_mapping(const std::string &s);
  explicit invalid_tile_mapping(const char *s);
};

/// An IPUModel or target whose parameters are not valid.
struct invalid_machine_model : poplar_error {
  explicit invalid_machine_model(const std::string &s);
  explicit invalid_machine_model(const char *s);
};

/// A tensor, constant or view that cannot be made as asked (wrong count, shape).
struct tensor_creation_error : poplar_error {
  explicit tensor_creation_error(const std::string &s);
  explicit tensor_creation_error(const char *s);
};

/// An element type that does not fit the operation (reinterpret, copy, field).
struct type_error : poplar_error {
  explicit type_error(const std::string &s);
  explicit type_error(const char *s);
};

/// A vertex field name that the vertex type does not have.
struct unknown_field : poplar_error {
  explicit unknown_field(const std::string &s);
  explicit unknown_field(const char *s);
};

/// A vertex type that no added codelet defines.
struct unknown_vertex_type : poplar_error {
  explicit unknown_vertex_type(const std::string &s);
  explicit unknown_vertex_type(const char *s);
};

/// A program that is not valid as recorded (bad predicate, unknown function).
struct control_program_error : poplar_error {
  explicit control_program_error(const std::string &s);
  explicit control_program_error(const char *s);
};

/// Linking compiled codelets into a vertex library failed.
struct link_error : poplar_error {
  explicit link_error(const std::string &s);
  explicit link_error(const char *s);
  link_error(const std::string &s, const std::string &log);
  /// The linker's own output.
  std::string output;
};

/// A file or text (JSON options, executable, profile) that cannot be parsed.
struct parse_error : poplar_error {
  explicit parse_error(const std::string &s);
  explicit parse_error(const char *s);
};

/// A profile requested from an engine that does not record one.
struct profiling_disabled : poplar_error {
  explicit profiling_disabled(const std::string &s);
  explicit profiling_disabled(const char *s);
};

/// A stream used by a program but not connected, or connected wrongly.
struct stream_connection_error : poplar_error {
  explicit stream_connection_error(const std::string &s);
  explicit stream_connection_error(const char *s);
};

/// A host stream buffer that cannot be allocated.
struct stream_memory_allocation_error : poplar_error {
  explicit stream_memory_allocation_error(const std::string &s);
  explicit stream_memory_allocation_error(const char *s);
};

/// A vertex with no cycle estimate where one is required.
struct missing_cycle_estimate : poplar_error {
  explicit missing_cycle_estimate(const std::string &s);
  explicit missing_cycle_estimate(const char *s);
};

/// A failure while a device runs a program.
struct runtime_error : poplar_error {
  explicit runtime_error(const std::string &s);
  explicit runtime_error(const char *s);

protected:
  runtime_error(const std::string &s, const std::string &typeName);
};

/// A program stopped by Abort, AbortOnCondition or a vertex returning false.
struct application_runtime_error : runtime_error {
  explicit application_runtime_error(const std::string &s);
  explicit application_runtime_error(const char *s);

protected:
  application_runtime_error(const std::string &s, const std::string &typeName);
};

/// A device that cannot be used: not attached, wrong target, not loaded.
struct system_runtime_error : runtime_error {
  explicit system_runtime_error(const std::string &s);
  explicit system_runtime_error(const char *s);

protected:
  system_runtime_error(const std::string &s, const std::string &typeName);
};

} // namespace poplar

#endif
