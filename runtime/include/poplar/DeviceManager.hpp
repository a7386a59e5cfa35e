// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_DEVICEMANAGER_HPP
#define POPLAR_DEVICEMANAGER_HPP

#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/TargetType.hpp>

#include <cstddef>
#include <vector>

namespace poplar {

/// Lists the devices of the (simulated) system. Aspen simulates an IPU-POD16 of
/// full-size ipu2 IPUs: ids 0-15 are single IPUs, 16-23 pairs ({0,1}, {2,3}, ...),
/// 24-27 groups of 4, 28-29 groups of 8 and 30 all sixteen. A device shares its
/// IPUs with the larger sets that contain them, so at most one of them can be
/// attached at a time.
class DeviceManager {
public:
  DeviceManager();
  static DeviceManager createDeviceManager();

  /// Devices of `type` with `requiredNumIPUs` IPUs: for IPU, the simulated
  /// devices of that size (empty when there are none); for IPU_MODEL and CPU,
  /// one new device of that kind.
  std::vector<Device> getDevices(TargetType type, unsigned requiredNumIPUs,
                                 const OptionFlags &opts = {}) const;
  /// Every simulated IPU device.
  std::vector<Device> getDevices(const OptionFlags &opts = {}) const;
  /// The simulated device `deviceManagerId`; throws system_runtime_error naming
  /// an unknown id.
  Device getDevice(unsigned deviceManagerId, const OptionFlags &opts = {}) const;
  std::size_t getNumDevices() const;
};

} // namespace poplar

#endif
