// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_SYNCTYPE_HPP
#define POPLAR_SYNCTYPE_HPP

namespace poplar {

/// Which tiles a `program::Sync` waits for.
enum class SyncType { INTERNAL, EXTERNAL, GLOBAL };

} // namespace poplar

#endif
