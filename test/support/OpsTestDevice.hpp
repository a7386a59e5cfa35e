// Copyright (c) Aspen contributors.
// Running one operation test on every target kind (STYLE.md habit 7): a
// 4-tile IPUModel, the full 1,472-tile IPUModel, and an executable compiled
// for 4 tiles, serialised, read back and run from the copy. Plus helpers to
// move float data in and out of FLOAT or HALF tensors.
#pragma once

#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace opstest {

enum class DeviceKind { FewTiles, FullChip, Reloaded };

inline std::vector<DeviceKind> allDeviceKinds() {
  return {DeviceKind::FewTiles, DeviceKind::FullChip, DeviceKind::Reloaded};
}

inline const char *kindName(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::FewTiles:
    return "4-tile IPUModel";
  case DeviceKind::FullChip:
    return "1472-tile IPUModel";
  case DeviceKind::Reloaded:
    return "reloaded executable";
  }
  return "?";
}

inline unsigned tilesOf(DeviceKind kind) {
  return kind == DeviceKind::FullChip ? 1472 : 4;
}

/// An IPUModel (ipu2) device with the tiles of `kind`.
inline poplar::Device createDevice(DeviceKind kind) {
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = tilesOf(kind);
  return model.createDevice();
}

/// An engine for `programs` of `graph`, loaded on `device`; for Reloaded the
/// executable goes through serialize/deserialize first.
inline std::unique_ptr<poplar::Engine> createEngine(DeviceKind kind, const poplar::Graph &graph,
                                                    const std::vector<poplar::program::Program> &programs,
                                                    const poplar::Device &device,
                                                    const poplar::OptionFlags &options = {}) {
  std::unique_ptr<poplar::Engine> engine;
  if (kind == DeviceKind::Reloaded) {
    std::stringstream bytes;
    poplar::compileGraph(graph, programs, options).serialize(bytes);
    engine.reset(new poplar::Engine(poplar::Executable::deserialize(bytes)));
  } else {
    engine.reset(new poplar::Engine(graph, programs, options));
  }
  engine->load(device);
  return engine;
}

/// Writes `values` to a FLOAT or HALF tensor's handle.
inline void writeFloats(poplar::Engine &engine, const std::string &handle, const poplar::Type &type,
                        const poplar::Target &target, const std::vector<float> &values) {
  if (type == poplar::HALF) {
    std::vector<std::uint16_t> bits(values.size());
    poplar::copyFloatToDeviceHalf(target, values.data(), bits.data(), values.size());
    engine.writeTensor(handle, bits.data(), bits.data() + bits.size());
  } else {
    engine.writeTensor(handle, values.data(), values.data() + values.size());
  }
}

/// Reads `n` elements of a FLOAT or HALF tensor's handle as floats.
inline std::vector<float> readFloats(poplar::Engine &engine, const std::string &handle,
                                     const poplar::Type &type, const poplar::Target &target, std::size_t n) {
  std::vector<float> values(n);
  if (type == poplar::HALF) {
    std::vector<std::uint16_t> bits(n);
    engine.readTensor(handle, bits.data(), bits.data() + bits.size());
    poplar::copyDeviceHalfToFloat(target, bits.data(), values.data(), n);
  } else {
    engine.readTensor(handle, values.data(), values.data() + values.size());
  }
  return values;
}

/// `x` rounded to the nearest value of `type` (FLOAT or HALF).
inline float roundTo(const poplar::Type &type, const poplar::Target &target, float x) {
  if (type != poplar::HALF)
    return x;
  std::uint16_t bits;
  poplar::copyFloatToDeviceHalf(target, &x, &bits, 1);
  float y;
  poplar::copyDeviceHalfToFloat(target, &bits, &y, 1);
  return y;
}

} // namespace opstest
