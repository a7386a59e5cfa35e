// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_REPLICATION_FACTOR_HPP
#define POPLAR_REPLICATION_FACTOR_HPP

namespace poplar {

/// The replication factor of a graph: `Graph(target, replication_factor(n))`.
class replication_factor {
public:
  explicit replication_factor(unsigned r) : value(r) {}
  unsigned value;
};

} // namespace poplar

#endif
