# The graph front end: types, options, targets and devices, Graph, programs.
aspen_add_test(graph_types LABEL unit SOURCES unit/graph_types.cpp)
aspen_add_test(graph_option_flags LABEL unit SOURCES unit/option_flags.cpp)
aspen_add_test(graph_target_devices LABEL unit SOURCES unit/target_devices.cpp)
aspen_add_test(graph_api LABEL conformance SOURCES conformance/graph_api.cpp)
aspen_add_test(graph_errors LABEL error SOURCES error/graph_errors.cpp)
aspen_add_test(graph_vertices LABEL unit SOURCES unit/graph_vertices.cpp)
