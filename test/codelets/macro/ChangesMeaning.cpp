// Copyright (c) Aspen contributors.
// Codelet corpus: valid for clang (and Poplar's clang-based popc), rejected by GCC
// alone as "changes meaning" ([basic.scope.class], no diagnostic required).
#include <poplar/Vertex.hpp>

struct Factor {
  float value;
};

class ChangesMeaning : public poplar::Vertex {
public:
  poplar::Input<float> in;
  poplar::Output<float> out;
  Factor factor; // ::Factor, a plain state struct
  bool compute() {
    *out = *in * 3.0f;
    return true;
  }
  typedef float Factor; // changes the meaning of `Factor` used above
};
