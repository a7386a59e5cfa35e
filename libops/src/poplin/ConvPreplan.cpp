// Copyright (c) Aspen contributors.
// poplin::preplan and PopLibs 3.x's older pre-planning entry points (poplin/ConvPreplan.hpp,
// poplin/Convolution.hpp, poplin/MatMul.hpp): every entry is turned into the plan requests
// its ops will make (validating it as they would), then, only when all entries are good,
// the requests are planned into the cache.
#include <poplin/ConvPreplan.hpp>

#include "Preplan.hpp"
#include "common/OpsCommon.hpp"

#include <poputil/exceptions.hpp>

#include <string>
#include <vector>

using namespace poplar;

namespace poplin {

namespace {

using preplanning::PlanRequest;

std::string matMulName(std::size_t index, const MatMulParams &params) {
  return "matmul " + std::to_string(index) + " (A " + aspen::ops::shapeString(params.aShape) + " x B " +
         aspen::ops::shapeString(params.bShape) + ")";
}

// Throws when the target or options pointer of an entry is null.
template <class Entry> void requirePointers(const Entry &entry, const std::string &where) {
  if (std::get<0>(entry) == nullptr)
    throw poputil::poplibs_error(where + ": the target pointer is null");
  if (std::get<2>(entry) == nullptr)
    throw poputil::poplibs_error(where + ": the options pointer is null");
}

void preplanImpl(const std::set<ConvPlanParams> &convs, const std::set<MatMulPlanParams> &matmuls,
                 PlanningCache &cache, const std::string &op) {
  // Validate everything first: a bad entry leaves the cache as it was.
  std::vector<PlanRequest> requests;
  std::size_t index = 0;
  for (const ConvPlanParams &conv : convs) {
    const std::string where = op + ": convolution " + std::to_string(index++);
    requirePointers(conv, where);
    for (PlanRequest &r :
         preplanning::convolutionRequests(*std::get<0>(conv), std::get<1>(conv), *std::get<2>(conv), where))
      requests.push_back(r);
  }
  index = 0;
  for (const MatMulPlanParams &mm : matmuls) {
    const std::string where = op + ": " + matMulName(index++, std::get<1>(mm));
    requirePointers(mm, where);
    requests.push_back(preplanning::matMulRequest(std::get<0>(mm), std::get<1>(mm), *std::get<2>(mm), where));
  }
  for (const PlanRequest &r : requests)
    preplanning::record(r, cache);
}

// The convolution options PopLibs gives the convolution a multiplication is planned as.
OptionFlags convOptionsOf(const OptionFlags &mmOptions, const planning::MatMulOptions &parsed) {
  OptionFlags conv;
  conv.set("partialsType", parsed.partialsType == HALF ? "half" : "float");
  conv.set("availableMemoryProportion", std::to_string(parsed.availableMemoryProportion));
  conv.set("pass", parsed.fullyConnectedPass == "NONE" ? "NONE_MATMUL" : "FC_" + parsed.fullyConnectedPass);
  for (const auto &kv : mmOptions) {
    if (kv.first == "use128BitConvUnitLoad" || kv.first == "enableMultiStageReduce" ||
        kv.first == "enableFastReduce" || kv.first == "remapOutputTensor" || kv.first == "planConstraints")
      conv.set(kv.first, kv.second);
    else if (kv.first == "gatherOutput")
      conv.set("gatherConvOutput", kv.second);
  }
  return conv;
}

} // namespace

void preplan(const std::set<ConvPlanParams> &convs, const std::set<MatMulPlanParams> &matmuls,
             PlanningCache &cache) {
  preplanImpl(convs, matmuls, cache, "poplin::preplan");
}

void preplanMatMuls(const std::set<MatMulPlanParams> &matmuls, matmul::PlanningCache &cache) {
  preplanImpl({}, matmuls, cache.getImpl(), "poplin::preplanMatMuls");
}

void preplanConvolutions(const std::set<ConvPlanParams> &convs, PlanningCache &cache) {
  preplanImpl(convs, {}, cache, "poplin::preplanConvolutions");
}

void preplanConvolutions(Graph &graph, const std::set<ConvPlanParams> &convs, PlanningCache &cache) {
  (void)graph; // each entry names its target
  preplanImpl(convs, {}, cache, "poplin::preplanConvolutions");
}

std::set<ConvPlanParams> matMulGetConvPlanParams(const std::set<MatMulPlanParams> &matmuls,
                                                 MatMulToConvOptions &matmulToConvOpts) {
  const std::string op = "poplin::matMulGetConvPlanParams";
  std::set<ConvPlanParams> convs;
  std::size_t index = 0;
  for (const MatMulPlanParams &mm : matmuls) {
    const MatMulParams &params = std::get<1>(mm);
    const std::string where = op + ": " + matMulName(index++, params);
    const OptionFlags *mmOptions = std::get<2>(mm);
    if (mmOptions == nullptr)
      throw poputil::poplibs_error(where + ": the options pointer is null");
    const PlanRequest r = preplanning::matMulRequest(std::get<0>(mm), params, *mmOptions, where);
    auto inserted = matmulToConvOpts.emplace(mmOptions, OptionFlags{});
    if (inserted.second)
      inserted.first->second = convOptionsOf(*mmOptions, r.options);
    // {G, m, k} x {G, k, n}: batch m, k input and n output channels per group, G groups.
    const ConvParams conv(params.inputType, params.outputType, r.problem.m, {1}, {1}, r.problem.k,
                          r.problem.n, r.problem.groups);
    convs.emplace(std::get<0>(mm), conv, &inserted.first->second);
  }
  return convs;
}

} // namespace poplin
