// Copyright (c) Aspen contributors.
#include "poplar/exceptions.hpp"

namespace poplar {

poplar_error::poplar_error(const std::string &s) : std::runtime_error(s), type("poplar_error") {}
poplar_error::poplar_error(const char *s) : std::runtime_error(s), type("poplar_error") {}
poplar_error::poplar_error(const std::string &s, const std::string &typeName)
    : std::runtime_error(s), type(typeName) {}

invalid_option::invalid_option(const std::string &s) : poplar_error(s, "invalid_option") {}
invalid_option::invalid_option(const char *s) : poplar_error(std::string(s), "invalid_option") {}

graph_memory_allocation_error::graph_memory_allocation_error(const std::string &s)
    : poplar_error(s, "graph_memory_allocation_error") {}
graph_memory_allocation_error::graph_memory_allocation_error(const char *s)
    : poplar_error(std::string(s), "graph_memory_allocation_error") {}

graph_connection_error::graph_connection_error(const std::string &s)
    : poplar_error(s, "graph_connection_error") {}
graph_connection_error::graph_connection_error(const char *s)
    : poplar_error(std::string(s), "graph_connection_error") {}

graph_cycle_error::graph_cycle_error(const std::string &s) : poplar_error(s, "graph_cycle_error") {}
graph_cycle_error::graph_cycle_error(const char *s) : poplar_error(std::string(s), "graph_cycle_error") {}

graph_object_creation_error::graph_object_creation_error(const std::string &s)
    : poplar_error(s, "graph_object_creation_error") {}
graph_object_creation_error::graph_object_creation_error(const char *s)
    : poplar_error(std::string(s), "graph_object_creation_error") {}

graph_object_load_error::graph_object_load_error(const std::string &s)
    : poplar_error(s, "graph_object_load_error") {}
graph_object_load_error::graph_object_load_error(const char *s)
    : poplar_error(std::string(s), "graph_object_load_error") {}

index_error::index_error(const std::string &s) : poplar_error(s, "index_error") {}
index_error::index_error(const char *s) : poplar_error(std::string(s), "index_error") {}

invalid_tile_mapping::invalid_tile_mapping(const std::string &s) : poplar_error(s, "invalid_tile_mapping") {}
invalid_tile_mapping::invalid_tile_mapping(const char *s)
    : poplar_error(std::string(s), "invalid_tile_mapping") {}

invalid_machine_model::invalid_machine_model(const std::string &s)
    : poplar_error(s, "invalid_machine_model") {}
invalid_machine_model::invalid_machine_model(const char *s)
    : poplar_error(std::string(s), "invalid_machine_model") {}

tensor_creation_error::tensor_creation_error(const std::string &s)
    : poplar_error(s, "tensor_creation_error") {}
tensor_creation_error::tensor_creation_error(const char *s)
    : poplar_error(std::string(s), "tensor_creation_error") {}

type_error::type_error(const std::string &s) : poplar_error(s, "type_error") {}
type_error::type_error(const char *s) : poplar_error(std::string(s), "type_error") {}

unknown_field::unknown_field(const std::string &s) : poplar_error(s, "unknown_field") {}
unknown_field::unknown_field(const char *s) : poplar_error(std::string(s), "unknown_field") {}

unknown_vertex_type::unknown_vertex_type(const std::string &s) : poplar_error(s, "unknown_vertex_type") {}
unknown_vertex_type::unknown_vertex_type(const char *s)
    : poplar_error(std::string(s), "unknown_vertex_type") {}

control_program_error::control_program_error(const std::string &s)
    : poplar_error(s, "control_program_error") {}
control_program_error::control_program_error(const char *s)
    : poplar_error(std::string(s), "control_program_error") {}

link_error::link_error(const std::string &s) : poplar_error(s, "link_error") {}
link_error::link_error(const char *s) : poplar_error(std::string(s), "link_error") {}
link_error::link_error(const std::string &s, const std::string &log)
    : poplar_error(s, "link_error"), output(log) {}

parse_error::parse_error(const std::string &s) : poplar_error(s, "parse_error") {}
parse_error::parse_error(const char *s) : poplar_error(std::string(s), "parse_error") {}

profiling_disabled::profiling_disabled(const std::string &s) : poplar_error(s, "profiling_disabled") {}
profiling_disabled::profiling_disabled(const char *s) : poplar_error(std::string(s), "profiling_disabled") {}

stream_connection_error::stream_connection_error(const std::string &s)
    : poplar_error(s, "stream_connection_error") {}
stream_connection_error::stream_connection_error(const char *s)
    : poplar_error(std::string(s), "stream_connection_error") {}

stream_memory_allocation_error::stream_memory_allocation_error(const std::string &s)
    : poplar_error(s, "stream_memory_allocation_error") {}
stream_memory_allocation_error::stream_memory_allocation_error(const char *s)
    : poplar_error(std::string(s), "stream_memory_allocation_error") {}

missing_cycle_estimate::missing_cycle_estimate(const std::string &s)
    : poplar_error(s, "missing_cycle_estimate") {}
missing_cycle_estimate::missing_cycle_estimate(const char *s)
    : poplar_error(std::string(s), "missing_cycle_estimate") {}

runtime_error::runtime_error(const std::string &s) : poplar_error(s, "runtime_error") {}
runtime_error::runtime_error(const char *s) : poplar_error(std::string(s), "runtime_error") {}
runtime_error::runtime_error(const std::string &s, const std::string &typeName) : poplar_error(s, typeName) {}

application_runtime_error::application_runtime_error(const std::string &s)
    : runtime_error(s, "application_runtime_error") {}
application_runtime_error::application_runtime_error(const char *s)
    : runtime_error(std::string(s), "application_runtime_error") {}
application_runtime_error::application_runtime_error(const std::string &s, const std::string &typeName)
    : runtime_error(s, typeName) {}

system_runtime_error::system_runtime_error(const std::string &s) : runtime_error(s, "system_runtime_error") {}
system_runtime_error::system_runtime_error(const char *s)
    : runtime_error(std::string(s), "system_runtime_error") {}
system_runtime_error::system_runtime_error(const std::string &s, const std::string &typeName)
    : runtime_error(s, typeName) {}

} // namespace poplar
