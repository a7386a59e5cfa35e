// Copyright (c) Aspen contributors.
// Library vertices priced as PopLibs prices them (issue 23 item 2), poprand's part: the cycles
// Aspen's profile gives each poprand vertex on a one-tile ipu2 model (6 workers, 64-bit data
// path) against an independent evaluation, written here, of PopLibs' estimators for the same
// vertex and work (graphcore/poplibs lib/poprand/poprandCycleEstimators.cpp: Uniform, Normal,
// TruncatedNormal, Bernoulli, Dropout; logUniform, which PopLibs builds as a float uniform, a
// fused clamp(exp(x)) and a cast, adds lib/popops/ExpressionGenerator.cpp's generated-codelet
// estimate and getCast1DCycleEstimate), within 10%. Aspen's RandomGen is one vertex type for
// every distribution, so each distribution is a run of its own.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/codelets.hpp>
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>

#include "ExecutionProfile.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

namespace {

using u64 = std::uint64_t;
constexpr u64 W = 6;

std::map<std::string, double> vertexCycles(
    const std::function<void(poplar::Graph &, poplar::program::Sequence &, const poplar::Tensor &)> &build) {
  return fidelity::oneTileVertexCycles(
      [](poplar::Graph &g) {
        popops::addCodelets(g);
        poprand::addCodelets(g);
      },
      [&](poplar::Graph &g, poplar::program::Sequence &prog) {
        poplar::Tensor seed = g.addVariable(poplar::UNSIGNED_INT, {2}, "seed");
        g.setTileMapping(seed, 0);
        build(g, prog, seed);
      });
}

void check(const std::map<std::string, double> &got, const std::string &vertex, const std::string &what,
           double popLibs) {
  fidelity::checkAgainstPopLibs(got, vertex, what, popLibs);
}

// The estimators as PopLibs writes them: `width` is what each computes (Uniform and Bernoulli
// divide the data path's 64 bits by 2 or 4), products before divisions.
u64 uniform(bool half, u64 n) {
  const u64 width = 64 / (half ? 4 : 2);
  u64 c = 4 + 4 * (n + width - 1) / width;
  c += half ? 24 * W + (n % width != 0) * 12 : 22 * W + (n % width != 0) * 4;
  return c;
}
u64 uniformInt(u64 n) {
  return 4 + 22 * W + 6 * (n / 2) + (n % 2) * 2;
}
u64 normal(bool half, u64 n) {
  const u64 width = half ? 4 : 2;
  return 4 + 4 * (n + width - 1) / width +
         (half ? 24 * W + (n % width != 0) * 12 : 22 * W + (n % width != 0) * 3);
}
u64 truncatedNormal(bool half, u64 n, double alpha) {
  const u64 it = u64(std::ceil(-4.0 / std::log10(std::erfc(alpha / std::sqrt(2.0)))));
  const u64 width = half ? 4 : 2;
  if (!half)
    return 4 + 26 * W + (11 * it + 5) * (n + width - 1) / width + (n % width != 0) * (13 * it + 2);
  return 4 + 28 * W + (12 * it + 5) * (n + width - 1) / width + (n % width != 0) * (12 * it + 10);
}
u64 bernoulli(bool half, u64 n) {
  const u64 width = 64 / (half ? 4 : 2);
  return 4 + (n + width - 1) / width + (half ? 21 * W + (n % width != 0) * 9 : 23 * W + (n % width != 0));
}
u64 dropout(bool half, u64 n) {
  const u64 width = half ? 4 : 2;
  return 6 + 24 * W + 2 * (n + width - 1) / width + (n % width != 0) * (half ? 9 : 1);
}
// logUniform: float uniform + fused clamp(exp) (2 operators, one float operand) + cast to half.
u64 logUniform(bool half, u64 n) {
  const u64 fused = (20 + 2 * (n / 2 + n % 2) + W - 1) / W * W;
  u64 cast = 0;
  if (half) {
    const u64 m = (n + W - 1) / W;
    cast = 12 + W * (19 + 2 * (m / 4) + 1 + ((m % 4) & 1 ? 2 : 0) + 1 + ((m % 4) & 2 ? 2 : 0) + 18);
  }
  return uniform(false, n) + fused + cast;
}

} // namespace

TEST_CASE("poprand vertices are priced as PopLibs' estimators price them", "[fidelity][poprand]") {
  const double alpha = 2.0;
  for (u64 n : {7u, 100u, 1001u}) {
    const std::string what = "n=" + std::to_string(n);
    const poplar::Type types[] = {poplar::FLOAT, poplar::HALF};
    for (int dist = 0; dist < 5; ++dist) {
      const auto got =
          vertexCycles([&](poplar::Graph &g, poplar::program::Sequence &prog, const poplar::Tensor &seed) {
            for (const poplar::Type &t : types) {
              poplar::Tensor ref = g.addVariable(t, {n}, "ref");
              g.setTileMapping(ref, 0);
              switch (dist) {
              case 0:
                poprand::uniform(g, &seed, 0, ref, t, -1.0, 1.0, prog);
                break;
              case 1:
                poprand::normal(g, &seed, 0, ref, t, 0.0, 1.0, prog);
                break;
              case 2:
                poprand::truncatedNormal(g, &seed, 0, ref, t, 0.0, 1.0, alpha, prog);
                break;
              case 3:
                poprand::bernoulli(g, &seed, 0, ref, t, 0.5, prog);
                break;
              default:
                poprand::logUniform(g, &seed, 0, ref, t, 1.0, 100.0, prog);
                poprand::dropout(g, &seed, 0, ref, ref, 0.5, 2.0, prog);
                break;
              }
            }
            if (dist == 0) {
              poplar::Tensor ref = g.addVariable(poplar::INT, {n}, "refInt");
              g.setTileMapping(ref, 0);
              poprand::uniform(g, &seed, 0, ref, poplar::INT, -10, 10, prog);
            }
          });
      const char *names[] = {"uniform", "normal", "truncatedNormal", "bernoulli", "logUniform"};
      for (const bool half : {false, true}) {
        const std::string vertex = std::string("poprand::RandomGen<") + (half ? "half" : "float") + ">";
        const std::string w = std::string(names[dist]) + " " + what;
        const u64 expected = dist == 0   ? uniform(half, n)
                             : dist == 1 ? normal(half, n)
                             : dist == 2 ? truncatedNormal(half, n, alpha)
                             : dist == 3 ? bernoulli(half, n)
                                         : logUniform(half, n);
        check(got, vertex, w, double(expected));
        if (dist == 4)
          check(got, std::string("poprand::Dropout<") + (half ? "half" : "float") + ">", what,
                double(dropout(half, n)));
      }
      if (dist == 0)
        check(got, "poprand::RandomGen<int>", "uniform " + what, double(uniformInt(n)));
    }
  }
}
