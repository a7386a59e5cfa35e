// Copyright (c) Aspen contributors.
// Error cases of the graph front end: each user mistake throws the right
// poplar_error subclass with a message naming what is at fault.
#include "ErrorCheck.hpp"

#include <poplar/DeviceManager.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <limits>

#include <sstream>
#include <string>

using namespace poplar;
using namespace poplar::program;
using aspen::test::requireExactError;

namespace {

Target smallTarget(unsigned tiles = 8) {
  return Target::createIPUTarget(1, tiles, "ipu2");
}

} // namespace

TEST_CASE("Mapping to a tile beyond the target", "[error]") {
  Graph graph(smallTarget(8));
  Tensor t = graph.addVariable(FLOAT, {4}, "weights");
  requireExactError<invalid_tile_mapping>([&] { graph.setTileMapping(t, 8); },
                                          {"'weights'", "tile 8", "8 tiles"});
}

TEST_CASE("Mapping to a tile beyond a virtual graph", "[error]") {
  Graph graph(smallTarget(8));
  Graph vg = graph.createVirtualGraph(2, 6);
  Tensor t = vg.addVariable(FLOAT, {4}, "local");
  requireExactError<invalid_tile_mapping>([&] { vg.setTileMapping(t, 4); }, {"'local'", "tile 4", "4 tiles"});
}

TEST_CASE("A TileToTensorMapping naming a tile beyond the target", "[error]") {
  Graph graph(smallTarget(8));
  Tensor t = graph.addVariable(INT, {10}, "ids");
  TileToTensorMapping m(10);
  m[9] = {{0, 10}};
  requireExactError<invalid_tile_mapping>([&] { graph.setTileMapping(t, m); }, {"'ids'", "tile 9"});
}

TEST_CASE("A TileToTensorMapping interval beyond the tensor", "[error]") {
  Graph graph(smallTarget(8));
  Tensor t = graph.addVariable(INT, {10}, "ids");
  TileToTensorMapping m(8);
  m[1] = {{5, 12}};
  requireExactError<invalid_tile_mapping>([&] { graph.setTileMapping(t, m); },
                                          {"'ids'", "[5, 12)", "10 elements"});
}

TEST_CASE("getTileMapping with requireComplete of an unmapped tensor", "[error]") {
  Graph graph(smallTarget(8));
  Tensor t = graph.addVariable(HALF, {2, 3}, "activations");
  requireExactError<invalid_tile_mapping>([&] { graph.getTileMapping(t); },
                                          {"'activations'", "not completely mapped"});
  graph.setTileMapping(t[0], 1);
  requireExactError<invalid_tile_mapping>([&] { graph.getTileMapping(t, true); },
                                          {"'activations'", "element 3"});
}

TEST_CASE("A constant with the wrong number of values", "[error]") {
  Graph graph(smallTarget());
  requireExactError<tensor_creation_error>(
      [&] {
        graph.addConstant<float>(FLOAT, {2, 2}, {1.0f, 2.0f, 3.0f}, "coeffs");
      },
      {"'coeffs'", "needs 4 values", "3 were given"});
}

TEST_CASE("setInitialValue with the wrong number of values", "[error]") {
  Graph graph(smallTarget());
  Tensor t = graph.addVariable(INT, {3}, "counts");
  requireExactError<tensor_creation_error>(
      [&] {
        graph.setInitialValue<int>(t, std::vector<int>{1, 2});
      },
      {"'counts'", "3 elements", "2 values"});
}

TEST_CASE("setInitialValue on a constant", "[error]") {
  Graph graph(smallTarget());
  Tensor c = graph.addConstant(FLOAT, {2}, 1.0f, "ones");
  requireExactError<tensor_creation_error>([&] { graph.setInitialValue(c, 2.0f); }, {"'ones'", "constant"});
}

TEST_CASE("Duplicate host write handle", "[error]") {
  Graph graph(smallTarget());
  Tensor a = graph.addVariable(FLOAT, {2}, "a");
  Tensor b = graph.addVariable(FLOAT, {2}, "b");
  graph.createHostWrite("input", a);
  requireExactError<graph_object_creation_error>([&] { graph.createHostWrite("input", b); },
                                                 {"'input'", "already exists"});
}

TEST_CASE("Duplicate host read handle", "[error]") {
  Graph graph(smallTarget());
  Tensor a = graph.addVariable(FLOAT, {2}, "a");
  graph.createHostRead("result", a);
  requireExactError<graph_object_creation_error>([&] { graph.createHostRead("result", a); },
                                                 {"'result'", "already exists"});
}

TEST_CASE("Duplicate stream handle", "[error]") {
  Graph graph(smallTarget());
  graph.addHostToDeviceFIFO("stream", FLOAT, 4);
  requireExactError<graph_object_creation_error>([&] { graph.addDeviceToHostFIFO("stream", FLOAT, 4); },
                                                 {"'stream'", "already exists"});
}

TEST_CASE("Duplicate remote buffer handle", "[error]") {
  Graph graph(smallTarget());
  graph.addRemoteBuffer("store", FLOAT, 4, 2);
  requireExactError<graph_object_creation_error>([&] { graph.addRemoteBuffer("store", INT, 4); },
                                                 {"'store'", "already exists"});
}

TEST_CASE("Unknown option key via OptionFlags::at", "[error]") {
  OptionFlags opts{{"debug.instrument", "true"}};
  requireExactError<invalid_option>([&] { opts.at("debug.instrumnet"); }, {"'debug.instrumnet'"});
}

TEST_CASE("Malformed JSON options", "[error]") {
  OptionFlags opts;
  std::istringstream in(R"({"autoReport.all": "true",)");
  requireExactError<parse_error>([&] { readJSON(in, opts); }, {"Malformed JSON"});
  requireExactError<parse_error>([&] { readJSON(StringRef("[1, 2]"), opts); }, {"must be an object"});
}

TEST_CASE("A predicate that is not a scalar", "[error]") {
  Graph graph(smallTarget());
  Tensor p = graph.addVariable(BOOL, {2}, "conditions");
  requireExactError<control_program_error>([&] { If(p, Sequence(), Sequence()); },
                                           {"'conditions'", "exactly one element"});
  requireExactError<control_program_error>([&] { RepeatWhileTrue(Sequence(), p, Sequence()); },
                                           {"'conditions'"});
}

TEST_CASE("A switch control of floating-point type", "[error]") {
  Graph graph(smallTarget());
  Tensor c = graph.addVariable(FLOAT, {}, "selector");
  requireExactError<type_error>([&] { Switch s(c); }, {"'selector'", "integer"});
}

TEST_CASE("A switch case given twice", "[error]") {
  Graph graph(smallTarget());
  Tensor c = graph.addVariable(INT, {}, "selector");
  Switch s(c);
  s.add(3, Sequence());
  requireExactError<control_program_error>([&] { s.add(3, Sequence()); }, {"'selector'", "case 3"});
}

TEST_CASE("Copy between tensors of different element types", "[error]") {
  Graph graph(smallTarget());
  Tensor a = graph.addVariable(FLOAT, {4}, "src");
  Tensor b = graph.addVariable(INT, {4}, "dst");
  requireExactError<type_error>([&] { Copy(a, b); }, {"'src'", "'dst'", "float", "int"});
}

TEST_CASE("Copy between tensors of different element counts", "[error]") {
  Graph graph(smallTarget());
  Tensor a = graph.addVariable(FLOAT, {2, 3}, "src");
  Tensor b = graph.addVariable(FLOAT, {5}, "dst");
  requireExactError<control_program_error>([&] { Copy(a, b); }, {"'src'", "'dst'", "{2,3}", "{5}"});
}

TEST_CASE("Stream copy of the wrong size", "[error]") {
  Graph graph(smallTarget());
  Tensor t = graph.addVariable(FLOAT, {3}, "buffer");
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 4);
  requireExactError<control_program_error>([&] { Copy(in, t); }, {"'in'", "'buffer'", "4 elements", "has 3"});
}

TEST_CASE("Stream copy in the wrong direction", "[error]") {
  Graph graph(smallTarget());
  Tensor t = graph.addVariable(FLOAT, {4}, "buffer");
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 4);
  requireExactError<control_program_error>([&] { Copy(t, in); }, {"'in'", "host-to-device"});
}

TEST_CASE("Remote buffer copy of the wrong size", "[error]") {
  Graph graph(smallTarget());
  Tensor t = graph.addVariable(FLOAT, {5}, "rows");
  RemoteBuffer rb = graph.addRemoteBuffer("store", FLOAT, 4, 2);
  requireExactError<control_program_error>([&] { Copy(rb, t); }, {"'store'", "'rows'"});
}

TEST_CASE("Unknown IPUModel version", "[error]") {
  requireExactError<invalid_machine_model>([] { IPUModel model("ipu9"); }, {"'ipu9'"});
}

TEST_CASE("Unknown IPU system for createIPUTarget", "[error]") {
  requireExactError<invalid_machine_model>([] { Target::createIPUTarget(1, "GPU-9000"); }, {"'GPU-9000'"});
}

TEST_CASE("IPUModel with zero tiles", "[error]") {
  IPUModel model;
  model.tilesPerIPU = 0;
  requireExactError<invalid_machine_model>([&] { model.createDevice(); }, {"tilesPerIPU"});
}

TEST_CASE("IPUModel cost parameters out of range name the parameter", "[error]") {
  // A zero, negative or infinite clock would make every time the profile reports meaningless.
  for (double clock : {0.0, -1.33e9, std::numeric_limits<double>::infinity()}) {
    IPUModel model;
    model.tileClockFrequency = clock;
    requireExactError<invalid_machine_model>([&] { model.createDevice(); }, {"tileClockFrequency"});
  }
  IPUModel workers;
  workers.numWorkerContexts = 0;
  requireExactError<invalid_machine_model>([&] { workers.createDevice(); }, {"numWorkerContexts"});
  IPUModel exchange;
  exchange.exchangeBytesPerCycle = 0;
  requireExactError<invalid_machine_model>([&] { exchange.createDevice(); }, {"exchangeBytesPerCycle"});
  IPUModel path;
  path.dataPathWidth = 0;
  requireExactError<invalid_machine_model>([&] { path.createDevice(); }, {"dataPathWidth"});
  // The conv units' rates, which PopLibs' convolution planner divides by.
  IPUModel load;
  load.fp16ConvUnitInputLoadElemsPerCycle = 0;
  requireExactError<invalid_machine_model>([&] { load.createDevice(); },
                                           {"fp16ConvUnitInputLoadElemsPerCycle"});
  IPUModel depth;
  depth.fp32ConvUnitMaxPipelineDepth = 0;
  requireExactError<invalid_machine_model>([&] { depth.createDevice(); }, {"fp32ConvUnitMaxPipelineDepth"});
}

TEST_CASE("DeviceManager device id that does not exist", "[error]") {
  auto manager = DeviceManager::createDeviceManager();
  requireExactError<system_runtime_error>([&] { manager.getDevice(1000); }, {"1000"});
}

TEST_CASE("Virtual graph tile range beyond the graph", "[error]") {
  Graph graph(smallTarget(8));
  requireExactError<invalid_tile_mapping>([&] { graph.createVirtualGraph(4, 12); }, {"[4, 12)", "8 tiles"});
}

TEST_CASE("Variable of an invalid type", "[error]") {
  Graph graph(smallTarget());
  requireExactError<type_error>([&] { graph.addVariable(Type(), {2}, "nothing"); },
                                {"'nothing'", "invalid element type"});
}
