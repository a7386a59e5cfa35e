// Copyright (c) Aspen contributors.
// popops::CircBuf: a circular history buffer of tensors of one shape, indexed at run time.
#ifndef POPOPS_CIRCBUF_HPP
#define POPOPS_CIRCBUF_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace popops {

/// Keeps the last `size` tensors of shape `shape` added to it. `add` advances the index (an
/// UNSIGNED_INT {1} tensor, 0 at the start) modulo `size` and stores the new entry there;
/// `prev(i)` returns a copy of the entry added `i` additions ago (`prev(0)`: the latest).
/// Example: `CircBuf buf(graph, FLOAT, 4, {16}); buf.add(x, seq); Tensor old = buf.prev(3, seq);`
class CircBuf {
public:
  CircBuf(poplar::Graph &graph, const poplar::Type &dataType, unsigned size,
          const std::vector<std::size_t> &shape, const poplar::DebugContext &debugContext = {});

  /// The entry `i` additions old (`i < size()`), copied into a new tensor by `seq`.
  poplar::Tensor prev(unsigned i, poplar::program::Sequence &seq,
                      const poplar::DebugContext &debugContext = {});

  /// Advances the index and writes `t` (of the buffer's shape and type) at it.
  void add(poplar::Tensor t, poplar::program::Sequence &seq, const poplar::DebugContext &debugContext = {});

  poplar::Tensor getIndex() const { return index; }
  unsigned size() const { return size_; }
  poplar::Graph &getGraph() const { return graph; }

private:
  poplar::Graph &graph;
  unsigned size_;
  poplar::Tensor index;
  std::vector<std::size_t> shape;
  poplar::Tensor hist; // {size, elements of shape}
};

} // namespace popops

#endif
