// Copyright (c) Aspen contributors.
// Aspen's own host trace points (libpvti, channel "poplar"): compile passes,
// engine load, runs and stream transfers. Off unless PVTI_OPTIONS enables them.
#pragma once

#include "pvti/pvti.hpp"

namespace aspen {

inline pvti::TraceChannel *traceChannel() {
  static pvti::TraceChannel channel{"poplar"};
  return &channel;
}

} // namespace aspen
