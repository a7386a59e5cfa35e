// Copyright (c) Aspen contributors.
// A codelet that does not compile (test/error/codelet_errors.cpp): the error
// must name this file and line 9 and carry the compiler's diagnostic.
#include <poplar/Vertex.hpp>

class Bad : public poplar::Vertex {
public:
  poplar::Input<float> in;
  bool compute() { return undeclaredName > *in; }
};
