// Copyright (c) Aspen contributors.
// Issue 10 item 1 / issue 15 item 11: a client that includes only <poplar/Engine.hpp>
// uses a complete poplar::Device and catches poplar::poplar_error (and its subclasses)
// with no other poplar header. (Catch2 is the test's own include.)
#include <poplar/Engine.hpp>

#include <catch2/catch.hpp>

TEST_CASE("Engine.hpp alone: Device, Graph, Engine and poplar_error", "[compat][headers]") {
  poplar::Device device = poplar::Device::createCPUDevice();
  poplar::Graph graph(device.getTarget());
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {4}, "x");
  poplar::Tensor y = graph.addVariable(poplar::FLOAT, {4}, "y");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(y, 0);
  graph.createHostWrite("x-write", x);
  graph.createHostRead("y-read", y);
  poplar::program::Sequence prog{poplar::program::Copy(x, y)};

  poplar::Engine engine(graph, prog);
  engine.load(device);
  const std::vector<float> in{1.5f, -2.0f, 3.25f, 8.0f};
  std::vector<float> out(4, 0.0f);
  engine.writeTensor("x-write", in.data(), in.data() + in.size());
  engine.run(0);
  engine.readTensor("y-read", out.data(), out.data() + out.size());
  CHECK(out == in);

  bool caught = false;
  try {
    poplar::Engine bad(graph, prog, {{"no.such.option", "1"}});
  } catch (const poplar::poplar_error &e) {
    caught = std::string(e.what()).find("no.such.option") != std::string::npos;
  }
  CHECK(caught);
  CHECK_THROWS_AS(engine.readTensor("no-such-handle", out.data(), out.data() + out.size()),
                  poplar::poplar_error);
}
