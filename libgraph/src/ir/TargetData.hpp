// Copyright (c) Aspen contributors.
// Every parameter of a target; poplar::Target and poplar::IPUModel read and write these.
#pragma once

#include "poplar/TargetType.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace aspen::ir {

/// An IPUModel global exchange constraint: `bandwidth` (bit/s) shared by the
/// listed (source IPU, destination IPU) flows.
struct GlobalExchangeConstraintData {
  double bandwidth = 0;
  std::vector<std::pair<unsigned, unsigned>> flows;
};

struct TargetData {
  poplar::TargetType type = poplar::TargetType::IPU_MODEL;
  std::string arch = "ipu2"; // "ipu1", "ipu2", "ipu21", "cpu"
  unsigned numIPUs = 1;
  unsigned tilesPerIPU = 1472;
  unsigned tilesPerSuperTile = 2;
  std::uint64_t bytesPerTile = 638976; // 624 KiB
  unsigned numWorkerContexts = 6;
  unsigned dataPathWidth = 64; // bits
  unsigned exchangeBytesPerCycle = 4;
  unsigned memcpyBytesPerCycle = 8;
  unsigned instructionBytes = 4;
  double tileClockFrequency = 1.33e9; // Hz
  unsigned minIPUSyncDelay = 0;
  bool relativeSyncDelayAuto = true;
  unsigned globalSyncCycles = 150;
  unsigned syncCycles = 30;             // fixed cost of an internal barrier
  unsigned exchangeOverheadCycles = 20; // fixed cost of an exchange phase
  // Per receiving tile and exchange, per tile it receives from: the receiver listens to one
  // sender at a time (docs/cost-model.md, "Exchange"; calibrated on Poplar's tutorial 6).
  unsigned exchangeSourceCycles = 56;
  unsigned interleavedMemoryElementIndex = 13;
  unsigned memoryElementBytes = 16384;
  unsigned atomicStoreGranularity = 4;
  unsigned rptCountMax = 4095;
  unsigned numStrideBits = 10;
  unsigned fp16AccumConvUnits = 16;    // AMP units (ipu2)
  unsigned fp32AccumConvUnits = 8;     // half in, float out
  unsigned fp32InFp32OutConvUnits = 8; // float in, float out
  // Elements of input a conv unit loads per cycle (64 bits), and its pipeline depth by partials type.
  unsigned fp32ConvUnitInputLoadElems = 2;
  unsigned fp16ConvUnitInputLoadElems = 4;
  unsigned fp8ConvUnitInputLoadElems = 8;
  unsigned fp16ConvUnitPipelineDepth = 4;
  unsigned fp32ConvUnitPipelineDepth = 4;
  bool supportsSuperTileSendReceive = true;
  bool compileIPUCode = false;
  bool accurateHalf = false;
  std::uint64_t perTileOverheadBytes = 3168; // stack + control code per tile
  std::vector<GlobalExchangeConstraintData> globalExchangeConstraints;
  // IPU-Links (docs/cost-model.md, "Collectives and inter-IPU exchange").
  double ipuLinkBandwidth = 32e9;      // bytes/s of one IPU-Link in one direction (ipu2: 10 links, 320 GB/s)
  unsigned ipuLinkLatencyCycles = 200; // per hop: link, serdes and sync (not published; tunable)
  unsigned ipuLinksPerRing = 2;        // links a ring hop uses (GCL's bidirectional ring pair)
  /// IPU-Link bytes per tile-clock cycle of one ring hop.
  double ipuLinkBytesPerCycle() const { return ipuLinkBandwidth * ipuLinksPerRing / tileClockFrequency; }
  // The host link of each IPU (docs/cost-model.md, "Host transfers").
  double hostLinkBandwidth = 32e9;       // bytes/s in one direction: PCIe Gen4 x16 (64 GB/s both ways)
  unsigned hostLinkLatencyCycles = 1330; // a transfer's round trip, ~1 us (an assumption; tunable)
  /// Host-link bytes per tile-clock cycle of one IPU.
  double hostLinkBytesPerCycle() const { return hostLinkBandwidth / tileClockFrequency; }
  /// Cycles of one Engine::run launch (docs/cost-model.md, "Launch"): the host starts the program
  /// and learns that it ended over the host link (one round trip) and a host sync.
  std::uint64_t launchCycles() const { return std::uint64_t(hostLinkLatencyCycles) + globalSyncCycles; }
  // Streaming Memory, the DDR beside each IPU that remote buffers live in (docs/cost-model.md,
  // "Streaming Memory"; docs/streaming-memory.md).
  std::uint64_t streamingMemoryBytes = 112'000'000'000; // per IPU: an IPU-M2000's 448 GB over its 4 IPUs
  double streamingMemoryBandwidth = 20e9;               // bytes/s per IPU and direction (an assumption)
  unsigned streamingMemoryLatencyCycles = 2660;         // a transfer's round trip, ~2 us (an assumption)
  /// Streaming Memory bytes per tile-clock cycle of one IPU.
  double streamingMemoryBytesPerCycle() const { return streamingMemoryBandwidth / tileClockFrequency; }

  unsigned numTiles() const { return numIPUs * tilesPerIPU; }
};

} // namespace aspen::ir
