// Copyright (c) Aspen contributors.
// The client tests of codelets written as IPU users write them (test/compat/codelets_*.cpp,
// issue 21): each builds codelet files with popc as a Makefile calls it and with
// Graph::addCodelets, and runs them on the IPUModel and on a DeviceManager IPU device.
#pragma once

#include <poplar/DeviceManager.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Target.hpp>

#include "CommandSupport.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace aspen::test::codelets {

enum class DeviceKind { IPUModel, IPU };
enum class Build { Popc, AddCodelets };

inline const char *nameOf(DeviceKind kind) {
  return kind == DeviceKind::IPUModel ? "IPUModel" : "IPU device";
}
inline const char *nameOf(Build build) {
  return build == Build::Popc ? "popc .gp" : "addCodelets";
}

/// An ipu2 IPUModel of 4 tiles, or an attached DeviceManager IPU device (which stands for
/// hardware: it runs a library's IPU build, docs/codelets.md).
inline poplar::Device makeDevice(DeviceKind kind) {
  if (kind == DeviceKind::IPUModel) {
    poplar::IPUModel model("ipu2");
    model.tilesPerIPU = 4;
    return model.createDevice();
  }
  poplar::DeviceManager manager = poplar::DeviceManager::createDeviceManager();
  for (poplar::Device &d : manager.getDevices(poplar::TargetType::IPU, 1))
    if (d.attach())
      return std::move(d);
  FAIL("no DeviceManager IPU device could be attached");
  return poplar::Device();
}

/// `popc <args>`, which must succeed; returns what it printed.
inline std::string popcOk(const std::string &args) {
  const CommandResult r = runCommand(popc() + " " + args);
  INFO("popc " << args << "\n" << r.output);
  REQUIRE(r.status == 0);
  return r.output;
}

/// The paths of codelet files of test/compat/codelets/.
inline std::vector<std::string> codeletFiles(const std::vector<std::string> &names) {
  std::vector<std::string> paths;
  for (const std::string &n : names)
    paths.push_back(compatCodeletFile(n));
  return paths;
}

/// Builds `sources` (test/compat/codelets/) with popc as a Makefile does
/// (`popc <flags> <sources> -o codelets.gp`) and runs `body` on a graph holding them, for
/// each build (the .gp; addCodelets of the sources with the same flags) and each device kind.
inline void onEveryBuildAndDevice(const std::vector<std::string> &sources, const std::string &flags,
                                  const std::function<void(poplar::Graph &, poplar::Device &)> &body) {
  TempDir dir;
  const std::string gp = dir.path + "/codelets.gp";
  std::string args = flags;
  for (const std::string &s : codeletFiles(sources))
    args += " " + s;
  popcOk(args + " -o " + gp);
  for (Build build : {Build::Popc, Build::AddCodelets}) {
    for (DeviceKind kind : {DeviceKind::IPUModel, DeviceKind::IPU}) {
      INFO(nameOf(build) << " on " << nameOf(kind));
      poplar::Device device = makeDevice(kind);
      poplar::Graph graph(device.getTarget());
      if (build == Build::Popc)
        REQUIRE(graph.addCodelets(gp));
      else
        graph.addCodelets(codeletFiles(sources), flags);
      body(graph, device);
    }
  }
}

/// Runs `body` on a fresh graph of each device kind, `addCodelets` first.
inline void onBothDevices(const std::function<void(poplar::Graph &)> &addCodelets,
                          const std::function<void(poplar::Graph &, poplar::Device &, DeviceKind)> &body) {
  for (DeviceKind kind : {DeviceKind::IPUModel, DeviceKind::IPU}) {
    INFO(nameOf(kind));
    poplar::Device device = makeDevice(kind);
    poplar::Graph graph(device.getTarget());
    addCodelets(graph);
    body(graph, device, kind);
  }
}

/// The value of `x` rounded to half (ties to even), on the host.
inline float roundHalf(const poplar::Target &target, float x) {
  std::uint16_t bits;
  poplar::copyFloatToDeviceHalf(target, &x, &bits, 1);
  float back;
  poplar::copyDeviceHalfToFloat(target, &bits, &back, 1);
  return back;
}

} // namespace aspen::test::codelets
