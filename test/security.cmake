# Issue 25 (security and hang hardening): caches that cannot be turned against their users.
aspen_add_test(cache_trust LABEL error SOURCES error/cache_trust.cpp)
