// poplar_test as PopLibs' tests use it: a host buffer per tensor, an upload into `in` and a
// download out of `out`, attachStreams, and copy() in both directions.
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar_test/Util.hpp>

#include <iostream>
#include <string>
#include <utility>
#include <vector>

int main() {
  auto device = poplar::Device::createCPUDevice();
  poplar::Graph graph(device.getTarget());
  auto in = graph.addVariable(poplar::HALF, {5}, "in");
  auto out = graph.addVariable(poplar::HALF, {5}, "out");
  graph.setTileMapping(in, 0);
  graph.setTileMapping(out, 0);
  poplar::program::Sequence upload, download;
  std::vector<std::pair<std::string, poplar_test::HostMemory>> tmap;
  auto rawIn = poplar_test::allocateHostMemoryForTensor(in, "in", graph, upload, boost::none, tmap);
  auto rawOut = poplar_test::allocateHostMemoryForTensor(out, "out", graph, boost::none, download, tmap);
  const std::vector<double> values{1.0, -2.5, 0.25, 65504.0, 3.0};
  poplar_test::copy(graph.getTarget(), values, poplar::HALF, rawIn.get());
  poplar::Engine engine(graph, poplar::program::Sequence{upload, poplar::program::Copy(in, out), download});
  poplar_test::attachStreams(engine, tmap);
  engine.load(device);
  engine.run(0);
  std::vector<float> back(values.size());
  poplar_test::copy(graph.getTarget(), poplar::HALF, rawOut.get(), back);
  for (std::size_t i = 0; i != values.size(); ++i) {
    if (back[i] != static_cast<float>(values[i])) {
      std::cerr << "element " << i << ": " << back[i] << " != " << values[i] << "\n";
      return 1;
    }
  }
  // poplar::convertToDeviceType arrives with poplar_test/Util.hpp (PopLibs' poplibs_test uses it so).
  std::vector<char> half(2);
  poplar::convertToDeviceType(poplar::HALF, std::vector<float>{1.0f}, half.data());
  if (half[0] != 0 || half[1] != 0x3C)
    return 1;
  std::cout << "poplar_test streams OK\n";
  return 0;
}
