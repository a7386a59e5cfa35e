// Copyright (c) Aspen contributors.
// PopLibs' `planConstraints` option (a JSON object) for matMul and convolution: parsed and
// validated as PopLibs validates it, then mapped onto the splits Aspen's planner chooses
// (docs/matmul.md, "Plan constraints").
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace poplin::planning {

/// One constrained value and the path of the key(s) that gave it ("0.partition.batchSplit").
struct SplitConstraint {
  unsigned value = 1;
  std::string key; // empty: not constrained
  bool set() const { return !key.empty(); }
};

/// A `planConstraints` value in PopLibs' convolution vocabulary (level 0, the tile partition).
struct ConvPlanConstraints {
  SplitConstraint convGroupSplit, batchSplit, inChanParallel, inChanSerial, outChanParallel, outChanSerial;
  std::map<unsigned, SplitConstraint> fieldSplit, kernelSplit;
  bool swapOperands = false;
  std::string swapOperandsKey;
  /// Keys PopLibs accepts that name choices Aspen's planner does not make (method, grouping,
  /// other transforms, the tile level): accepted and ignored, listed in the plan report.
  std::vector<std::string> ignored;
};

/// Parses `json` (empty: no constraints). Throws poplar::invalid_option
/// "<op>: option 'planConstraints': '<path>': ..." for JSON or keys PopLibs rejects.
ConvPlanConstraints parsePlanConstraints(const std::string &json, const std::string &op);

/// The constraints on the splits of Aspen's matrix-product plan.
struct MatMulConstraints {
  SplitConstraint groupSplit, rowSplit, colSplit, depthSplit;
  /// Serial passes over the result's rows, its columns, the inner dimension.
  SplitConstraint serialRows, serialCols, serialInner;
  std::vector<std::string> ignored;
  /// The option's text, for plan-cache keys, and the operation it was given to, for errors.
  std::string text, op;
  bool any() const {
    return groupSplit.set() || rowSplit.set() || colSplit.set() || depthSplit.set() || serialRows.set() ||
           serialCols.set() || serialInner.set();
  }
};

/// A matrix product {G, m, k} x {G, k, n} as PopLibs plans it: a convolution with batch m, k input
/// and n output channels, a field and kernel of one element (swapOperands: batch n, output
/// channels m). outChanSplit.serial: serial passes over the columns (swapOperands: the rows),
/// inChanSplit.serial: over the inner dimension. Throws poplar::invalid_option naming the key
/// of a constraint Aspen's plan cannot meet (a field or kernel split above 1).
MatMulConstraints matMulConstraints(const ConvPlanConstraints &c, const std::string &text,
                                    const std::string &op);

/// Which product of a convolution the constraints are mapped onto.
enum class ConvProduct {
  Forward,     // {G, Co, K*Ci} x {G, K*Ci, B*O'}
  WeightUpdate // {G, Co, B*O'} x {G, B*O', K*Ci}
};

/// The sizes of a convolution the constraints split.
struct ConvSizes {
  unsigned numTiles = 0; // of the target; 0: not checked
  std::size_t groups = 1, batch = 1, inChans = 1, outChans = 1;
  std::vector<std::size_t> outField, kernel; // the product's output field and kernel positions
  std::vector<std::size_t> inField;          // the input field (the swapped convolution's kernel)
};

/// The constraints of a convolution of `sizes` mapped onto the product `which` runs, as a
/// matMul `planConstraints` value; throws poplar::invalid_option naming the convolution's key
/// when it cannot be met (a split above its dimension, two kinds of serial split, a parallel
/// split wider than a serial pass). With swapOperands the partition names PopLibs' swapped
/// convolution (batch and output channels exchanged, the input field its kernel).
std::string convToMatMulConstraints(const ConvPlanConstraints &c, const ConvSizes &sizes, ConvProduct which,
                                    const std::string &op);

/// The splits of a planned product (Aspen's MatMulPlan, without its block sizes).
struct ProductSplits {
  unsigned groups = 1, rows = 1, cols = 1, depth = 1;
  unsigned serialRows = 1, serialCols = 1, serialInner = 1;
};

/// The plan of the product `which` of a convolution of `sizes`, written back in PopLibs' convolution
/// vocabulary (`planConstraintsOutputFilename`): a complete level-0 `planConstraints` JSON object
/// that convToMatMulConstraints maps back onto the same splits. A column or inner split of the
/// product is factored over the dimensions it flattens (batch x field, kernel x input channels);
/// where no factoring meets it exactly (or the plan splits serially over a dimension PopLibs' keys
/// do not name), the nearest split the keys can name below it is written, and `exact` is set to
/// false.
std::string convConstraintsOfPlan(const ProductSplits &splits, const ConvSizes &sizes, ConvProduct which,
                                  bool *exact = nullptr);

} // namespace poplin::planning
