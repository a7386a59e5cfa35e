// Copyright (c) Aspen contributors.
// Pre-planning (poplin::preplan, preplanMatMuls, preplanConvolutions, matMulGetConvPlanParams)
// rejects bad parameter sets as building the ops would: poputil::poplibs_error naming the
// function, the entry and what is wrong (poplar::invalid_option for options), and a rejected
// set leaves the cache unchanged.
#include <poplin/ConvPreplan.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poputil/exceptions.hpp>

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include "ErrorCheck.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <tuple>

using namespace poplar;
using aspen::test::requireError;

namespace {
const Target &target() {
  static const Target t = Target::createIPUTarget(1, 4, "ipu2");
  return t;
}
const OptionFlags noOptions;

std::set<poplin::MatMulPlanParams> oneMatMul(const poplin::MatMulParams &p, const OptionFlags *o = &noOptions,
                                             const Target *t = &target()) {
  std::set<poplin::MatMulPlanParams> s;
  s.emplace(t, p, o);
  return s;
}
std::set<poplin::ConvPlanParams> oneConv(const poplin::ConvParams &p, const OptionFlags *o = &noOptions) {
  std::set<poplin::ConvPlanParams> s;
  s.emplace(&target(), p, o);
  return s;
}
} // namespace

TEST_CASE("poplin::preplan names the matmul entry and what is wrong with it", "[poplin][preplan][error]") {
  poplin::PlanningCache cache;
  auto preplanMatMul = [&](const poplin::MatMulParams &p) { poplin::preplan({}, oneMatMul(p), cache); };
  // PopLibs pre-plans grouped shapes only; an ungrouped {m, k} x {k, n} is written {1, m, k} x {1, k, n}.
  requireError<poputil::poplibs_error>(
      [&] {
        preplanMatMul({FLOAT, FLOAT, {4, 3}, {3, 5}});
      },
      {"poplin::preplan", "matmul 0", "{4,3}", "rank 3"});
  requireError<poputil::poplibs_error>(
      [&] {
        preplanMatMul({FLOAT, FLOAT, {1, 4, 3}, {1, 2, 5}});
      },
      {"poplin::preplan", "matmul 0", "inner dimensions disagree", "{1,4,3}", "{1,2,5}"});
  requireError<poputil::poplibs_error>(
      [&] {
        preplanMatMul({FLOAT, FLOAT, {2, 4, 3}, {3, 3, 5}});
      },
      {"poplin::preplan", "group dimensions disagree"});
  requireError<poputil::poplibs_error>(
      [&] {
        preplanMatMul({INT, FLOAT, {1, 4, 3}, {1, 3, 5}});
      },
      {"poplin::preplan", "input type", "int"});
  requireError<poputil::poplibs_error>(
      [&] {
        preplanMatMul({FLOAT, UNSIGNED_INT, {1, 4, 3}, {1, 3, 5}});
      },
      {"poplin::preplan", "output type"});
  requireError<poputil::poplibs_error>(
      [&] {
        preplanMatMul({FLOAT, FLOAT, {1, 4, 0}, {1, 0, 5}});
      },
      {"poplin::preplan", "inner dimension", "is 0"});
  CHECK(cache.size() == 0);
}

TEST_CASE("poplin::preplan rejects bad options and null pointers", "[poplin][preplan][error]") {
  poplin::PlanningCache cache;
  const poplin::MatMulParams good{FLOAT, FLOAT, {1, 4, 3}, {1, 3, 5}};
  const OptionFlags unknown{{"noSuchOption", "1"}};
  const OptionFlags badPass{{"fullyConnectedPass", "SIDEWAYS"}};
  const OptionFlags badMemory{{"availableMemoryProportion", "1.5"}};
  requireError<invalid_option>([&] { poplin::preplan({}, oneMatMul(good, &unknown), cache); },
                               {"poplin::preplan", "noSuchOption"});
  requireError<invalid_option>([&] { poplin::preplan({}, oneMatMul(good, &badPass), cache); },
                               {"poplin::preplan", "SIDEWAYS"});
  requireError<invalid_option>([&] { poplin::preplan({}, oneMatMul(good, &badMemory), cache); },
                               {"poplin::preplan", "availableMemoryProportion"});
  requireError<poputil::poplibs_error>([&] { poplin::preplan({}, oneMatMul(good, nullptr), cache); },
                                       {"poplin::preplan", "matmul 0", "options pointer is null"});
  requireError<poputil::poplibs_error>(
      [&] { poplin::preplan({}, oneMatMul(good, &noOptions, nullptr), cache); },
      {"poplin::preplan", "matmul 0", "target pointer is null"});
  const OptionFlags badConv{{"pass", "BACKWARDS"}};
  requireError<invalid_option>(
      [&] { poplin::preplan(oneConv(poplin::ConvParams(FLOAT, 1, {4}, {3}, 2, 2, 1), &badConv), {}, cache); },
      {"poplin::preplan", "convolution 0", "BACKWARDS"});
  CHECK(cache.size() == 0);
}

TEST_CASE("poplin::preplan names the convolution entry and the parameter at fault",
          "[poplin][preplan][error]") {
  poplin::PlanningCache cache;
  requireError<poputil::poplibs_error>(
      [&] {
        poplin::preplan(oneConv(poplin::ConvParams(FLOAT, 1, {4, 4}, {3}, 2, 2, 1)), {}, cache);
      },
      {"poplin::preplan", "convolution 0", "kernelShape"});
  requireError<poputil::poplibs_error>(
      [&] { poplin::preplan(oneConv(poplin::ConvParams(INT, 1, {4}, {3}, 2, 2, 1)), {}, cache); },
      {"poplin::preplan", "convolution 0", "inputType"});
  requireError<poputil::poplibs_error>(
      [&] { poplin::preplan(oneConv(poplin::ConvParams(FLOAT, 1, {4}, {3}, 0, 2, 1)), {}, cache); },
      {"poplin::preplan", "convolution 0", "inputChannelsPerConvGroup"});
  CHECK(cache.size() == 0);
}

TEST_CASE("A set with one bad entry leaves the cache unchanged", "[poplin][preplan][error]") {
  poplin::PlanningCache cache;
  std::set<poplin::MatMulPlanParams> matmuls = oneMatMul({FLOAT, FLOAT, {1, 4, 3}, {1, 3, 5}});
  matmuls.emplace(&target(), poplin::MatMulParams{FLOAT, FLOAT, {1, 4, 3}, {1, 4, 5}}, &noOptions);
  const auto convs = oneConv(poplin::ConvParams(FLOAT, 1, {4}, {3}, 2, 2, 1));
  requireError<poputil::poplibs_error>([&] { poplin::preplan(convs, matmuls, cache); },
                                       {"poplin::preplan", "{1,4,5}", "inner dimensions disagree"});
  CHECK(cache.size() == 0);
  // The good entries alone are planned.
  poplin::preplan(convs, oneMatMul({FLOAT, FLOAT, {1, 4, 3}, {1, 3, 5}}), cache);
  CHECK(cache.size() == 3);
}

TEST_CASE("The older entry points name themselves", "[poplin][preplan][error]") {
  const auto bad = oneMatMul({FLOAT, FLOAT, {1, 4, 3}, {1, 2, 5}});
  poplin::matmul::PlanningCache mmCache;
  requireError<poputil::poplibs_error>([&] { poplin::preplanMatMuls(bad, mmCache); },
                                       {"poplin::preplanMatMuls", "inner dimensions disagree"});
  poplin::PlanningCache cache;
  const auto badConv = oneConv(poplin::ConvParams(FLOAT, 0, {4}, {3}, 2, 2, 1));
  requireError<poputil::poplibs_error>([&] { poplin::preplanConvolutions(badConv, cache); },
                                       {"poplin::preplanConvolutions", "convolution 0", "batchSize"});
  Graph graph(target());
  requireError<poputil::poplibs_error>([&] { poplin::preplanConvolutions(graph, badConv, cache); },
                                       {"poplin::preplanConvolutions", "batchSize"});
  poplin::MatMulToConvOptions convOptions;
  requireError<poputil::poplibs_error>(
      [&] {
        (void)poplin::matMulGetConvPlanParams(oneMatMul({FLOAT, FLOAT, {4, 3}, {3, 5}}), convOptions);
      },
      {"poplin::matMulGetConvPlanParams", "matmul 0", "rank 3"});
  requireError<poputil::poplibs_error>(
      [&] {
        (void)poplin::matMulGetConvPlanParams(oneMatMul({FLOAT, FLOAT, {1, 4, 3}, {1, 3, 5}}, nullptr),
                                              convOptions);
      },
      {"poplin::matMulGetConvPlanParams", "options pointer is null"});
  CHECK(mmCache.size() == 0);
  CHECK(cache.size() == 0);
  CHECK(convOptions.empty());
}
