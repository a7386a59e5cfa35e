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
