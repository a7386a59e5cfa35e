// Copyright (c) Aspen contributors.
// Shared by the runtime's end-to-end tests: a small IPUModel device and a graph
// with the test codelets (test/runtime/runtime_codelets.cpp) added.
#pragma once

#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cstdlib>
#include <string>

namespace runtime_test {

inline std::string codeletPath() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  return std::string(root ? root : ASPEN_RUNTIME_TEST_SOURCE_DIR) + "/test/runtime/runtime_codelets.cpp";
}

inline poplar::Device makeDevice(unsigned tiles = 4, unsigned bytesPerTile = 0) {
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = tiles;
  if (bytesPerTile)
    model.memoryBytesPerTile = bytesPerTile;
  return model.createDevice();
}

/// A device and a graph for it with the test codelets added.
struct TestGraph {
  explicit TestGraph(unsigned tiles = 4, unsigned bytesPerTile = 0)
      : device(makeDevice(tiles, bytesPerTile)), graph(device.getTarget()) {
    graph.addCodelets(codeletPath(), poplar::CodeletFileType::Auto, "-O2");
  }
  poplar::Device device;
  poplar::Graph graph;
};

} // namespace runtime_test
