// Copyright (c) Aspen contributors.
// poplar::Target: a copyable handle over ir::TargetData, the per-architecture
// defaults (reference/ipu_hardware.md) and the half conversion helpers.
#include "poplar/Target.hpp"

#include "TargetDefaults.hpp"
#include "poplar/exceptions.hpp"
#include "util/Half.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

namespace aspen {

ir::TargetData ipuTargetDefaults(const std::string &arch) {
  ir::TargetData data; // the defaults in TargetData are those of ipu2
  data.type = poplar::TargetType::IPU_MODEL;
  if (arch == "ipu2") {
    data.arch = "ipu2";
  } else if (arch == "ipu1") {
    // Mk1 GC2: 1216 tiles, 256 KiB per tile, 1.6 GHz, half the AMP units of Mk2.
    data.arch = "ipu1";
    data.tilesPerIPU = 1216;
    data.bytesPerTile = 256 * 1024;
    data.tileClockFrequency = 1.6e9;
    data.fp16AccumConvUnits = 8;
    data.fp32AccumConvUnits = 4;
    data.fp32InFp32OutConvUnits = 4;
    data.interleavedMemoryElementIndex = 8; // (?) Mk1's interleaved region start is not documented
  } else if (arch == "ipu21") {
    // Same tile as Mk2 at the Bow clock.
    data.arch = "ipu21";
    data.tileClockFrequency = 1.85e9;
  } else {
    throw poplar::invalid_machine_model("Unknown IPU architecture '" + arch +
                                        "' (expected \"ipu1\", \"ipu2\" or \"ipu21\")");
  }
  return data;
}

std::string archForSystem(const std::string &system) {
  std::string s;
  for (char c : system)
    s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (s == "ipu1" || s == "ipu2" || s == "ipu21")
    return s;
  if (s == "c2" || s == "mk1" || s == "colossus-gc2")
    return "ipu1";
  if (s == "mk2" || s == "m2000" || s == "ipu-m2000" || s == "gc200" || s.rfind("ipu-pod", 0) == 0 ||
      s.rfind("pod", 0) == 0)
    return "ipu2";
  if (s == "bow" || s == "bow-2000" || s == "bow2000" || s.rfind("bow-pod", 0) == 0 || s == "c600")
    return "ipu21";
  return "";
}

ir::TargetData cpuTargetData(bool accurateHalf, unsigned numIPUs) {
  ir::TargetData data;
  data.type = poplar::TargetType::CPU;
  data.arch = "cpu";
  data.numIPUs = numIPUs;
  data.tilesPerIPU = 1;
  // No memory limit in practice; tile addresses stay within 32 bits.
  data.bytesPerTile = std::uint64_t(1) << 31;
  data.accurateHalf = accurateHalf;
  return data;
}

void validateTargetData(const ir::TargetData &data) {
  auto require = [](bool ok, const std::string &what) {
    if (!ok)
      throw poplar::invalid_machine_model("Invalid target: " + what);
  };
  require(data.numIPUs >= 1, "numIPUs must be at least 1 (got " + std::to_string(data.numIPUs) + ")");
  require(data.tilesPerIPU >= 1,
          "tilesPerIPU must be at least 1 (got " + std::to_string(data.tilesPerIPU) + ")");
  require(std::uint64_t(data.numIPUs) * data.tilesPerIPU <= std::numeric_limits<std::uint32_t>::max(),
          "numIPUs x tilesPerIPU (" + std::to_string(data.numIPUs) + " x " +
              std::to_string(data.tilesPerIPU) + ") is more tiles than a tile number can count");
  require(data.bytesPerTile >= 1, "memoryBytesPerTile must be positive");
  require(data.bytesPerTile <= 0xffffffffull,
          "memoryBytesPerTile must fit in 32 bits (got " + std::to_string(data.bytesPerTile) + ")");
  require(data.numWorkerContexts >= 1,
          "numWorkerContexts must be at least 1 (got " + std::to_string(data.numWorkerContexts) + ")");
  require(std::isfinite(data.tileClockFrequency) && data.tileClockFrequency > 0,
          "tileClockFrequency must be a positive, finite number of Hz (got " +
              std::to_string(data.tileClockFrequency) + ")");
  require(data.exchangeBytesPerCycle >= 1, "exchangeBytesPerCycle must be at least 1");
  require(data.memcpyBytesPerCycle >= 1, "memcpyBytesPerCycle must be at least 1");
  require(data.dataPathWidth >= 8 && data.dataPathWidth % 8 == 0,
          "dataPathWidth must be a positive multiple of 8 bits (got " + std::to_string(data.dataPathWidth) +
              ")");
  require(data.tilesPerSuperTile >= 1, "tilesPerSuperTile must be at least 1");
  // The planners divide by these.
  for (const auto &[name, value] : {std::pair<const char *, unsigned>{"fp32ConvUnitInputLoadElemsPerCycle",
                                                                      data.fp32ConvUnitInputLoadElems},
                                    {"fp16ConvUnitInputLoadElemsPerCycle", data.fp16ConvUnitInputLoadElems},
                                    {"fp8ConvUnitInputLoadElemsPerCycle", data.fp8ConvUnitInputLoadElems},
                                    {"fp16ConvUnitMaxPipelineDepth", data.fp16ConvUnitPipelineDepth},
                                    {"fp32ConvUnitMaxPipelineDepth", data.fp32ConvUnitPipelineDepth}})
    require(value >= 1, std::string(name) + " must be at least 1");
  // The cost model's other rates (docs/cost-model.md).
  for (const auto &[name, value] :
       {std::pair<const char *, double>{"hostLinkBandwidth", data.hostLinkBandwidth},
        {"ipuLinkBandwidth", data.ipuLinkBandwidth},
        {"streamingMemoryBandwidth", data.streamingMemoryBandwidth}})
    require(std::isfinite(value) && value > 0, std::string(name) +
                                                   " must be a positive, finite number of bytes/s (got " +
                                                   std::to_string(value) + ")");
  require(data.ipuLinksPerRing >= 1, "ipuLinksPerRing must be at least 1");
  for (const auto &constraint : data.globalExchangeConstraints)
    for (const auto &flow : constraint.flows)
      require(flow.first < data.numIPUs && flow.second < data.numIPUs,
              "global exchange flow (" + std::to_string(flow.first) + ", " + std::to_string(flow.second) +
                  ") names an IPU beyond numIPUs = " + std::to_string(data.numIPUs));
}

} // namespace aspen

namespace poplar {

using aspen::ir::TargetData;

Target::Target() : impl_(std::make_unique<TargetData>()) {}
Target::Target(const TargetData &data) : impl_(std::make_unique<TargetData>(data)) {}
Target::Target(const Target &o) : impl_(std::make_unique<TargetData>(*o.impl_)) {}
Target::Target(Target &&o) noexcept : impl_(std::move(o.impl_)) {}
Target &Target::operator=(const Target &o) {
  if (this != &o)
    impl_ = std::make_unique<TargetData>(*o.impl_);
  return *this;
}
Target &Target::operator=(Target &&o) noexcept {
  impl_ = std::move(o.impl_);
  return *this;
}
Target::~Target() = default;

Target Target::createCPUTarget(bool accurateHalf, unsigned numIPUs) {
  auto data = aspen::cpuTargetData(accurateHalf, numIPUs);
  aspen::validateTargetData(data);
  return Target(data);
}

Target Target::createIPUTarget(unsigned numIPUs, StringRef system, const OptionFlags &opts) {
  const auto arch = aspen::archForSystem(system.str());
  if (arch.empty())
    throw invalid_machine_model(
        "Unknown IPU system '" + system.str() +
        "' (expected \"ipu1\", \"ipu2\", \"ipu21\" or a system name such as \"IPU-POD4\")");
  auto data = aspen::ipuTargetDefaults(arch);
  return createIPUTarget(numIPUs, data.tilesPerIPU, system, opts);
}

Target Target::createIPUTarget(unsigned numIPUs, unsigned tilesPerIPU, StringRef system,
                               const OptionFlags &) {
  // Link and sync configuration options describe real systems; the simulated
  // IPU has none to choose, so they are accepted and ignored.
  const auto arch = aspen::archForSystem(system.str());
  if (arch.empty())
    throw invalid_machine_model(
        "Unknown IPU system '" + system.str() +
        "' (expected \"ipu1\", \"ipu2\", \"ipu21\" or a system name such as \"IPU-POD4\")");
  auto data = aspen::ipuTargetDefaults(arch);
  data.type = TargetType::IPU;
  data.numIPUs = numIPUs;
  data.tilesPerIPU = tilesPerIPU;
  aspen::validateTargetData(data);
  return Target(data);
}

TargetType Target::getTargetType() const {
  return impl_->type;
}
std::string Target::getTargetArchString() const {
  return impl_->arch;
}
StringRef Target::getTargetSystemString() const {
  return impl_->arch;
}
unsigned Target::getNumIPUs() const {
  return impl_->numIPUs;
}
unsigned Target::getTilesPerIPU() const {
  return impl_->tilesPerIPU;
}
unsigned Target::getNumTiles() const {
  return impl_->numTiles();
}
unsigned Target::getNumWorkerContexts() const {
  return impl_->numWorkerContexts;
}
unsigned Target::getExchangeBytesPerCycle() const {
  return impl_->exchangeBytesPerCycle;
}
std::uint64_t Target::getBytesPerTile() const {
  return impl_->bytesPerTile;
}
std::uint64_t Target::getMemoryBytes() const {
  return impl_->bytesPerTile * impl_->numTiles();
}
unsigned Target::getDataPathWidth() const {
  return impl_->dataPathWidth;
}

unsigned Target::getVectorWidth(const Type &type) const {
  // Elements of `type` that fit in one data-path-wide load (at least 1).
  const auto size = type.size();
  if (size == 0)
    throw type_error("getVectorWidth: invalid type");
  return std::max<unsigned>(1, static_cast<unsigned>(impl_->dataPathWidth / 8 / size));
}
unsigned Target::getFloatVectorWidth() const {
  return getVectorWidth(FLOAT);
}
unsigned Target::getHalfVectorWidth() const {
  return getVectorWidth(HALF);
}

std::size_t Target::getTypeSize(const Type &type) const {
  if (!type.valid())
    throw type_error("getTypeSize: invalid type");
  return type.size();
}

unsigned Target::getAtomicStoreGranularity() const {
  return impl_->atomicStoreGranularity;
}
double Target::getTileClockFrequency() const {
  return impl_->tileClockFrequency;
}
unsigned Target::getMemcpyBytesPerCycle() const {
  return impl_->memcpyBytesPerCycle;
}
unsigned Target::getRptCountMax() const {
  return impl_->rptCountMax;
}
unsigned Target::getNumStrideBits() const {
  return impl_->numStrideBits;
}
unsigned Target::getTilesPerSharedExchangeBus() const {
  return impl_->tilesPerSuperTile;
}
unsigned Target::getTilesPerSuperTile() const {
  return impl_->tilesPerSuperTile;
}
unsigned Target::getMinIPUSyncDelay() const {
  return impl_->minIPUSyncDelay;
}
unsigned Target::getMaxIPUSyncDelay() const {
  // With AUTO relative delays the farthest tile is released one barrier
  // latency after the nearest; with NO_DELAY all tiles are released together.
  return impl_->minIPUSyncDelay + (impl_->relativeSyncDelayAuto ? impl_->syncCycles : 0);
}
unsigned Target::getGlobalSyncCycles() const {
  return impl_->globalSyncCycles;
}
unsigned Target::getInstructionBytes() const {
  return impl_->instructionBytes;
}
unsigned Target::getInterleavedMemoryElementIndex() const {
  return impl_->interleavedMemoryElementIndex;
}

unsigned Target::getNumConvUnits(const Type &inputType, const Type &partialType) const {
  if (inputType == FLOAT)
    return getFp32InFp32OutConvUnitsPerTile();
  if (inputType == HALF || inputType == QUARTER)
    return partialType == HALF ? getFp16InFp16OutConvUnitsPerTile() : getFp16InFp32OutConvUnitsPerTile();
  return 0;
}
unsigned Target::getFp16InFp16OutConvUnitsPerTile() const {
  return impl_->fp16AccumConvUnits;
}
unsigned Target::getFp16InFp32OutConvUnitsPerTile() const {
  return impl_->fp32AccumConvUnits;
}
unsigned Target::getFp32InFp32OutConvUnitsPerTile() const {
  return impl_->fp32InFp32OutConvUnits;
}

unsigned Target::getWeightsPerConvUnit(const Type &actsType) const {
  return getConvUnitInputLoadElemsPerCycle(actsType) *
         getConvUnitMaxPipelineDepth(actsType == FLOAT ? FLOAT : HALF);
}
unsigned Target::getConvUnitInputLoadElemsPerCycle(const Type &actsType) const {
  if (actsType == FLOAT)
    return getFp32ConvUnitInputLoadElemsPerCycle();
  if (actsType == HALF)
    return getFp16ConvUnitInputLoadElemsPerCycle();
  if (actsType == QUARTER) // fp8 (PopLibs' quarter convolutions)
    return impl_->fp8ConvUnitInputLoadElems;
  throw type_error("getConvUnitInputLoadElemsPerCycle: the conv units take quarter, half or float, not '" +
                   actsType.toString().str() + "'");
}
// By default a conv unit loads 64 bits of input per cycle: 4 halves or 2 floats (IPUModel sets these).
unsigned Target::getFp16ConvUnitInputLoadElemsPerCycle() const {
  return impl_->fp16ConvUnitInputLoadElems;
}
unsigned Target::getFp32ConvUnitInputLoadElemsPerCycle() const {
  return impl_->fp32ConvUnitInputLoadElems;
}

unsigned Target::getConvUnitCoeffLoadBytesPerCycle() const {
  return impl_->arch == "ipu1" ? 8 : 16;
}
unsigned Target::getConvUnitMaxPipelineDepth(const Type &partialType) const {
  if (partialType == FLOAT)
    return getFp32ConvUnitMaxPipelineDepth();
  // Quarter (fp8) products accumulate in the half pipeline: poplin asks for the depth by the
  // weights' type, quarter in its fp8 convolutions, as getWeightsPerConvUnit(QUARTER) counts.
  if (partialType == HALF || partialType == QUARTER)
    return getFp16ConvUnitMaxPipelineDepth();
  throw type_error("getConvUnitMaxPipelineDepth: partials are quarter, half or float, not '" +
                   partialType.toString().str() + "'");
}
unsigned Target::getFp16ConvUnitMaxPipelineDepth() const {
  return impl_->fp16ConvUnitPipelineDepth;
}
unsigned Target::getFp32ConvUnitMaxPipelineDepth() const {
  return impl_->fp32ConvUnitPipelineDepth;
}

Target Target::createVirtualTarget(unsigned numIPUs, unsigned tilesPerIPU) const {
  if (numIPUs == 0 || tilesPerIPU == 0 || numIPUs > impl_->numIPUs || tilesPerIPU > impl_->tilesPerIPU)
    throw poplar_error("createVirtualTarget(" + std::to_string(numIPUs) + ", " + std::to_string(tilesPerIPU) +
                       "): the target has " + std::to_string(impl_->numIPUs) + " IPU(s) of " +
                       std::to_string(impl_->tilesPerIPU) + " tiles");
  TargetData d = *impl_;
  d.numIPUs = numIPUs;
  d.tilesPerIPU = tilesPerIPU;
  return Target(d);
}

std::vector<unsigned> Target::getMemoryElementOffsets() const {
  std::vector<unsigned> offsets;
  const auto elementBytes = std::max<std::uint64_t>(1, impl_->memoryElementBytes);
  for (std::uint64_t offset = 0; offset < impl_->bytesPerTile; offset += elementBytes)
    offsets.push_back(static_cast<unsigned>(offset));
  return offsets;
}

std::vector<GlobalExchangeConstraint> Target::getGlobalExchangeConstraints() const {
  std::vector<GlobalExchangeConstraint> result;
  for (const auto &c : impl_->globalExchangeConstraints) {
    std::vector<GlobalExchangeFlow> flows;
    for (const auto &f : c.flows)
      flows.emplace_back(f.first, f.second);
    result.emplace_back(c.bandwidth, std::move(flows));
  }
  return result;
}

bool Target::supportsExchangeBusSharing() const {
  return impl_->supportsSuperTileSendReceive;
}

namespace {
auto comparableFields(const TargetData &d) {
  return std::tie(d.type, d.arch, d.numIPUs, d.tilesPerIPU, d.tilesPerSuperTile, d.bytesPerTile,
                  d.numWorkerContexts, d.dataPathWidth, d.exchangeBytesPerCycle, d.memcpyBytesPerCycle,
                  d.instructionBytes, d.tileClockFrequency, d.minIPUSyncDelay, d.relativeSyncDelayAuto,
                  d.globalSyncCycles, d.syncCycles, d.exchangeOverheadCycles, d.exchangeSourceCycles,
                  d.interleavedMemoryElementIndex, d.memoryElementBytes, d.atomicStoreGranularity,
                  d.rptCountMax, d.numStrideBits, d.fp16AccumConvUnits, d.fp32AccumConvUnits,
                  d.fp32InFp32OutConvUnits, d.fp32ConvUnitInputLoadElems, d.fp16ConvUnitInputLoadElems,
                  d.fp8ConvUnitInputLoadElems, d.fp16ConvUnitPipelineDepth, d.fp32ConvUnitPipelineDepth,
                  d.supportsSuperTileSendReceive, d.compileIPUCode, d.accurateHalf, d.perTileOverheadBytes);
}
bool sameConstraints(const TargetData &a, const TargetData &b) {
  if (a.globalExchangeConstraints.size() != b.globalExchangeConstraints.size())
    return false;
  for (std::size_t i = 0; i < a.globalExchangeConstraints.size(); ++i) {
    const auto &x = a.globalExchangeConstraints[i];
    const auto &y = b.globalExchangeConstraints[i];
    if (x.bandwidth != y.bandwidth || x.flows != y.flows)
      return false;
  }
  return true;
}
} // namespace

bool Target::operator==(const Target &o) const {
  return comparableFields(*impl_) == comparableFields(*o.impl_) && sameConstraints(*impl_, *o.impl_);
}

bool Target::operator<(const Target &o) const {
  if (comparableFields(*impl_) != comparableFields(*o.impl_))
    return comparableFields(*impl_) < comparableFields(*o.impl_);
  const auto &a = impl_->globalExchangeConstraints, &b = o.impl_->globalExchangeConstraints;
  if (a.size() != b.size())
    return a.size() < b.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].bandwidth != b[i].bandwidth)
      return a[i].bandwidth < b[i].bandwidth;
    if (a[i].flows != b[i].flows)
      return a[i].flows < b[i].flows;
  }
  return false;
}

// Device buffers may be unaligned: elements are moved with memcpy.
void copyFloatToDeviceHalf(const Target &, const float *src, void *dst, std::size_t numElements) {
  auto *out = static_cast<unsigned char *>(dst);
  for (std::size_t i = 0; i < numElements; ++i) {
    const std::uint16_t h = aspen::util::floatToHalf(src[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}
void copyDeviceHalfToFloat(const Target &, const void *src, float *dst, std::size_t numElements) {
  const auto *in = static_cast<const unsigned char *>(src);
  for (std::size_t i = 0; i < numElements; ++i) {
    std::uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    dst[i] = aspen::util::halfToFloat(h);
  }
}
void copyDoubleToDeviceHalf(const Target &, const double *src, void *dst, std::size_t numElements) {
  auto *out = static_cast<unsigned char *>(dst);
  for (std::size_t i = 0; i < numElements; ++i) {
    const std::uint16_t h = aspen::util::doubleToHalf(src[i]);
    std::memcpy(out + 2 * i, &h, 2);
  }
}
void copyDeviceHalfToDouble(const Target &, const void *src, double *dst, std::size_t numElements) {
  const auto *in = static_cast<const unsigned char *>(src);
  for (std::size_t i = 0; i < numElements; ++i) {
    std::uint16_t h;
    std::memcpy(&h, in + 2 * i, 2);
    dst[i] = aspen::util::halfToDouble(h);
  }
}

} // namespace poplar
