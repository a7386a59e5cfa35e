// Copyright (c) Aspen contributors.
// Internal invariants: on in every build type. A failure is Aspen's bug, not the user's.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace aspen {
[[noreturn]] inline void internalAssertFailed(const char *cond, const char *msg, const char *file, int line) {
  std::fprintf(stderr, "Aspen internal error at %s:%d: %s (%s)\n", file, line, msg, cond);
  std::abort();
}
} // namespace aspen

#define ASPEN_ASSERT(cond, msg)                                                                              \
  do {                                                                                                       \
    if (!(cond))                                                                                             \
      ::aspen::internalAssertFailed(#cond, msg, __FILE__, __LINE__);                                         \
  } while (0)
