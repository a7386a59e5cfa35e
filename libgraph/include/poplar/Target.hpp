// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TARGET_HPP
#define POPLAR_TARGET_HPP

#include <poplar/OptionFlags.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/TargetType.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace aspen {
namespace ir {
struct TargetData;
} // namespace ir
} // namespace aspen

namespace poplar {

/// The parameters of a device a graph is compiled for: tiles, memory, workers,
/// exchange and clock. Made by `IPUModel::createDevice`, `DeviceManager`, or the
/// static `create*Target` functions.
/// A (source IPU, destination IPU) pair of a global exchange constraint.
struct GlobalExchangeFlow {
  GlobalExchangeFlow(unsigned src, unsigned dst) : src(src), dst(dst) {}
  unsigned src;
  unsigned dst;
};

/// Traffic between IPUs: the listed flows share `bandwidth` bits per second.
struct GlobalExchangeConstraint {
  GlobalExchangeConstraint(double bandwidth, std::vector<GlobalExchangeFlow> flows)
      : bandwidth(bandwidth), flows(std::move(flows)) {}
  double bandwidth;
  std::vector<GlobalExchangeFlow> flows;
};

class Target {
public:
  Target();
  Target(const Target &);
  Target(Target &&) noexcept;
  Target &operator=(const Target &);
  Target &operator=(Target &&) noexcept;
  ~Target();

  static Target createCPUTarget(bool accurateHalf = false, unsigned numIPUs = 1);
  static Target createIPUTarget(unsigned numIPUs, StringRef system, const OptionFlags &opts = {});
  static Target createIPUTarget(unsigned numIPUs, unsigned tilesPerIPU, StringRef system,
                                const OptionFlags &opts = {});

  TargetType getTargetType() const;
  std::string getTargetArchString() const;
  StringRef getTargetSystemString() const;
  unsigned getNumIPUs() const;
  unsigned getTilesPerIPU() const;
  unsigned getNumTiles() const;
  unsigned getNumWorkerContexts() const;
  unsigned getExchangeBytesPerCycle() const;
  std::uint64_t getBytesPerTile() const;
  std::uint64_t getMemoryBytes() const;
  unsigned getDataPathWidth() const;
  unsigned getVectorWidth(const Type &type) const;
  unsigned getFloatVectorWidth() const;
  unsigned getHalfVectorWidth() const;
  unsigned getTypeSize(const Type &type) const;
  unsigned getAtomicStoreGranularity() const;
  double getTileClockFrequency() const;
  unsigned getMemcpyBytesPerCycle() const;
  unsigned getRptCountMax() const;
  unsigned getNumStrideBits() const;
  unsigned getTilesPerSharedExchangeBus() const;
  unsigned getTilesPerSuperTile() const;
  unsigned getMinIPUSyncDelay() const;
  unsigned getMaxIPUSyncDelay() const;
  unsigned getGlobalSyncCycles() const;
  unsigned getInstructionBytes() const;
  unsigned getInterleavedMemoryElementIndex() const;
  unsigned getNumConvUnits(const Type &inputType, const Type &partialType) const;
  unsigned getFp16InFp16OutConvUnitsPerTile() const;
  unsigned getFp16InFp32OutConvUnitsPerTile() const;
  unsigned getFp32InFp32OutConvUnitsPerTile() const;
  std::vector<unsigned> getMemoryElementOffsets() const;
  std::vector<GlobalExchangeConstraint> getGlobalExchangeConstraints() const;
  unsigned getIpuLinkConfiguration() const { return 0; }
  bool supportsExchangeBusSharing() const;
  bool operator==(const Target &o) const;
  bool operator!=(const Target &o) const { return !(*this == o); }

  /// Internal: every parameter. Not part of Poplar's API.
  const aspen::ir::TargetData &getImpl() const { return *impl_; }
  explicit Target(const aspen::ir::TargetData &data);

private:
  std::unique_ptr<aspen::ir::TargetData> impl_;
};

/// Converts host floats to device halves (IEEE binary16, round to nearest even).
void copyFloatToDeviceHalf(const Target &target, const float *src, void *dst, std::size_t numElements);
void copyDeviceHalfToFloat(const Target &target, const void *src, float *dst, std::size_t numElements);
void copyDoubleToDeviceHalf(const Target &target, const double *src, void *dst, std::size_t numElements);
void copyDeviceHalfToDouble(const Target &target, const void *src, double *dst, std::size_t numElements);

} // namespace poplar

#endif
