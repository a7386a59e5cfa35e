// Copyright (c) Aspen contributors.
// popops::allTrue: the logical AND of every element of a boolean tensor.
#ifndef POPOPS_ALLTRUE_HPP
#define POPOPS_ALLTRUE_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <string>

namespace popops {

/// The logical AND of all elements of the boolean tensor `A`, as a new scalar BOOL variable
/// (true for an empty tensor).
///
/// \param graph        The graph to add the operation to.
/// \param A            A tensor of type BOOL (any shape).
/// \param prog         The sequence the operation is appended to.
/// \param debugContext Optional debug information.
/// \returns            A scalar BOOL tensor, e.g. for `program::If(allTrue(g, ok, seq), ...)`.
/// \throws poputil::poplibs_error if `A` is not of type BOOL.
poplar::Tensor allTrue(poplar::Graph &graph, poplar::Tensor A, poplar::program::Sequence &prog,
                       const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
