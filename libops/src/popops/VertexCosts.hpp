// Copyright (c) Aspen contributors.
// Cycle estimates of popops' library vertices, priced as PopLibs' published estimators price
// the same work (issue 23 item 2; docs/cost-model.md "Library vertices" names the PopLibs
// function each formula follows and where Aspen's vertex differs). All results are machine
// cycles of one MultiVertex on a tile with `target.getNumWorkerContexts()` workers.
#pragma once

#include "popops/ExprOp.hpp"
#include "popops/OperationDef.hpp"

#include <poplar/Target.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <cstdint>

namespace popops::cost {

/// How a vertex variant is called: reading operands and writing a separate output, or
/// writing over its first operand.
enum class Form { Out, InPlace };

/// UnaryOp1D / UnaryOp1DInPlace over `n` elements of `type`.
std::uint64_t unaryOp1D(const poplar::Target &target, expr::UnaryOpType op, const poplar::Type &type,
                        std::size_t n, Form form);

/// BinaryOp1D / BinaryOp1DInPlace over `n` elements (both operands tensors) of `type`.
std::uint64_t binaryOp1D(const poplar::Target &target, expr::BinaryOpType op, const poplar::Type &type,
                         std::size_t n, Form form);

/// BroadcastScalar1D / BroadcastScalar1DInPlace: `n` elements against one scalar.
std::uint64_t broadcastScalar1D(const poplar::Target &target, expr::BinaryOpType op, const poplar::Type &type,
                                std::size_t n, Form form);

/// Cast1D from `from` to `to` over `n` elements.
std::uint64_t cast1D(const poplar::Target &target, const poplar::Type &from, const poplar::Type &to,
                     std::size_t n);

/// Fill (a MultiVertex in Aspen: each worker fills its share) over `n` elements of `type`.
std::uint64_t fill(const poplar::Target &target, const poplar::Type &type, std::size_t n);

/// What a ScaledAdd vertex computes, as the PopLibs vertex that does that work.
enum class ScaledOp { Add, Subtract, AXPlusBY, AXMinusBY, XMinusAXPlusBY };

/// ScaledAdd<A, B, Scale> over `n` elements.
std::uint64_t scaledAdd(const poplar::Target &target, const poplar::Type &aType, const poplar::Type &bType,
                        const poplar::Type &scaleType, ScaledOp op, std::size_t n);

/// DynamicSlice1D / DynamicUpdateSlice1D: one worker vertex copying `numSubElements` rows of
/// `regionSize` elements (thread cycles).
std::uint64_t dynamicSlice1D(const poplar::Target &target, const poplar::Type &type, std::size_t regionSize,
                             std::size_t numSubElements);

/// MultiSlice / MultiUpdate: one worker vertex copying a row of `regionSize` elements for each
/// of `numOffsets` offsets (thread cycles).
std::uint64_t multiSlice(const poplar::Type &type, std::size_t regionSize, std::size_t numOffsets,
                         bool update);

/// ReduceInner: `rows` rows of `rowLen` contiguous partials, each reduced to one output; the
/// workers take the rows in turn.
std::uint64_t reduceInner(const poplar::Target &target, Operation op, const poplar::Type &partials,
                          const poplar::Type &out, std::size_t rows, std::size_t rowLen);

/// ReduceOuter: `width` columns of `numRows` partials `stride` elements apart, each reduced to
/// one output; the workers share the columns.
std::uint64_t reduceOuter(const poplar::Target &target, Operation op, const poplar::Type &partials,
                          const poplar::Type &out, std::size_t width, std::size_t numRows,
                          std::size_t stride);

/// Select / SelectInPlace and Clamp / ClampInPlace (Aspen's MultiVertices) over `n` elements.
std::uint64_t select(const poplar::Target &target, const poplar::Type &type, std::size_t n);
std::uint64_t clamp(const poplar::Target &target, const poplar::Type &type, std::size_t n);

/// A generated (fused) map-expression MultiVertex of `numOps` operators over `n` elements, whose
/// first operand has `type`; `vectorOperands` operands of n elements and `scalarOperands` of one.
std::uint64_t fusedExpression(const poplar::Target &target, const poplar::Type &type, std::size_t n,
                              std::size_t numOps, std::size_t vectorOperands, std::size_t scalarOperands);

/// MultiUpdateAdd<T, S> (`scaleType` valid) or MultiUpdateMax<T> (it invalid): one worker vertex
/// applying a row of `regionSize` elements at each of `numOffsets` offsets (thread cycles).
std::uint64_t multiUpdateOp(const poplar::Target &target, const poplar::Type &type,
                            const poplar::Type &scaleType, std::size_t regionSize, std::size_t numOffsets);

/// SortRows / SortRowsKeyValue (worker vertices): `rows` rows of `rowLength` sorted one at a time.
std::uint64_t sortRows(std::size_t rows, std::size_t rowLength, bool keyValue);

/// TopK (worker vertex): the `k` best of each of `rows` rows of `rowLength`, `sorted` or not.
std::uint64_t topKRows(std::size_t rows, std::size_t rowLength, std::size_t k, bool sorted);

} // namespace popops::cost
