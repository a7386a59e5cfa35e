// The vertices of the streamed_inference sample: one block of rows of a dense layer, and a
// running sum of the output.
#include <poplar/Vertex.hpp>

// y[r] = max(0, sum_c w[r * cols + c] * x[c] + b[r]) for this tile's rows.
class DenseRows : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> w;
  poplar::Input<poplar::Vector<float>> x;
  poplar::Input<poplar::Vector<float>> b;
  poplar::Output<poplar::Vector<float>> y;

  bool compute() {
    const unsigned cols = x.size();
    for (unsigned r = 0; r < y.size(); ++r) {
      float sum = b[r];
      for (unsigned c = 0; c < cols; ++c)
        sum += w[r * cols + c] * x[c];
      y[r] = sum > 0.0f ? sum : 0.0f;
    }
    return true;
  }
};

// total[i] += y[i]: state that lives across runs.
class Accumulate : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> y;
  poplar::InOut<poplar::Vector<float>> total;

  bool compute() {
    for (unsigned i = 0; i < y.size(); ++i)
      total[i] += y[i];
    return true;
  }
};
