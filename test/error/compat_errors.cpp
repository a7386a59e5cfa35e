// Copyright (c) Aspen contributors.
// Bad input to the Poplar 3.x front-end API added for compatibility (test/compat/): each
// wrong call throws the poplar_error family with a message naming what is at fault.
#include "ErrorCheck.hpp"

#include <poplar/DebugContext.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/RandomSeed.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>
#include <string>

using aspen::test::requireError;

namespace {

poplar::Device smallDevice() {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  return model.createDevice();
}

std::string vertexSource() {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/vertices/api_scalar_vertices.cpp";
}

} // namespace

TEST_CASE("a value connected to an output field", "[error][compat]") {
  poplar::Device device = smallDevice();
  poplar::Graph graph(device.getTarget());
  graph.addCodelets(vertexSource());
  poplar::ComputeSet cs = graph.addComputeSet("cs");
  poplar::VertexRef v = graph.addVertex(cs, "ScaleOffset");
  requireError<poplar::graph_connection_error>([&] { graph.connect(v["out"], 1.0f); },
                                               {"field 'out'", "ScaleOffset", "only an input field"});
  requireError<poplar::unknown_field>([&] { graph.connect(v["nope"], 1); }, {"'nope'", "ScaleOffset"});
  requireError<poplar::unknown_field>(
      [&] {
        graph.addVertex(cs, "ScaleOffset", {{"scael", 2.0f}});
      },
      {"'scael'"});
}

TEST_CASE("an unknown option key or a bad value", "[error][compat]") {
  poplar::Device device = smallDevice();
  poplar::Graph graph(device.getTarget());
  poplar::program::Sequence prog;
  requireError<poplar::invalid_option>(
      [&] {
        poplar::Engine(graph, prog, {{"debug.veryfy", "true"}});
      },
      {"'debug.veryfy'"});
  requireError<poplar::invalid_option>(
      [&] {
        poplar::compileGraph(graph, {prog}, {{"opts.maxCopyMergeSize", "1"}});
      },
      {"'opts.maxCopyMergeSize'"});
  requireError<poplar::invalid_option>(
      [&] {
        poplar::Engine(graph, prog, {{"debug.runtimeVerify", "yes"}});
      },
      {"'debug.runtimeVerify'", "\"yes\""});
  requireError<poplar::invalid_option>(
      [&] {
        poplar::Engine(graph, prog, {{"debug.computeInstrumentationLevel", "warp"}});
      },
      {"'debug.computeInstrumentationLevel'", "\"warp\"", "tile"});
  requireError<poplar::poplar_error>(
      [&] {
        poplar::compileGraph(graph, {prog}, {{"debug.loweredVarDumpFile", "/dev/null/vars.json"}});
      },
      {"debug.loweredVarDumpFile", "/dev/null/vars.json"});
}

TEST_CASE("ProfileValue read as the wrong type or out of range", "[error][compat]") {
  const poplar::ProfileValue v(poplar::ProfileValue::Map{{"n", 3}});
  requireError<poplar::poplar_error>([&] { v.asString(); }, {"Map", "String"});
  requireError<poplar::poplar_error>([&] { v["m"]; }, {"'m'"});
  requireError<poplar::index_error>([&] { poplar::ProfileValue(poplar::ProfileValue::Vector{1})[3]; },
                                    {"index 3", "1 elements"});
  requireError<poplar::poplar_error>([&] { poplar::ProfileValue(-2).asUint(); }, {"negative"});
}

TEST_CASE("bad graph and target queries", "[error][compat]") {
  poplar::Device device = smallDevice();
  poplar::Graph graph(device.getTarget());
  requireError<poplar::index_error>([&] { graph.getVariable(poplar::VariableRef(42)); }, {"variable 42"});
  requireError<poplar::invalid_tile_mapping>([&] { graph.convertVirtualTileToPhysicalTile(4); }, {"tile 4"});
  requireError<poplar::poplar_error>([&] { device.getTarget().createVirtualTarget(2, 4); },
                                     {"createVirtualTarget(2, 4)", "1 IPU(s) of 4 tiles"});
  requireError<poplar::type_error>(
      [&] { device.getTarget().getTypeLimitsMaxAs<int>(poplar::QUARTER_METADATA); }, {"no numeric limits"});
  poplar::program::Sequence prog;
  poplar::Tensor wrong = graph.addVariable(poplar::UNSIGNED_INT, {3}, "wrongSeeds");
  requireError<poplar::poplar_error>([&] { poplar::setHwSeeds(graph, wrong, prog); },
                                     {"'wrongSeeds'", "[4,6,4]"});
  poplar::Tensor invalid;
  float f = 0;
  requireError<poplar::poplar_error>([&] { invalid.getConstantValue(&f); }, {"invalid"});
}

TEST_CASE("a debug information file that cannot be written", "[error][compat]") {
  requireError<poplar::poplar_error>([] { poplar::DebugInfo::initializeStreamer("/dev/null/debug.json"); },
                                     {"'/dev/null/debug.json'"});
}

TEST_CASE("serialising an empty graph", "[error][compat]") {
  poplar::Graph empty;
  std::ostringstream out;
  requireError<poplar::poplar_error>([&] { empty.serialize(out, poplar::SerializationFormat::JSON); },
                                     {"Graph::serialize", "empty Graph"});
}
