// Copyright (c) Aspen contributors.
#include "HostClock.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace aspen::rt::hostclock {

namespace {

bool invariantTsc() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u)
    return false;
  __cpuid(0x80000007u, a, b, c, d);
  return (d & (1u << 8)) != 0; // invariant TSC: constant rate, runs in every power state
#else
  return false;
#endif
}

using Steady = std::chrono::steady_clock;

} // namespace

const bool usesTsc = invariantTsc();

namespace {
// The calibration's origin: a steady_clock time and the tick count at the same moment.
const Steady::time_point originTime = Steady::now();
const std::uint64_t originTicks = now();
} // namespace

double seconds(std::uint64_t ticks) {
  if (!usesTsc)
    return double(ticks) * 1e-9;
  const double elapsed = std::chrono::duration<double>(Steady::now() - originTime).count();
  const std::uint64_t elapsedTicks = now() - originTicks;
  return elapsedTicks == 0 ? 0.0 : double(ticks) * (elapsed / double(elapsedTicks));
}

} // namespace aspen::rt::hostclock
