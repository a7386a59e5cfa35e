// Codelets for the planned matrix-vector sample.
#include <poplar/Vertex.hpp>

// Partial dot products of a block of rows with a slice of the vector; the
// tile's six workers take rows in turn.
class BlockDot : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<float>> block; // rows x cols, row-major
  poplar::Input<poplar::Vector<float>> x;     // cols
  poplar::Output<poplar::Vector<float>> partial;

  bool compute(unsigned workerId) {
    const unsigned cols = x.size();
    for (unsigned r = workerId; r < partial.size(); r += numWorkers()) {
      float sum = 0.0f;
      for (unsigned k = 0; k < cols; ++k)
        sum += block[r * cols + k] * x[k];
      partial[r] = sum;
    }
    return true;
  }
};

// Sums the partial results of one row band across the column groups.
class SumPartials : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> partials; // groups x rows
  poplar::Output<poplar::Vector<float>> y;       // rows

  bool compute() {
    const unsigned rows = y.size(), groups = partials.size() / rows;
    for (unsigned r = 0; r < rows; ++r) {
      float sum = 0.0f;
      for (unsigned g = 0; g < groups; ++g)
        sum += partials[g * rows + r];
      y[r] = sum;
    }
    return true;
  }
};
