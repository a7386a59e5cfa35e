// Copyright (c) Aspen contributors.
// Compile-time benchmark: generated graphs on the full 1,472-tile IPUModel with
// 10k, 100k and 1M vertices; loading a cached executable versus compiling it;
// peak memory. Usage: compile_bench [vertices...] (default 10000 100000 1000000).
//
// Each graph: four compute sets; every vertex scales 8 floats of its tile's
// input into its tile's output; every other vertex reads its input from the
// next tile (so the exchange planner has work), the rest point straight at it.
// The program is Repeat(10, Execute(cs0..cs3)). Compile times are the best of three.
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "BenchSupport.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using aspen::bench::Clock;
using aspen::bench::peakRssMiB;
using aspen::bench::rssMiB;
using aspen::bench::secondsSince;

int main(int argc, char **argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty())
    sizes = {10000, 100000, 1000000};

  const std::filesystem::path cacheDir =
      std::filesystem::temp_directory_path() / ("aspen-compile-bench-" + std::to_string(::getpid()));
  ::setenv("ASPEN_CACHE_DIR", cacheDir.c_str(), 1);

  IPUModel model("ipu2");
  Device device = model.createDevice();
  std::printf("compile_bench: %u tiles, %u hardware threads\n", device.getTarget().getNumTiles(),
              std::max(1u, static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN))));
  std::printf("%10s %10s %10s %8s %10s %10s %14s %14s\n", "vertices", "build s", "compile s", "build/c",
              "exe MiB", "us/vertex", "peak RSS MiB", "compile +MiB");
  std::vector<double> compileSeconds(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Graph graph(device.getTarget());
    std::stringstream codelet(aspen::bench::scaleCodelet());
    graph.addCodelets(codelet);
    auto t0 = Clock::now();
    const auto programs = aspen::bench::buildScaleGraph(graph, sizes[i]);
    const double build = secondsSince(t0);
    // The best of three compiles (the machine is shared); peak memory from the first.
    const double rssBefore = rssMiB();
    t0 = Clock::now();
    Executable exe = compileGraph(graph, programs);
    compileSeconds[i] = secondsSince(t0);
    const double compilePeak = peakRssMiB();
    for (int repeat = 0; repeat < 2; ++repeat) {
      t0 = Clock::now();
      Executable again = compileGraph(graph, programs);
      compileSeconds[i] = std::min(compileSeconds[i], secondsSince(t0));
    }
    std::stringstream bytes;
    exe.serialize(bytes);
    // Sizes run in increasing order, so the peak so far is this compile's peak.
    std::printf("%10zu %10.3f %10.3f %8.2f %10.1f %10.2f %14.0f %14.0f\n", sizes[i], build, compileSeconds[i],
                build / compileSeconds[i], static_cast<double>(bytes.str().size()) / (1 << 20),
                compileSeconds[i] * 1e6 / double(sizes[i]), compilePeak, compilePeak - rssBefore);
    std::fflush(stdout);

    if (sizes[i] == 100000) {
      // Cached: the first compile stores, the second loads (key hashing + read + deserialise).
      const OptionFlags cached{{"aspen.compileCache", "true"}};
      compileGraph(graph, programs, cached);
      t0 = Clock::now();
      Executable hit = compileGraph(graph, programs, cached);
      const double load = secondsSince(t0);
      t0 = Clock::now();
      Executable fromStream = Executable::deserialize(bytes);
      const double deserialize = secondsSince(t0);
      std::printf("  100k: cached compile %.1f ms (%.1fx faster than compiling), deserialize alone %.1f ms\n",
                  load * 1e3, compileSeconds[i] / load, deserialize * 1e3);
    }
  }
  for (std::size_t i = 0; i < sizes.size(); ++i)
    for (std::size_t j = 0; j < sizes.size(); ++j)
      if (sizes[i] == 1000000 && sizes[j] == 100000)
        std::printf("ratio compile(1M) / compile(100k) = %.2f (10.0 = linear)\n",
                    compileSeconds[i] / compileSeconds[j]);
  std::filesystem::remove_all(cacheDir);
  return 0;
}
