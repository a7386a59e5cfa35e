// Copyright (c) Aspen contributors.
// The simulated device's SRAM: one address-space reservation holding every
// tile's memory back to back, its pages touched only when used. Released
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
/// `base() + t * bytesPerTile + a`, so vertex fields can hold plain host pointers.
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
  std::uint32_t pageOffset() const { return static_cast<std::uint32_t>(base_ - map_); }
  /// The host's page size (a power of two, at least kBaseAlignment).
  static std::uint32_t pageSize();

  /// The host address of `where` (not range-checked; see `contains`).
  std::uint8_t *at(exe::TileAddr where) const {
    return base_ + std::uint64_t(where.tile) * bytesPerTile_ + where.addr;
  }
  std::uint8_t *at(std::uint32_t tile, std::uint32_t addr) const {
    return base_ + std::uint64_t(tile) * bytesPerTile_ + addr;
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
  unsigned numTiles_;
  std::uint64_t bytesPerTile_;
  std::size_t mappedBytes_; // numTiles * bytesPerTile, and a page for the offset
  std::uint8_t *map_;       // the reservation
  std::uint8_t *base_;      // tile 0's byte 0: map_ + the offset
  /// Per tile, the bytes [0, extent) that may be non-zero;
  /// meaningful unless `unbounded_`.
  std::vector<std::uint64_t> extent_;
  /// Written by a user without a trusted extent: cleared by dropping every page, never pooled.
  bool unbounded_ = false;
};

} // namespace aspen::rt
