// Copyright (c) Aspen contributors.
// Codelets of test/compat/api_scalar_connect.cpp, written as Poplar codelets are.
#include <poplar/Vertex.hpp>

using namespace poplar;

// out[i] = in[i] * scale + offset; the scalars come from Graph::connect(field, value).
class ScaleOffset : public Vertex {
public:
  Input<Vector<float>> in;
  Input<float> scale;
  Input<unsigned> offset;
  Output<Vector<float>> out;

  bool compute() {
    for (unsigned i = 0; i < in->size(); ++i) // operator-> on a vector edge
      out[i] = in[i] * scale + offset;
    return out->size() == in->size();
  }
};
