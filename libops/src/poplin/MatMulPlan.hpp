// Copyright (c) Aspen contributors.
// The matrix-multiply planner: how to split {G, m, k} x {G, k, n} over tiles,
// chosen by the cost model (compute cycles at the AMP rate, exchange bytes at
// the exchange bandwidth, a reduction superstep when k is split) under the
// per-tile memory budget. Also the cycle estimators of the two vertices, which
// the graph builder attaches to each vertex so that planned and reported
// cycles agree.
#pragma once

#include "PlanConstraints.hpp"

#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace poplin::planning {

/// The parsed and validated matmul options.
struct MatMulOptions {
  double availableMemoryProportion = 0.6;
  poplar::Type partialsType = poplar::FLOAT;
  std::string fullyConnectedPass = "NONE";
  /// `planConstraints`, mapped onto the plan's splits (docs/matmul.md, "Plan constraints").
  MatMulConstraints constraints;
};

/// Parses `options`; throws poplar::invalid_option naming an unknown key or a bad value.
MatMulOptions parseMatMulOptions(const poplar::OptionFlags &options, const std::string &op);

/// What is multiplied: G products of {m, k} x {k, n}.
struct MatMulProblem {
  std::size_t groups = 1, m = 0, k = 0, n = 0;
  poplar::Type inputType = poplar::FLOAT;
  poplar::Type outputType = poplar::FLOAT;
  poplar::Type partialsType = poplar::FLOAT;
  /// The result is added to an existing tensor (matMulAcc): always reduce.
  bool accumulate = false;
};

/// Estimated cost of a plan on its busiest tile, in cycles and bytes.
struct MatMulCost {
  std::uint64_t computeCycles = 0;
  std::uint64_t exchangeCycles = 0;
  std::uint64_t reduceCycles = 0;
  std::uint64_t totalCycles = 0;
  std::uint64_t tempBytesPerTile = 0;
  std::uint64_t totalBytesPerTile = 0;
  /// The compiled memory of the fullest tile the plan uses, when A and B are laid out as
  /// createMatMulInputLHS/RHS lay them out: the compiler's per-tile stacks, the tile's shares of
  /// A, B and the result (all serial passes), its vertices' state, and the temporaries' peak
  /// (tempBytesPerTile: the operand blocks received for one pass and the partial sums kept across
  /// passes, or the reduction's). Reported (matMulReportPlan), compared with the compiled memory
  /// report by poplin_matmul_memory; the budget is still on the temporaries, as PopLibs'.
  std::uint64_t peakBytesPerTile = 0;
  /// Its parts that serial passes over rows or columns multiply: A's, B's and the result's share
  /// of one pass, and the state of one pass's vertices.
  std::uint64_t aBytesPerTile = 0, bBytesPerTile = 0, outBytesPerTile = 0, vertexBytesPerTile = 0;
  bool fitsTempBudget = false;
};

/// A split of the problem over tiles. The block (g, i, j, d) — groups
/// [g*groupBlock, ...), rows [i*rowBlock, ...), columns [j*colBlock, ...),
/// inner [d*depthBlock, ...) — is computed on tile tileOf(g, i, j, d).
///
/// A product too large to fit in one superstep is computed in serial passes, one after
/// another, of one kind (as PopLibs plans them, one kind at a time):
/// - `serialRows` / `serialCols` passes over the rows / columns of the result: pass r (c)
///   computes rows serialRange(m, serialRows, r) (columns serialRange(n, serialCols, c)) with
///   the splits above (blocks of the widest pass), so it needs only its share of operand
///   copies and partial sums;
/// - `serialInner` passes over the inner dimension: pass s multiplies inner elements
///   serialRange(k, serialInner, s) and adds its products into the partial sums the earlier
///   passes left (kept on their tiles across the passes), which are reduced (or cast) once at
///   the end. depthBlock is that of the widest inner pass.
struct MatMulPlan {
  unsigned groupSplit = 1, rowSplit = 1, colSplit = 1, depthSplit = 1;
  std::size_t groupBlock = 0, rowBlock = 0, colBlock = 0, depthBlock = 0;
  unsigned serialRows = 1, serialCols = 1, serialInner = 1;
  MatMulCost cost;

  unsigned tilesUsed() const { return groupSplit * rowSplit * colSplit * depthSplit; }
  unsigned tileOf(unsigned g, unsigned i, unsigned j, unsigned d) const {
    return ((g * rowSplit + i) * colSplit + j) * depthSplit + d;
  }
  unsigned serialPasses() const { return serialRows * serialCols * serialInner; }
  /// True when the blocks' products go to partial sums that a second superstep reduces (or
  /// casts) into the result: the inner dimension is split over tiles, the result accumulates
  /// (matMulAcc), or inner serial passes accumulate in a partials type the output does not have.
  bool reduces(const MatMulProblem &p) const {
    return depthSplit > 1 || p.accumulate || (serialInner > 1 && p.outputType != p.partialsType);
  }
};

/// Elements [first, first + count) of a dimension of `size` that serial pass `index` of `passes` takes.
struct SerialRange {
  std::size_t first = 0, count = 0;
};
SerialRange serialRange(std::size_t size, unsigned passes, unsigned index);

/// The problem and the plan of the output pass (r, c) of `plan` (rows serialRange(m,
/// serialRows, r), columns serialRange(n, serialCols, c)): no serial passes over rows or
/// columns left; inner serial passes kept.
MatMulProblem passProblem(const MatMulProblem &problem, const MatMulPlan &plan, unsigned r, unsigned c);
MatMulPlan passPlan(const MatMulProblem &problem, const MatMulPlan &plan, unsigned r, unsigned c);

/// The problem and the one-pass plan of inner pass `s` of a plan without row or column
/// passes (inner elements serialRange(k, serialInner, s)).
MatMulProblem innerPassProblem(const MatMulProblem &problem, const MatMulPlan &plan, unsigned s);
MatMulPlan innerPassPlan(const MatMulProblem &problem, const MatMulPlan &plan, unsigned s);

/// The cheapest plan for `problem` on `target` within the memory budget (or,
/// when none fits, the one needing least memory). One pass when that fits; otherwise, of the
/// fewest serial passes over rows, over columns and over the inner dimension that fit, the
/// cheapest.
/// Splits named by `options.constraints` are taken as given (memory budget or not); one that
/// cannot be met throws poplar::invalid_option naming the option and key.
MatMulPlan planMatMul(const poplar::Target &target, const MatMulProblem &problem,
                      const MatMulOptions &options);

/// Writes a readable description of `plan`.
void describePlan(std::ostream &os, const poplar::Target &target, const MatMulProblem &problem,
                  const MatMulOptions &options, const MatMulPlan &plan);

/// Multiply-accumulates per cycle of one tile's AMP for this input/partials pair.
unsigned ampMacsPerCycle(const poplar::Target &target, const poplar::Type &inputType,
                         const poplar::Type &partialsType);

/// Cycle estimate (machine cycles) of a MatMulBlock vertex of {rows, depth} x {depth, cols}.
std::uint64_t estimateBlockCycles(const poplar::Target &target, const poplar::Type &inputType,
                                  const poplar::Type &partialsType, std::size_t rows, std::size_t depth,
                                  std::size_t cols);

/// Cycle estimate (machine cycles) of a MatMulReduce(Acc) vertex adding
/// `numPartials` partials for each of `elements` outputs.
std::uint64_t estimateReduceCycles(const poplar::Target &target, const poplar::Type &partialsType,
                                   std::size_t elements, std::size_t numPartials);

} // namespace poplin::planning
