// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// Planning convolutions and matrix multiplications ahead of building them
/// (PopLibs 3.x's poplin/ConvPreplan.hpp).
///
/// What pre-planning does in Aspen. Aspen plans each op when it is built, and that
/// planning is deterministic and cheap, so there is no slow search to move ahead of
/// graph construction. `preplan`:
///  * validates every entry as building the op would: shapes, types and convolution
///    parameters (poputil::poplibs_error "poplin::preplan: matmul <i> ..." or
///    "... convolution <i> ...", naming what is wrong), the options
///    (poplar::invalid_option), and that the target and options pointers are set.
///    Everything is checked before anything is recorded, so a set with a bad entry
///    leaves the cache unchanged;
///  * records in `cache` the plans that ops built later with the same target,
///    parameters, options and cache look up:
///      - a multiplication {G, m, k} x {G, k, n}: the plan of matMul / matMulGrouped /
///        matMulWithOutput and of the createMatMul* creators for those shapes (G = 1 is
///        the plan of the ungrouped {m, k} x {k, n}). matMulAcc plans its accumulating
///        form when it is built;
///      - a convolution: the plans of its forward product (used by convolution,
///        createWeights and createConvOutput with these parameters) and of the layout
///        createInput uses. The weight-update pass (calculateWeightDeltas,
///        convolutionWeightUpdate) plans its own product when it is built.
/// What it does not do: change any plan. Ops built after pre-planning produce the
/// same tensors, tile mappings and results as without it; `options` keys that Aspen
/// accepts without effect (e.g. `pass`, `fullyConnectedPass`) are validated only.
/// Unlike PopLibs, each entry is planned for its own target (PopLibs plans all with
/// the first entry's and requires them to match).
#ifndef POPLIN_CONVPREPLAN_HPP
#define POPLIN_CONVPREPLAN_HPP

#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>

#include <set>
#include <tuple>

namespace poplin {

/// Validates and plans the given convolutions and matrix multiplications, recording
/// the plans in `cache` (see the file comment).
///
/// Example:
/// \code
///   poplin::PlanningCache cache;
///   poplar::OptionFlags mmOpts{{"partialsType", "float"}};
///   poplin::MatMulParams mm{poplar::FLOAT, poplar::FLOAT, {1, 64, 32}, {1, 32, 16}};
///   poplin::preplan({}, {std::make_tuple(&graph.getTarget(), mm, &mmOpts)}, cache);
///   poplar::Tensor c = poplin::matMul(graph, a, b, seq, "mm", mmOpts, &cache);
/// \endcode
///
/// \param convs   (target, convolution parameters, options) tuples.
/// \param matmuls (target, matrix-multiply parameters, options) tuples.
/// \param cache   The planning cache to update.
void preplan(const std::set<ConvPlanParams> &convs, const std::set<MatMulPlanParams> &matmuls,
             PlanningCache &cache);

} // namespace poplin

#endif
