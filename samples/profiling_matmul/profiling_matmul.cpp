// Sample 4: profiling. A chain of three poplin matrix multiplications, the
// profile summary printed, and an auto-report written to a directory.
//
// Build with Poplar or Aspen:
//   g++ -std=c++11 profiling_matmul.cpp -lpoplar -lpoplin -lpopops -lpoputil
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/codelets.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main(int argc, char **argv) {
  const std::string reportDir = argc > 1 ? argv[1] : "profiling_matmul_report";
  const std::size_t n = 256;
  IPUModel model("ipu2");
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);

  Tensor a = poplin::createMatMulInputLHS(graph, FLOAT, {n, n}, {n, n}, "a");
  Tensor b = poplin::createMatMulInputRHS(graph, FLOAT, {n, n}, {n, n}, "b");
  Sequence prog;
  Tensor ab = poplin::matMul(graph, a, b, prog, "ab");
  Tensor abb = poplin::matMul(graph, ab, b, prog, "abb");
  Tensor abbT = poplin::matMul(graph, abb, b.transpose(), prog, "abbT");
  graph.createHostWrite("a", a);
  graph.createHostWrite("b", b);
  graph.createHostRead("out", abbT);

  OptionFlags engineOptions{{"autoReport.all", "true"}, {"autoReport.directory", reportDir}};
  Engine engine(graph, prog, engineOptions);
  engine.load(device);

  std::vector<float> ha(n * n), hb(n * n), out(n * n);
  for (std::size_t i = 0; i < n * n; ++i) {
    ha[i] = float(int(i % 7) - 3) / 8.0f;
    hb[i] = float(int(i % 5) - 2) / 8.0f;
  }
  engine.writeTensor("a", ha.data(), ha.data() + ha.size());
  engine.writeTensor("b", hb.data(), hb.data() + hb.size());
  engine.run(0);
  engine.readTensor("out", out.data(), out.data() + out.size());
  engine.printProfileSummary(std::cout, {{"showExecutionSteps", "true"}});

  // Host reference in double precision: ((a b) b) b^T.
  auto mul = [&](const std::vector<double> &x, const std::vector<double> &y, bool transposeY) {
    std::vector<double> z(n * n, 0.0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k)
        for (std::size_t j = 0; j < n; ++j)
          z[i * n + j] += x[i * n + k] * (transposeY ? y[j * n + k] : y[k * n + j]);
    return z;
  };
  std::vector<double> da(ha.begin(), ha.end()), db(hb.begin(), hb.end());
  std::vector<double> ref = mul(mul(mul(da, db, false), db, false), db, true);
  bool ok = true;
  for (std::size_t i = 0; i < n * n; ++i)
    ok = ok && std::fabs(ref[i] - out[i]) <= 1e-3 * (1.0 + std::fabs(ref[i]));
  std::ifstream report(reportDir + "/profile.json");
  std::cout << "auto-report " << (report.good() ? "written to " : "MISSING in ") << reportDir << "\n";
  ok = ok && report.good();
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
