// Copyright (c) Aspen contributors.
#include "TileMemory.hpp"

#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>

namespace aspen::rt {

namespace {
std::uint8_t *reserve(std::size_t bytes) {
  // MAP_NORESERVE: a full 1,472-tile device is ~940 MB of address space, but a
  // program touches only the pages it uses.
  void *p =
      ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    throw poplar::system_runtime_error("Cannot reserve " + std::to_string(bytes) +
                                       " bytes of simulated tile memory: " + std::strerror(errno));
  return static_cast<std::uint8_t *>(p);
}
} // namespace

TileMemory::TileMemory(unsigned numTiles, std::uint64_t bytesPerTile)
    : numTiles_(numTiles), bytesPerTile_(bytesPerTile),
      mappedBytes_(std::max<std::size_t>(1, std::size_t(numTiles) * bytesPerTile)),
      base_(reserve(mappedBytes_)) {}

TileMemory::~TileMemory() {
  ::munmap(base_, mappedBytes_);
}

void TileMemory::clear() {
  // MADV_DONTNEED on a private anonymous mapping drops the pages: they read as
  // zero again and cost nothing until touched.
  if (::madvise(base_, mappedBytes_, MADV_DONTNEED) != 0)
    std::memset(base_, 0, mappedBytes_);
}

void TileMemory::poison(const std::vector<std::uint64_t> &tileBytes) {
  const std::size_t tiles = std::min<std::size_t>(tileBytes.size(), numTiles_);
  for (std::size_t t = 0; t < tiles; ++t)
    std::memset(at(static_cast<std::uint32_t>(t), 0), kPoisonByte, std::min(tileBytes[t], bytesPerTile_));
}

} // namespace aspen::rt
