// Copyright (c) Aspen contributors. PopLibs-compatible public API.
// The sequence machinery PopLibs' recurrent layers share (popnn::rnn): the parameters of a
// recurrent layer, tensors laid out for slicing one time step at a time, and a loop that runs
// a caller's cell over the time steps (docs/ops-nn.md, "Recurrent layers").
#ifndef POPNN_RNN_HPP
#define POPNN_RNN_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <poputil/DebugInfo.hpp>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace popnn {
namespace rnn {

/// The shape of a recurrent layer: element type, batch, time steps and the sizes of its input
/// and output ({inputSize, outputSize}).
///
/// Example: `popnn::rnn::RnnParams p(poplar::FLOAT, 4, 10, {16, 32});`
struct RnnParams {
  /// The element type of the layer's tensors.
  poplar::Type dataType;
  /// The number of sequences processed together.
  std::size_t batchSize;
  /// The number of time steps (the most any sequence of the batch has).
  std::size_t maxTimeSteps;
  /// \deprecated The same as maxTimeSteps.
  std::size_t timeSteps;
  /// When valid: the number of time steps of each sequence of the batch (shape {batchSize}),
  /// read at run time; default-constructed when every sequence has maxTimeSteps.
  poplar::Tensor varTimeSteps;
  /// {inputSize, outputSize}.
  std::vector<std::size_t> layerSizes;

  RnnParams(poplar::Type dataType, std::size_t batchSize, std::size_t timeSteps,
            std::vector<std::size_t> layerSizes);
  RnnParams(poplar::Type dataType, std::size_t batchSize, std::size_t maxTimeSteps,
            const poplar::Tensor &varTimeSteps, std::vector<std::size_t> layerSizes);

  /// The most shards (consecutive groups of time steps) the layer can be split into: one per
  /// time step, bounded by the tiles of the graph.
  std::size_t getMaxShards(const poplar::Graph &graph) const;
  /// Bytes of the whole input sequence per tile when spread over the graph's tiles.
  std::size_t getInputBytesPerTile(const poplar::Graph &graph) const;
  /// Bytes of the whole output sequence per tile when spread over the graph's tiles.
  std::size_t getOutputBytesPerTile(const poplar::Graph &graph) const;
  /// Whether the number of time steps is read from a tensor at run time.
  bool variableTimeSteps() const;
  /// Whether that tensor gives a number per sequence of the batch.
  bool batchVariableTimeSteps() const;
};

/// A state tensor of shape {multiple, batchSize, size}: size is outputSize, or inputSize when
/// `isOutput` is false.
poplar::Tensor createInitialState(poplar::Graph &graph, const RnnParams &params, bool isOutput,
                                  unsigned multiple, unsigned numShards,
                                  const poplar::DebugContext &debugContext = {});

/// A tensor of shape {maxTimeSteps, batchSize, size} laid out to be sliced by time step.
poplar::Tensor createRecurrentTensor(poplar::Graph &graph, const RnnParams &params, unsigned size,
                                     unsigned numShards, const poplar::DebugContext &debugContext = {});

/// An input sequence of shape {maxTimeSteps, batchSize, inputSize}.
poplar::Tensor createInputTensor(poplar::Graph &graph, const RnnParams &params, unsigned numShards,
                                 const poplar::DebugContext &debugContext = {});

/// An output sequence of shape {maxTimeSteps, batchSize, outputSize}.
poplar::Tensor createOutputTensor(poplar::Graph &graph, const RnnParams &params, unsigned numShards,
                                  const poplar::DebugContext &debugContext = {});

/// `multiple` output sequences concatenated in the outermost dimension:
/// {multiple * maxTimeSteps, batchSize, outputSize}.
poplar::Tensor createOutputTensor(poplar::Graph &graph, const RnnParams &params, unsigned multiple,
                                  unsigned numShards, const poplar::DebugContext &debugContext = {});

/// `tBase` delayed by one time step: step n of the result is step n-1 of `tBase`, and step 0
/// is a copy of `tSingle` (shape {batchSize, size}) that `prog` makes.
poplar::Tensor shiftRnnTensor(poplar::Graph &graph, const RnnParams &params, const poplar::Tensor &tBase,
                              const poplar::Tensor &tSingle, poplar::program::Sequence &prog,
                              unsigned numShards, const poplar::DebugContext &debugContext = {});

/// What the cell sees of the sequences at one time step: each input's slice, the slices of the
/// intermediates read and written, and each output's slice.
struct RnnSlice {
  std::vector<poplar::Tensor> inputs;
  poplar::Tensor interimIn;
  poplar::Tensor interimOut;
  std::vector<poplar::Tensor> outputs;
};

/// Per sequence of the batch: whether the current step is within that sequence's number of
/// steps (`mask`, 1 or 0 of dataType, shape {batchSize}) and its complement (`inverse`).
struct RnnBatchwiseFlags {
  poplar::Tensor mask;
  poplar::Tensor inverse;

  bool valid() const { return mask.valid(); };
};

/// The time step a cell runs: `begin` the first step of the shard, `counter` the step within
/// the shard (both UNSIGNED_INT {1}); `variableSeqFlag` is valid with variable time steps.
struct TimeStepState {
  poplar::Tensor begin;
  poplar::Tensor counter;
  poplar::Tensor variableSeqFlag;
};

/// Builds the program of one time step: from the graph, the time step, the batch flags, the
/// state tensors (which it may replace), the step's slices and the tensors it created (which
/// it fills on its first call), an initialisation program and a debug name.
using LoopBodyType = std::function<poplar::program::Sequence(
    poplar::Graph &graph, const TimeStepState &time, const RnnBatchwiseFlags &, std::vector<poplar::Tensor> &,
    const RnnSlice &slice, std::vector<poplar::Tensor> &, poplar::program::Sequence *,
    const poplar::DebugNameAndId &)>;

/// Builds a program that consumes `stepsPerGather` time steps of temporaries at once.
using GatherBodyType = std::function<poplar::program::Sequence(
    poplar::Graph &graph, const RnnSlice &slice, unsigned stepsPerGather, poplar::program::Sequence *,
    const poplar::DebugNameAndId &)>;

/// Stores state `stateIndex` after every step into the sequence `output`
/// ({maxTimeSteps, batchSize, size}); a default-constructed output stores nothing.
struct StateSequence {
  poplar::Tensor output;
  std::size_t stateIndex;
};

/// Runs `loopFn` once per time step (from the last step backwards when `reverse`), slicing
/// `inputs`, `*interimIn`, `*interimOut` and `outputs` by time step (each {maxTimeSteps, ...})
/// and carrying the state tensors, copied first from `initState`, from one step to the next.
/// Returns the state after the last step. Option: `codeReuse` (true, false).
/// With params.varTimeSteps the steps from the longest sequence's length on do not run (nor
/// write their slices); the cell gets `time.variableSeqFlag` (a scalar, nonzero once some
/// sequence has ended) and, with a length per sequence, batch flags (1 where the step is
/// within the sequence); keeping or masking a sequence's state is the cell's choice.
///
/// Example: `auto final = popnn::rnn::Rnn(graph, params, false, {h0}, {out, 0}, {x}, nullptr,
///           nullptr, {}, {}, prog, cell, 1, opts);`
std::vector<poplar::Tensor>
Rnn(poplar::Graph &graph, const RnnParams &params, bool reverse, const std::vector<poplar::Tensor> &initState,
    const StateSequence &stateSequence, const std::vector<poplar::Tensor> &inputs,
    const poplar::Tensor *interimIn, poplar::Tensor *interimOut, const std::vector<poplar::Tensor> &outputs,
    const std::vector<poplar::Tensor> &created, poplar::program::Sequence &prog, const LoopBodyType &loopFn,
    unsigned numShards, poplar::OptionFlags &options, const poplar::DebugContext &debugContext = {});

} // namespace rnn
} // namespace popnn

#endif
