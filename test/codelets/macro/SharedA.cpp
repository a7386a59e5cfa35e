// Copyright (c) Aspen contributors.
// Codelet corpus: out[i] = clampTo(scaled(in[i]), 50) with helpers shared with SharedB.cpp.
#include "SharedHelpers.hpp"

class SharedA : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> in;
  poplar::Output<poplar::Vector<float, poplar::VectorLayout::ONE_PTR>> out;
  bool compute() {
    ++shared_corpus::Counter::calls;
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = shared_corpus::clampTo(shared_corpus::scaled(in[i]), 50.0f);
    return true;
  }
};
