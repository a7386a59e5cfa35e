// Copyright (c) Aspen contributors.
// Pre-planning (poplin/ConvPreplan.hpp) inside libops: a parameter set becomes the plan
// requests the ops built from it will make, validated the way those ops validate; recording
// a request runs the same getPlan (and cache key) as building.
#pragma once

#include "MatMulPlan.hpp"

#include <poplin/ConvParams.hpp>
#include <poplin/MatMul.hpp>

#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>

#include <string>
#include <vector>

namespace poplin::preplanning {

/// One plan an op will ask the cache for.
struct PlanRequest {
  const poplar::Target *target = nullptr;
  planning::MatMulProblem problem;
  planning::MatMulOptions options;
};

/// The request of matMulGrouped (or, with G = 1, matMul) of `params`: the shapes must be
/// grouped {G, m, k} x {G, k, n} with float or half types and a non-empty inner dimension
/// unless the product is empty. Throws poputil::poplibs_error "<op>: ..." (and
/// poplar::invalid_option for `options`) as building the multiplication would. `target` is
/// only stored. (MatMul.cpp)
PlanRequest matMulRequest(const poplar::Target *target, const MatMulParams &params,
                          const poplar::OptionFlags &options, const std::string &op);

/// The requests of poplin::convolution, createWeights, createConvOutput and createInput with
/// `params` and `options`; validated as those ops validate them. (Convolution.cpp)
std::vector<PlanRequest> convolutionRequests(const poplar::Target &target, const ConvParams &params,
                                             const poplar::OptionFlags &options, const std::string &op);

/// Plans `request` through the cache exactly as building the op does (a request with an
/// empty dimension is not planned by any op and is skipped). (MatMul.cpp)
void record(const PlanRequest &request, PlanningCache &cache);

} // namespace poplin::preplanning
