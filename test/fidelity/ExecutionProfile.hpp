// Copyright (c) Aspen contributors.
// The fidelity tests' one way to read simulated cycles: run the program once with the
// execution profile written, and return profile.json (docs/profile-format.md).
#pragma once

#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
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

} // namespace fidelity
