// Copyright (c) Aspen contributors.
#include "TileMemory.hpp"

#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"
#include "util/Log.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

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

/// Reservations given back by TileMemory, for the next one of the same size.
/// At most kMaxPooled of them, holding at most kMaxPooledResident bytes of pages.
struct Pool {
  static constexpr std::size_t kMaxPooled = 2;
  static constexpr std::size_t kMaxPooledResident = std::size_t(256) << 20;
  struct Entry {
    std::uint8_t *map;
    std::uint32_t offset; // of its base in the first page
    std::uint64_t stride; // the guards' layout: with `bytes`, the tiles'
    bool guarded;
    std::size_t bytes, resident;
    std::vector<std::uint64_t> extent; // what its last user may have written
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};

Pool &pool() {
  static Pool *p = new Pool; // never destroyed: engines may outlive static destructors
  return *p;
}

/// Makes the guard before tile 0 and the one closing every tile's stride
/// inaccessible. False (and the memory left unguarded) when the host refuses,
/// e.g. at its limit on mappings per process (vm.max_map_count).
bool makeGuardsInaccessible(std::uint8_t *map, unsigned numTiles, std::uint64_t stride) {
  const std::size_t guard = TileMemory::guardBytes();
  // Linux 6.13 and later: guard markers in the page tables (MADV_GUARD_INSTALL), which leave
  // the reservation one mapping; mprotect splits it into two per tile, which made every
  // later page fault and zeroing of tile memory slower (docs/tile-model.md). They stay in
  // place across MADV_DONTNEED. An older kernel refuses the advice (EINVAL): mprotect then.
  constexpr int kMadvGuardInstall = 102;
  static std::atomic<bool> markersRefused{false};
  if (!markersRefused.load(std::memory_order_relaxed)) {
    bool ok = ::madvise(map, guard, kMadvGuardInstall) == 0;
    for (unsigned t = 0; ok && t < numTiles; ++t)
      ok = ::madvise(map + guard + std::size_t(t + 1) * stride - guard, guard, kMadvGuardInstall) == 0;
    if (ok)
      return true;
    markersRefused = true;
  }
  bool ok = ::mprotect(map, guard, PROT_NONE) == 0;
  for (unsigned t = 0; ok && t < numTiles; ++t)
    ok = ::mprotect(map + guard + std::size_t(t + 1) * stride - guard, guard, PROT_NONE) == 0;
  if (!ok) {
    const int error = errno;
    ::mprotect(map, guard + std::size_t(numTiles) * stride, PROT_READ | PROT_WRITE);
    ASPEN_LOG(Warn, "Tile memory has no guard pages between tiles (mprotect: " << std::strerror(error)
                                                                               << "): a vertex writing "
                                                                                  "off its tile's end is "
                                                                                  "not caught");
  }
  return ok;
}

} // namespace

const std::uint32_t TileMemory::kPageSize = [] {
  const long s = ::sysconf(_SC_PAGESIZE);
  // A page size that is not a power of two (none known) gets no offsets.
  return s >= long(kBaseAlignment) && (s & (s - 1)) == 0 ? static_cast<std::uint32_t>(s) : kBaseAlignment;
}();

const std::uint32_t TileMemory::kGuardPages = (kGuardBytes + kPageSize - 1) / kPageSize * kPageSize;

std::uint64_t TileMemory::strideFor(std::uint64_t bytesPerTile, std::uint32_t pageOffset) {
  const std::uint64_t page = pageSize();
  return (pageOffset + bytesPerTile + page - 1) / page * page + guardBytes();
}

void TileMemory::protectGuards() {
  if (!guarded_ && !guardsRefused_) {
    guarded_ = makeGuardsInaccessible(map_, numTiles_, stride_);
    guardsRefused_ = !guarded_;
  }
}

bool TileMemory::setTilesWritable(bool writable) {
  const int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  for (unsigned t = 0; t < numTiles_; ++t)
    if (::mprotect(firstPage() + std::uint64_t(t) * stride_, tilePageBytes(), prot) != 0) {
      if (!writable)
        setTilesWritable(true);
      return false;
    }
  return true;
}

bool TileMemory::locate(const void *p, unsigned &tile, std::uint64_t &offset) const {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto first = reinterpret_cast<std::uintptr_t>(base_);
  if (a < first || a >= reinterpret_cast<std::uintptr_t>(map_) + mappedBytes_)
    return false;
  tile = static_cast<unsigned>((a - first) / stride_);
  offset = (a - first) % stride_;
  return tile < numTiles_;
}

TileMemory::TileMemory(unsigned numTiles, std::uint64_t bytesPerTile, std::uint32_t pageOffset)
    : numTiles_(numTiles), bytesPerTile_(bytesPerTile), stride_(strideFor(bytesPerTile, pageOffset)),
      mappedBytes_(guardBytes() + std::size_t(numTiles) * stride_), map_(nullptr), base_(nullptr) {
  ASPEN_ASSERT(pageOffset % kBaseAlignment == 0 && pageOffset < pageSize(),
               "a tile memory offset is a multiple of kBaseAlignment within a page");
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    // Any pooled reservation of the size and layout will do; one with the same offset is best.
    auto found = p.entries.end();
    for (auto it = p.entries.begin(); it != p.entries.end(); ++it)
      if (it->bytes == mappedBytes_ && it->stride == stride_ &&
          (found == p.entries.end() || it->offset == pageOffset))
        found = it;
    if (found != p.entries.end()) {
      map_ = found->map;
      pageOffset = found->offset;
      guarded_ = found->guarded;
      extent_ = std::move(found->extent);
      p.entries.erase(found);
    }
  }
  // A reused reservation keeps its last user's offset and extents: prepare() zeroes them.
  if (!map_) {
    map_ = reserve(mappedBytes_);
    protectGuards();
  }
  base_ = map_ + guardBytes() + pageOffset;
}

TileMemory::~TileMemory() {
  // Memory written without trusted extents (an executable read from a file, a
  // vertex fault) is dropped to zero pages first, so that it too can be pooled
  // with its guards in place: a fresh reservation costs an mprotect per tile.
  if (unbounded_ && ::madvise(map_, mappedBytes_, MADV_DONTNEED) == 0) {
    unbounded_ = false;
    extent_.clear();
  }
  // Keep the reservation (and its pages) for the next engine when the pool has room.
  if (!unbounded_) {
    std::size_t resident = 0;
    for (std::uint64_t e : extent_)
      resident += e;
    if (resident <= Pool::kMaxPooledResident) {
      // The newest reservation is the likeliest to be asked for again: the oldest make room.
      std::vector<Pool::Entry> evicted;
      {
        Pool &p = pool();
        std::lock_guard<std::mutex> lock(p.mutex);
        std::size_t pooledResident = resident;
        for (const Pool::Entry &e : p.entries)
          pooledResident += e.resident;
        while (!p.entries.empty() &&
               (p.entries.size() >= Pool::kMaxPooled || pooledResident > Pool::kMaxPooledResident)) {
          pooledResident -= p.entries.front().resident;
          evicted.push_back(std::move(p.entries.front()));
          p.entries.erase(p.entries.begin());
        }
        p.entries.push_back(
            Pool::Entry{map_, pageOffset(), stride_, guarded_, mappedBytes_, resident, std::move(extent_)});
      }
      for (const Pool::Entry &e : evicted)
        ::munmap(e.map, e.bytes);
      return;
    }
  }
  ::munmap(map_, mappedBytes_);
}

void TileMemory::prepare(const std::vector<std::uint64_t> *tileBytes,
                         const std::function<void(unsigned tile)> &writeTile) {
  if (unbounded_) {
    // MADV_DONTNEED on a private anonymous mapping drops the pages: they read as
    // zero again and cost nothing until touched.
    if (::madvise(map_, mappedBytes_, MADV_DONTNEED) != 0)
      for (unsigned t = 0; t < numTiles_; ++t)
        std::memset(at(t, 0), 0, bytesPerTile_);
    unbounded_ = false;
    extent_.clear();
  }
  // Zero what the last user wrote in place (a 4 KiB memset costs a fraction of
  // the page fault that dropping the page would cost when it is written again),
  // and write the tile while its lines are in cache; tiles in parallel.
  if (!extent_.empty() || writeTile)
    tbb::parallel_for(tbb::blocked_range<unsigned>(0, numTiles_, 32),
                      [&](const tbb::blocked_range<unsigned> &r) {
                        for (unsigned t = r.begin(); t != r.end(); ++t) {
                          if (t < extent_.size() && extent_[t])
                            std::memset(at(t, 0), 0, extent_[t]);
                          if (writeTile)
                            writeTile(t);
                        }
                      });
  extent_.clear();
  if (!tileBytes || tileBytes->size() != numTiles_) {
    unbounded_ = true;
    return;
  }
  extent_.resize(numTiles_);
  for (unsigned t = 0; t < numTiles_; ++t)
    extent_[t] = std::min(bytesPerTile_, (*tileBytes)[t]);
}

void TileMemory::poison(const std::vector<std::uint64_t> &tileBytes) {
  const std::size_t tiles = std::min<std::size_t>(tileBytes.size(), numTiles_);
  for (std::size_t t = 0; t < tiles; ++t)
    std::memset(at(static_cast<std::uint32_t>(t), 0), kPoisonByte, std::min(tileBytes[t], bytesPerTile_));
}

} // namespace aspen::rt
