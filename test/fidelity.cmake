# Fidelity (docs/fidelity.md): Aspen's simulated cycles against published measurements of real
# IPUs, each file citing its source and stating its tolerance.
aspen_add_test(fidelity_amp_matmul_block LABEL fidelity SOURCES fidelity/amp_matmul_block.cpp
  LIBS Aspen::poplin Aspen::popops nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_popops_vertex_estimates LABEL fidelity SOURCES fidelity/popops_vertex_estimates.cpp
  LIBS Aspen::popops nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_float_divide_loop LABEL fidelity SOURCES fidelity/float_divide_loop.cpp
  LIBS nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_popnn_vertex_estimates LABEL fidelity SOURCES fidelity/popnn_vertex_estimates.cpp
  LIBS Aspen::popnn Aspen::popops nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_poprand_vertex_estimates LABEL fidelity SOURCES fidelity/poprand_vertex_estimates.cpp
  LIBS Aspen::poprand Aspen::popops nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_tile_cycle_counts LABEL fidelity SOURCES fidelity/tile_cycle_counts.cpp
  LIBS Aspen::popops)
aspen_add_test(fidelity_matrix_vector_tut6 LABEL fidelity SOURCES fidelity/matrix_vector_tut6.cpp
  LIBS nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_chip_matmul LABEL fidelity SOURCES fidelity/chip_matmul.cpp
  LIBS Aspen::poplin Aspen::popops nlohmann_json::nlohmann_json)
aspen_add_test(fidelity_scaled_sub_loop LABEL fidelity SOURCES fidelity/scaled_sub_loop.cpp
  LIBS nlohmann_json::nlohmann_json)
