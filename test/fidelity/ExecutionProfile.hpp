// Copyright (c) Aspen contributors.
// The fidelity tests' one way to read simulated cycles: run the program once with the
// execution profile written, and return profile.json (docs/profile-format.md).
#pragma once

#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>

namespace fidelity {

/// Compiles `prog`, runs it once on `device` and returns the profile the run wrote.
inline nlohmann::json runAndReadProfile(poplar::Graph &graph, const poplar::program::Program &prog,
                                        poplar::Device &device) {
  char dirTemplate[] = "/tmp/aspen-fidelity-XXXXXX";
  const std::string dir = ::mkdtemp(dirTemplate);
  {
    poplar::Engine engine(graph, prog,
                          {{"autoReport.outputExecutionProfile", "true"}, {"autoReport.directory", dir}});
    engine.load(device);
    engine.run(0);
  }
  std::ifstream in(dir + "/profile.json");
  REQUIRE(in.good());
  const nlohmann::json profile = nlohmann::json::parse(in);
  std::system(("rm -rf '" + dir + "'").c_str());
  return profile;
}

/// Each vertex type's simulated cycles per executed instance, from the profile's execution
/// part (types that did not run are left out).
inline std::map<std::string, double> cyclesPerInstance(const nlohmann::json &profile) {
  std::map<std::string, double> out;
  for (const auto &type : profile.at("execution").at("vertexTypes")) {
    const double instances = type.at("instancesExecuted").get<double>();
    if (instances > 0)
      out[type.at("name").get<std::string>()] = type.at("cycles").get<double>() / instances;
  }
  return out;
}

/// Each vertex type's simulated cycles per instance after `build` runs once on a one-tile ipu2
/// IPUModel whose graph `addCodelets` prepared (the library vertex-estimate tests' one setup).
inline std::map<std::string, double>
oneTileVertexCycles(const std::function<void(poplar::Graph &)> &addCodelets,
                    const std::function<void(poplar::Graph &, poplar::program::Sequence &)> &build) {
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = 1;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  addCodelets(graph);
  poplar::program::Sequence prog;
  build(graph, prog);
  return cyclesPerInstance(runAndReadProfile(graph, prog, device));
}

/// The simulated compute cycles (the profile's execution part) of the program `build` makes on a
/// one-tile ipu2 IPUModel whose graph has the custom codelet source `codelet` added at -O2 (the
/// counted-loop tests' one setup: their per-iteration slope is the difference of two such runs).
inline double
oneTileComputeCycles(const char *codelet,
                     const std::function<void(poplar::Graph &, poplar::program::Sequence &)> &build) {
  poplar::IPUModel model("ipu2");
  model.tilesPerIPU = 1;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  std::stringstream source(codelet);
  graph.addCodelets(source, "-O2");
  poplar::program::Sequence prog;
  build(graph, prog);
  return runAndReadProfile(graph, prog, device).at("execution").at("cycles").at("compute").get<double>();
}

/// Checks that `vertex` ran and that its simulated cycles are within 10% of `popLibs`, the
/// figure PopLibs' estimator gives for the same work (issue 23 item 2); prints the ratio.
inline void checkAgainstPopLibs(const std::map<std::string, double> &got, const std::string &vertex,
                                const std::string &what, double popLibs) {
  INFO("vertex " << vertex << (what.empty() ? "" : " (" + what + ")"));
  if (!got.count(vertex))
    for (const auto &entry : got)
      std::printf("  profiled: %s\n", entry.first.c_str());
  REQUIRE(got.count(vertex) == 1);
  const double aspen = got.at(vertex);
  std::printf("%-40s %-30s PopLibs %8.0f  Aspen %8.0f  ratio %.3f\n", vertex.c_str(), what.c_str(), popLibs,
              aspen, aspen / popLibs);
  CHECK(aspen / popLibs > 0.9);
  CHECK(aspen / popLibs < 1.1);
}

} // namespace fidelity
