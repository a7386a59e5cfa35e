// Copyright (c) Aspen contributors.
#include "TileData.hpp"

#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

namespace aspen::rt {

namespace {

/// The swaps this thread has entered and not left (at most one tile's).
thread_local const TileDataSwap *heldBegin = nullptr;
thread_local const TileDataSwap *heldEnd = nullptr;

} // namespace

std::vector<CodeletImage>
resolveCodeletData(const exe::ExecutableData &x,
                   const std::vector<const codelets::LoadedVertexLibrary *> &libraries,
                   std::vector<std::uint32_t> &typeImage) {
  auto libraryName = [&](std::uint32_t lib) {
    return "vertex library " + x.codeletLibraries[lib].contentHash + " of the executable";
  };
  std::vector<std::uint32_t> imageOf(x.codeletLibraries.size(), ~0u);
  std::vector<CodeletImage> images(x.codeletData.size());
  std::map<const codelets::TileData *, std::uint32_t> owner; // a shared object's data has one image
  for (std::uint32_t d = 0; d < x.codeletData.size(); ++d) {
    const exe::CodeletDataImage &img = x.codeletData[d];
    imageOf[img.library] = d;
    const codelets::LoadedVertexLibrary *lib = libraries[img.library];
    if (!lib)
      continue; // no vertex type of it is used: its copies are never swapped in
    std::vector<const codelets::DataLayout *> layouts;
    const auto parts = lib->sharedObjects();
    for (const codelets::LoadedVertexLibrary *part : parts)
      layouts.push_back(part->tileData() ? &part->tileData()->layout : nullptr);
    std::vector<std::uint32_t> offsets;
    const std::uint32_t bytes = codelets::layOutLibraryData(layouts, offsets);
    if (bytes != img.bytes)
      throw poplar::graph_object_load_error("Cannot load the executable: " + libraryName(img.library) +
                                            " has " + std::to_string(bytes) +
                                            " bytes of per-tile data, but the executable "
                                            "reserves " +
                                            std::to_string(img.bytes) + " on each tile");
    for (std::size_t p = 0; p < parts.size(); ++p) {
      codelets::TileData *data = parts[p]->tileData();
      if (!data)
        continue;
      auto [it, fresh] = owner.emplace(data, d);
      if (!fresh)
        throw poplar::graph_object_load_error("Cannot load the executable: " + libraryName(img.library) +
                                              " and " + libraryName(x.codeletData[it->second].library) +
                                              " share a shared object with global or static variables, so a "
                                              "tile would hold two copies of them; "
                                              "add one library to the graph, not both");
      images[d].parts.push_back({data, offsets[p]});
    }
  }
  typeImage.assign(x.vertexTypes.size(), ~0u);
  for (std::size_t t = 0; t < x.vertexTypes.size(); ++t) {
    const std::uint32_t lib = x.vertexTypes[t].library;
    const codelets::LoadedVertexLibrary *loaded = libraries[lib];
    bool stateful = false;
    for (const codelets::LoadedVertexLibrary *part : loaded->sharedObjects())
      stateful = stateful || part->tileData();
    if (stateful && imageOf[lib] == ~0u)
      throw poplar::graph_object_load_error(
          "Cannot load the executable: vertex type '" + x.vertexTypes[t].name + "' comes from " +
          libraryName(lib) +
          ", which has global or static variables, but the executable "
          "reserves no per-tile copy of them (it was made by another Aspen)");
    typeImage[t] = stateful ? imageOf[lib] : ~0u;
  }
  return images;
}

void writeCodeletData(const exe::ExecutableData &x, const std::vector<CodeletImage> &images,
                      TileMemory &memory) {
  for (std::size_t d = 0; d < images.size(); ++d)
    for (const exe::TileAddr &where : x.codeletData[d].regions)
      for (const auto &[data, offset] : images[d].parts)
        std::memcpy(memory.at(where) + offset, data->initial.data(), data->initial.size());
}

StepSwaps planStepSwaps(const exe::ExecutableData &x, const exe::ComputeStep &cs,
                        const std::vector<std::uint32_t> &typeImage, const std::vector<CodeletImage> &images,
                        const TileMemory &memory) {
  StepSwaps out;
  bool any = false;
  for (const exe::VertexInstance &v : cs.vertices)
    any = any || typeImage[v.type] != ~0u;
  if (!any)
    return out;
  out.begin.assign(cs.tiles.size() + 1, 0);
  std::vector<std::uint32_t> used;
  for (std::size_t k = 0; k < cs.tiles.size(); ++k) {
    used.clear();
    for (std::uint32_t i = cs.tileBegin[k]; i < cs.tileBegin[k + 1]; ++i) {
      const std::uint32_t d = typeImage[cs.vertices[i].type];
      if (d != ~0u && std::find(used.begin(), used.end(), d) == used.end())
        used.push_back(d);
    }
    const std::size_t first = out.swaps.size();
    for (std::uint32_t d : used) {
      const std::vector<exe::TileAddr> &regions = x.codeletData[d].regions;
      const std::uint32_t tile = cs.tiles[k];
      auto it = std::lower_bound(regions.begin(), regions.end(), tile,
                                 [](const exe::TileAddr &a, std::uint32_t t) { return a.tile < t; });
      if (it == regions.end() || it->tile != tile)
        throw poplar::graph_object_load_error("Corrupt executable: tile " + std::to_string(tile) +
                                              " runs vertices of library " +
                                              std::to_string(x.codeletData[d].library) + " in compute set '" +
                                              cs.name + "' but holds no copy of that library's data");
      for (const auto &[data, offset] : images[d].parts)
        out.swaps.push_back({data, memory.at(*it) + offset});
    }
    std::sort(out.swaps.begin() + static_cast<std::ptrdiff_t>(first), out.swaps.end(),
              [](const TileDataSwap &a, const TileDataSwap &b) { return a.data->order < b.data->order; });
    out.begin[k + 1] = static_cast<std::uint32_t>(out.swaps.size());
  }
  return out;
}

void enterTileData(const TileDataSwap *begin, const TileDataSwap *end) {
  ASPEN_ASSERT(!heldBegin, "a thread entered a tile's codelet data twice");
  for (const TileDataSwap *s = begin; s != end; ++s) {
    s->data->mutex.lock();
    s->data->copyIn(s->copy);
  }
  heldBegin = begin;
  heldEnd = end;
}

void leaveTileData(const TileDataSwap *begin, const TileDataSwap *end) {
  heldBegin = heldEnd = nullptr;
  for (const TileDataSwap *s = end; s != begin;) {
    --s;
    s->data->copyOut(s->copy);
    s->data->mutex.unlock();
  }
}

void leaveHeldTileData() {
  if (heldBegin)
    leaveTileData(heldBegin, heldEnd);
}

void TileDataHolder::moveTo(const TileDataSwap *begin, const TileDataSwap *end) {
  if (begin == end) {
    release(); // a tile without codelet data: no other tile waits for its work
    return;
  }
  if (begin_ && heldBegin == begin_ && end - begin == end_ - begin_ &&
      std::equal(begin, end, begin_,
                 [](const TileDataSwap &a, const TileDataSwap &b) { return a.data == b.data; })) {
    // The same libraries: move the copies, keep the locks.
    for (const TileDataSwap *s = begin_; s != end_; ++s)
      s->data->copyOut(s->copy);
    for (const TileDataSwap *s = begin; s != end; ++s)
      s->data->copyIn(s->copy);
    heldBegin = begin_ = begin;
    heldEnd = end_ = end;
    return;
  }
  release();
  enterTileData(begin, end);
  begin_ = begin;
  end_ = end;
}

void TileDataHolder::release() {
  // A recovery path may have left the swaps already (leaveHeldTileData).
  if (begin_ && heldBegin == begin_)
    leaveTileData(begin_, end_);
  begin_ = end_ = nullptr;
}

} // namespace aspen::rt
