// Copyright (c) Aspen contributors.
#include "passes/CodeletData.hpp"

#include "codelets/CodeletData.hpp"

#include <algorithm>

namespace aspen::compiler {

void planCodeletData(const ir::GraphData &g, ExchangePlan &plan) {
  // The tiles on which each library's vertices run, and one vertex type each for messages.
  const std::size_t numLibraries = g.codeletLibraries.size();
  std::vector<std::vector<std::uint32_t>> tiles(numLibraries);
  std::vector<std::uint32_t> someType(numLibraries, ~0u);
  for (const PlannedComputeSet &pcs : plan.computeSets)
    for (const PlannedVertex &v : pcs.vertices) {
      const std::uint32_t type = g.vertices[v.vertex].type;
      const std::uint32_t lib = g.vertexTypes[type].library;
      if (someType[lib] == ~0u)
        someType[lib] = type;
      if (tiles[lib].empty() || tiles[lib].back() != v.tile)
        tiles[lib].push_back(v.tile);
    }
  for (std::uint32_t lib = 0; lib < numLibraries; ++lib) {
    if (someType[lib] == ~0u)
      continue;
    const std::uint32_t bytes = codelets::libraryDataBytes(
        g.codeletLibraries[lib], "vertex type " + g.vertexTypes[someType[lib]].name);
    if (bytes == 0)
      continue; // stateless: costs nothing
    std::vector<std::uint32_t> &t = tiles[lib];
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    ExchangePlan::CodeletData data;
    data.library = lib;
    data.bytes = bytes;
    for (std::uint32_t tile : t) {
      MemObject o;
      o.size = bytes;
      o.tile = tile;
      o.align = codelets::kDataAlign;
      o.owner = lib;
      o.category = MemCategory::CodeletData;
      data.copies.push_back({tile, static_cast<std::uint32_t>(plan.memory.objects.size())});
      plan.memory.objects.push_back(o);
    }
    plan.codeletData.push_back(std::move(data));
  }
}

} // namespace aspen::compiler
