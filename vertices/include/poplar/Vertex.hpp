// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// The base classes of vertices and the types of their fields, for codelets
// compiled for the simulated IPU (host code, `__POPC__` defined; `__IPU__` too in an IPU
// build, docs/codelets.md "Which build runs where").
//
// Every field type here has exactly the layout given in docs/internals.md
// ("Host layout of vertex fields") and is trivially constructible: the runtime
// never runs a constructor on a vertex, it writes the fields' pointers, sizes
// and values into the vertex object directly.
//
//   class Scale : public poplar::Vertex {
//   public:
//     poplar::Input<poplar::Vector<float>> in;
//     poplar::Output<poplar::Vector<float>> out;
//     float factor;                                   // state, setInitialValue
//     bool compute() {
//       for (unsigned i = 0; i < in.size(); ++i) out[i] = in[i] * factor;
//       return true;
//     }
//   };
#ifndef POPLAR_VERTEX_HPP
#define POPLAR_VERTEX_HPP

#include <poplar/FieldTypes.hpp>
#include <poplar/HalfFloat.hpp>
#include <poplar/QuarterFloat.hpp>

#include <cstddef>
#include <cstdint>

namespace poplar {

/// A vertex run once, by one worker thread, per execution of its compute set.
/// Derived classes define `bool compute()` (or `void compute()`); returning
/// false stops the program with an error.
class Vertex {};

/// A vertex run by every worker of its tile: `compute(workerId)` is called for
/// each `workerId` in `[0, numWorkers())` and the vertex divides the work.
class MultiVertex {
public:
  static constexpr unsigned numWorkers() { return 6; }
};

/// A vertex that runs on the supervisor context (legacy); run once.
class SupervisorVertex {};

/// Poplar 3.x codelets choose their base with a compile-time condition (usually
/// "an assembly version exists"): a SupervisorVertex when true, a Vertex when
/// false. Either way the simulated IPU runs compute() once.
template <bool UseSupervisor> class SupervisorVertexIf : public SupervisorVertex {};
template <> class SupervisorVertexIf<false> : public Vertex {};

template <typename T, VectorLayout L = VectorLayout::SPAN, unsigned MinAlign = alignof(T),
          bool Interleaved = false>
class Vector;
template <typename T, VectorListLayout L, unsigned MinAlign = alignof(T), bool Interleaved = false>
class VectorList;

namespace aspen_detail {

constexpr bool hasSize(VectorLayout l) {
  return l == VectorLayout::SPAN || l == VectorLayout::SHORT_SPAN;
}

/// Pointer and element count: the host form of every vector layout.
template <typename T, VectorLayout L> struct SpanStorage {
  T *aspenPtr_;
  std::uint32_t aspenSize_;

  T &operator[](std::size_t i) const { return aspenPtr_[i]; }
  T *data() const { return aspenPtr_; }
  std::size_t size() const {
    static_assert(hasSize(L), "size() needs VectorLayout::SPAN or SHORT_SPAN; this layout stores no size");
    return aspenSize_;
  }
  bool empty() const { return size() == 0; }
  T *begin() const { return aspenPtr_; }
  T *end() const { return aspenPtr_ + size(); }
  /// `in->size()`, as Poplar's edge fields allow.
  const SpanStorage *operator->() const { return this; }
};

} // namespace aspen_detail

/// A state array of the vertex (`Vector<unsigned> offsets;`, set with
/// `Graph::setInitialValue`), or the outer list of a vector of edges
/// (`Vector<Input<Vector<float>>> in;`, connected with a list of tensors).
template <typename T, VectorLayout L, unsigned MinAlign, bool Interleaved>
class Vector : public aspen_detail::SpanStorage<T, L> {};

/// A read-only edge: one element (`Input<float>`), a vector of elements
/// (`Input<Vector<float>>`) or a list of vectors (`Input<VectorList<float, DELTAN>>`).
template <typename T> class Input {
public:
  const T *aspenPtr_;

  operator const T &() const { return *aspenPtr_; }
  const T &operator*() const { return *aspenPtr_; }
  const T *operator->() const { return aspenPtr_; }
};

/// A write-only edge (the vertex should not read it before writing it).
template <typename T> class Output {
public:
  T *aspenPtr_;

  operator T &() const { return *aspenPtr_; }
  T &operator*() const { return *aspenPtr_; }
  T *operator->() const { return aspenPtr_; }
  const Output &operator=(const T &value) const {
    *aspenPtr_ = value;
    return *this;
  }
};

/// A read-write edge.
template <typename T> class InOut {
public:
  T *aspenPtr_;

  operator T &() const { return *aspenPtr_; }
  T &operator*() const { return *aspenPtr_; }
  T *operator->() const { return aspenPtr_; }
  const InOut &operator=(const T &value) const {
    *aspenPtr_ = value;
    return *this;
  }
};

// An Input's elements are not const to the compiler (`reinterpret_cast<float *>(&in[0])`
// compiles, as on Graphcore's popc, where codelets do it); writing them is a bug the
// compiler does not catch, as there.
template <typename T, VectorLayout L, unsigned A, bool I>
class Input<Vector<T, L, A, I>> : public aspen_detail::SpanStorage<T, L> {};
template <typename T, VectorLayout L, unsigned A, bool I>
class Output<Vector<T, L, A, I>> : public aspen_detail::SpanStorage<T, L> {};
template <typename T, VectorLayout L, unsigned A, bool I>
class InOut<Vector<T, L, A, I>> : public aspen_detail::SpanStorage<T, L> {};

// A list of read-only edges (`Vector<Input<Vector<T>>> in;`): its rows give `const`
// elements, as Poplar's do (PopLibs' popsparse assigns a `const T *` to
// `auto *p = &in[i][0]`). A row is still an `Input<Vector<T>>` (it derives from one, with
// the same layout), so `const Input<Vector<T>> &row = in[i]` and passing a row on work.
namespace aspen_detail {
template <typename T, VectorLayout L, unsigned A, bool I> struct ConstInputRow : Input<Vector<T, L, A, I>> {
  const T &operator[](std::size_t i) const { return this->aspenPtr_[i]; }
  const T *data() const { return this->aspenPtr_; }
  const T *begin() const { return this->aspenPtr_; }
  const T *end() const { return this->aspenPtr_ + this->size(); }
};
} // namespace aspen_detail
template <typename T, VectorLayout L2, unsigned A2, bool I2, VectorLayout L, unsigned A, bool I>
class Vector<Input<Vector<T, L2, A2, I2>>, L, A, I>
    : public aspen_detail::SpanStorage<aspen_detail::ConstInputRow<T, L2, A2, I2>, L> {};

// fp8: an edge of quarter elements also points at its tensor's metadata (one
// QUARTER_METADATA element), which `getMetadata()` returns; the pointer is the
// field's last 8 bytes (docs/internals.md, ASPEN_FIELD_QUARTER_* in CodeletAbi.h).
namespace aspen_detail {
template <typename T> struct QuarterScalarEdge {
  T *aspenPtr_;
  const MetadataType *aspenMetadata_;

  const MetadataType *getMetadata() const { return aspenMetadata_; }
};
/// SpanStorage's layout and interface, then the metadata pointer (standard layout).
template <typename T, VectorLayout L> struct QuarterSpanStorage {
  T *aspenPtr_;
  std::uint32_t aspenSize_;
  const MetadataType *aspenMetadata_;

  T &operator[](std::size_t i) const { return aspenPtr_[i]; }
  T *data() const { return aspenPtr_; }
  std::size_t size() const {
    static_assert(hasSize(L), "size() needs VectorLayout::SPAN or SHORT_SPAN; this layout stores no size");
    return aspenSize_;
  }
  bool empty() const { return size() == 0; }
  T *begin() const { return aspenPtr_; }
  T *end() const { return aspenPtr_ + size(); }
  const QuarterSpanStorage *operator->() const { return this; }
  const MetadataType *getMetadata() const { return aspenMetadata_; }
};
/// A list of quarter edges has the same layout: the list's entries (descriptors,
/// or edge pointers), then its one metadata pointer, shared by every tensor of the list.
template <typename Entry, VectorLayout L> using QuarterEdgeList = QuarterSpanStorage<Entry, L>;
/// An entry of a list of scalar quarter edges: the pointer to the element.
template <typename T> struct QuarterEdgeRef {
  T *aspenPtr_;
  operator T &() const { return *aspenPtr_; }
  T &operator*() const { return *aspenPtr_; }
  T *operator->() const { return aspenPtr_; }
  const QuarterEdgeRef &operator=(const quarter &value) const {
    *aspenPtr_ = value;
    return *this;
  }
};
} // namespace aspen_detail

template <> class Input<quarter> : public aspen_detail::QuarterScalarEdge<const quarter> {
public:
  operator const quarter &() const { return *aspenPtr_; }
  const quarter &operator*() const { return *aspenPtr_; }
  const quarter *operator->() const { return aspenPtr_; }
};
template <> class Output<quarter> : public aspen_detail::QuarterScalarEdge<quarter> {
public:
  operator quarter &() const { return *aspenPtr_; }
  quarter &operator*() const { return *aspenPtr_; }
  quarter *operator->() const { return aspenPtr_; }
  const Output &operator=(const quarter &value) const {
    *aspenPtr_ = value;
    return *this;
  }
};
template <> class InOut<quarter> : public aspen_detail::QuarterScalarEdge<quarter> {
public:
  operator quarter &() const { return *aspenPtr_; }
  quarter &operator*() const { return *aspenPtr_; }
  quarter *operator->() const { return aspenPtr_; }
  const InOut &operator=(const quarter &value) const {
    *aspenPtr_ = value;
    return *this;
  }
};
template <VectorLayout L, unsigned A, bool I>
class Input<Vector<quarter, L, A, I>> : public aspen_detail::QuarterSpanStorage<const quarter, L> {};
template <VectorLayout L, unsigned A, bool I>
class Output<Vector<quarter, L, A, I>> : public aspen_detail::QuarterSpanStorage<quarter, L> {};
template <VectorLayout L, unsigned A, bool I>
class InOut<Vector<quarter, L, A, I>> : public aspen_detail::QuarterSpanStorage<quarter, L> {};

// Lists of quarter edges (PopLibs' `Vector<Input<Vector<quarter, ...>>, ONE_PTR> in;`
// with `in.getMetadata()`).
template <VectorLayout L2, unsigned A2, bool I2, VectorLayout L, unsigned A, bool I>
class Vector<Input<Vector<quarter, L2, A2, I2>>, L, A, I>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::SpanStorage<const quarter, L2>, L> {};
template <VectorLayout L2, unsigned A2, bool I2, VectorLayout L, unsigned A, bool I>
class Vector<Output<Vector<quarter, L2, A2, I2>>, L, A, I>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::SpanStorage<quarter, L2>, L> {};
template <VectorLayout L2, unsigned A2, bool I2, VectorLayout L, unsigned A, bool I>
class Vector<InOut<Vector<quarter, L2, A2, I2>>, L, A, I>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::SpanStorage<quarter, L2>, L> {};
template <VectorLayout L, unsigned A, bool I>
class Vector<Input<quarter>, L, A, I>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::QuarterEdgeRef<const quarter>, L> {};
template <VectorLayout L, unsigned A, bool I>
class Vector<Output<quarter>, L, A, I>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::QuarterEdgeRef<quarter>, L> {};
template <VectorLayout L, unsigned A, bool I>
class Vector<InOut<quarter>, L, A, I>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::QuarterEdgeRef<quarter>, L> {};

/// A list of regions (each a pointer and a size): `in.size()` regions, region
/// `in[i]` has `in[i].size()` elements.
template <typename T, VectorListLayout L, unsigned A, bool I>
class Input<VectorList<T, L, A, I>>
    : public aspen_detail::SpanStorage<const aspen_detail::SpanStorage<T, VectorLayout::SPAN>,
                                       VectorLayout::SPAN> {};
template <typename T, VectorListLayout L, unsigned A, bool I>
class Output<VectorList<T, L, A, I>>
    : public aspen_detail::SpanStorage<const aspen_detail::SpanStorage<T, VectorLayout::SPAN>,
                                       VectorLayout::SPAN> {};
template <typename T, VectorListLayout L, unsigned A, bool I>
class InOut<VectorList<T, L, A, I>>
    : public aspen_detail::SpanStorage<const aspen_detail::SpanStorage<T, VectorLayout::SPAN>,
                                       VectorLayout::SPAN> {};

template <VectorListLayout L, unsigned A, bool I>
class Input<VectorList<quarter, L, A, I>>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::SpanStorage<const quarter, VectorLayout::SPAN>,
                                           VectorLayout::SPAN> {};
template <VectorListLayout L, unsigned A, bool I>
class Output<VectorList<quarter, L, A, I>>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::SpanStorage<quarter, VectorLayout::SPAN>,
                                           VectorLayout::SPAN> {};
template <VectorListLayout L, unsigned A, bool I>
class InOut<VectorList<quarter, L, A, I>>
    : public aspen_detail::QuarterEdgeList<const aspen_detail::SpanStorage<quarter, VectorLayout::SPAN>,
                                           VectorLayout::SPAN> {};

} // namespace poplar

#endif
