// Copyright (c) Aspen contributors.
#include "Loader.hpp"

#include "codelets/VertexLibrary.hpp"
#include "exe/Validate.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>

namespace aspen::rt {

void validateExecutable(const exe::ExecutableData &exe) {
  // A deserialised executable was checked when it was read, one compiled in this
  // process is correct by construction; anything else is checked now.
  if (exe.provenance == exe::Provenance::Unchecked)
    exe::validateStructure(exe, "the executable");
}

std::uint32_t imagePageOffset(const exe::ExecutableData &exe) {
  const std::uint64_t page = TileMemory::pageSize();
  const unsigned numOffsets = static_cast<unsigned>(page / TileMemory::kBaseAlignment);
  if (numOffsets < 2 || exe.blobs.empty())
    return 0;
  // Pages touched at each offset: a blob's pages, less the one it shares with
  // the blob before it (blobs come sorted by tile and address; an unsorted
  // list counts some pages twice, which only makes the choice less good).
  const int shift = __builtin_ctzll(page);
  std::vector<std::uint64_t> touched(numOffsets, 0), last(numOffsets, ~std::uint64_t(0));
  // Tiles lie a whole number of pages apart (TileMemory::stride) and never
  // share a page: a blob's pages depend on its address in its tile, and it
  // shares a page only with the blob before it on the same tile.
  std::uint32_t lastTile = ~0u;
  for (const exe::MemoryBlob &blob : exe.blobs) {
    if (blob.bytes.empty())
      continue;
    const bool sameTile = blob.where.tile == lastTile;
    lastTile = blob.where.tile;
    const std::uint64_t begin = blob.where.addr;
    const std::uint64_t end = begin + blob.bytes.size() - 1; // last byte
    for (unsigned k = 0; k < numOffsets; ++k) {
      const std::uint64_t o = std::uint64_t(k) * TileMemory::kBaseAlignment;
      const std::uint64_t first = (begin + o) >> shift, final = (end + o) >> shift;
      touched[k] += final - first + 1 - (sameTile && first == last[k]);
      last[k] = final;
    }
  }
  const auto best = std::min_element(touched.begin(), touched.end());
  return static_cast<std::uint32_t>(best - touched.begin()) * TileMemory::kBaseAlignment;
}

void loadMemoryImage(const exe::ExecutableData &exe, TileMemory &memory, bool poison) {
  // Blobs grouped by tile (as the compiler emits them) are written tile by
  // tile right after the tile is zeroed, while its lines are in cache, and so
  // are relocations grouped by the tile they write.
  const std::uint32_t numTiles = memory.numTiles();
  std::vector<std::size_t> tileBlobs;
  bool grouped = !poison;
  for (std::size_t i = 1; grouped && i < exe.blobs.size(); ++i)
    grouped = exe.blobs[i - 1].where.tile <= exe.blobs[i].where.tile;
  if (grouped) {
    tileBlobs.assign(std::size_t(numTiles) + 1, exe.blobs.size());
    for (std::size_t i = exe.blobs.size(); i-- > 0;)
      if (exe.blobs[i].where.tile < numTiles)
        tileBlobs[exe.blobs[i].where.tile] = i;
    for (std::uint32_t t = numTiles; t-- > 0;)
      tileBlobs[t] = std::min(tileBlobs[t], tileBlobs[t + 1]);
  }
  auto writeBlob = [&](const exe::MemoryBlob &blob) {
    if (!blob.bytes.empty())
      std::memcpy(memory.at(blob.where), blob.bytes.data(), blob.bytes.size());
  };
  const std::vector<exe::Relocation> &relocations = exe.relocations;
  auto relocate = [&](const exe::Relocation &r) {
    const std::uint64_t value = reinterpret_cast<std::uintptr_t>(memory.at(r.target));
    std::memcpy(memory.at(r.where), &value, sizeof value);
  };
  // Tile t applies the relocations from the first one that writes tile t (a
  // binary search, which assumes the grouping) for as long as they write tile
  // t, and records where it stopped. The grouping holds if and only if these
  // runs cover the list end to end; if they do not (an executable from
  // elsewhere), every relocation is applied again afterwards (a relocation's
  // value does not depend on memory, so applying one twice is harmless).
  std::vector<std::size_t> relocationBegin, relocationEnd;
  if (grouped) {
    relocationBegin.resize(numTiles);
    relocationEnd.resize(numTiles);
  }
  // An executable compiled in this process writes each tile only below its
  // tileBytesUsed (the allocator's peak); one read from a file is not trusted to.
  const std::vector<std::uint64_t> *extents =
      exe.provenance == exe::Provenance::Compiled ? &exe.tileBytesUsed : nullptr;
  if (grouped)
    memory.prepare(extents, [&](unsigned t) {
      for (std::size_t i = tileBlobs[t]; i < tileBlobs[t + 1]; ++i)
        writeBlob(exe.blobs[i]);
      std::size_t i = static_cast<std::size_t>(
          std::partition_point(relocations.begin(), relocations.end(),
                               [t](const exe::Relocation &r) { return r.where.tile < t; }) -
          relocations.begin());
      relocationBegin[t] = i;
      for (; i < relocations.size() && relocations[i].where.tile == t; ++i)
        relocate(relocations[i]);
      relocationEnd[t] = i;
    });
  else
    memory.prepare(extents);
  bool relocated =
      grouped && numTiles > 0 && relocationBegin[0] == 0 && relocationEnd[numTiles - 1] == relocations.size();
  for (std::uint32_t t = 1; relocated && t < numTiles; ++t)
    relocated = relocationBegin[t] == relocationEnd[t - 1];
  if (poison)
    memory.poison(exe.tileBytesUsed);
  // Otherwise (and under poison, which comes first): blobs, then relocations
  // (which write into blobs), spread over the threads. Blobs do not overlap (and
  // any two writes, even of a crafted file, stay in tile memory).
  const std::size_t grain = 256;
  if (!grouped)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, exe.blobs.size(), grain),
                      [&](const tbb::blocked_range<std::size_t> &range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i)
                          writeBlob(exe.blobs[i]);
                      });
  if (!relocated)
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, relocations.size(), grain * 16),
                      [&](const tbb::blocked_range<std::size_t> &range) {
                        for (std::size_t i = range.begin(); i != range.end(); ++i)
                          relocate(relocations[i]);
                      });
}

std::vector<VertexCode> loadVertexCode(const exe::ExecutableData &exe, VertexLibraries &libraries) {
  libraries.assign(exe.codeletLibraries.size(), nullptr);
  std::vector<VertexCode> code(exe.vertexTypes.size());
  std::vector<std::uint32_t> objectSize(exe.vertexTypes.size(), 0);
  for (std::size_t t = 0; t < exe.vertexTypes.size(); ++t) {
    const exe::VertexTypeEntry &type = exe.vertexTypes[t];
    const exe::CodeletLibraryBlob &blob = exe.codeletLibraries.at(type.library);
    const codelets::LoadedVertexLibrary *&library = libraries[type.library];
    if (!library)
      library = &codelets::loadVertexLibrary(blob.contentHash, blob.bytes,
                                             "vertex library " + blob.contentHash + " of the executable");
    const AspenVertexEntry *entry = library->find(type.name);
    if (!entry || !entry->compute)
      throw poplar::graph_object_load_error("Vertex type '" + type.name + "' is not in its vertex library (" +
                                            library->path() + ")");
    // Only a MultiVertex runs compute(workerId) per worker; a SupervisorVertex runs once, as a
    // Vertex does (emission records it so), so the supervisor flag is not compared here.
    code[t] = VertexCode{entry->compute, (entry->flags & ASPEN_VERTEX_MULTI) != 0};
    code[t].countsCycles = library->countsCycles(entry);
    code[t].checksWrites = library->checksWrites(entry);
    code[t].usesBuiltins = library->usesBuiltins(entry);
    if (!code[t].checksWrites) {
      // Checked writes (docs/tile-model.md): code compiled without the plugin (GCC, clang
      // other than 16, ASPEN_CYCLE_COUNT=0 or ASPEN_WRITE_CHECK=0) is not checked.
      static std::once_flag warned;
      std::call_once(warned, [&] {
        ASPEN_LOG(Warn, "Vertex type '" << type.name << "' (" << library->path()
                                        << ") does not check its writes: its library was not compiled "
                                           "with clang++-16 and Aspen's plugin (or was, under "
                                           "ASPEN_WRITE_CHECK=0), so a write through a wild "
                                           "pointer into another tile's memory is not stopped (the engine "
                                           "option aspen.checkTileWrites stops it; docs/tile-model.md)");
      });
    }
    code[t].isSupervisor = type.isSupervisor;
    if (code[t].isMultiVertex != type.isMultiVertex)
      throw poplar::graph_object_load_error("Vertex type '" + type.name +
                                            "' is a MultiVertex in one of its library and the executable "
                                            "but not the other: the library changed after compilation");
    objectSize[t] = entry->size;
  }
  // Now that object sizes are known: every vertex object lies in its tile.
  for (const exe::ComputeStep &cs : exe.computeSteps)
    for (const exe::VertexInstance &v : cs.vertices)
      if (std::uint64_t(v.state) + objectSize[v.type] > exe.target.bytesPerTile)
        throw poplar::graph_object_load_error("Corrupt executable: a '" + exe.vertexTypes[v.type].name +
                                              "' vertex of compute set '" + cs.name +
                                              "' lies outside tile memory");
  return code;
}

namespace {
void writeToSink(void *context, const char *text, std::size_t length) {
  auto *sink = static_cast<PrintSink *>(context);
  std::lock_guard<std::mutex> lock(sink->mutex);
  sink->stream->write(text, static_cast<std::streamsize>(length));
  sink->stream->flush();
}

// Numbers every setPrintSink call, so that an engine whose call was the last one skips its next.
// The sinks are the libraries' (process-wide): engines sharing a library and running at the same
// time share one sink (docs/internals.md, "Limit").
std::mutex sinkMutex;
std::atomic<std::uint64_t> sinkEpoch{0};
} // namespace

void setPrintSink(const VertexLibraries &libraries, PrintSink *sink, std::uint64_t *epoch) {
  if (epoch && *epoch != 0 && sinkEpoch.load(std::memory_order_relaxed) == *epoch)
    return; // the libraries' sinks are still this engine's: one load a run, not a call per library
  std::lock_guard<std::mutex> lock(sinkMutex);
  for (const codelets::LoadedVertexLibrary *library : libraries)
    if (library)
      library->setPrintSink(sink ? writeToSink : nullptr, sink);
  const std::uint64_t number = sinkEpoch.load(std::memory_order_relaxed) + 1;
  sinkEpoch.store(number, std::memory_order_relaxed);
  if (epoch)
    *epoch = number;
}

} // namespace aspen::rt
