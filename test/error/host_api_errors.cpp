// Copyright (c) Aspen contributors.
// Issue 26: the host API added for real programs rejects bad input with a message naming the
// function and the argument or file at fault.
#include <gcl/TileAllocation.hpp>
#include <popfloat/experimental/CastToGfloat.hpp>
#include <popfloat/experimental/GfloatExprUtil.hpp>
#include <popfloat/experimental/codelets.hpp>
#include <poplar/CodeletFileType.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/DynamicSlice.hpp>
#include <poputil/exceptions.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace poplar;
using aspen::test::requireError;

TEST_CASE("getCodeletFileType names a path with no codelet extension", "[error][codelets]") {
  requireError<poplar_error>([] { (void)getCodeletFileType("kernels/notes.txt"); },
                             {"getCodeletFileType", "'kernels/notes.txt'"});
  requireError<poplar_error>([] { (void)getCodeletFileType("kernel"); }, {"getCodeletFileType", "'kernel'"});
}

TEST_CASE("gcl::perIPUTiles rejects more tiles than an IPU has", "[error][gcl]") {
  IPUModel model;
  model.tilesPerIPU = 8;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  requireError<poplar_error>([&] { (void)gcl::perIPUTiles(graph, 6, 4); },
                             {"gcl::perIPUTiles", "offset 6", "count 4", "8 tiles per IPU"});
  requireError<poplar_error>([&] { (void)gcl::perIPUTiles(graph, 0, 9, false, false); },
                             {"gcl::perIPUTiles", "count 9"});
  CHECK(gcl::perIPUTiles(graph, 8, 0).empty());
}

TEST_CASE("popops::embedding::plan rejects a group size of 0", "[error][popops]") {
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  requireError<poputil::poplibs_error>(
      [&] { (void)popops::embedding::plan(graph, FLOAT, 0, 10, 4, {2}, {}); },
      {"popops::embedding::plan", "groupSize"});
  requireError<invalid_option>(
      [&] {
        (void)popops::embedding::plan(graph, FLOAT, 2, 10, 4, {2}, {{"usedForSlcie", "true"}});
      },
      {"usedForSlcie"});
}

TEST_CASE("An empty Executable cannot make an Engine or be serialized", "[error][executable]") {
  Executable exe;
  requireError<poplar_error>([&] { Engine engine(std::move(exe)); }, {"Engine", "default-constructed"});
  std::ostringstream out;
  requireError<poplar_error>([&] { exe.serialize(out); }, {"Executable::serialize", "empty"});
}

TEST_CASE("target.saveArchive names a file it cannot write, and needs a file", "[error][options]") {
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor x = graph.addVariable(FLOAT, {2}, "x");
  graph.setTileMapping(x, 0);
  program::Sequence prog;
  const std::string bad = "/nonexistent-aspen-dir/archive.a";
  requireError<poplar_error>(
      [&] {
        (void)compileGraph(graph, {prog}, {{"target.saveArchive", bad}});
      },
      {"target.saveArchive", "'" + bad + "'"});
  requireError<invalid_option>(
      [&] {
        (void)compileGraph(graph, {prog}, {{"target.saveArchive", ""}});
      },
      {"target.saveArchive", "file name"});
}

TEST_CASE("popfloat's names reject values outside their enumerations", "[error][popfloat]") {
  using namespace popfloat::experimental;
  requireError<poputil::poplibs_error>([] { (void)formatTypeToString(static_cast<FormatType>(42)); },
                                       {"formatTypeToString", "42"});
  requireError<poputil::poplibs_error>([] { (void)specTypeToPoplarType(SpecType::BF16); },
                                       {"specTypeToPoplarType", "BF16"});
}

TEST_CASE("popfloat::experimental::GfloatCast names the argument it cannot use", "[error][popfloat]") {
  using namespace popfloat::experimental;
  using FC = GfloatCast::FormatConfig;
  requireError<poputil::poplibs_error>([] { FC(24, 8, 127, true, true, FLOAT); },
                                       {"GfloatCast::FormatConfig", "numMantissaBits 24"});
  requireError<poputil::poplibs_error>([] { FC(3, 6, 15, true, true, HALF); },
                                       {"GfloatCast::FormatConfig", "numExponentBits 6"});
  requireError<poputil::poplibs_error>([] { FC(3, 5, 2, true, true, HALF); }, {"exponentBias 2", "half"});
  requireError<poputil::poplibs_error>([] { FC(3, 4, 7, true, true, INT); }, {"calculationType int"});
  const FC format(3, 4, 7, true, true, FLOAT);
  requireError<poputil::poplibs_error>(
      [&] { GfloatCast(format, GfloatCast::RoundConfig(RoundType::RN, 24, FLOAT), false, SpecType::INT8); },
      {"GfloatCast", "GFType INT8", "packed"});

  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popfloat::experimental::addCodelets(graph);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  graph.setTileMapping(x, 0);
  program::Sequence prog;
  GfloatCast noParams(format, GfloatCast::RoundConfig(RoundType::RN, 24, FLOAT), false);
  requireError<poputil::poplibs_error>([&] { (void)noParams.castNativeToGfloat(graph, x, prog); },
                                       {"castNativeToGfloat", "createCastOpParamsTensor"});
  GfloatCast stochastic(format, GfloatCast::RoundConfig(RoundType::SR, 24, FLOAT), false);
  stochastic.createCastOpParamsTensor(graph, prog);
  requireError<poputil::poplibs_error>([&] { (void)stochastic.castNativeToGfloat(graph, x, prog); },
                                       {"castNativeToGfloat", "round mode SR", "stochastic"});
  Tensor ints = graph.addVariable(INT, {4}, "ints");
  graph.setTileMapping(ints, 0);
  requireError<poputil::poplibs_error>(
      [&] {
        (void)noParams.castNativeToGfloat(graph, ints, stochastic.getCastOpParams(), prog,
                                          noParams.getNativeToGFConfig());
      },
      {"castNativeToGfloat", "'ints'", "FLOAT or HALF"});
  requireError<poputil::poplibs_error>(
      [&] { (void)noParams.castNativeToGfloat(graph, x, x, prog, noParams.getNativeToGFConfig()); },
      {"castNativeToGfloat", "param", "'x'"});
}
