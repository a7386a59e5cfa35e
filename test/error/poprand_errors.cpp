// Copyright (c) Aspen contributors.
// poprand rejects bad arguments (PopLibs <poprand/RandomGen.hpp>) with
// poputil::poplibs_error naming the operation and the value at fault.
#include <poprand/RandomGen.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace poplar;

TEST_CASE("poprand_errors: bad seeds, types and distribution parameters", "[poprand]") {
  Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
  program::Sequence prog;
  Tensor ref = graph.addVariable(FLOAT, {16}, "ref");
  graph.setTileMapping(ref, 0);
  Tensor badSeed = graph.addVariable(UNSIGNED_INT, {3}, "seed3");
  graph.setTileMapping(badSeed, 0);
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::uniform(graph, &badSeed, 0, ref, FLOAT, 0, 1, prog, "u"); },
      {"poprand::uniform(u)", "seed", "{3}"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::normal(graph, nullptr, 0, ref, INT, 0, 1, prog); }, {"poprand::normal", "int"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::uniform(graph, nullptr, 0, ref, FLOAT, 2, 1, prog); }, {"maxVal"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::bernoulli(graph, nullptr, 0, ref, FLOAT, 1.5, prog); }, {"prob"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::truncatedNormal(graph, nullptr, 0, ref, HALF, 0, 1, 0, prog); }, {"alpha"});
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::logUniform(graph, nullptr, 0, ref, FLOAT, 0.5, 10, prog); }, {"minVal"});
  Tensor other = graph.addVariable(FLOAT, {15}, "other");
  graph.setTileMapping(other, 0);
  aspen::test::requireError<poputil::poplibs_error>(
      [&] { poprand::dropout(graph, nullptr, 0, other, ref, 0.5, 2.0, prog); }, {"{15}", "{16}"});
  aspen::test::requireError<poputil::poplibs_error>([&] { poprand::setSeed(graph, ref, 0, prog); },
                                                    {"poprand::setSeed"});
}
