// Copyright (c) Aspen contributors.
// The simulated device's SRAM: one address-space reservation holding every
// tile's memory back to back, its pages touched only when used.
#pragma once

#include "exe/ExecutableData.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace aspen::rt {

/// `numTiles * bytesPerTile` bytes of zeroed memory. Tile `t`'s byte `a` is at
/// `base() + t * bytesPerTile + a`, so vertex fields can hold plain host pointers.
class TileMemory {
public:
  TileMemory(unsigned numTiles, std::uint64_t bytesPerTile);
  ~TileMemory();
  TileMemory(const TileMemory &) = delete;
  TileMemory &operator=(const TileMemory &) = delete;

  unsigned numTiles() const { return numTiles_; }
  std::uint64_t bytesPerTile() const { return bytesPerTile_; }
  std::uint8_t *base() const { return base_; }

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
  /// Zeroes everything and returns the pages to the system.
  void clear();
  /// Fills bytes [0, tileBytes[t]) of every tile t with kPoisonByte (clamped to the
  /// tile): the engine option aspen.poisonUninitialisedMemory, so that a read of a
  /// tensor before any write shows as NaN / -1 instead of a plausible 0.
  void poison(const std::vector<std::uint64_t> &tileBytes);
  /// All ones: NaN as float and half, -1 as a signed integer, the maximum unsigned.
  static constexpr std::uint8_t kPoisonByte = 0xff;

private:
  unsigned numTiles_;
  std::uint64_t bytesPerTile_;
  std::size_t mappedBytes_;
  std::uint8_t *base_;
};

} // namespace aspen::rt
