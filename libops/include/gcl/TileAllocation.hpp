// Copyright (c) Aspen contributors. Poplar-compatible public API (Poplar 3.x gcl/TileAllocation.hpp).
#ifndef GCL_TILEALLOCATION_HPP
#define GCL_TILEALLOCATION_HPP

#include <poplar/Graph.hpp>

#include <vector>

/// Marks functions whose result should not be ignored (as GCL's header does).
#ifndef GCL_NO_DISCARD
#if defined(__cplusplus) && __cplusplus >= 201703L
#define GCL_NO_DISCARD [[nodiscard]]
#else
#define GCL_NO_DISCARD
#endif
#endif

namespace gcl {

/// The smallest number of IO tiles a program must set aside per IPU with perIPUTiles() for
/// GCL's operations on `graph` (all of whose tiles are taken as candidates). Aspen's simulated
/// IPU has no exchange blocks, so the figure is a convention (docs/replication.md): 32 on an
/// IPU of 1472 tiles, in proportion on smaller ones, even (tiles go in pairs), at least 2 and
/// at most the graph's tiles per IPU.
GCL_NO_DISCARD unsigned getMinIoTiles(const poplar::Graph &graph);

/// `count` tile numbers of one IPU of `graph` (0 .. tiles per IPU - 1), skipping the first
/// `offset` of the order GCL allocates in: pairs of neighbouring tiles {2k, 2k+1} spread evenly
/// over the IPU, so that any prefix is spread too. Calls with offsets 0 and n (counts n and
/// tiles - n) give disjoint sets covering the IPU: IO tiles and compute tiles. `sorted`
/// returns them in increasing order; `tilePairs` false allocates single tiles in the same
/// spread order (host IO tiles must be pairs). Throws poplar::poplar_error when offset + count
/// exceeds the tiles per IPU.
GCL_NO_DISCARD std::vector<unsigned> perIPUTiles(const poplar::Graph &graph, unsigned offset, unsigned count,
                                                 bool sorted = true, bool tilePairs = true);

} // namespace gcl

#endif
