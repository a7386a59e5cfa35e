// Copyright (c) Aspen contributors.
// Codelet corpus (bad input): a vertex type whose base class libclang cannot
// resolve (a dependent alias), so introspection does not find it; the host
// compiler does, and the codelet compiler must say so rather than drop it.
#include <poplar/Vertex.hpp>

#include <type_traits>

template <typename T> class Hidden : public std::conditional_t<sizeof(T) != 0, poplar::Vertex, int> {
public:
  poplar::Output<int> out;
  bool compute() {
    *out = 1;
    return true;
  }
};

template class Hidden<float>;
