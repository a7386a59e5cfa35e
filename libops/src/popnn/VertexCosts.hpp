// Copyright (c) Aspen contributors.
// Cycle estimates of popnn's library vertices, priced as PopLibs' published estimators price the
// same work (issue 23 item 2). Where PopLibs does the work with popops vertices (softmax, the
// forward SIGMOID/RELU/TANH/GELU_ERF, HARD_SIGMOID), the estimate is what PopLibs' estimators
// give those vertices; docs/cost-model.md ("Library vertices") names each source and where
// Aspen's vertex differs. MultiVertex results are machine cycles, worker-vertex results thread
// cycles, on a tile with `target.getNumWorkerContexts()` workers.
#pragma once

#include <popnn/NonLinearityDef.hpp>

#include <poplar/Target.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <cstdint>

namespace popnn::cost {

/// popnn::NonLinearity<T> (Aspen's in-place MultiVertex) over `n` elements.
std::uint64_t nonLinearity(const poplar::Target &target, NonLinearityType nl, const poplar::Type &type,
                           std::size_t n);

/// popnn::NonLinearityGrad<T> (MultiVertex) over `n` elements.
std::uint64_t nonLinearityGrad(const poplar::Target &target, NonLinearityType nl, const poplar::Type &type,
                               std::size_t n);

/// popnn::SoftmaxRows<T> over `rows` rows of `rowLength`: softmax (scaled when `scaled`) or,
/// with `logOutput`, log-softmax.
std::uint64_t softmaxRows(const poplar::Target &target, const poplar::Type &type, std::size_t rows,
                          std::size_t rowLength, bool logOutput, bool scaled);

/// popnn::SoftmaxGradRows<T> over `rows` rows of `rowLength`.
std::uint64_t softmaxGradRows(const poplar::Target &target, const poplar::Type &type, std::size_t rows,
                              std::size_t rowLength);

/// popnn::LossSumSquared / LossCrossEntropy (worker vertices) over `rows` rows of `classes`.
std::uint64_t loss(const poplar::Target &target, const poplar::Type &type, bool crossEntropy,
                   std::size_t rows, std::size_t classes);

/// popnn::ReduceRowsWithIndex<T> (worker vertex): arg-max or arg-min of `rows` rows.
std::uint64_t reduceRowsWithIndex(const poplar::Type &type, std::size_t rows, std::size_t rowLength);

/// popnn::CalcAccuracy (worker vertex) over `batch` labels.
std::uint64_t calcAccuracy(std::size_t batch);

/// Pooling on one tile: `planes` (batch x channel) planes whose output field is `outHeight` x
/// `outWidth` (the vertex's output: the pooled tensor forward, the input gradient backward),
/// each output a function of `kernelPositions` inputs.
enum class PoolPass { MaxForward, SumForward, MaxGrad, SumGrad };
std::uint64_t pool(const poplar::Target &target, const poplar::Type &type, PoolPass pass, std::size_t planes,
                   std::size_t outHeight, std::size_t outWidth, std::size_t kernelPositions);

} // namespace popnn::cost
