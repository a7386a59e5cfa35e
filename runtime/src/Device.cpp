// Copyright (c) Aspen contributors.
// Devices: IPUModel devices, the CPU device, and the DeviceManager's simulated
// IPUs (an IPU-POD16 of full-size ipu2 IPUs) with per-process attach/detach.
#include "poplar/Device.hpp"
#include "poplar/DeviceManager.hpp"
#include "poplar/IPUModel.hpp"

#include "TargetDefaults.hpp"
#include "poplar/exceptions.hpp"

#include <mutex>
#include <string>

namespace aspen::rt {

/// What every handle of one device shares: its id, the simulated IPUs it holds
/// and whether it is attached. Released (detached) with the last handle.
struct DeviceState {
  unsigned id = 0;
  std::vector<unsigned> ipus; // simulated IPUs (DeviceManager devices only)
  bool managed = false;       // DeviceManager device: attachment is exclusive per IPU
  bool remoteBuffers = true;
  bool attached = false; // guarded by registryMutex()
  ~DeviceState();
};

namespace {

constexpr unsigned numSystemIPUs = 16;

/// The simulated system, an IPU-POD16: device id -> the IPUs it uses. As on a
/// POD, ids 0-15 are the single IPUs, then the aligned groups of 2, 4, 8 and 16.
const std::vector<std::vector<unsigned>> &systemDevices() {
  static const std::vector<std::vector<unsigned>> devices = [] {
    std::vector<std::vector<unsigned>> all;
    for (unsigned size = 1; size <= numSystemIPUs; size *= 2)
      for (unsigned first = 0; first < numSystemIPUs; first += size) {
        all.emplace_back();
        for (unsigned ipu = first; ipu < first + size; ++ipu)
          all.back().push_back(ipu);
      }
    return all;
  }();
  return devices;
}

// The registry is never destroyed: a Device in static storage may be released
// after function-local statics have gone at exit.
std::mutex &registryMutex() {
  static auto *m = new std::mutex;
  return *m;
}
/// Which simulated IPUs are attached in this process.
std::vector<bool> &busyIPUs() {
  static auto *busy = new std::vector<bool>(numSystemIPUs, false);
  return *busy;
}

void releaseLocked(DeviceState &state) {
  if (!state.attached)
    return;
  if (state.managed)
    for (unsigned ipu : state.ipus)
      busyIPUs()[ipu] = false;
  state.attached = false;
}

poplar::Device makeSystemDevice(unsigned id) {
  const auto &ipus = systemDevices().at(id);
  auto state = std::make_shared<DeviceState>();
  state->id = id;
  state->ipus = ipus;
  state->managed = true;
  auto target = poplar::Target::createIPUTarget(static_cast<unsigned>(ipus.size()), "ipu2");
  return poplar::Device(std::move(state), target);
}

} // namespace

DeviceState::~DeviceState() {
  std::lock_guard<std::mutex> lock(registryMutex());
  releaseLocked(*this);
}

} // namespace aspen::rt

namespace poplar {

using aspen::rt::DeviceState;

// ---- Device --------------------------------------------------------------------

Device::Device() = default;
Device::Device(std::shared_ptr<DeviceState> state, const Target &target)
    : state_(std::move(state)), target_(std::make_unique<Target>(target)) {}
Device::Device(Device &&) noexcept = default;
Device &Device::operator=(Device &&) noexcept = default;
Device::~Device() = default;

namespace {
const DeviceState &requireState(const std::shared_ptr<DeviceState> &state, const char *what) {
  if (!state)
    throw system_runtime_error(std::string(what) +
                               " called on an empty Device (default-constructed or moved from)");
  return *state;
}
} // namespace

unsigned Device::getId() const {
  return requireState(state_, "getId()").id;
}

const Target &Device::getTarget() const {
  requireState(state_, "getTarget()");
  return *target_;
}

bool Device::attach() const {
  requireState(state_, "attach()");
  std::lock_guard<std::mutex> lock(aspen::rt::registryMutex());
  if (state_->attached)
    return false;
  if (state_->managed) {
    auto &busy = aspen::rt::busyIPUs();
    for (unsigned ipu : state_->ipus)
      if (busy[ipu])
        return false;
    for (unsigned ipu : state_->ipus)
      busy[ipu] = true;
  }
  state_->attached = true;
  return true;
}

bool Device::isAttached() const {
  if (!state_)
    return false;
  std::lock_guard<std::mutex> lock(aspen::rt::registryMutex());
  return state_->attached;
}

void Device::detach() const {
  if (!state_)
    return;
  std::lock_guard<std::mutex> lock(aspen::rt::registryMutex());
  aspen::rt::releaseLocked(*state_);
}

bool Device::supportsRemoteBuffers() const {
  return requireState(state_, "supportsRemoteBuffers()").remoteBuffers;
}

std::vector<unsigned> Device::getDriverIDs() const {
  const auto &state = requireState(state_, "getDriverIDs()");
  if (state.managed)
    return state.ipus;
  std::vector<unsigned> ids(target_->getNumIPUs());
  for (unsigned i = 0; i < ids.size(); ++i)
    ids[i] = i;
  return ids;
}

Device Device::createVirtualDevice(unsigned tilesPerIPU) {
  requireState(state_, "createVirtualDevice()");
  if (tilesPerIPU == 0 || tilesPerIPU > target_->getTilesPerIPU())
    throw invalid_machine_model("createVirtualDevice: " + std::to_string(tilesPerIPU) +
                                " tiles per IPU requested but the device has " +
                                std::to_string(target_->getTilesPerIPU()));
  auto data = target_->getImpl();
  data.tilesPerIPU = tilesPerIPU;
  return Device(state_, Target(data));
}

Device Device::createCPUDevice(unsigned numIPUs) {
  auto state = std::make_shared<DeviceState>();
  state->remoteBuffers = false;
  return Device(std::move(state), Target::createCPUTarget(false, numIPUs));
}

Device Device::createSimulatorDevice(const Target &target, const OptionFlags &) {
  aspen::validateTargetData(target.getImpl());
  return Device(std::make_shared<DeviceState>(), target);
}

// ---- IPUModel ------------------------------------------------------------------

IPUModel::IPUModel(const char *version) : IPUVersion(version ? version : "") {
  const auto d = aspen::ipuTargetDefaults(IPUVersion);
  numIPUs = d.numIPUs;
  tilesPerIPU = d.tilesPerIPU;
  tilesPerSuperTile = d.tilesPerSuperTile;
  numWorkerContexts = d.numWorkerContexts;
  memoryBytesPerTile = static_cast<unsigned>(d.bytesPerTile);
  tileClockFrequency = d.tileClockFrequency;
  exchangeBytesPerCycle = d.exchangeBytesPerCycle;
  memcpyBytesPerCycle = d.memcpyBytesPerCycle;
  instructionBytes = d.instructionBytes;
  dataPathWidth = d.dataPathWidth;
  supportsSuperTileSendReceive = d.supportsSuperTileSendReceive;
  interleavedMemoryElementIndex = d.interleavedMemoryElementIndex;
  minIPUSyncDelay = d.minIPUSyncDelay;
  relativeSyncDelay = d.relativeSyncDelayAuto ? RelativeSyncDelayType::AUTO : RelativeSyncDelayType::NO_DELAY;
  globalSyncCycles = d.globalSyncCycles;
  compileIPUCode = d.compileIPUCode;
  fp16InFp16OutConvUnitsPerTile = d.fp16AccumConvUnits;
  fp16InFp32OutConvUnitsPerTile = d.fp32AccumConvUnits;
  fp32InFp32OutConvUnitsPerTile = d.fp32InFp32OutConvUnits;
  fp32ConvUnitInputLoadElemsPerCycle = d.fp32ConvUnitInputLoadElems;
  fp16ConvUnitInputLoadElemsPerCycle = d.fp16ConvUnitInputLoadElems;
  fp8ConvUnitInputLoadElemsPerCycle = d.fp8ConvUnitInputLoadElems;
  fp16ConvUnitMaxPipelineDepth = d.fp16ConvUnitPipelineDepth;
  fp32ConvUnitMaxPipelineDepth = d.fp32ConvUnitPipelineDepth;
}

Device IPUModel::createDevice(OptionFlags, bool accurateHalf, unsigned deviceManagerId) const {
  auto d = aspen::ipuTargetDefaults(IPUVersion);
  d.type = TargetType::IPU_MODEL;
  d.numIPUs = numIPUs;
  d.tilesPerIPU = tilesPerIPU;
  d.tilesPerSuperTile = tilesPerSuperTile;
  d.numWorkerContexts = numWorkerContexts;
  d.bytesPerTile = memoryBytesPerTile;
  d.tileClockFrequency = tileClockFrequency;
  d.exchangeBytesPerCycle = exchangeBytesPerCycle;
  d.memcpyBytesPerCycle = memcpyBytesPerCycle;
  d.instructionBytes = instructionBytes;
  d.dataPathWidth = dataPathWidth;
  d.supportsSuperTileSendReceive = supportsSuperTileSendReceive;
  d.interleavedMemoryElementIndex = interleavedMemoryElementIndex;
  d.minIPUSyncDelay = minIPUSyncDelay;
  d.relativeSyncDelayAuto = relativeSyncDelay == RelativeSyncDelayType::AUTO;
  d.globalSyncCycles = globalSyncCycles;
  d.compileIPUCode = compileIPUCode;
  d.fp16AccumConvUnits = fp16InFp16OutConvUnitsPerTile;
  d.fp32AccumConvUnits = fp16InFp32OutConvUnitsPerTile;
  d.fp32InFp32OutConvUnits = fp32InFp32OutConvUnitsPerTile;
  d.fp32ConvUnitInputLoadElems = fp32ConvUnitInputLoadElemsPerCycle;
  d.fp16ConvUnitInputLoadElems = fp16ConvUnitInputLoadElemsPerCycle;
  d.fp8ConvUnitInputLoadElems = fp8ConvUnitInputLoadElemsPerCycle;
  d.fp16ConvUnitPipelineDepth = fp16ConvUnitMaxPipelineDepth;
  d.fp32ConvUnitPipelineDepth = fp32ConvUnitMaxPipelineDepth;
  d.accurateHalf = accurateHalf;
  d.globalExchangeConstraints.clear();
  for (const auto &c : globalExchangeConstraints) {
    aspen::ir::GlobalExchangeConstraintData data;
    data.bandwidth = c.bandwidth;
    for (const auto &f : c.flows)
      data.flows.emplace_back(f.src, f.dst);
    d.globalExchangeConstraints.push_back(std::move(data));
  }
  aspen::validateTargetData(d);
  auto state = std::make_shared<DeviceState>();
  state->id = deviceManagerId == UINT_MAX ? 0 : deviceManagerId;
  return Device(std::move(state), Target(d));
}

// ---- DeviceManager ---------------------------------------------------------------

DeviceManager::DeviceManager() = default;

DeviceManager DeviceManager::createDeviceManager() {
  return DeviceManager();
}

std::vector<Device> DeviceManager::getDevices(TargetType type, unsigned requiredNumIPUs,
                                              const OptionFlags &) const {
  std::vector<Device> result;
  switch (type) {
  case TargetType::IPU: {
    const auto &devices = aspen::rt::systemDevices();
    for (unsigned id = 0; id < devices.size(); ++id)
      if (devices[id].size() == requiredNumIPUs)
        result.push_back(aspen::rt::makeSystemDevice(id));
    break;
  }
  case TargetType::IPU_MODEL: {
    IPUModel model;
    model.numIPUs = requiredNumIPUs;
    result.push_back(model.createDevice());
    break;
  }
  case TargetType::CPU:
    result.push_back(Device::createCPUDevice(requiredNumIPUs));
    break;
  }
  return result;
}

std::vector<Device> DeviceManager::getDevices(const OptionFlags &) const {
  std::vector<Device> result;
  for (unsigned id = 0; id < aspen::rt::systemDevices().size(); ++id)
    result.push_back(aspen::rt::makeSystemDevice(id));
  return result;
}

Device DeviceManager::getDevice(unsigned deviceManagerId, const OptionFlags &) const {
  const auto numDevices = aspen::rt::systemDevices().size();
  if (deviceManagerId >= numDevices)
    throw system_runtime_error("No device with id " + std::to_string(deviceManagerId) +
                               ": the simulated system has devices 0.." + std::to_string(numDevices - 1));
  return aspen::rt::makeSystemDevice(deviceManagerId);
}

std::size_t DeviceManager::getNumDevices() const {
  return aspen::rt::systemDevices().size();
}

} // namespace poplar
