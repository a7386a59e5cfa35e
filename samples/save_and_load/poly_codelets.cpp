// Codelet for the save-and-load sample, built ahead of time with popc:
//   popc -O2 poly_codelets.cpp -o poly_codelets.gp
#include <poplar/Vertex.hpp>

// Evaluates a*x*x + b*x + c for each element, split over the tile's workers.
class Polynomial : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<float>> x;
  poplar::Output<poplar::Vector<float>> y;
  float a, b, c;

  bool compute(unsigned workerId) {
    for (unsigned i = workerId; i < x.size(); i += numWorkers())
      y[i] = (a * x[i] + b) * x[i] + c;
    return true;
  }
};
