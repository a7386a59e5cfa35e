// Sample 8: compile once, save the executable; load and run it in a second
// process that builds no graph. The codelets come precompiled from popc.
//
//   save_and_load compile poly_codelets.gp poly.exe   # builds, compiles, saves
//   save_and_load run poly.exe                        # loads and runs only
//
// (Poplar refuses to serialise executables for its IPU model; Aspen can.)
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {
const unsigned kNumTiles = 64, kPerTile = 256;
const float kA = 0.5f, kB = -2.0f, kC = 3.0f;

IPUModel makeModel() {
  IPUModel model("ipu2");
  model.tilesPerIPU = kNumTiles;
  return model;
}

int compile(const char *codelets, const char *exePath) {
  IPUModel model = makeModel();
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(codelets);
  Tensor x = graph.addVariable(FLOAT, {kNumTiles, kPerTile}, "x");
  Tensor y = graph.addVariable(FLOAT, {kNumTiles, kPerTile}, "y");
  ComputeSet cs = graph.addComputeSet("polynomial");
  for (unsigned t = 0; t < kNumTiles; ++t) {
    graph.setTileMapping(x[t], t);
    graph.setTileMapping(y[t], t);
    VertexRef v = graph.addVertex(cs, "Polynomial", {{"x", x[t]}, {"y", y[t]}});
    graph.setInitialValue(v["a"], kA);
    graph.setInitialValue(v["b"], kB);
    graph.setInitialValue(v["c"], kC);
    graph.setTileMapping(v, t);
  }
  DataStream in = graph.addHostToDeviceFIFO("x-in", FLOAT, kNumTiles * kPerTile);
  DataStream out = graph.addDeviceToHostFIFO("y-out", FLOAT, kNumTiles * kPerTile);
  Sequence prog({Copy(in, x), Execute(cs), Copy(y, out)});

  Executable exe = compileGraph(graph, {prog});
  std::ofstream file(exePath, std::ios::binary);
  exe.serialize(file);
  std::cout << "saved executable to " << exePath << "\n";
  return file.good() ? EXIT_SUCCESS : EXIT_FAILURE;
}

int run(const char *exePath) {
  std::ifstream file(exePath, std::ios::binary);
  Executable exe = Executable::deserialize(file);
  IPUModel model = makeModel();
  Device device = model.createDevice();
  Engine engine(std::move(exe));
  engine.load(device);
  std::vector<float> x(kNumTiles * kPerTile), y(x.size());
  for (unsigned i = 0; i < x.size(); ++i)
    x[i] = float(i % 97) * 0.25f - 10.0f;
  engine.connectStream("x-in", x.data());
  engine.connectStream("y-out", y.data());
  engine.run(0);
  bool ok = true;
  for (unsigned i = 0; i < x.size(); ++i) {
    float ref = (kA * x[i] + kB) * x[i] + kC;
    ok = ok && std::fabs(ref - y[i]) <= 1e-5f * (1.0f + std::fabs(ref));
  }
  std::cout << "loaded " << exePath << " and ran it: y[5] = " << y[5] << "\n";
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
} // namespace

int main(int argc, char **argv) {
  if (argc == 4 && !std::strcmp(argv[1], "compile"))
    return compile(argv[2], argv[3]);
  if (argc == 3 && !std::strcmp(argv[1], "run"))
    return run(argv[2]);
  std::cerr << "usage: " << argv[0] << " compile <codelets.gp> <out.exe> | run <in.exe>\n";
  return 2;
}
