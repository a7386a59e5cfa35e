// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_REDUCE_HPP
#define POPOPS_REDUCE_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <popops/Operation.hpp>
#include <popops/OperationDef.hpp>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace popops {

/// The operation of a reduction, and whether it scales and/or accumulates into
/// the output (`out = update ? out + scale * r : scale * r`; for LOG_ADD the scale
/// multiplies in the linear domain and `update` log-adds). Scale and update are
/// only valid with ADD, SQUARE_ADD and LOG_ADD.
struct ReduceParams {
  ReduceParams() = default;
  ReduceParams(popops::Operation op, bool update = false) : op(op), update(update), useScale(false) {}
  /// `scale` is a scalar FLOAT (or the output's type) tensor.
  ReduceParams(popops::Operation op, bool update, poplar::Tensor scale)
      : op(op), update(update), useScale(true), scale(scale) {}
  ReduceParams(popops::Operation op, float constantScale, bool update = false) = delete;

  popops::Operation op = popops::Operation::ADD;
  bool update = false;
  bool useScale = false;
  poplar::Tensor scale;
};

/// Reduces `in` over the dimensions `dims`; the result has the remaining
/// dimensions in order and element type `outType`. Half inputs accumulate in float.
/// Types: ADD, SQUARE_ADD, MUL: float/half/int/unsigned (float<->half allowed);
/// MIN, MAX: float/half/int/unsigned; LOGICAL_AND/OR: bool; LOG_ADD: float/half.
/// Options: `accumType.interTile`, `accumType.inVertex` (float|half).
///
/// Example: `Tensor rowSums = popops::reduce(graph, m, poplar::FLOAT, {1}, popops::Operation::ADD, prog);`
poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Type &outType,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {});

/// `reduce(graph, in, in.elementType(), dims, ...)`.
poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const std::vector<std::size_t> &dims,
                      ReduceParams params, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

/// Reduces into the existing tensor `out` (its shape must be the result's shape).
/// An unmapped `out` is mapped where the results are computed.
void reduceWithOutput(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &out,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {});

/// Compute-set forms: the vertices go into compute sets appended to `css` (reused
/// when `css` already holds enough); the caller executes them in order:
/// `for (auto &cs : css) prog.add(poplar::program::Execute(cs));`
poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Type &outType,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      std::vector<poplar::ComputeSet> &css, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {});
poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const std::vector<std::size_t> &dims,
                      ReduceParams params, std::vector<poplar::ComputeSet> &css,
                      const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});
void reduceWithOutput(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &out,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      std::vector<poplar::ComputeSet> &css, const poplar::DebugContext &debugContext = {},
                      const poplar::OptionFlags &options = {});

/// One reduction of reduceMany(): the arguments of reduce(). `outType` is used when
/// `useOutType` is true and reduceMany() creates the outputs.
struct SingleReduceOp {
  poplar::Tensor in;
  std::vector<std::size_t> dims;
  ReduceParams params;
  bool useOutType;
  poplar::Type outType;
  std::string debugName;

  SingleReduceOp(poplar::Tensor in, std::vector<std::size_t> dims, ReduceParams params, poplar::Type outType,
                 std::string debugName = "")
      : in(std::move(in)), dims(std::move(dims)), params(std::move(params)), useOutType(true),
        outType(outType), debugName(std::move(debugName)) {}

  SingleReduceOp(poplar::Tensor in, std::vector<std::size_t> dims, ReduceParams params,
                 std::string debugName = "")
      : in(std::move(in)), dims(std::move(dims)), params(std::move(params)), useOutType(false),
        outType(poplar::BOOL), debugName(std::move(debugName)) {}
};

/// Performs several reductions. With `outputs` empty, creates one output per reduction
/// (of `outType`, or the input's type) and appends it to `outputs`; otherwise `outputs` must
/// have one tensor per reduction, which is written (or updated, for `params.update`).
/// Example: `std::vector<Tensor> outs; reduceMany(g, {{a, {0}, ADD}, {b, {1}, MAX}}, outs, prog);`
/// \throws poputil::poplibs_error if `outputs` is neither empty nor of the right size, or an
///         update reduction has no output.
void reduceMany(poplar::Graph &graph, const std::vector<SingleReduceOp> &reductions,
                std::vector<poplar::Tensor> &outputs, poplar::program::Sequence &prog,
                const poplar::DebugContext &debugContext = {}, const poplar::OptionFlags &options = {});

} // namespace popops

#endif
