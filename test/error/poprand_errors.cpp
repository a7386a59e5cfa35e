// Copyright (c) Aspen contributors.
// poprand rejects bad arguments (PopLibs <poprand/RandomGen.hpp>) with
// poputil::poplibs_error naming the operation and the value at fault.
#include <poprand/RandomGen.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Target.hpp>

#include <catch2/catch.hpp>

#include <string>

using namespace poplar;
using Catch::Matchers::Contains;

namespace {

/// The message of the `E` that `f` throws ("<no exception>" if none).
template <class E, class F> std::string messageOf(F f) {
  try {
    f();
  } catch (const E &e) {
    return e.what();
  }
  return "<no exception>";
}
} // namespace

TEST_CASE("poprand_errors: bad seeds, types and distribution parameters", "[poprand]") {
  Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
  program::Sequence prog;
  Tensor ref = graph.addVariable(FLOAT, {16}, "ref");
  graph.setTileMapping(ref, 0);
  Tensor badSeed = graph.addVariable(UNSIGNED_INT, {3}, "seed3");
  graph.setTileMapping(badSeed, 0);
  CHECK_THAT(messageOf<poputil::poplibs_error>(
                 [&] { poprand::uniform(graph, &badSeed, 0, ref, FLOAT, 0, 1, prog, "u"); }),
             Contains("poprand::uniform(u)") && Contains("seed") && Contains("{3}"));
  CHECK_THAT(
      messageOf<poputil::poplibs_error>([&] { poprand::normal(graph, nullptr, 0, ref, INT, 0, 1, prog); }),
      Contains("poprand::normal") && Contains("int"));
  CHECK_THAT(
      messageOf<poputil::poplibs_error>([&] { poprand::uniform(graph, nullptr, 0, ref, FLOAT, 2, 1, prog); }),
      Contains("maxVal"));
  CHECK_THAT(messageOf<poputil::poplibs_error>(
                 [&] { poprand::bernoulli(graph, nullptr, 0, ref, FLOAT, 1.5, prog); }),
             Contains("prob"));
  CHECK_THAT(messageOf<poputil::poplibs_error>(
                 [&] { poprand::truncatedNormal(graph, nullptr, 0, ref, HALF, 0, 1, 0, prog); }),
             Contains("alpha"));
  CHECK_THAT(messageOf<poputil::poplibs_error>(
                 [&] { poprand::logUniform(graph, nullptr, 0, ref, FLOAT, 0.5, 10, prog); }),
             Contains("minVal"));
  Tensor other = graph.addVariable(FLOAT, {15}, "other");
  graph.setTileMapping(other, 0);
  CHECK_THAT(messageOf<poputil::poplibs_error>(
                 [&] { poprand::dropout(graph, nullptr, 0, other, ref, 0.5, 2.0, prog); }),
             Contains("{15}") && Contains("{16}"));
  CHECK_THAT(messageOf<poputil::poplibs_error>([&] { poprand::setSeed(graph, ref, 0, prog); }),
             Contains("poprand::setSeed"));
}
