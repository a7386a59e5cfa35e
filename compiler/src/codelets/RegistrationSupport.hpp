// Copyright (c) Aspen contributors.
// Compiled into every vertex library (embedded in libpoplar and included as
// <aspen/RegistrationSupport.hpp> by the generated registration units; see
// RegistrationUnit.cpp). It turns a member pointer into an AspenFieldEntry and a
// compute member function into an AspenComputeFn, using the host compiler's own
// layout. Must compile as C++11.
//
// Private members: the probes are class templates explicitly instantiated with
// `&Vertex::field` as a template argument, where access checking does not apply
// ([temp.explicit]); the friend function each defines is the only one of its name in
// its own namespace (RegistrationUnit.cpp writes them).
#ifndef ASPEN_REGISTRATION_SUPPORT_HPP
#define ASPEN_REGISTRATION_SUPPORT_HPP

#include <aspen/CodeletAbi.h>
// The IPU builtins, as Graphcore's compiler has them without an #include.
#include <ipu_builtins.h>
#include <ipudef.h>
#include <poplar/HalfFloat.hpp>
#include <poplar/QuarterFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace aspen_codelet {

// ---- element types: poplar::Type::Id values ------------------------------------------------
template <class T, class Enable = void> struct ElementTypeId { static constexpr std::uint8_t value = 0; };
#define ASPEN_ELEMENT_TYPE(T, id)                                                                            \
  template <> struct ElementTypeId<T, void> { static constexpr std::uint8_t value = id; };
ASPEN_ELEMENT_TYPE(bool, 1)
ASPEN_ELEMENT_TYPE(char, 2)
ASPEN_ELEMENT_TYPE(signed char, 3)
ASPEN_ELEMENT_TYPE(unsigned char, 4)
ASPEN_ELEMENT_TYPE(short, 5)
ASPEN_ELEMENT_TYPE(unsigned short, 6)
ASPEN_ELEMENT_TYPE(int, 7)
ASPEN_ELEMENT_TYPE(unsigned int, 8)
ASPEN_ELEMENT_TYPE(long, 9)
ASPEN_ELEMENT_TYPE(unsigned long, 10)
ASPEN_ELEMENT_TYPE(long long, 11)
ASPEN_ELEMENT_TYPE(unsigned long long, 12)
ASPEN_ELEMENT_TYPE(half, 13)
ASPEN_ELEMENT_TYPE(float, 14)
ASPEN_ELEMENT_TYPE(double, 15)
ASPEN_ELEMENT_TYPE(poplar::quarter, 16)
#undef ASPEN_ELEMENT_TYPE
// An enum state member holds its underlying integer type.
template <class T> struct ElementTypeId<T, typename std::enable_if<std::is_enum<T>::value>::type> {
  static constexpr std::uint8_t value = ElementTypeId<typename std::underlying_type<T>::type>::value;
};

template <class T> constexpr std::uint8_t elementTypeOf() {
  return ElementTypeId<typename std::remove_cv<T>::type>::value;
}

// ---- layouts: aspen::ir::Layout values ---------------------------------------------------------
constexpr std::uint8_t layoutOf(poplar::VectorLayout l) {
  return static_cast<std::uint8_t>(l);
}
constexpr std::uint8_t layoutOf(poplar::VectorListLayout l) {
  return l == poplar::VectorListLayout::ONE_PTR          ? 3
         : l == poplar::VectorListLayout::SCALED_PTR32   ? 4
         : l == poplar::VectorListLayout::SCALED_PTR64   ? 5
         : l == poplar::VectorListLayout::SCALED_PTR128  ? 6
         : l == poplar::VectorListLayout::DELTANELEMENTS ? 9
                                                         : 8; // DELTAN, COMPACT_DELTAN
}

// ---- field traits ------------------------------------------------------------------------------
/// What a member of a vertex is. The primary template: a plain state member.
template <class F> struct FieldTraits {
  static constexpr std::uint8_t kind = ASPEN_FIELD_STATE;
  static constexpr std::uint8_t shape = ASPEN_SHAPE_SCALAR;
  static constexpr std::uint8_t elementType = elementTypeOf<F>();
  static constexpr std::uint8_t layout = 0;
  static constexpr std::uint8_t outerLayout = 0;
  static constexpr std::uint32_t minAlign = alignof(F);
  static constexpr bool supported = true; // any trivially copyable state (a struct: not connectable)
};

template <std::uint8_t Kind> struct EdgeKind { static constexpr std::uint8_t kind = Kind; };

/// A single edge or a vector edge of element type T (`Input<T>`, `Input<Vector<T>>`).
template <std::uint8_t Kind, class T> struct EdgeTraits {
  static constexpr std::uint8_t kind = Kind;
  static constexpr std::uint8_t shape = ASPEN_SHAPE_SCALAR;
  static constexpr std::uint8_t elementType = elementTypeOf<T>();
  static constexpr std::uint8_t layout = 0;
  static constexpr std::uint8_t outerLayout = 0;
  static constexpr std::uint32_t minAlign = alignof(T);
  static constexpr bool supported = elementType != 0; // an edge carries tensor elements
};
template <std::uint8_t Kind, class T, poplar::VectorLayout L, unsigned A, bool I>
struct EdgeTraits<Kind, poplar::Vector<T, L, A, I>> {
  static constexpr std::uint8_t kind = Kind;
  static constexpr std::uint8_t shape = ASPEN_SHAPE_VECTOR;
  static constexpr std::uint8_t elementType = elementTypeOf<T>();
  static constexpr std::uint8_t layout = layoutOf(L);
  static constexpr std::uint8_t outerLayout = 0;
  static constexpr std::uint32_t minAlign = A;
  static constexpr bool supported = elementType != 0;
};
template <std::uint8_t Kind, class T, poplar::VectorListLayout L, unsigned A, bool I>
struct EdgeTraits<Kind, poplar::VectorList<T, L, A, I>> {
  static constexpr std::uint8_t kind = Kind;
  static constexpr std::uint8_t shape = ASPEN_SHAPE_VECTOR_OF_EDGES;
  static constexpr std::uint8_t elementType = elementTypeOf<T>();
  static constexpr std::uint8_t layout = layoutOf(poplar::VectorLayout::SPAN);
  static constexpr std::uint8_t outerLayout = layoutOf(L);
  static constexpr std::uint32_t minAlign = A;
  static constexpr bool supported = elementType != 0;
};

template <class T> struct FieldTraits<poplar::Input<T>> : EdgeTraits<ASPEN_FIELD_INPUT, T> {};
template <class T> struct FieldTraits<poplar::Output<T>> : EdgeTraits<ASPEN_FIELD_OUTPUT, T> {};
template <class T> struct FieldTraits<poplar::InOut<T>> : EdgeTraits<ASPEN_FIELD_INOUT, T> {};

/// `Vector<T>`: a state array, or a list of edges when T is an edge type.
template <class Inner, poplar::VectorLayout L> struct VectorTraits {
  static constexpr std::uint8_t kind = ASPEN_FIELD_STATE;
  static constexpr std::uint8_t shape = ASPEN_SHAPE_VECTOR;
  static constexpr std::uint8_t elementType = elementTypeOf<Inner>();
  static constexpr std::uint8_t layout = layoutOf(L);
  static constexpr std::uint8_t outerLayout = 0;
  static constexpr std::uint32_t minAlign = alignof(Inner);
  static constexpr bool supported = elementType != 0; // a state array of element values
};
template <class Edge, poplar::VectorLayout L> struct EdgeListTraits {
  typedef FieldTraits<Edge> Inner;
  static constexpr std::uint8_t kind = Inner::kind;
  static constexpr std::uint8_t shape =
      Inner::shape == ASPEN_SHAPE_SCALAR ? ASPEN_SHAPE_VECTOR_OF_SCALAR_EDGES : ASPEN_SHAPE_VECTOR_OF_EDGES;
  static constexpr std::uint8_t elementType = Inner::elementType;
  static constexpr std::uint8_t layout = Inner::layout;
  static constexpr std::uint8_t outerLayout = layoutOf(L);
  static constexpr std::uint32_t minAlign = Inner::minAlign;
  static constexpr bool supported = Inner::supported;
};
template <class T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::Vector<T, L, A, I>> : VectorTraits<T, L> {
  static constexpr std::uint32_t minAlign = A;
};
template <class T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::Vector<poplar::Input<T>, L, A, I>> : EdgeListTraits<poplar::Input<T>, L> {};
template <class T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::Vector<poplar::Output<T>, L, A, I>> : EdgeListTraits<poplar::Output<T>, L> {};
template <class T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::Vector<poplar::InOut<T>, L, A, I>> : EdgeListTraits<poplar::InOut<T>, L> {};

// ---- probes ------------------------------------------------------------------------------------
template <class MemberPointer> struct MemberOf;
template <class C, class F> struct MemberOf<F C::*> { typedef F type; };

/// Describes field `M` of vertex type `V` (M may be a member of a base of V).
/// One object's worth of storage per vertex type, shared by the probes of all its fields
/// (one per field made a vertex of n fields cost n * sizeof(V): quadratic in n).
template <class V> struct LayoutStorage {
  struct alignas(V) Bytes {
    unsigned char bytes[sizeof(V)];
  };
  static Bytes storage;
};
template <class V> typename LayoutStorage<V>::Bytes LayoutStorage<V>::storage;

/// Fills `entry` for field `M` of `V`. `M` arrives as a template argument, so no access check
/// applies here even for a private member.
template <class V, class MP, MP M> void describeMember(AspenFieldEntry *entry) {
  typedef typename MemberOf<MP>::type F;
  typedef FieldTraits<typename std::remove_cv<F>::type> Traits;
  // Offsets come from the compiler's layout; no vertex constructor ever runs.
  unsigned char *storage = LayoutStorage<V>::storage.bytes;
  V *object = reinterpret_cast<V *>(storage);
  const unsigned char *member = reinterpret_cast<const unsigned char *>(&(object->*M));
  entry->offset = static_cast<std::uint32_t>(member - storage);
  entry->size = static_cast<std::uint32_t>(sizeof(F));
  entry->minAlign = Traits::minAlign;
  entry->kind = Traits::kind;
  entry->shape = Traits::shape;
  entry->elementType = Traits::elementType;
  entry->layout = Traits::layout;
  entry->outerLayout = Traits::outerLayout;
  entry->isConst = std::is_const<F>::value ? 1 : 0;
  entry->unsupported = Traits::supported && std::is_trivially_copyable<F>::value ? 0 : 1;
  entry->reserved = 0;
}

template <class R> struct Result {
  template <class Call> static int run(Call call) { return call() ? 1 : 0; }
};
template <> struct Result<void> {
  template <class Call> static int run(Call call) {
    call();
    return 1;
  }
};

template <class V, class M> struct Call0 {
  V *v;
  M m;
  auto operator()() const -> decltype((v->*m)()) { return (v->*m)(); }
};
template <class V, class M> struct Call1 {
  V *v;
  M m;
  unsigned w;
  auto operator()() const -> decltype((v->*m)(w)) { return (v->*m)(w); }
};

// compute() with and without a worker id, returning bool, void or anything testable.
// A compute() without a worker id (Vertex, SupervisorVertex) runs once: for worker 0.
template <class V, class B, class R> int invoke(V *v, R (B::*m)(), unsigned workerId) {
  return workerId != 0 ? 1 : Result<R>::run(Call0<V, R (B::*)()>{v, m});
}
template <class V, class B, class R> int invoke(V *v, R (B::*m)() const, unsigned workerId) {
  return workerId != 0 ? 1 : Result<R>::run(Call0<V, R (B::*)() const>{v, m});
}
template <class V, class B, class R, class W> int invoke(V *v, R (B::*m)(W), unsigned w) {
  return Result<R>::run(Call1<V, R (B::*)(W)>{v, m, w});
}
template <class V, class B, class R, class W> int invoke(V *v, R (B::*m)(W) const, unsigned w) {
  return Result<R>::run(Call1<V, R (B::*)(W) const>{v, m, w});
}

/// Whether the host compiler sees a vertex type: a class deriving from a vertex
/// base with an accessible compute member. Checked (must be false) for every
/// explicit instantiation introspection did not take for a vertex.
/// compute's address, or (overloaded compute) a call without or with a worker id.
template <class T, class = void> struct HasComputeAddress : std::false_type {};
template <class T> struct HasComputeAddress<T, decltype((void)&T::compute)> : std::true_type {};
template <class T, class = void> struct HasComputeCall0 : std::false_type {};
template <class T>
struct HasComputeCall0<T, decltype((void)static_cast<T *>(nullptr)->compute())> : std::true_type {};
template <class T, class = void> struct HasComputeCall1 : std::false_type {};
template <class T>
struct HasComputeCall1<T, decltype((void)static_cast<T *>(nullptr)->compute(0u))> : std::true_type {};
template <class T> struct HasCompute {
  static constexpr bool value =
      HasComputeAddress<T>::value || HasComputeCall0<T>::value || HasComputeCall1<T>::value;
};
template <class T> struct IsVertexType {
  static constexpr bool value =
      (std::is_base_of<poplar::Vertex, T>::value || std::is_base_of<poplar::MultiVertex, T>::value ||
       std::is_base_of<poplar::SupervisorVertex, T>::value) &&
      HasCompute<T>::value;
};

/// Whether a vertex says its compute is assembly on an IPU (`static const bool
/// isExternalCodelet = true`, as PopLibs' IS_EXTERNAL_CODELET writes it under __IPU__).
template <class T, class = void> struct IsExternalCodelet : std::false_type {};
template <class T>
struct IsExternalCodelet<T, decltype((void)T::isExternalCodelet)>
    : std::integral_constant<bool, static_cast<bool>(T::isExternalCodelet)> {};

/// compute called by overload resolution rather than through its address, for a class whose
/// base only the host compiler knows (`std::conditional_t<C, SupervisorVertex, MultiVertex>`)
/// or whose compute is overloaded (`void compute();` for the IPU's assembly beside
/// `void compute(unsigned)` in C++): a MultiVertex runs compute(workerId) on every worker,
/// a Vertex or SupervisorVertex compute() once. A class that turns out not to be a vertex
/// type is not registered (its entry is dropped), so nothing of compute is named for it;
/// nor for an isExternalCodelet vertex of an IPU build, whose compute is IPU assembly (that
/// build is then not kept, docs/codelets.md "Which build runs where").
template <class V> struct CallComputeW {
  V *v;
  unsigned w;
  auto operator()() const -> decltype(v->compute(w)) { return v->compute(w); }
};
template <class V> struct CallCompute0 {
  V *v;
  auto operator()() const -> decltype(v->compute()) { return v->compute(); }
};
template <class V, int How> struct ComputeCaller { // 0: nothing to call
  static int run(void *, unsigned) { return 0; }
};
template <class V> struct ComputeCaller<V, 1> { // MultiVertex
  static int run(void *p, unsigned w) {
    V *v = static_cast<V *>(p);
    return Result<decltype(v->compute(w))>::run(CallComputeW<V>{v, w});
  }
};
template <class V> struct ComputeCaller<V, 2> { // Vertex, SupervisorVertex
  static int run(void *p, unsigned w) {
    V *v = static_cast<V *>(p);
    return w != 0 ? 1 : Result<decltype(v->compute())>::run(CallCompute0<V>{v});
  }
};
#ifdef __IPU__
constexpr bool kIpuBuild = true;
#else
constexpr bool kIpuBuild = false;
#endif
template <class V> struct ComputeCall {
  static constexpr int how = !IsVertexType<V>::value || (kIpuBuild && IsExternalCodelet<V>::value) ? 0
                             : std::is_base_of<poplar::MultiVertex, V>::value                      ? 1
                                                                                                   : 2;
  static int run(void *v, unsigned w) { return ComputeCaller<V, how>::run(v, w); }
};

template <class V> constexpr std::uint32_t vertexFlags() {
  return (std::is_base_of<poplar::MultiVertex, V>::value ? ASPEN_VERTEX_MULTI : 0u) |
         (std::is_base_of<poplar::SupervisorVertex, V>::value ? ASPEN_VERTEX_SUPERVISOR : 0u) |
         (IsExternalCodelet<V>::value ? ASPEN_VERTEX_EXTERNAL : 0u);
}

} // namespace aspen_codelet

#endif
