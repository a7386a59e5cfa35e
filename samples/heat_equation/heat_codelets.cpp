// Codelets for the 2-D heat equation sample: a Jacobi step over one block of
// the grid, and a convergence check over every block's largest change.
#include <poplar/Vertex.hpp>

#include <cmath>

using namespace poplar;

// One Jacobi sweep of a block. `in` holds the block's rows plus one halo row
// above and below, each row with one halo column on either side; `out` holds
// the block's interior rows. Also reports the largest change in the block.
class HeatStep : public Vertex {
public:
  Vector<Input<Vector<float>>> in;
  Vector<Output<Vector<float>>> out;
  Output<float> maxDelta;

  bool compute() {
    float largest = 0.0f;
    for (unsigned i = 0; i < out.size(); ++i) {
      const auto &above = in[i];
      const auto &row = in[i + 1];
      const auto &below = in[i + 2];
      for (unsigned j = 0; j < out[i].size(); ++j) {
        float next = 0.25f * (above[j + 1] + below[j + 1] + row[j] + row[j + 2]);
        float delta = std::fabs(next - row[j + 1]);
        largest = delta > largest ? delta : largest;
        out[i][j] = next;
      }
    }
    *maxDelta = largest;
    return true;
  }
};

// Decides whether to iterate again: the largest change anywhere is still
// above the tolerance and the iteration budget is not spent.
class HeatConverged : public Vertex {
public:
  Input<Vector<float>> deltas;
  InOut<unsigned> iterations;
  Output<unsigned> keepGoing;
  float tolerance;
  unsigned maxIterations;

  bool compute() {
    float largest = 0.0f;
    for (unsigned i = 0; i < deltas.size(); ++i)
      largest = deltas[i] > largest ? deltas[i] : largest;
    *iterations = *iterations + 1;
    *keepGoing = (largest > tolerance && *iterations < maxIterations) ? 1u : 0u;
    return true;
  }
};
