// Copyright (c) Aspen contributors.
// Issue 22 item 1: a SupervisorVertex, and SupervisorVertexIf<true>/<false>, compile,
// load and run: from source with Graph::addCodelets, and from a .gp built by popc as a
// Makefile builds it. compute() runs once per vertex (a scale applied twice would show).
// Results are checked against host loops.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

std::string vertexSource() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/vertices/supervisor_vertices.cpp";
}

// Builds and runs the program with codelets from `codelets` (a source or a .gp).
void runSupervisorProgram(const std::string &codelets) {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  graph.addCodelets(codelets);

  const std::size_t n = 10;
  poplar::Tensor in = graph.addVariable(poplar::FLOAT, {n}, "in");
  poplar::Tensor sum = graph.addVariable(poplar::FLOAT, {}, "sum");
  poplar::Tensor a = graph.addVariable(poplar::FLOAT, {n}, "a");
  poplar::Tensor b = graph.addVariable(poplar::FLOAT, {n}, "b");
  graph.setTileMapping(in, 0);
  graph.setTileMapping(sum, 1);
  graph.setTileMapping(a, 2);
  graph.setTileMapping(b, 3);

  poplar::ComputeSet cs = graph.addComputeSet("supervisors");
  poplar::VertexRef s = graph.addVertex(cs, "SupervisorSum", {{"in", in}, {"out", sum}});
  graph.setTileMapping(s, 1);
  poplar::VertexRef va = graph.addVertex(cs, "ScaleInPlace<true>", {{"data", a}});
  graph.setInitialValue(va["scale"], 3.0f);
  graph.setTileMapping(va, 2);
  poplar::VertexRef vb = graph.addVertex(cs, "ScaleInPlace<false>", {{"data", b}});
  graph.setInitialValue(vb["scale"], -2.0f);
  graph.setTileMapping(vb, 3);

  graph.createHostWrite("in", in);
  graph.createHostWrite("a", a);
  graph.createHostWrite("b", b);
  graph.createHostRead("sum", sum);
  graph.createHostRead("a", a);
  graph.createHostRead("b", b);

  poplar::Engine engine(graph, poplar::program::Execute(cs));
  engine.load(device);
  std::vector<float> hostIn(n), hostA(n), hostB(n);
  float expectedSum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    hostIn[i] = 0.5f * static_cast<float>(i) - 1.0f;
    hostA[i] = static_cast<float>(i);
    hostB[i] = 1.0f + static_cast<float>(i);
    expectedSum += hostIn[i];
  }
  engine.writeTensor("in", hostIn.data(), hostIn.data() + n);
  engine.writeTensor("a", hostA.data(), hostA.data() + n);
  engine.writeTensor("b", hostB.data(), hostB.data() + n);
  engine.run(0);

  float gotSum = 0;
  std::vector<float> gotA(n), gotB(n);
  engine.readTensor("sum", &gotSum, &gotSum + 1);
  engine.readTensor("a", gotA.data(), gotA.data() + n);
  engine.readTensor("b", gotB.data(), gotB.data() + n);
  REQUIRE(gotSum == expectedSum);
  for (std::size_t i = 0; i < n; ++i) {
    REQUIRE(gotA[i] == hostA[i] * 3.0f);
    REQUIRE(gotB[i] == hostB[i] * -2.0f);
  }
}

} // namespace

TEST_CASE("SupervisorVertex and SupervisorVertexIf run from source", "[compat][supervisor]") {
  runSupervisorProgram(vertexSource());
}

TEST_CASE("SupervisorVertex and SupervisorVertexIf run from a popc-built .gp", "[compat][supervisor]") {
  const char *sdk = std::getenv("ASPEN_SDK_DIR");
  REQUIRE(sdk != nullptr);
  char dirTemplate[] = "/tmp/aspen-supervisor-XXXXXX";
  const std::string dir = ::mkdtemp(dirTemplate);
  const std::string gp = dir + "/supervisor.gp";
  const std::string command = std::string(sdk) + "/bin/popc -O2 " + vertexSource() + " -o " + gp;
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  runSupervisorProgram(gp);
  std::system(("rm -rf '" + dir + "'").c_str());
}
