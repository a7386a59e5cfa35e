// Copyright (c) Aspen contributors.
// Issue 21, item 6: which build runs where (docs/codelets.md, "Which build runs where").
// Codelet files with #ifdef __IPU__ paths (test/compat/codelets/IpuPaths.cpp), built with
// popc for IPU targets as Makefiles and PopLibs' CMake call it and with addCodelets: the
// IPUModel runs the cpu build, a DeviceManager IPU device the IPU build (__IPU__ and
// __IPU_ARCH_VERSION__ defined, the worker id read from the worker status register), both
// against a host loop. A library whose IPU build is IPU assembly (isExternalCodelet, inline
// asm) gets a warning from popc and runs its cpu build on the IPU device; linking .gp files
// links their IPU builds.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include "CodeletHarness.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::codelets::Build;
using aspen::test::codelets::DeviceKind;
using aspen::test::codelets::makeDevice;
using aspen::test::codelets::nameOf;
using aspen::test::codelets::popcOk;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

struct ScaleClampResult {
  std::vector<float> in, out;
  std::vector<unsigned> owner;
  unsigned build = 99;
};

constexpr float kA = 1.75f, kB = -0.5f, kLim = 6.0f;

/// ScaleClamp on tile 1 over 36 elements (a multiple of 12, so both paths split alike).
ScaleClampResult runScaleClamp(Graph &graph, Device &device) {
  constexpr unsigned n = 36;
  Tensor in = graph.addVariable(FLOAT, {n}, "in"), out = graph.addVariable(FLOAT, {n}, "out");
  Tensor owner = graph.addVariable(UNSIGNED_INT, {n}, "owner"),
         build = graph.addVariable(UNSIGNED_INT, {}, "build");
  ComputeSet cs = graph.addComputeSet("cs");
  VertexRef v =
      graph.addVertex(cs, "ScaleClamp", {{"in", in}, {"out", out}, {"owner", owner}, {"build", build}});
  graph.setInitialValue(v["a"], kA);
  graph.setInitialValue(v["b"], kB);
  graph.setInitialValue(v["lim"], kLim);
  for (const Tensor &t : {in, out, owner, build})
    graph.setTileMapping(t, 1);
  graph.setTileMapping(v, 1);
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);
  graph.createHostRead("owner", owner);
  graph.createHostRead("build", build);
  Engine engine(graph, program::Execute(cs));
  engine.load(device);
  ScaleClampResult r;
  for (unsigned i = 0; i < n; ++i)
    r.in.push_back(0.375f * static_cast<float>(i) - 5.0f);
  r.out.resize(n);
  r.owner.resize(n);
  engine.writeTensor("in", r.in.data(), r.in.data() + n);
  engine.run(0);
  engine.readTensor("out", r.out.data(), r.out.data() + n);
  engine.readTensor("owner", r.owner.data(), r.owner.data() + n);
  engine.readTensor("build", &r.build, &r.build + 1);
  return r;
}

void checkScaleClamp(const ScaleClampResult &r, unsigned expectedBuild) {
  CHECK(r.build == expectedBuild);
  for (std::size_t i = 0; i < r.in.size(); ++i) {
    INFO("element " << i);
    const float y = kA * r.in[i] + kB; // exact: multiples of 1/64 well inside float's range
    CHECK(r.out[i] == std::min(kLim, std::max(-kLim, y)));
    CHECK(r.owner[i] == (i / 2) % 6);
  }
}

/// One vertex of `type` on tile 0 with fields in, out ({n} floats, in = 1.5 - 0.25 i, and b =
/// 0.5 + 0.125 i when `twoInputs`) and build; returns {out..., build}.
std::vector<float> runOne(Graph &graph, Device &device, const std::string &type, bool twoInputs) {
  constexpr unsigned n = 10;
  std::vector<float> in(n), b(n);
  for (unsigned i = 0; i < n; ++i) {
    in[i] = 1.5f - 0.25f * static_cast<float>(i);
    b[i] = 0.5f + 0.125f * static_cast<float>(i);
  }
  Tensor tin = graph.addConstant(FLOAT, {n}, in.data(), "in");
  Tensor tb = graph.addConstant(FLOAT, {n}, b.data(), "b");
  Tensor out = graph.addVariable(FLOAT, {n}, "out"), build = graph.addVariable(UNSIGNED_INT, {}, "build");
  ComputeSet cs = graph.addComputeSet("cs");
  VertexRef v = twoInputs ? graph.addVertex(cs, type, {{"a", tin}, {"b", tb}, {"out", out}, {"build", build}})
                          : graph.addVertex(cs, type, {{"in", tin}, {"out", out}, {"build", build}});
  for (const Tensor &t : {tin, tb, out, build})
    graph.setTileMapping(t, 0);
  graph.setTileMapping(v, 0);
  graph.createHostRead("out", out);
  graph.createHostRead("build", build);
  Engine engine(graph, program::Execute(cs));
  engine.load(device);
  engine.run(0);
  std::vector<float> result(n);
  unsigned built = 99;
  engine.readTensor("out", result.data(), result.data() + n);
  engine.readTensor("build", &built, &built + 1);
  for (unsigned i = 0; i < n; ++i) {
    const float expected = twoInputs ? std::max(in[i], b[i]) : in[i] * in[i];
    CHECK(result[i] == expected);
  }
  result.push_back(static_cast<float>(built));
  return result;
}

} // namespace

TEST_CASE("targets: the IPUModel runs the cpu build, a DeviceManager IPU device the IPU build",
          "[compat][codelets][targets]") {
  const std::string source = aspen::test::compatCodeletFile("IpuPaths.cpp");
  // popc as Makefiles and PopLibs' CMake call it: IPU and cpu targets, IPU targets only.
  for (const std::string targets : {"--target ipu2,cpu", "-target=ipu2", "--target '[\"ipu2\"]'"}) {
    INFO("popc " << targets);
    aspen::test::TempDir dir;
    const std::string gp = dir.path + "/paths.gp";
    const std::string printed = popcOk("-O2 -Werror " + targets + " " + source + " -o " + gp);
    CHECK_FALSE(contains(printed, "warning")); // the IPU build compiled and runs C++
    for (Build build : {Build::Popc, Build::AddCodelets}) {
      aspen::test::codelets::onBothDevices(
          [&](Graph &g) {
            if (build == Build::Popc)
              REQUIRE(g.addCodelets(gp));
            else
              g.addCodelets(std::vector<std::string>{source}, "-O2 " + targets);
          },
          [&](Graph &g, Device &d, DeviceKind kind) {
            INFO(nameOf(build));
            checkScaleClamp(runScaleClamp(g, d), kind == DeviceKind::IPU ? 2u : 0u);
          });
    }
  }
  SECTION("without an IPU target there is only the cpu build, which both device kinds run") {
    aspen::test::TempDir dir;
    popcOk("-O2 " + source + " -o " + dir.path + "/cpu.gp");
    aspen::test::codelets::onBothDevices(
        [&](Graph &g) { REQUIRE(g.addCodelets(dir.path + "/cpu.gp")); },
        [](Graph &g, Device &d, DeviceKind) { checkScaleClamp(runScaleClamp(g, d), 0u); });
  }
}

TEST_CASE("targets: the worker status register holds the worker context, as the worker id builtin",
          "[compat][codelets][targets]") {
  aspen::test::TempDir dir;
  const std::string gp = dir.path + "/paths.gp";
  popcOk("-O2 --target ipu2,cpu " + aspen::test::compatCodeletFile("IpuPaths.cpp") + " -o " + gp);
  std::vector<std::vector<unsigned>> byDevice;
  aspen::test::codelets::onBothDevices([&](Graph &g) { REQUIRE(g.addCodelets(gp)); },
                                       [&](Graph &graph, Device &device, DeviceKind kind) {
                                         constexpr unsigned vertices = 9;
                                         Tensor out = graph.addVariable(UNSIGNED_INT, {vertices, 2}, "out");
                                         graph.setTileMapping(out, 2);
                                         ComputeSet cs = graph.addComputeSet("cs");
                                         for (unsigned i = 0; i < vertices; ++i) {
                                           VertexRef v = graph.addVertex(cs, "WorkerOf", {{"out", out[i]}});
                                           graph.setTileMapping(v, 2);
                                         }
                                         graph.createHostRead("out", out);
                                         Engine engine(graph, program::Execute(cs));
                                         engine.load(device);
                                         engine.run(0);
                                         std::vector<unsigned> r(2 * vertices);
                                         engine.readTensor("out", r.data(), r.data() + r.size());
                                         std::vector<unsigned> workers;
                                         for (unsigned i = 0; i < vertices; ++i) {
                                           CHECK(r[2 * i] < 6);
                                           CHECK(r[2 * i + 1] == (kind == DeviceKind::IPU ? 2u : 0u));
                                           workers.push_back(r[2 * i]);
                                         }
                                         // 9 worker vertices on 6 contexts: every context used.
                                         for (unsigned w = 0; w < 6; ++w)
                                           CHECK(std::count(workers.begin(), workers.end(), w) >= 1);
                                         byDevice.push_back(workers);
                                       });
  // The same packing, so the register's context is the builtin's, vertex by vertex.
  REQUIRE(byDevice.size() == 2);
  CHECK(byDevice[0] == byDevice[1]);
}

TEST_CASE("targets: an IPU build in IPU assembly runs the cpu build on the IPU device, with a warning",
          "[compat][codelets][targets]") {
  aspen::test::TempDir dir;
  const std::string external = aspen::test::compatCodeletFile("IpuExternal.cpp");
  const std::string inlineAsm = aspen::test::compatCodeletFile("IpuInlineAsm.cpp");
  const std::string printedExternal =
      popcOk("-O2 -Werror --target ipu2,cpu " + external + " -o " + dir.path + "/external.gp");
  CHECK(
      contains(printedExternal, "IpuExternal.cpp: its ipu2 build marks 1 vertex type(s) isExternalCodelet"));
  CHECK(contains(printedExternal, "'Square'"));
  CHECK(contains(printedExternal, "runs its cpu build"));
  const std::string printedAsm = popcOk("-O2 --target ipu2 " + inlineAsm + " -o " + dir.path + "/asm.gp");
  CHECK(contains(printedAsm, "its ipu2 build (__IPU__ defined) does not compile"));
  CHECK(contains(printedAsm, "IpuInlineAsm.cpp:18:"));
  for (const auto &[gp, vertex, twoInputs] :
       {std::tuple<std::string, std::string, bool>{"external.gp", "Square", false},
        {"asm.gp", "Max2", true}}) {
    INFO(gp);
    const std::string path = dir.path + "/" + gp;
    const std::string type = vertex;
    const bool two = twoInputs;
    aspen::test::codelets::onBothDevices(
        [&](Graph &g) { REQUIRE(g.addCodelets(path)); },
        [&](Graph &g, Device &d, DeviceKind) { CHECK(runOne(g, d, type, two).back() == 0.0f); });
  }
}

TEST_CASE("targets: a vertex base chosen by EXTERNAL_CODELET: external in the IPU build, the cpu build runs",
          "[compat][codelets][targets]") {
  // Issue 24, as PopLibs' ConvPartial1x1Out: std::conditional_t<... && EXTERNAL_CODELET,
  // SupervisorVertex, MultiVertex>, compute() IPU assembly in the IPU build.
  aspen::test::TempDir dir;
  const std::string printed =
      popcOk("-O2 -Werror --target ipu2,cpu " + aspen::test::compatCodeletFile("ConditionalBase.cpp") +
             " -o " + dir.path + "/cond.gp");
  CHECK(contains(printed, "ConditionalBase.cpp: its ipu2 build marks 1 vertex type(s) isExternalCodelet"));
  CHECK(contains(printed, "'cond::Twice<float>'"));
  aspen::test::codelets::onBothDevices([&](Graph &g) { REQUIRE(g.addCodelets(dir.path + "/cond.gp")); },
                                       [&](Graph &g, Device &, DeviceKind) {
                                         CHECK(g.hasCodelet("cond::Twice<float>"));
                                         CHECK(g.hasCodelet("cond::Scale<int,cond::Kind::SUPERVISOR>"));
                                         CHECK_FALSE(g.hasCodelet("cond::Helper<float>"));
                                       });
}

TEST_CASE("targets: popc linking .gp files links their IPU builds, the others' cpu builds with them",
          "[compat][codelets][targets]") {
  aspen::test::TempDir dir;
  popcOk("-O2 --target ipu2,cpu " + aspen::test::compatCodeletFile("IpuPaths.cpp") + " -o " + dir.path +
         "/paths.gp");
  popcOk("-O2 --target ipu2,cpu " + aspen::test::compatCodeletFile("IpuExternal.cpp") + " -o " + dir.path +
         "/external.gp");
  popcOk("--target ipu2,cpu -o " + dir.path + "/app.gp " + dir.path + "/paths.gp " + dir.path +
         "/external.gp");
  aspen::test::codelets::onBothDevices([&](Graph &g) { REQUIRE(g.addCodelets(dir.path + "/app.gp")); },
                                       [&](Graph &g, Device &d, DeviceKind kind) {
                                         checkScaleClamp(runScaleClamp(g, d),
                                                         kind == DeviceKind::IPU ? 2u : 0u);
                                       });
  aspen::test::codelets::onBothDevices(
      [&](Graph &g) { REQUIRE(g.addCodelets(dir.path + "/app.gp")); },
      [&](Graph &g, Device &d, DeviceKind) { CHECK(runOne(g, d, "Square", false).back() == 0.0f); });
}
