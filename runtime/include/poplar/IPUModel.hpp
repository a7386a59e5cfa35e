// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_IPUMODEL_HPP
#define POPLAR_IPUMODEL_HPP

#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>

#include <climits>
#include <string>
#include <vector>

namespace poplar {

/// Parameters of a simulated IPU that runs codelets on the host and models
/// cycles and memory. Construct for an architecture ("ipu1", "ipu2", "ipu21"),
/// adjust the public fields, then `createDevice()`.
///
/// Example: `IPUModel m("ipu2"); m.tilesPerIPU = 4; Device d = m.createDevice();`
struct IPUModel {
  enum class RelativeSyncDelayType { NO_DELAY, AUTO };

  /// Sets every field to the defaults of `IPUVersion`; throws
  /// invalid_machine_model for an unknown version.
  explicit IPUModel(const char *IPUVersion = "ipu2");

  /// A device with these parameters. `accurateHalf` is recorded in the target;
  /// `deviceManagerId` becomes the device's id when given.
  Device createDevice(OptionFlags opts = {}, bool accurateHalf = false,
                      unsigned deviceManagerId = UINT_MAX) const;

  std::string IPUVersion;
  unsigned numIPUs;
  unsigned tilesPerIPU;
  unsigned tilesPerSuperTile;
  unsigned numWorkerContexts;
  unsigned memoryBytesPerTile;
  double tileClockFrequency; // Hz
  unsigned exchangeBytesPerCycle;
  unsigned memcpyBytesPerCycle;
  unsigned instructionBytes;
  unsigned dataPathWidth; // bits
  bool supportsSuperTileSendReceive;
  unsigned interleavedMemoryElementIndex;
  unsigned minIPUSyncDelay;
  RelativeSyncDelayType relativeSyncDelay;
  unsigned globalSyncCycles;
  bool compileIPUCode;
  // The conv units (AMP): how many a tile has by input and partials type, the elements of input
  // each loads per cycle, and their pipeline depth (Target::getNumConvUnits and its neighbours).
  unsigned fp16InFp16OutConvUnitsPerTile;
  unsigned fp16InFp32OutConvUnitsPerTile;
  unsigned fp32InFp32OutConvUnitsPerTile;
  unsigned fp32ConvUnitInputLoadElemsPerCycle;
  unsigned fp16ConvUnitInputLoadElemsPerCycle;
  unsigned fp8ConvUnitInputLoadElemsPerCycle;
  unsigned fp16ConvUnitMaxPipelineDepth;
  unsigned fp32ConvUnitMaxPipelineDepth;
  std::vector<GlobalExchangeConstraint> globalExchangeConstraints;
};

} // namespace poplar

#endif
