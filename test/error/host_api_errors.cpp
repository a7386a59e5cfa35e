// Copyright (c) Aspen contributors.
// Issue 26: the host API added for real programs rejects bad input with a message naming the
// function and the argument or file at fault.
#include <gcl/TileAllocation.hpp>
#include <popfloat/experimental/GfloatExprUtil.hpp>
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
