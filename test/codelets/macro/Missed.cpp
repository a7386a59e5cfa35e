// Copyright (c) Aspen contributors.
// Codelet corpus (bad input): a vertex type whose base class libclang cannot
// resolve and whose spelling names no vertex base (a member type of a dependent
// class), so introspection does not find it; the host compiler does, and the
// codelet compiler must say so rather than drop it. (A dependent base that names
// one, such as std::conditional_t<C, poplar::Vertex, int>, is registered:
// test/compat/codelets/ConditionalBase.cpp.)
#include <poplar/Vertex.hpp>

template <typename T> struct Pick { using type = poplar::Vertex; };

template <typename T> class Hidden : public Pick<T>::type {
public:
  poplar::Output<int> out;
  bool compute() {
    *out = 1;
    return true;
  }
};

template class Hidden<float>;
