// Copyright (c) Aspen contributors.
// Counted loops whose count is added once before they run (issue 28; CycleCountPass.cpp,
// planHoisting; docs/cost-model.md, "Loops counted before they run"): the counts are the ones
// of every block adding its own cost as it runs, bit for bit. The reference is the same
// codelets compiled with ASPEN_CYCLECOUNT_VERIFY_HOIST=1, whose functions count both ways,
// report the per-block count and trap where the two differ; loops the rule leaves alone (an
// early exit, a conditional body, an outer loop) are compiled too.
#include "CommandSupport.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

const char *const kLoops = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;

class FixedTrips : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    for (unsigned i = 0; i < 64; ++i)
      out[i] = a[i] * 2.0f + 1.0f;
    return true;
  }
};
class RuntimeTrips : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    const unsigned n = a.size();
    for (unsigned i = 0; i < n; ++i)
      out[i] = a[i] * a[i] + 0.5f;
    return true;
  }
};
class Strided : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    const unsigned n = a.size();
    for (unsigned i = 0; i < n; i += 3)
      out[i] = a[i] - 1.0f;
    return true;
  }
};
class WideIndex : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    const unsigned long long n = a.size();
    int sum = 0;
    for (unsigned long long i = 0; i < n; ++i) {
      out[i] = a[i] / 3.0f;
      sum += int(a[i]);
    }
    out[0] += float(sum);
    return true;
  }
};
class EarlyExit : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    const unsigned n = a.size();
    for (unsigned i = 0; i < n; ++i) {
      if (a[i] < 0.0f) {
        out[0] = float(i);
        return true;
      }
      out[i] = a[i];
    }
    return true;
  }
};
class Nested : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  Input<unsigned> cols;
  bool compute() {
    const unsigned c = *cols, rows = a.size() / c;
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned j = 0; j < c; ++j)
        out[r * c + j] = a[r * c + j] + a[j];
    return true;
  }
};
class Triangle : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    const unsigned n = a.size();
    for (unsigned r = 0; r < n; ++r) {
      float s = 0.0f;
      for (unsigned j = 0; j <= r; ++j)
        s += a[j];
      out[r] = s;
    }
    return true;
  }
};
class Conditional : public Vertex {
public:
  Input<Vector<float>> a;
  Output<Vector<float>> out;
  bool compute() {
    const unsigned n = a.size();
    for (unsigned i = 0; i < n; ++i) {
      if (a[i] < 0.0f)
        out[i] = a[i] / 7.0f;
      else
        out[i] = a[i] * 3.0f;
    }
    return true;
  }
};
class ConditionalStore : public Vertex {
public:
  InOut<Vector<float>> out;
  bool compute() {
    const unsigned n = out.size();
    for (unsigned i = 0; i < n; ++i)
      if (out[i] < 0.0f)
        out[i] = 0.0f;
    return true;
  }
};
)";

const char *const kTypes[] = {"FixedTrips", "RuntimeTrips", "Strided",     "WideIndex",       "EarlyExit",
                              "Nested",     "Triangle",     "Conditional", "ConditionalStore"};

/// Each vertex type once, on its own tile, over `n` elements (FixedTrips: 64 at least); returns
/// the counted cycles of each type.
std::map<std::string, std::uint64_t> countedCycles(const std::string &source, unsigned n) {
  const unsigned types = sizeof(kTypes) / sizeof(kTypes[0]);
  IPUModel model("ipu2");
  model.tilesPerIPU = types;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  std::stringstream in(source);
  graph.addCodelets(in, "-O3");
  ComputeSet cs = graph.addComputeSet("loops");
  for (unsigned t = 0; t < types; ++t) {
    const std::string type = kTypes[t];
    const unsigned size = type == "FixedTrips" ? std::max(n, 64u) : n;
    std::vector<float> values(size);
    for (unsigned i = 0; i < size; ++i) // a few negatives, the first one late in long inputs
      values[i] = (i % 97 == 96 || (i % 11 == 10 && i > 40)) ? -float(i) : float(i) * 0.25f;
    Tensor a = graph.addConstant(FLOAT, {size}, values.data(), "a");
    Tensor out = graph.addVariable(FLOAT, {size}, "out");
    graph.setTileMapping(a, t);
    graph.setTileMapping(out, t);
    VertexRef v = graph.addVertex(cs, type);
    if (type == "ConditionalStore") {
      graph.setInitialValue(out, poplar::ArrayRef<float>(values));
      graph.connect(v["out"], out);
    } else {
      graph.connect(v["a"], a);
      graph.connect(v["out"], out);
    }
    if (type == "Nested") {
      Tensor cols = graph.addConstant(UNSIGNED_INT, {}, n % 7 == 0 ? 7u : 5u, "cols");
      graph.setTileMapping(cols, t);
      graph.connect(v["cols"], cols);
    }
    graph.setTileMapping(v, t);
  }
  aspen::test::TempDir dir;
  const OptionFlags options{{"autoReport.outputExecutionProfile", "true"},
                            {"autoReport.outputGraphProfile", "false"},
                            {"autoReport.outputHtml", "false"},
                            {"autoReport.directory", dir.path}};
  {
    Engine engine(graph, Execute(cs), options);
    engine.load(device);
    engine.run(0);
  }
  std::ifstream profileIn(dir.path + "/profile.json");
  REQUIRE(profileIn.good());
  const nlohmann::json profile = nlohmann::json::parse(profileIn);
  std::map<std::string, std::uint64_t> cycles;
  for (const auto &t : profile.at("execution").at("vertexTypes")) {
    REQUIRE(t.at("instancesCounted").get<std::uint64_t>() == 1);
    cycles[t.at("name").get<std::string>()] = t.at("cycles").get<std::uint64_t>();
  }
  return cycles;
}

/// The codelets compiled with ASPEN_CYCLECOUNT_VERIFY_HOIST=1 (a source of its own, so that no
/// cached library compiled without it is used).
std::map<std::string, std::uint64_t> perBlockCycles(unsigned n) {
  const char *was = std::getenv("ASPEN_CYCLECOUNT_VERIFY_HOIST");
  const std::string saved = was ? was : "";
  ::setenv("ASPEN_CYCLECOUNT_VERIFY_HOIST", "1", 1);
  std::map<std::string, std::uint64_t> cycles;
  try {
    cycles = countedCycles(std::string(kLoops) + "\n// compiled with ASPEN_CYCLECOUNT_VERIFY_HOIST=1\n", n);
  } catch (...) {
    was ? ::setenv("ASPEN_CYCLECOUNT_VERIFY_HOIST", saved.c_str(), 1)
        : ::unsetenv("ASPEN_CYCLECOUNT_VERIFY_HOIST");
    throw;
  }
  was ? ::setenv("ASPEN_CYCLECOUNT_VERIFY_HOIST", saved.c_str(), 1)
      : ::unsetenv("ASPEN_CYCLECOUNT_VERIFY_HOIST");
  return cycles;
}

} // namespace

TEST_CASE("Loops counted before they run count what their blocks count as they run", "[counted][cycles]") {
  std::map<unsigned, std::map<std::string, std::uint64_t>> counted;
  for (unsigned n : {1u, 2u, 7u, 64u, 100u, 1001u}) {
    INFO("n = " << n);
    counted[n] = countedCycles(kLoops, n);
    const std::map<std::string, std::uint64_t> reference = perBlockCycles(n);
    for (const char *type : kTypes) {
      INFO(type << ": " << counted[n].at(type) << " counted, " << reference.at(type) << " by the blocks");
      REQUIRE(counted[n].at(type) == reference.at(type));
    }
  }
  // The loops with one block an iteration cost the same for every element: their counts are
  // affine in the trip count (reference rule: trips x cost of an iteration + a constant).
  for (const char *type : {"RuntimeTrips", "WideIndex"}) {
    INFO(type);
    const std::uint64_t c2 = counted[2].at(type), c64 = counted[64].at(type), c1001 = counted[1001].at(type);
    REQUIRE((c64 - c2) % 62 == 0);
    REQUIRE(c1001 - c64 == (c64 - c2) / 62 * (1001 - 64));
  }
  REQUIRE(counted[1].at("FixedTrips") == counted[1001].at("FixedTrips"));
}
