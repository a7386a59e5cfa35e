// Copyright (c) Aspen contributors.
// The thread scratch area (docs/exchange.md, "Reading in place"): when the host refuses the
// memory for it, the run fails with system_runtime_error naming the compute set, not with
// std::bad_alloc. The refusal is made real by lowering the process's address-space limit
// just before the run (one host thread, so that no thread starts meanwhile).
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>
#include <oneapi/tbb/global_control.h>

#include <sys/resource.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace poplar;
using namespace poplar::program;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ASPEN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ASPEN_TEST_SANITIZED 1
#endif
#endif

namespace {

const char *const kCodelets = R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;
class SumIn : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i];
    *out = s;
    return true;
  }
};
)";

/// The process's mapped address space, in bytes (/proc/self/statm, first field, in pages).
std::uint64_t mappedBytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

} // namespace

TEST_CASE("scratch: no host memory for the thread scratch is a system_runtime_error naming the step",
          "[error][exchange]") {
#ifdef ASPEN_TEST_SANITIZED
  WARN("not run under a sanitizer: its own mappings need the address space the test takes away");
  return;
#endif
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  constexpr unsigned piece = 2u << 20; // floats a source tile holds: the window is 24 MiB
  IPUModel model("ipu2");
  model.tilesPerIPU = 8;
  model.memoryBytesPerTile = 64u << 20;
  Device device = model.createDevice();
  Graph g(device.getTarget());
  std::stringstream codelets(kCodelets);
  g.addCodelets(codelets, "-O2");
  Tensor x = g.addVariable(FLOAT, {3 * piece}, "x");
  for (unsigned s = 0; s < 3; ++s)
    g.setTileMapping(x.slice(s * piece, (s + 1) * piece), s);
  Tensor out = g.addVariable(FLOAT, {1}, "out");
  ComputeSet cs = g.addComputeSet("gatherStep");
  g.setTileMapping(g.addVertex(cs, "SumIn", {{"in", x}, {"out", out[0]}}), 4);
  g.setTileMapping(out, 4);
  g.createHostWrite("x", x);
  g.createHostRead("out", out);
  Engine engine(g, Execute(cs), {{"aspen.compileCache", "false"}});
  engine.load(device);
  {
    const std::vector<float> ones(3 * piece, 1.0f);
    engine.writeTensor("x", ones.data(), ones.data() + ones.size());
  }
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_AS, &saved) == 0);
  rlimit lowered = saved;
  lowered.rlim_cur = mappedBytes() + (8u << 20);
  REQUIRE(::setrlimit(RLIMIT_AS, &lowered) == 0);
  std::string message;
  bool other = false;
  try {
    engine.run(0);
  } catch (const system_runtime_error &e) {
    message = e.what();
  } catch (...) {
    other = true;
  }
  ::setrlimit(RLIMIT_AS, &saved);
  CHECK_FALSE(other);
  CHECK_THAT(message, Catch::Contains("host scratch memory") && Catch::Contains("compute set 'gatherStep'"));
  // With the memory back, the same engine runs the step.
  engine.run(0);
  float sum = 0;
  engine.readTensor("out", &sum, &sum + 1);
  CHECK(sum == float(3 * piece));
}
