// Copyright (c) Aspen contributors.
// Issue 16 (hardening), unit side: the package version reaches the binary and every
// executable; the hash accepts empty input with a null pointer (UBSan: memcpy from null);
// the half-precision test reference agrees with _Float16 where the compiler has it; the
// compile thread's stack per level of program nesting, measured.
#include "HalfReference.hpp"

#include "Compiler.hpp"
#include "exe/BuildInfo.hpp"
#include "exe/Hash.hpp"
#include "exe/Serialize.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>

#include <catch2/catch.hpp>

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

#ifndef ASPEN_TEST_PROJECT_VERSION
#error "ASPEN_TEST_PROJECT_VERSION must be defined by test/hardening.cmake"
#endif

namespace {

Device smallDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  return model.createDevice();
}

/// The serialized bytes of a small executable compiled by compileGraph.
std::string serializedExecutable() {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  g.setTileMapping(x, 0);
  Tensor c = g.addConstant<float>(FLOAT, {4}, 2.0f, "two");
  g.setTileMapping(c, 0);
  Executable exe = compileGraph(g, {Sequence{Copy(c, x)}}, {{"aspen.compileCache", "false"}});
  std::ostringstream out;
  exe.serialize(out);
  return out.str();
}

} // namespace

TEST_CASE("hardening: the package version reaches the binary and every executable", "[hardening]") {
  // It used to be "Aspen unknown": the ASPEN_VERSION definition never reached the compile.
  CHECK(aspen::exe::packageVersion() == std::string("Aspen ") + ASPEN_TEST_PROJECT_VERSION);
  const std::string bytes = serializedExecutable();
  CHECK(bytes.find(aspen::exe::packageVersion()) != std::string::npos);
  CHECK(bytes.find("Aspen unknown") == std::string::npos);
}

TEST_CASE("hardening: hashing no bytes from a null pointer is hashing nothing", "[hardening]") {
  // An empty initial value or an empty .gp hands the hash (data() == nullptr, 0): memcpy from
  // a null pointer is undefined even for 0 bytes (UBSan: "null pointer passed as argument 2").
  std::vector<std::uint8_t> empty;
  const auto *none = empty.data();
  CHECK(aspen::exe::Hash64(7).update(none, 0).digest() == aspen::exe::Hash64(7).digest());
  const std::uint8_t some[5] = {1, 2, 3, 4, 5};
  CHECK(aspen::exe::Hash64(7).update(some, 3).update(none, 0).update(some + 3, 2).digest() ==
        aspen::exe::hash64(some, 5, 7));
  aspen::exe::Hash128 a, b;
  a.update(none, 0).string("");
  b.string("");
  CHECK(a.hex() == b.hex());
}

TEST_CASE("hardening: the software half reference agrees with _Float16", "[hardening][half]") {
  // test/support/HalfReference.hpp stands in for _Float16 on compilers without it (clang 14).
  if (!aspen::test::kHaveFloat16) {
    WARN("this compiler has no _Float16: the software reference is the only one");
    return;
  }
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const double v = aspen::test::referenceHalfValue(h);
    if (std::isnan(v)) {
      REQUIRE(std::isnan(aspen::test::softwareHalfValue(h)));
      continue;
    }
    REQUIRE(aspen::test::softwareHalfValue(h) == v);
    REQUIRE(aspen::test::softwareHalfBits(v) == h);
  }
  std::mt19937_64 rng(16);
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 200000; ++i) {
    const double d = std::ldexp(mantissa(rng), exponent(rng)) * ((rng() & 1) ? -1 : 1);
    INFO("double " << d);
    REQUIRE(aspen::test::softwareHalfBits(d) == aspen::test::referenceHalfBits(d));
  }
}

namespace {

/// `Sequence(prog, step)` in a loop: every level nests the previous one.
Sequence nested(Graph &g, const Tensor &x, std::size_t depth) {
  Tensor seven = g.addConstant<int>(INT, {}, 7, "seven");
  g.setTileMapping(seven, 0);
  Sequence prog{Copy(seven, x)};
  for (std::size_t i = 0; i < depth; ++i)
    prog = Sequence(prog, WriteUndef(x.slice(0, 0)));
  return prog;
}

/// The bytes of stack that compiling (with the compile cache on: hashing, validation,
/// lowering all walk the tree) a program nested `depth` deep touches, measured on a
/// thread whose stack is pre-filled with a pattern.
std::size_t compileStackUse(std::size_t depth) {
  constexpr std::size_t kStack = std::size_t(256) << 20;
  struct Job {
    std::size_t depth;
    bool ok = false;
  } job{depth};
  std::vector<std::uint8_t> stack(kStack, 0xa5);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack.data(), stack.size());
  pthread_t thread;
  const int failed = pthread_create(
      &thread, &attr,
      [](void *arg) -> void * {
        auto *j = static_cast<Job *>(arg);
        Device device = smallDevice();
        Graph g(device.getTarget());
        Tensor x = g.addVariable(INT, {1}, "x");
        g.setTileMapping(x, 0);
        Sequence prog = nested(g, x, j->depth);
        Executable exe = compileGraph(g, {prog}, {{"aspen.compileCache", "true"}});
        j->ok = true;
        return nullptr;
      },
      &job);
  pthread_attr_destroy(&attr);
  REQUIRE(failed == 0);
  pthread_join(thread, nullptr);
  REQUIRE(job.ok);
  // The stack grows down: the lowest byte not holding the pattern is the deepest touched.
  const auto touched =
      std::find_if(stack.begin(), stack.end(), [](std::uint8_t b) { return b != 0xa5; }) - stack.begin();
  return stack.size() - static_cast<std::size_t>(touched);
}

} // namespace

TEST_CASE("hardening: the compile thread's stack per level of program nesting, measured", "[hardening]") {
  // compileGraph sizes the stack of the thread that compiles deep programs as
  // kDeepProgramStackBase + depth * kStackBytesPerLevel; the 100,000-deep program
  // overflowed it under ASan, whose redzones make every frame larger.
  const std::size_t shallow = compileStackUse(200);
  const std::size_t deep = compileStackUse(1800); // below kDeepProgramLevels: runs on our thread
  REQUIRE(deep > shallow);
  const double perLevel = double(deep - shallow) / 1600.0;
  WARN("compile stack: " << perLevel << " bytes per level of nesting (" << shallow << " bytes at 200 levels, "
                         << deep << " at 1800)");
  CHECK(perLevel * 1.5 <= double(aspen::compiler::kStackBytesPerLevel));
}
