// Copyright (c) Aspen contributors. PopLibs-compatible public API.
/// \file
/// Matrix multiplication on the IPU: `C = A * B` split over tiles by a planner.
#ifndef POPLIN_MATMUL_HPP
#define POPLIN_MATMUL_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>
#include <poplin/ConvParams.hpp>
#include <poplin/Convolution.hpp>

#include <cstddef>
#include <iosfwd>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace poplin {

namespace matmul {
/// \deprecated PopLibs' older spelling; use poplin::PlanningCache.
class PlanningCache : public poplin::PlanningCache {
public:
  poplin::PlanningCache &getImpl() { return *this; }
};
} // namespace matmul

/// Multiplies two matrices: `C = A * B` with `A` of shape {m, k} and `B` of
/// shape {k, n}; the result {m, n} has element type `outputType`.
///
/// Options (unknown keys or bad values throw poplar::invalid_option):
///  * `availableMemoryProportion` decimal in [0, 1] [=0.6]: share of each
///    tile's memory the planner may use for temporaries (operand copies and
///    partial sums). When no plan fits, the one using least memory is taken.
///  * `partialsType` (half, float) [=float]: type of partial sums when the
///    inner dimension is split over tiles.
///  * `fullyConnectedPass` (NONE, INFERENCE_FWD, TRAINING_FWD, TRAINING_BWD,
///    TRAINING_WU) [=NONE]: accepted for compatibility; planning is the same.
///  * `inputRHSIsPreArranged`, `use128BitConvUnitLoad`,
///    `enableMultiStageReduce`, `enableFastReduce`, `remapOutputTensor`,
///    `gatherOutput` (true, false): accepted for compatibility.
///
/// `A` and `B` may be any views (e.g. `x.transpose()`) mapped anywhere; the
/// result is a new tensor mapped by the plan.
///
/// Example: `Tensor c = poplin::matMul(graph, a, b, seq, poplar::FLOAT, "fc");`
///
/// \param graph        The graph to add the operation to.
/// \param A            Left operand, rank 2 {m, k}, FLOAT or HALF.
/// \param B            Right operand, rank 2 {k, n}, same type as `A`.
/// \param prog         Sequence the multiplication is appended to.
/// \param outputType   Element type of the result (FLOAT or HALF).
/// \param debugContext Names the operation's tensors and compute sets.
/// \param options      See above.
/// \param cache        Optional plan cache.
/// \returns The product, shape {m, n}.
poplar::Tensor matMul(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                      poplar::program::Sequence &prog, const poplar::Type &outputType,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                      PlanningCache *cache = nullptr);

/// Multiplies two matrices; the result has the element type of `A`. See the
/// overload with `outputType`.
poplar::Tensor matMul(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                      poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Multiplies two matrices into an existing tensor `out` of shape {m, n}
/// (any type FLOAT or HALF, any mapping).
///
/// Example: `poplin::matMulWithOutput(graph, a, b, c, seq, "mm");`
void matMulWithOutput(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                      poplar::Tensor &out, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                      PlanningCache *cache = nullptr);

/// Writes a description of the plan `matMul` would use for these shapes
/// (the split of m, n and k over tiles and its estimated cost) to `out`.
///
/// Example: `poplin::matMulReportPlan(std::cout, graph, FLOAT, FLOAT, {64, 32}, {32, 16});`
void matMulReportPlan(std::ostream &out, const poplar::Graph &graph, const poplar::Type &inputType,
                      const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                      const std::vector<std::size_t> &bShape, const poplar::OptionFlags &options = {},
                      PlanningCache *cache = nullptr);

/// Multiplies groups of matrices: `C[g] = A[g] * B[g]` with `A` {G, m, k} and
/// `B` {G, k, n}; the result {G, m, n} has element type `outputType`.
///
/// Example: `Tensor c = poplin::matMulGrouped(graph, a, b, seq, poplar::FLOAT, "bmm");`
poplar::Tensor matMulGrouped(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                             poplar::program::Sequence &prog, const poplar::Type &outputType,
                             const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Grouped multiplication into an existing tensor `out` of shape {G, m, n}.
void matMulGroupedWithOutput(poplar::Graph &graph, const poplar::Tensor &A, const poplar::Tensor &B,
                             poplar::Tensor &out, poplar::program::Sequence &prog,
                             const poplar::DebugContext &debugContext = {},
                             const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Writes the plan of a grouped multiplication to `out`.
void matMulGroupedReportPlan(std::ostream &out, const poplar::Graph &graph, const poplar::Type &inputType,
                             const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                             const std::vector<std::size_t> &bShape, const poplar::OptionFlags &options = {},
                             PlanningCache *cache = nullptr);

/// Multiplies and accumulates: `C += k * A * B` (C {m, n}, FLOAT or HALF).
///
/// Example: `poplin::matMulAcc(graph, c, 0.5f, a, b, seq, "acc");`
void matMulAcc(poplar::Graph &graph, const poplar::Tensor &C, float k, const poplar::Tensor &A,
               const poplar::Tensor &B, poplar::program::Sequence &prog,
               const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
               PlanningCache *cache = nullptr);

/// Multiplies and accumulates with a scale held in a one-element tensor of
/// the type of `A`: `C += k[0] * A * B`.
void matMulAcc(poplar::Graph &graph, const poplar::Tensor &C, const poplar::Tensor &k,
               const poplar::Tensor &A, const poplar::Tensor &B, poplar::program::Sequence &prog,
               const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
               PlanningCache *cache = nullptr);

/// Grouped multiply and accumulate: `C[g] += k * A[g] * B[g]`.
void matMulGroupedAcc(poplar::Graph &graph, const poplar::Tensor &C, float k, const poplar::Tensor &A,
                      const poplar::Tensor &B, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                      PlanningCache *cache = nullptr);

/// Grouped multiply and accumulate with a one-element tensor scale.
void matMulGroupedAcc(poplar::Graph &graph, const poplar::Tensor &C, const poplar::Tensor &k,
                      const poplar::Tensor &A, const poplar::Tensor &B, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {},
                      PlanningCache *cache = nullptr);

/// Creates the left operand {m, k} of a multiplication by a {k, n} matrix,
/// mapped so that `matMul` needs little exchange (each row block lives on a
/// tile that uses it).
///
/// Example: `Tensor a = poplin::createMatMulInputLHS(graph, FLOAT, {m, k}, {k, n}, "a");`
poplar::Tensor createMatMulInputLHS(poplar::Graph &graph, const poplar::Type &inputType,
                                    const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                                    const std::vector<std::size_t> &bShape,
                                    const poplar::DebugContext &debugContext,
                                    const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);
/// As above with output type equal to the input type.
poplar::Tensor createMatMulInputLHS(poplar::Graph &graph, const poplar::Type &dataType,
                                    const std::vector<std::size_t> &aShape,
                                    const std::vector<std::size_t> &bShape,
                                    const poplar::DebugContext &debugContext,
                                    const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Creates the right operand {k, n} of a multiplication of a {m, k} matrix.
poplar::Tensor createMatMulInputRHS(poplar::Graph &graph, const poplar::Type &inputType,
                                    const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                                    const std::vector<std::size_t> &bShape,
                                    const poplar::DebugContext &debugContext,
                                    const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);
/// As above with output type equal to the input type.
poplar::Tensor createMatMulInputRHS(poplar::Graph &graph, const poplar::Type &dataType,
                                    const std::vector<std::size_t> &aShape,
                                    const std::vector<std::size_t> &bShape,
                                    const poplar::DebugContext &debugContext,
                                    const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Creates a result tensor {m, n} laid out as `matMul` would lay it out.
poplar::Tensor createMatMulOutput(poplar::Graph &graph, const poplar::Type &inputType,
                                  const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                                  const std::vector<std::size_t> &bShape,
                                  const poplar::DebugContext &debugContext,
                                  const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);
/// As above with output type equal to the input type.
poplar::Tensor createMatMulOutput(poplar::Graph &graph, const poplar::Type &dataType,
                                  const std::vector<std::size_t> &aShape,
                                  const std::vector<std::size_t> &bShape,
                                  const poplar::DebugContext &debugContext,
                                  const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);

/// Grouped forms of the creators: shapes are {G, m, k} and {G, k, n}.
poplar::Tensor
createMatMulGroupedInputLHS(poplar::Graph &graph, const poplar::Type &inputType,
                            const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                            const std::vector<std::size_t> &bShape, const poplar::DebugContext &debugContext,
                            const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);
poplar::Tensor
createMatMulGroupedInputRHS(poplar::Graph &graph, const poplar::Type &inputType,
                            const poplar::Type &outputType, const std::vector<std::size_t> &aShape,
                            const std::vector<std::size_t> &bShape, const poplar::DebugContext &debugContext,
                            const poplar::OptionFlags &options = {}, PlanningCache *cache = nullptr);
poplar::Tensor
createMatMulGroupedOutput(poplar::Graph &graph, const poplar::Type &inputType, const poplar::Type &outputType,
                          const std::vector<std::size_t> &aShape, const std::vector<std::size_t> &bShape,
                          const poplar::DebugContext &debugContext, const poplar::OptionFlags &options = {},
                          PlanningCache *cache = nullptr);

/// Transposes the last two dimensions of a grouped matrix {G, r, c} -> {G, c, r} (a view).
poplar::Tensor transposeGroupedMatrix(const poplar::Tensor &A);

/// Checks matrix-multiply options; throws poplar::invalid_option naming an
/// unknown key or a bad value.
void matmulValidateOptions(const poplar::OptionFlags &options);

/// The parameters of a matrix multiplication `C = A * B` (as PopLibs describes one for
/// planning, e.g. poplin::fc::getMatMulPrePlanParameters): operand and result types and the
/// shapes of `A` and `B` ({m, k} and {k, n}, or grouped {G, m, k} and {G, k, n}).
struct MatMulParams {
  poplar::Type inputType;
  poplar::Type outputType;
  std::vector<std::size_t> aShape;
  std::vector<std::size_t> bShape;

  /// Orders by inputType, outputType, aShape, then bShape.
  friend bool operator<(const MatMulParams &a, const MatMulParams &b);
};

// --- Pre-planning (PopLibs 3.x) -------------------------------------------------
//
// Aspen plans a multiplication or convolution when the op is built; planning is
// deterministic and cheap (no search over thousands of candidates as in PopLibs).
// Pre-planning therefore does two things:
//  * it validates every parameter set as building the op would: bad shapes or
//    types throw poputil::poplibs_error naming the function, the entry and what
//    is wrong, bad options throw poplar::invalid_option; a set with a bad entry
//    leaves the cache unchanged;
//  * it records in the PlanningCache the plans the ops built later with the same
//    target, parameters, options and cache will look up, so they are not planned
//    again (PlanningCache::size() counts them).
// It does not change any plan: ops built afterwards with the cache give exactly
// the tensors, mappings and results they give without pre-planning. See
// poplin/ConvPreplan.hpp for poplin::preplan and docs/poplibs-coverage.md.

/// The parameters to pre-plan one matrix multiplication: the target the graph
/// will be built for, the multiplication (grouped shapes {G, m, k} and {G, k, n},
/// as PopLibs requires; an ungrouped matMul of {m, k} x {k, n} is G = 1) and its
/// options (see matMul). The pointers must stay valid during the call.
using MatMulPlanParams = std::tuple<const poplar::Target *, const MatMulParams, const poplar::OptionFlags *>;

/// The convolution options made from each matrix-multiply options pointer by
/// matMulGetConvPlanParams.
using MatMulToConvOptions = std::unordered_map<const poplar::OptionFlags *, poplar::OptionFlags>;

/// The convolutions PopLibs expresses these multiplications as: {G, m, k} x
/// {G, k, n} is a 1-d convolution with batch m, field {1}, kernel {1}, k input
/// and n output channels per group and G groups. The options of each
/// multiplication are converted once per distinct pointer into
/// `matmulToConvOpts` (partialsType, availableMemoryProportion and the
/// reduction flags carried over; fullyConnectedPass X becomes pass FC_X, NONE
/// becomes NONE_MATMUL), and the returned entries point into that map.
/// Aspen's matMul does not plan through these convolutions; this conversion is
/// for clients that use it.
///
/// Example: `poplin::MatMulToConvOptions o; auto convs = poplin::matMulGetConvPlanParams(mms, o);`
///
/// \param matmuls          The multiplications (shapes must be grouped, rank 3).
/// \param matmulToConvOpts Receives the converted options.
/// \returns The corresponding convolution parameter sets.
std::set<ConvPlanParams> matMulGetConvPlanParams(const std::set<MatMulPlanParams> &matmuls,
                                                 MatMulToConvOptions &matmulToConvOpts);

/// \deprecated Use poplin::preplan (poplin/ConvPreplan.hpp): same as
/// `preplan({}, matmuls, cache.getImpl())`.
///
/// \param matmuls The multiplications to validate and plan.
/// \param cache   The planning cache to update.
void preplanMatMuls(const std::set<MatMulPlanParams> &matmuls, matmul::PlanningCache &cache);

} // namespace poplin

#endif
