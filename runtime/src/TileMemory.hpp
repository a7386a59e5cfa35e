// Copyright (c) Aspen contributors.
// The simulated device's SRAM: one address-space reservation holding every
// tile's memory, each tile followed by an inaccessible guard region (so that
// vertex code running off the end of its tile faults instead of writing the
// next tile: docs/tile-model.md), its pages touched only when used. Released
// reservations are kept for reuse (a few, bounded in resident bytes), so that a
// process loading engine after engine zeroes the pages it used instead of
// faulting fresh ones in: a page fault costs several times a 4 KiB memset.
#pragma once

#include "exe/ExecutableData.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace aspen::rt {

/// `numTiles * bytesPerTile` bytes of memory, all zero once `prepare` has run
/// (before that, a reused reservation may hold its last user's data). Tile `t`'s byte `a` is at
/// `base() + t * stride() + a`, so vertex fields can hold plain host pointers.
/// `stride()` is a whole number of pages: the tile's bytes rounded up to pages
/// and `kGuardBytes` of PROT_NONE address space, which also precedes tile 0.
/// Bytes between a tile's end and its guard (less than a page) belong to no tile.
///
/// `base()` lies `pageOffset()` bytes into a page, a multiple of kBaseAlignment:
/// a host address is aligned like its tile address up to kBaseAlignment bytes
/// (not to a page). The offset is chosen so that the memory image's blobs
/// straddle as few page boundaries as possible (see `imagePageOffset`): each
/// page the first load writes costs a page fault.
class TileMemory {
public:
  /// Every alignment a tile address has up to this many bytes, its host address has too.
  static constexpr std::uint32_t kBaseAlignment = 256;
  /// Inaccessible address space after every tile (and before tile 0): an
  /// overrun of up to this many bytes off a tile's end faults.
  static constexpr std::uint32_t kGuardBytes = 64 * 1024;

  /// `pageOffset` (a multiple of kBaseAlignment, less than `pageSize()`) is
  /// where `base()` lies in its page for a fresh reservation; memory taken from
  /// the pool keeps the offset it had.
  TileMemory(unsigned numTiles, std::uint64_t bytesPerTile, std::uint32_t pageOffset = 0);
  ~TileMemory();
  TileMemory(const TileMemory &) = delete;
  TileMemory &operator=(const TileMemory &) = delete;

  unsigned numTiles() const { return numTiles_; }
  std::uint64_t bytesPerTile() const { return bytesPerTile_; }
  std::uint8_t *base() const { return base_; }
  std::uint32_t pageOffset() const { return static_cast<std::uint32_t>(base_ - map_ - guardBytes()); }
  /// The host's page size (a power of two, at least kBaseAlignment), read once when the
  /// library loads (read on every compute step, so not a call).
  static std::uint32_t pageSize() { return kPageSize; }
  /// kGuardBytes rounded up to pages.
  static std::uint32_t guardBytes() { return kGuardPages; }
  /// Host bytes from one tile's byte 0 to the next's.
  std::uint64_t stride() const { return stride_; }
  /// The stride of tiles of `bytesPerTile` bytes whose base lies `pageOffset` into a page.
  static std::uint64_t strideFor(std::uint64_t bytesPerTile, std::uint32_t pageOffset);
  /// Where host address `p` lies: true and its tile and offset from that
  /// tile's byte 0 (which may be `bytesPerTile()` or more: in the slack or guard
  /// after the tile) when `p` is inside the reservation past the first guard.
  bool locate(const void *p, unsigned &tile, std::uint64_t &offset) const;
  /// Makes the guard regions inaccessible, once per reservation (the
  /// constructor does, for a fresh one; a pooled one keeps them): ~2 us per tile.
  /// Unless the host refuses (its limit on mappings per process): then a warning.
  void protectGuards();
  /// Whether the guard regions are in place.
  bool guarded() const { return guarded_; }
  /// Tile 0's first page; tile t's pages are `tilePageBytes()` bytes from
  /// `firstPage() + t * stride()`.
  std::uint8_t *firstPage() const { return map_ + guardBytes(); }
  std::uint64_t tilePageBytes() const { return stride_ - guardBytes(); }
  /// Makes every tile's pages read-only, or readable and writable again
  /// (aspen.checkTileWrites): one mprotect per tile. False if the host refuses
  /// (then every tile is left writable).
  bool setTilesWritable(bool writable);
  /// Forgets the extents: the next `prepare` drops every page (after a vertex
  /// fault, which may have written anywhere in its tile).
  void markUnbounded() { unbounded_ = true; }

  /// The host address of `where` (not range-checked; see `contains`).
  std::uint8_t *at(exe::TileAddr where) const {
    return base_ + std::uint64_t(where.tile) * stride_ + where.addr;
  }
  std::uint8_t *at(std::uint32_t tile, std::uint32_t addr) const {
    return base_ + std::uint64_t(tile) * stride_ + addr;
  }
  /// Whether `bytes` bytes from `where` lie inside one tile.
  bool contains(exe::TileAddr where, std::uint64_t bytes) const {
    return where.tile < numTiles_ && std::uint64_t(where.addr) + bytes <= bytesPerTile_;
  }
  /// Zeroes everything, for a user that writes only bytes [0, tileBytes[t]) of
  /// each tile t (an executable compiled in this process: its tileBytesUsed), or
  /// anywhere (`tileBytes` null: one read from a file, whose extents are not
  /// trusted). Zeroing costs the bytes earlier users may have written, and
  /// memory with a bounded user goes back to the pool when it is destroyed.
  /// `writeTile(t)`, when given, is called for every tile t after it is zeroed
  /// (in parallel over tiles; it must write only tile t).
  void prepare(const std::vector<std::uint64_t> *tileBytes,
               const std::function<void(unsigned tile)> &writeTile = {});
  /// Fills bytes [0, tileBytes[t]) of every tile t with kPoisonByte (clamped to the
  /// tile): the engine option aspen.poisonUninitialisedMemory, so that a read of a
  /// tensor before any write shows as NaN / -1 instead of a plausible 0.
  void poison(const std::vector<std::uint64_t> &tileBytes);
  /// All ones: NaN as float and half, -1 as a signed integer, the maximum unsigned.
  static constexpr std::uint8_t kPoisonByte = 0xff;

private:
  static const std::uint32_t kPageSize;
  static const std::uint32_t kGuardPages;
  unsigned numTiles_;
  std::uint64_t bytesPerTile_;
  std::uint64_t stride_;
  std::size_t mappedBytes_; // guardBytes() + numTiles * stride
  std::uint8_t *map_;       // the reservation
  std::uint8_t *base_;      // tile 0's byte 0: map_ + guardBytes() + the offset
  bool guarded_ = false;
  bool guardsRefused_ = false;
  /// Per tile, the bytes [0, extent) that may be non-zero;
  /// meaningful unless `unbounded_`.
  std::vector<std::uint64_t> extent_;
  /// Written by a user without a trusted extent: cleared by dropping every page, never pooled.
  bool unbounded_ = false;
};

} // namespace aspen::rt
