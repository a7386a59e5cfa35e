// Copyright (c) Aspen contributors.
// Codelets for the compiler's end-to-end tests, compiled with Graph::addCodelets.
#include <poplar/Vertex.hpp>

using namespace poplar;

/// out[i] = in[i] * k
class Scale : public Vertex {
public:
  Input<Vector<float>> in;
  Output<Vector<float>> out;
  float k;
  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = in[i] * k;
    return true;
  }
};

/// data[i] += 1, split over the workers.
class AddOneMulti : public MultiVertex {
public:
  InOut<Vector<float, VectorLayout::SPAN, 8>> data;
  void compute(unsigned workerId) {
    for (unsigned i = workerId; i < data.size(); i += numWorkers())
      data[i] += 1.0f;
  }
};

/// sums[r] = sum(rows[r]) + offsets[r]
class RowSums : public Vertex {
public:
  Vector<Input<Vector<float>>> rows;
  Output<Vector<float>> sums;
  Vector<float> offsets;
  bool compute() {
    for (unsigned r = 0; r < rows.size(); ++r) {
      float s = offsets[r];
      for (unsigned i = 0; i < rows[r].size(); ++i)
        s += rows[r][i];
      sums[r] = s;
    }
    return true;
  }
};

/// x -= 1; more = x > 0
class CountDown : public Vertex {
public:
  InOut<int> x;
  Output<int> more;
  bool compute() {
    *x = *x - 1;
    *more = *x > 0;
    return true;
  }
};
