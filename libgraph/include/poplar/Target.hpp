// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_TARGET_HPP
#define POPLAR_TARGET_HPP

#include <poplar/OptionFlags.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/TargetType.hpp>
#include <poplar/Type.hpp>
#include <poplar/exceptions.hpp>

#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numeric>
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
  std::size_t getTypeSize(const Type &type) const;
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
  /// Weights one conv unit holds for activations of `actsType` (ipu2: 16 half, 8 float).
  unsigned getWeightsPerConvUnit(const Type &actsType) const;
  /// Input elements a conv unit loads per cycle (ipu2: 4 half, 2 float).
  unsigned getConvUnitInputLoadElemsPerCycle(const Type &actsType) const;
  unsigned getFp16ConvUnitInputLoadElemsPerCycle() const;
  unsigned getFp32ConvUnitInputLoadElemsPerCycle() const;
  /// Coefficient bytes loaded per cycle into the conv units (ipu2: 16; ipu1: 8).
  unsigned getConvUnitCoeffLoadBytesPerCycle() const;
  /// Length of a conv unit's accumulation chain for partials of `partialType` (ipu2: 4).
  unsigned getConvUnitMaxPipelineDepth(const Type &partialType) const;
  unsigned getFp16ConvUnitMaxPipelineDepth() const;
  unsigned getFp32ConvUnitMaxPipelineDepth() const;

  /// The largest value of device type `type`, as a `T` (half: 65504).
  template <typename T> T getTypeLimitsMaxAs(const Type &type) const {
    return static_cast<T>(typeLimit(type, true));
  }
  /// The lowest (most negative) value of device type `type`, as a `T`.
  template <typename T> T getTypeLimitsLowestAs(const Type &type) const {
    return static_cast<T>(typeLimit(type, false));
  }

  /// A target like this one restricted to `numIPUs` IPUs of `tilesPerIPU`
  /// tiles; throws `poplar_error` when that is larger than this target.
  Target createVirtualTarget(unsigned numIPUs, unsigned tilesPerIPU) const;
  std::vector<unsigned> getMemoryElementOffsets() const;
  std::vector<GlobalExchangeConstraint> getGlobalExchangeConstraints() const;
  unsigned getIpuLinkConfiguration() const { return 0; }
  bool supportsExchangeBusSharing() const;
  bool operator==(const Target &o) const;
  bool operator!=(const Target &o) const { return !(*this == o); }
  /// A strict order over targets (for use as a map key).
  bool operator<(const Target &o) const;

  /// Internal: every parameter. Not part of Poplar's API.
  const aspen::ir::TargetData &getImpl() const { return *impl_; }
  explicit Target(const aspen::ir::TargetData &data);

private:
  /// `type`'s max (or lowest) value; long double holds every 64-bit integer limit exactly.
  static long double typeLimit(const Type &type, bool max) {
    switch (type.id()) {
    case Type::Id::Bool:
      return max ? 1 : 0;
    case Type::Id::Char:
      return max ? std::numeric_limits<char>::max() : std::numeric_limits<char>::lowest();
    case Type::Id::SignedChar:
      return max ? std::numeric_limits<signed char>::max() : std::numeric_limits<signed char>::lowest();
    case Type::Id::UnsignedChar:
      return max ? std::numeric_limits<unsigned char>::max() : 0;
    case Type::Id::Short:
      return max ? std::numeric_limits<short>::max() : std::numeric_limits<short>::lowest();
    case Type::Id::UnsignedShort:
      return max ? std::numeric_limits<unsigned short>::max() : 0;
    case Type::Id::Int:
      return max ? std::numeric_limits<int>::max() : std::numeric_limits<int>::lowest();
    case Type::Id::UnsignedInt:
      return max ? std::numeric_limits<unsigned>::max() : 0;
    case Type::Id::Long:
      return max ? std::numeric_limits<long>::max() : std::numeric_limits<long>::lowest();
    case Type::Id::UnsignedLong:
      return max ? std::numeric_limits<unsigned long>::max() : 0;
    case Type::Id::LongLong:
      return max ? std::numeric_limits<long long>::max() : std::numeric_limits<long long>::lowest();
    case Type::Id::UnsignedLongLong:
      return max ? std::numeric_limits<unsigned long long>::max() : 0;
    case Type::Id::Half:
      return max ? 65504.0L : -65504.0L;
    case Type::Id::Float:
      return max ? std::numeric_limits<float>::max() : std::numeric_limits<float>::lowest();
    case Type::Id::Double:
      return max ? std::numeric_limits<double>::max() : std::numeric_limits<double>::lowest();
    default:
      throw type_error("getTypeLimits: type '" + type.toString().str() + "' has no numeric limits");
    }
  }
  std::unique_ptr<aspen::ir::TargetData> impl_;
};

/// Converts host floats to device halves (IEEE binary16, round to nearest even).
void copyFloatToDeviceHalf(const Target &target, const float *src, void *dst, std::size_t numElements);
void copyDeviceHalfToFloat(const Target &target, const void *src, float *dst, std::size_t numElements);
void copyDoubleToDeviceHalf(const Target &target, const double *src, void *dst, std::size_t numElements);
void copyDeviceHalfToDouble(const Target &target, const void *src, double *dst, std::size_t numElements);

} // namespace poplar

#endif
