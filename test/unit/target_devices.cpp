// Copyright (c) Aspen contributors.
// Unit tests: Target defaults (reference/ipu_hardware.md), IPUModel fields,
// Device and DeviceManager (simulated IPU-POD16, attach/detach).
#include "ir/TargetData.hpp"

#include <poplar/Device.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace poplar;

namespace {
struct ArchFacts {
  const char *arch;
  unsigned tiles;
  std::uint64_t bytesPerTile;
  double clockHz;
};
// reference/ipu_hardware.md §1: Mk1 GC2, Mk2 GC200, Bow (ipu21).
const ArchFacts archFacts[] = {
    {"ipu1", 1216, 256 * 1024, 1.6e9},
    {"ipu2", 1472, 638976, 1.33e9},
    {"ipu21", 1472, 638976, 1.85e9},
};
} // namespace

TEST_CASE("IPUModel defaults per architecture", "[target]") {
  for (const auto &f : archFacts) {
    INFO(f.arch);
    IPUModel model(f.arch);
    CHECK(model.IPUVersion == f.arch);
    CHECK(model.numIPUs == 1);
    CHECK(model.tilesPerIPU == f.tiles);
    CHECK(model.memoryBytesPerTile == f.bytesPerTile);
    CHECK(model.tileClockFrequency == Approx(f.clockHz));
    CHECK(model.numWorkerContexts == 6);
    CHECK(model.exchangeBytesPerCycle == 4);
    CHECK(model.relativeSyncDelay == IPUModel::RelativeSyncDelayType::AUTO);
    Device device = model.createDevice();
    const Target &t = device.getTarget();
    CHECK(t.getTargetType() == TargetType::IPU_MODEL);
    CHECK(t.getTargetArchString() == f.arch);
    CHECK(t.getNumIPUs() == 1);
    CHECK(t.getTilesPerIPU() == f.tiles);
    CHECK(t.getNumTiles() == f.tiles);
    CHECK(t.getBytesPerTile() == f.bytesPerTile);
    CHECK(t.getMemoryBytes() == f.bytesPerTile * f.tiles);
    CHECK(t.getTileClockFrequency() == Approx(f.clockHz));
    CHECK(t.getNumWorkerContexts() == 6);
    CHECK(t.getExchangeBytesPerCycle() == 4);
    CHECK(t.getDataPathWidth() == 64);
    CHECK(t.getFloatVectorWidth() == 2);
    CHECK(t.getHalfVectorWidth() == 4);
    CHECK(t.getVectorWidth(CHAR) == 8);
    CHECK(t.getVectorWidth(DOUBLE) == 1);
    CHECK(t.getTypeSize(HALF) == 2);
    CHECK(t.getTypeSize(FLOAT) == 4);
  }
  IPUModel defaultModel;
  CHECK(defaultModel.IPUVersion == "ipu2");
  CHECK(IPUModel("ipu1").createDevice().getTarget().getFp16InFp16OutConvUnitsPerTile() * 2 ==
        IPUModel("ipu2").createDevice().getTarget().getFp16InFp16OutConvUnitsPerTile());
}

TEST_CASE("IPUModel fields are honoured by the device's target", "[target]") {
  IPUModel model("ipu2");
  model.numIPUs = 2;
  model.tilesPerIPU = 4;
  model.memoryBytesPerTile = 100000;
  model.numWorkerContexts = 5;
  model.tileClockFrequency = 1.0e9;
  model.exchangeBytesPerCycle = 8;
  model.memcpyBytesPerCycle = 16;
  model.minIPUSyncDelay = 0;
  model.relativeSyncDelay = IPUModel::RelativeSyncDelayType::NO_DELAY;
  model.globalSyncCycles = 77;
  model.compileIPUCode = true;
  model.dataPathWidth = 128;
  model.tilesPerSuperTile = 1;
  model.globalExchangeConstraints.emplace_back(1.0e11, std::vector<GlobalExchangeFlow>{{0, 1}, {1, 0}});
  Device device = model.createDevice({}, true, 3);
  const Target &t = device.getTarget();
  CHECK(device.getId() == 3);
  CHECK(t.getNumIPUs() == 2);
  CHECK(t.getTilesPerIPU() == 4);
  CHECK(t.getNumTiles() == 8);
  CHECK(t.getBytesPerTile() == 100000);
  CHECK(t.getNumWorkerContexts() == 5);
  CHECK(t.getTileClockFrequency() == 1.0e9);
  CHECK(t.getExchangeBytesPerCycle() == 8);
  CHECK(t.getMemcpyBytesPerCycle() == 16);
  CHECK(t.getMinIPUSyncDelay() == 0);
  CHECK(t.getMaxIPUSyncDelay() == 0); // NO_DELAY: every tile released together
  CHECK(t.getGlobalSyncCycles() == 77);
  CHECK(t.getImpl().compileIPUCode);
  CHECK(t.getImpl().accurateHalf);
  CHECK(t.getFloatVectorWidth() == 4);
  CHECK(t.getTilesPerSuperTile() == 1);
  const auto constraints = t.getGlobalExchangeConstraints();
  REQUIRE(constraints.size() == 1);
  CHECK(constraints[0].bandwidth == 1.0e11);
  REQUIRE(constraints[0].flows.size() == 2);
  CHECK(constraints[0].flows[1].src == 1);
  CHECK(constraints[0].flows[1].dst == 0);
  // A graph on the model sees its tiles.
  Graph graph(device);
  CHECK(graph.getTarget().getNumTiles() == 8);
}

TEST_CASE("Targets compare by value", "[target]") {
  const Target a = IPUModel("ipu2").createDevice().getTarget();
  Target b = a;
  CHECK(a == b);
  IPUModel other("ipu2");
  other.tilesPerIPU = 16;
  CHECK(a != other.createDevice().getTarget());
  CHECK(a != IPUModel("ipu21").createDevice().getTarget());
  Target moved = std::move(b);
  CHECK(moved == a);
}

TEST_CASE("createIPUTarget and createCPUTarget", "[target]") {
  const Target ipu2 = Target::createIPUTarget(2, "ipu2");
  CHECK(ipu2.getTargetType() == TargetType::IPU);
  CHECK(ipu2.getNumIPUs() == 2);
  CHECK(ipu2.getTilesPerIPU() == 1472);
  CHECK(ipu2.getNumTiles() == 2944);
  CHECK(Target::createIPUTarget(1, "IPU-POD4").getTargetArchString() == "ipu2");
  CHECK(Target::createIPUTarget(1, "ipu1").getTilesPerIPU() == 1216);
  CHECK(Target::createIPUTarget(1, "C2").getTargetArchString() == "ipu1");
  CHECK(Target::createIPUTarget(1, "ipu21").getTileClockFrequency() == Approx(1.85e9));
  const Target small = Target::createIPUTarget(1, 16, "ipu2");
  CHECK(small.getTilesPerIPU() == 16);
  CHECK(small.getBytesPerTile() == 638976);

  const Target cpu = Target::createCPUTarget();
  CHECK(cpu.getTargetType() == TargetType::CPU);
  CHECK(cpu.getNumTiles() == 1);
  CHECK(cpu.getBytesPerTile() >= (std::uint64_t(1) << 30));
  CHECK(Target::createCPUTarget(false, 2).getNumTiles() == 2);
  CHECK(toString(TargetType::IPU_MODEL) == "IPU_MODEL");
  CHECK(toString(TargetType::CPU) == "CPU");
  CHECK(toString(TargetType::IPU) == "IPU");
}

TEST_CASE("Target memory elements", "[target]") {
  const Target t = IPUModel("ipu2").createDevice().getTarget();
  const auto offsets = t.getMemoryElementOffsets();
  REQUIRE(!offsets.empty());
  CHECK(offsets.front() == 0);
  CHECK(std::is_sorted(offsets.begin(), offsets.end()));
  CHECK(offsets.back() < t.getBytesPerTile());
  CHECK(t.getInterleavedMemoryElementIndex() < offsets.size());
}

TEST_CASE("CPU and simulator devices", "[device]") {
  Device cpu = Device::createCPUDevice();
  CHECK(cpu.getTarget().getTargetType() == TargetType::CPU);
  CHECK_FALSE(cpu.supportsRemoteBuffers());
  CHECK(cpu.attach());
  CHECK(cpu.isAttached());
  cpu.detach();
  CHECK_FALSE(cpu.isAttached());

  Device sim = Device::createSimulatorDevice(Target::createIPUTarget(1, 8, "ipu2"));
  CHECK(sim.getTarget().getNumTiles() == 8);
  CHECK(sim.getTarget().getTargetType() == TargetType::IPU);

  Device empty;
  CHECK_FALSE(empty.isAttached());
  empty = IPUModel().createDevice();
  CHECK(empty.getTarget().getNumTiles() == 1472);
  Device moved = std::move(empty);
  CHECK(moved.getTarget().getNumTiles() == 1472);
}

TEST_CASE("DeviceManager lists simulated full-size ipu2 devices", "[device]") {
  auto manager = DeviceManager::createDeviceManager();
  CHECK(manager.getNumDevices() == manager.getDevices().size());
  auto singles = manager.getDevices(TargetType::IPU, 1);
  REQUIRE(!singles.empty());
  std::set<unsigned> ids;
  for (const Device &d : singles) {
    const Target &t = d.getTarget();
    CHECK(t.getTargetType() == TargetType::IPU);
    CHECK(t.getTargetArchString() == "ipu2");
    CHECK(t.getNumIPUs() == 1);
    CHECK(t.getTilesPerIPU() == 1472);
    CHECK(t.getBytesPerTile() == 638976);
    CHECK(ids.insert(d.getId()).second);
  }
  auto pairs = manager.getDevices(TargetType::IPU, 2);
  REQUIRE(!pairs.empty());
  for (const Device &d : pairs)
    CHECK(d.getTarget().getNumIPUs() == 2);
  CHECK(manager.getDevices(TargetType::IPU, 3).empty());
  CHECK(manager.getDevice(singles.front().getId()).getId() == singles.front().getId());
  auto models = manager.getDevices(TargetType::IPU_MODEL, 1);
  REQUIRE(models.size() == 1);
  CHECK(models[0].getTarget().getTargetType() == TargetType::IPU_MODEL);
}

TEST_CASE("A simulated IPU can be attached by one handle at a time", "[device]") {
  auto manager = DeviceManager::createDeviceManager();
  auto devices = manager.getDevices(TargetType::IPU, 1);
  // The usual idiom: attach to the first free device.
  auto it = std::find_if(devices.begin(), devices.end(), [](Device &d) { return d.attach(); });
  REQUIRE(it != devices.end());
  Device device = std::move(*it);
  CHECK(device.isAttached());
  CHECK(device.supportsRemoteBuffers());

  // Another handle to the same IPU is busy, and so is every set containing it.
  Device again = manager.getDevice(device.getId());
  CHECK_FALSE(again.attach());
  CHECK_FALSE(again.isAttached());
  const unsigned ipu = device.getDriverIDs().at(0);
  for (Device &pair : manager.getDevices(TargetType::IPU, 2)) {
    const auto used = pair.getDriverIDs();
    if (std::find(used.begin(), used.end(), ipu) != used.end())
      CHECK_FALSE(pair.attach());
  }

  // A virtual device shares the attachment.
  Device small = device.createVirtualDevice(4);
  CHECK(small.getTarget().getTilesPerIPU() == 4);
  CHECK(small.isAttached());

  device.detach();
  CHECK_FALSE(device.isAttached());
  CHECK(again.attach());
  again.detach();

  // Destroying an attached handle releases its IPUs.
  {
    Device scoped = manager.getDevice(device.getId());
    CHECK(scoped.attach());
  }
  CHECK(again.attach());
  again.detach();
}
