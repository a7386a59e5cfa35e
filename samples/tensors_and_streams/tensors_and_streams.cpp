// Sample 1: variables, constants, tile mapping, copies, host read/write
// handles, and a host stream with a circular buffer.
//
// Build with Poplar or Aspen:  g++ -std=c++11 tensors_and_streams.cpp -lpoplar
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cstdlib>
#include <iostream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main() {
  // A small IPU model: four tiles are plenty to see the mapping.
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());

  // A 4x4 variable spread one row per tile, and a constant on tile 0.
  Tensor v1 = graph.addVariable(FLOAT, {4, 4}, "v1");
  for (unsigned row = 0; row < 4; ++row)
    graph.setTileMapping(v1[row], row);
  Tensor v2 = graph.addVariable(FLOAT, {4, 4}, "v2");
  graph.setTileMapping(v2, 3);
  Tensor c1 = graph.addConstant<float>(FLOAT, {4}, {1.0f, 1.5f, 2.0f, 2.5f}, "c1");
  graph.setTileMapping(c1, 0);

  // Copies between views: a constant into one row and one column, a whole
  // tensor across tiles, a transposed view.
  Sequence prog;
  prog.add(Copy(c1, v1[0]));
  prog.add(Copy(c1, v1.slice({0, 3}, {4, 4}).flatten()));
  prog.add(PrintTensor("v1-start", v1));
  prog.add(Copy(v1.transpose(), v2));
  prog.add(PrintTensor("v2-transposed", v2));

  // Host handles: write v1 from the host before the program, read v2 after.
  graph.createHostWrite("v1-write", v1);
  graph.createHostRead("v2-read", v2);

  // A host-to-device stream of 4 floats per copy, read from a circular buffer
  // of 3 chunks: each run of the program consumes the next chunk and wraps.
  Tensor row = graph.addVariable(FLOAT, {4}, "row");
  graph.setTileMapping(row, 2);
  DataStream inStream = graph.addHostToDeviceFIFO("rows-in", FLOAT, 4);
  DataStream outStream = graph.addDeviceToHostFIFO("rows-out", FLOAT, 4);
  Sequence streamProg({Copy(inStream, row), PrintTensor("row", row), Copy(row, outStream)});

  Engine engine(graph, {prog, streamProg});
  engine.load(device);

  std::vector<float> start(16);
  for (unsigned i = 0; i < 16; ++i)
    start[i] = float(i);
  engine.writeTensor("v1-write", start.data(), start.data() + start.size());
  engine.run(0);
  std::vector<float> v2Host(16);
  engine.readTensor("v2-read", v2Host.data(), v2Host.data() + v2Host.size());

  // The reference: the same copies on the host.
  std::vector<float> v1Ref = start;
  const float c[4] = {1.0f, 1.5f, 2.0f, 2.5f};
  for (unsigned j = 0; j < 4; ++j)
    v1Ref[j] = c[j];
  for (unsigned i = 0; i < 4; ++i)
    v1Ref[i * 4 + 3] = c[i];
  bool ok = true;
  for (unsigned i = 0; i < 4; ++i)
    for (unsigned j = 0; j < 4; ++j)
      ok = ok && v2Host[i * 4 + j] == v1Ref[j * 4 + i];

  std::vector<float> circular(12), received(4);
  for (unsigned i = 0; i < 12; ++i)
    circular[i] = 100.0f + float(i);
  engine.connectStream("rows-in", circular.data(), circular.data() + circular.size());
  engine.connectStream("rows-out", received.data());
  for (unsigned runIndex = 0; runIndex < 4; ++runIndex) {
    engine.run(1);
    unsigned chunk = runIndex % 3; // the fourth run wraps to the first chunk
    for (unsigned j = 0; j < 4; ++j)
      ok = ok && received[j] == circular[chunk * 4 + j];
  }
  std::cout << (ok ? "PASSED" : "FAILED") << "\n";
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
