// A custom vertex: sums its input vector into a scalar output.
#include <poplar/Vertex.hpp>

class SumVertex : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> in;
  poplar::Output<float> out;

  bool compute() {
    float sum = 0.0f;
    for (unsigned i = 0; i < in.size(); ++i)
      sum += in[i];
    *out = sum;
    return true;
  }
};
