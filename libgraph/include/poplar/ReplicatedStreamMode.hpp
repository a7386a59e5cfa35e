// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_REPLICATEDSTREAMMODE_HPP
#define POPLAR_REPLICATEDSTREAMMODE_HPP

namespace poplar {

/// How a host-to-device stream of a replicated graph feeds the replicas: each replica its own
/// connection (REPLICATE) or every replica replica 0's (BROADCAST).
enum class ReplicatedStreamMode { REPLICATE, BROADCAST };

} // namespace poplar

#endif
