// Copyright (c) Aspen contributors.
// Load-time benchmark (issue 14): `Engine` construction + `Engine::load` against
// compiling the same graph, in one run, for an executable just compiled in this
// process and for the same executable read back from its bytes (which is
// validated in full); and building the graph against compiling it.
// Usage: load_bench [vertices...] (default 80000 1000000).
//
// The first load of a size finds fresh tile memory (page faults); the second
// reuses the first engine's (released tile memory is pooled and zeroed where it
// was written), as any process that loads more than one engine does. Both are
// printed ("first load"); the ratio is of the best.
//
// The graph is compile_bench's: four compute sets on the full 1,472-tile
// IPUModel, every vertex scaling 8 floats, every other one reading from the next
// tile; Repeat(10, Execute(cs0..cs3)). Times are the best of two.
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "BenchSupport.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using aspen::bench::Clock;
using aspen::bench::secondsSince;

int main(int argc, char **argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty())
    sizes = {80000, 1000000};
  const std::filesystem::path cacheDir =
      std::filesystem::temp_directory_path() / ("aspen-load-bench-" + std::to_string(::getpid()));
  ::setenv("ASPEN_CACHE_DIR", cacheDir.c_str(), 1);

  IPUModel model("ipu2");
  Device device = model.createDevice();
  std::printf("load_bench: %u tiles; best of 2; ratios are of the compile time in the same run\n",
              device.getTarget().getNumTiles());
  std::printf("%9s %10s %10s %8s | %10s %10s %10s %8s | %10s %10s %10s %8s\n", "vertices", "build ms",
              "compile ms", "build/c", "Engine ms", "first load", "load ms", "ratio", "deser ms", "Engine ms",
              "load ms", "ratio");
  for (std::size_t size : sizes) {
    Graph graph(device.getTarget());
    std::stringstream codelet(aspen::bench::scaleCodelet());
    graph.addCodelets(codelet);
    auto t0 = Clock::now();
    const auto programs = aspen::bench::buildScaleGraph(graph, size);
    const double build = secondsSince(t0);
    double compile = 1e30, engine = 1e30, load = 1e30, deser = 1e30, engine2 = 1e30, load2 = 1e30;
    double firstLoad = 0;
    std::string bytes;
    for (int repeat = 0; repeat < 2; ++repeat) {
      t0 = Clock::now();
      Executable exe = compileGraph(graph, programs);
      compile = std::min(compile, secondsSince(t0));
      if (bytes.empty()) {
        std::stringstream s;
        exe.serialize(s);
        bytes = s.str();
      }
      t0 = Clock::now();
      Engine e(std::move(exe));
      engine = std::min(engine, secondsSince(t0));
      t0 = Clock::now();
      e.load(device);
      const double loaded = secondsSince(t0);
      if (repeat == 0)
        firstLoad = loaded;
      load = std::min(load, loaded);
    }
    for (int repeat = 0; repeat < 2; ++repeat) {
      std::stringstream s(bytes);
      t0 = Clock::now();
      Executable exe = Executable::deserialize(s);
      deser = std::min(deser, secondsSince(t0));
      t0 = Clock::now();
      Engine e(std::move(exe));
      engine2 = std::min(engine2, secondsSince(t0));
      t0 = Clock::now();
      e.load(device);
      load2 = std::min(load2, secondsSince(t0));
    }
    std::printf("%9zu %10.2f %10.2f %8.2f | %10.2f %10.2f %10.2f %7.1f%% | %10.2f %10.2f %10.2f %7.1f%%\n",
                size, build * 1e3, compile * 1e3, build / compile, engine * 1e3, firstLoad * 1e3, load * 1e3,
                100.0 * (engine + load) / compile, deser * 1e3, engine2 * 1e3, load2 * 1e3,
                100.0 * (deser + engine2 + load2) / compile);
    std::fflush(stdout);
  }
  std::printf("columns: building vs compiling (target build/c <= 1) | compiled in this process (Engine + "
              "load; target <= 10%%) | read back from bytes (deserialize + Engine + load)\n");
  std::filesystem::remove_all(cacheDir);
  return 0;
}
