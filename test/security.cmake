# Issue 25 (security and hang hardening): caches that cannot be turned against their users.
aspen_add_test(cache_trust LABEL error SOURCES error/cache_trust.cpp)
# Item 4: only Poplar's exceptions cross the API (names that are not UTF-8, malformed traces,
# absurd or deeply nested reports).
aspen_add_test(foreign_exceptions LABEL error SOURCES error/foreign_exceptions.cpp
  LIBS Aspen::pva nlohmann_json::nlohmann_json)
