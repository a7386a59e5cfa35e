// Copyright (c) Aspen contributors.
// Graph(const Device &): defined by the runtime, which owns Device, so that the front end
// (libgraph) has no link-time dependency on the runtime (DESIGN.md: libgraph <- compiler <- runtime).
#include "poplar/Device.hpp"
#include "poplar/Graph.hpp"

namespace poplar {

Graph::Graph(const Device &device, replication_factor r) : Graph(device.getTarget(), r) {}

} // namespace poplar
