# The profile tools (issue 13): aspen-vision, the analyser page in a browser, libpva, libpvti.

# aspen-vision on unreadable reports: a clear message naming the file, non-zero exit.
add_test(NAME profiling_vision_errors
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/error/profiling_vision_errors.sh $<TARGET_FILE:aspen-vision>
          ${CMAKE_CURRENT_BINARY_DIR}/profiling_vision_errors)
set_tests_properties(profiling_vision_errors PROPERTIES LABELS error TIMEOUT 60)

# The page in headless chromium (Debian chromium, chromium-driver, python3-selenium; .ci/common.sh).
if(TARGET profiling_matmul)
  add_test(NAME profiling_vision_browser
    COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/browser/profiling_vision_browser.py
            $<TARGET_FILE:aspen-vision> $<TARGET_FILE:profiling_matmul> ${CMAKE_CURRENT_BINARY_DIR}/profiling_browser)
  set_tests_properties(profiling_vision_browser PROPERTIES LABELS browser TIMEOUT 300
    ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")
endif()

# libpva: a client as Graphcore's examples are written (runs a program, reads ./profile.pop).
add_executable(profiling_pva_client compat/profiling_pva_client.cpp)
set_target_properties(profiling_pva_client PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(profiling_pva_client PRIVATE Aspen::poplar Aspen::popops Aspen::pva aspen_settings)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/profiling_pva_client)
add_test(NAME profiling_pva_client COMMAND profiling_pva_client
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/profiling_pva_client)
set_tests_properties(profiling_pva_client PROPERTIES LABELS conformance TIMEOUT 120
  ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")
aspen_add_test(profiling_pva_errors LABEL error SOURCES error/profiling_pva_errors.cpp
  LIBS Aspen::pva nlohmann_json::nlohmann_json)
# Lightweight profiling (Block programs, profiler.blocks.* / profiler.programs.filter) read with
# libpva's Execution::blocks, as the PopVision tutorial's examples do; and its option errors.
aspen_add_test(compat_profiling_blocks LABEL conformance SOURCES compat/profiling_blocks.cpp LIBS Aspen::pva)
aspen_add_test(profiling_blocks_errors LABEL error SOURCES error/profiling_blocks_errors.cpp)

# libpvti: a client's trace points and Aspen's own, in the file PVTI_OPTIONS names.
add_executable(profiling_pvti_client compat/profiling_pvti_client.cpp)
set_target_properties(profiling_pvti_client PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/test/bin)
target_link_libraries(profiling_pvti_client PRIVATE Aspen::poplar Aspen::popops Aspen::pvti aspen_settings
  nlohmann_json::nlohmann_json)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/profiling_pvti_client)
add_test(NAME profiling_pvti_client COMMAND profiling_pvti_client
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/profiling_pvti_client)
set_tests_properties(profiling_pvti_client PROPERTIES LABELS conformance TIMEOUT 120
  ENVIRONMENT "ASPEN_CACHE_DIR=${CMAKE_BINARY_DIR}/test/cache")

# The compile progress bar on a terminal (a pseudo-terminal), and its absence elsewhere.
add_test(NAME profiling_progress_tty
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/unit/profiling_progress_tty.py
          $<TARGET_FILE:profiling_pvti_client>)
set_tests_properties(profiling_progress_tty PROPERTIES LABELS unit TIMEOUT 120)

# What autoReport writes, and the version 2 tables.
aspen_add_test(profiling_report_files LABEL conformance SOURCES runtime/profiling_report_files.cpp
  LIBS Aspen::popops nlohmann_json::nlohmann_json)
