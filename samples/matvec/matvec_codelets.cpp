// Codelets for the matrix-vector sample: one vertex computes the dot products
// of a few matrix rows with the vector.
#include <poplar/Vertex.hpp>

class DotRows : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> matrix; // rows x n, row-major
  poplar::Input<poplar::Vector<float>> x;      // n
  poplar::Output<poplar::Vector<float>> y;     // rows

  bool compute() {
    const unsigned n = x.size();
    if (matrix.size() != n * y.size())
      return false;
    for (unsigned r = 0; r < y.size(); ++r) {
      float sum = 0.0f;
      for (unsigned k = 0; k < n; ++k)
        sum += matrix[r * n + k] * x[k];
      y[r] = sum;
    }
    return true;
  }
};
