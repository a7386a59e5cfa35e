// Copyright (c) Aspen contributors.
// The profile's host wall times (ExecutionProfile::hostTicks): read on every Engine::run and
// every compute step, so they cost a few cycles, not a clock call. On x86 hosts with an
// invariant time-stamp counter a tick is one of the counter's (rdtsc, no fence: a step's time
// does not need instruction order); elsewhere a nanosecond of steady_clock. Ticks become
// seconds against steady_clock over the time since the library was loaded.
#pragma once

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace aspen::rt::hostclock {

/// Whether ticks are the time-stamp counter's (fixed when the library loads).
extern const bool usesTsc;

inline std::uint64_t now() {
#if defined(__x86_64__) || defined(__i386__)
  if (usesTsc)
    return __rdtsc();
#endif
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

/// `ticks` in seconds.
double seconds(std::uint64_t ticks);

} // namespace aspen::rt::hostclock
