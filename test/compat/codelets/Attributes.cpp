// Copyright (c) Aspen contributors.
// What clang takes and Graphcore's popc accepts: the IPU's function attributes
// (`target("supervisor")`, `target("worker")`), designated initialisers in any order
// and `__restrict`.
#include <poplar/Vertex.hpp>

using namespace poplar;

struct Params {
  float scale;
  float offset;
  int count;
};

__attribute__((target("worker"))) static float apply(const Params &p, float x) {
  return x * p.scale + p.offset;
}

__attribute__((target("supervisor"))) static int supervisorCount(int n) {
  return n;
}

class Designated : public Vertex {
public:
  Input<Vector<float>> in;
  Output<Vector<float>> out;

  bool compute() {
    const Params p = {.offset = 1.0f, .scale = 2.0f, .count = supervisorCount(static_cast<int>(in.size()))};
    const float *__restrict src = &in[0];
    float *__restrict dst = &out[0];
    for (int i = 0; i < p.count; ++i)
      dst[i] = apply(p, src[i]);
    return true;
  }
};
