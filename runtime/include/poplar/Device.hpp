// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_DEVICE_HPP
#define POPLAR_DEVICE_HPP

#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>

// The standard headers Poplar's and PopLibs' public headers bring with them: programs use
// std::cout, std::optional, std::unordered_set, std::map, assert, ... having included only
// Poplar/PopLibs headers. Every header that gives poplar::Device (Device.hpp, DeviceManager.hpp,
// IPUModel.hpp, Graph.hpp, Engine.hpp, and through Graph.hpp every PopLibs header) brings this
// set; docs/porting-from-poplar.md lists it. <optional> is C++17, so only from C++17 on.
#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
#if __cplusplus >= 201703L
#include <optional>
#endif

namespace aspen {
namespace rt {
struct DeviceState;
} // namespace rt
} // namespace aspen

namespace poplar {

/// A device to load and run executables on: an IPUModel, the CPU device, or a
/// simulated IPU from the DeviceManager. Move-only; default-constructed = no device.
///
/// Example: `auto dm = DeviceManager::createDeviceManager();
///           auto devs = dm.getDevices(TargetType::IPU, 1);
///           auto it = std::find_if(devs.begin(), devs.end(), [](Device &d) { return d.attach(); });`
class Device {
public:
  Device();
  Device(Device &&) noexcept;
  Device &operator=(Device &&) noexcept;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  /// Detaches the device if this handle attached it.
  ~Device();

  /// The DeviceManager id (IPUModel and CPU devices: the id given, else 0).
  unsigned getId() const;
  const Target &getTarget() const;
  /// Acquires the device for this process. A simulated IPU (or a set sharing one
  /// of its IPUs) attached through another handle is busy: returns false.
  bool attach() const;
  bool isAttached() const;
  void detach() const;
  bool supportsRemoteBuffers() const;
  /// The IPUs this device uses (its driver ids; one per IPU).
  std::vector<unsigned> getDriverIDs() const;
  /// The same device restricted to the first `tilesPerIPU` tiles of each IPU;
  /// it shares this device's attachment.
  Device createVirtualDevice(unsigned tilesPerIPU);

  /// A small CPU device: one tile per IPU, codelets run on the host.
  static Device createCPUDevice(unsigned numIPUs = 1);
  /// A device simulating `target` (IPU or IPU_MODEL parameters as given).
  static Device createSimulatorDevice(const Target &target, const OptionFlags &opts = {});

  /// Internal: makes a handle over shared device state. Not part of Poplar's API.
  Device(std::shared_ptr<aspen::rt::DeviceState> state, const Target &target);

private:
  std::shared_ptr<aspen::rt::DeviceState> state_;
  std::unique_ptr<Target> target_;
};

} // namespace poplar

#endif
