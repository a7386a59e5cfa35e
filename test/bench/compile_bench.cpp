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

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using Clock = std::chrono::steady_clock;

namespace {

const char *kCodelet = R"(
#include <poplar/Vertex.hpp>
class BenchScale : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> in;
  poplar::Output<poplar::Vector<float>> out;
  float k;
  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = in[i] * k;
    return true;
  }
};
)";

double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Resident memory now (VmRSS), MiB.
double rssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  return 0;
}

/// Peak resident memory of the process so far, MiB.
double peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

constexpr unsigned kComputeSets = 4;
constexpr unsigned kElems = 8;

/// Builds the benchmark graph with `numVertices` vertices.
std::vector<Program> buildGraph(Graph &graph, std::size_t numVertices) {
  const unsigned tiles = graph.getTarget().getNumTiles();
  const std::size_t perTileCs = (numVertices + tiles * kComputeSets - 1) / (tiles * kComputeSets);
  // Per tile: one input and one output variable of perTileCs * kComputeSets * kElems floats.
  const std::size_t perTile = perTileCs * kComputeSets * kElems;
  Tensor in = graph.addVariable(FLOAT, {tiles, perTile}, "in");
  Tensor out = graph.addVariable(FLOAT, {tiles, perTile}, "out");
  for (unsigned t = 0; t < tiles; ++t) {
    graph.setTileMapping(in[t], t);
    graph.setTileMapping(out[t], t);
  }
  std::vector<ComputeSet> css;
  for (unsigned c = 0; c < kComputeSets; ++c)
    css.push_back(graph.addComputeSet("cs" + std::to_string(c)));
  std::size_t made = 0;
  for (std::size_t k = 0; k < perTileCs && made < numVertices; ++k) {
    for (unsigned c = 0; c < kComputeSets && made < numVertices; ++c) {
      for (unsigned t = 0; t < tiles && made < numVertices; ++t, ++made) {
        const std::size_t at = (k * kComputeSets + c) * kElems;
        const unsigned src = (made % 2) ? (t + 1) % tiles : t;
        VertexRef v =
            graph.addVertex(css[c], "BenchScale",
                            {{"in", in[src].slice(at, at + kElems)}, {"out", out[t].slice(at, at + kElems)}});
        graph.setInitialValue(v["k"], 0.5f);
        graph.setTileMapping(v, t);
      }
    }
  }
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);
  Sequence body;
  for (ComputeSet cs : css)
    body.add(Execute(cs));
  return {Repeat(10, body)};
}

} // namespace

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
    std::stringstream codelet(kCodelet);
    graph.addCodelets(codelet);
    auto t0 = Clock::now();
    const auto programs = buildGraph(graph, sizes[i]);
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
