// Copyright (c) Aspen contributors.
// Counted loops of programs.
#ifndef POPOPS_LOOP_HPP
#define POPOPS_LOOP_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>
#include <popops/ElementWise.hpp>
#include <poputil/exceptions.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace popops {

/// Builds the body of a counted loop from the loop's induction variable (UNSIGNED_INT {1}).
using CountedLoopBodyType = std::function<poplar::program::Program(const poplar::Tensor &)>;

/// `for (unsigned i = begin; i < end; i += step) body(i)`: a `Repeat` of the body followed by
/// `i += step`. The body sees `i` as an UNSIGNED_INT tensor of shape {1}.
/// \throws poputil::poplibs_error if `step` is 0 or `begin >= end`.
poplar::program::Sequence countedLoop(poplar::Graph &graph, std::size_t begin, std::size_t end, size_t step,
                                      const CountedLoopBodyType &body,
                                      const poplar::DebugContext &debugContext = {});

/// `for (unsigned i = 0; i != count; ++i) body(i)`.
poplar::program::Sequence countedLoop(poplar::Graph &graph, std::size_t count,
                                      const CountedLoopBodyType &body,
                                      const poplar::DebugContext &debugContext = {});

/// `for (count = initialCount; count != countLimit; count += countStep) body`, where `count`
/// (INT or UNSIGNED_INT, one element, written by the loop) and `countLimit` (same type, one
/// element, read at each test) are tensors: a `RepeatWhileTrue` whose condition advances
/// the count and compares it with the limit.
/// \throws poputil::poplibs_error if the types differ or are not INT/UNSIGNED_INT.
poplar::program::Sequence countedForLoop(poplar::Graph &graph, const poplar::Tensor &count, int initialCount,
                                         const poplar::Tensor &countLimit, int countStep,
                                         const poplar::program::Program &body,
                                         const poplar::DebugContext &debugContext = {});

/// As above, with the count tensor created by the loop (mapped to tile 0).
poplar::program::Sequence countedForLoop(poplar::Graph &graph, int initialCount,
                                         const poplar::Tensor &countLimit, int countStep,
                                         const poplar::program::Program &body,
                                         const poplar::DebugContext &debugContext = {});

} // namespace popops

#endif
