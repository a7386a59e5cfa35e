// Copyright (c) Aspen contributors.
// Supervisor vertices as Poplar 3.x codelets spell them (issue 22 item 1): a
// SupervisorVertex, and SupervisorVertexIf<true> / <false> as PopLibs' codelets use it
// (a supervisor when an assembly version exists, a plain Vertex otherwise). Each runs
// its compute() once. Checked by test/compat/supervisor_vertex.cpp.
#include <poplar/Vertex.hpp>

using namespace poplar;

// out = sum(in), on the supervisor context.
class SupervisorSum : public SupervisorVertex {
public:
  Input<Vector<float>> in;
  Output<float> out;

  bool compute() {
    float sum = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      sum += in[i];
    *out = sum;
    return true;
  }
};

// data[i] *= scale, once: a supervisor when the template argument says so.
template <bool UseSupervisor> class ScaleInPlace : public SupervisorVertexIf<UseSupervisor> {
public:
  InOut<Vector<float>> data;
  float scale;

  bool compute() {
    for (unsigned i = 0; i < data.size(); ++i)
      data[i] *= scale;
    return true;
  }
};
template class ScaleInPlace<true>;
template class ScaleInPlace<false>;
