# Issue 25 (security and hang hardening): caches that cannot be turned against their users.
aspen_add_test(cache_trust LABEL error SOURCES error/cache_trust.cpp)
# Item 4: only Poplar's exceptions cross the API (names that are not UTF-8, malformed traces,
# absurd or deeply nested reports).
aspen_add_test(foreign_exceptions LABEL error SOURCES error/foreign_exceptions.cpp
  LIBS Aspen::pva nlohmann_json::nlohmann_json)
# Item 5: popc removes its work directories when a compile fails and on SIGTERM/SIGINT.
add_test(NAME popc_workdirs
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/error/popc_workdirs.sh $<TARGET_FILE:popc>
          ${CMAKE_CURRENT_BINARY_DIR}/popc_workdirs)
set_tests_properties(popc_workdirs PROPERTIES LABELS error TIMEOUT 120
  PASS_REGULAR_EXPRESSION "PASSED: no work directory left behind")
# Item 6: a Graph used from two threads at once is reported, not corrupted.
aspen_add_test(graph_concurrent_use LABEL error SOURCES error/graph_concurrent_use.cpp)
