// Copyright (c) Aspen contributors.
// <cmath> of a float is float, qualified or not, as on the IPU: this file builds with
// PopLibs' flags `-Werror -Wdouble-promotion`.
#include <cmath>
#include <poplar/Vertex.hpp>

using namespace poplar;

class Transcendentals : public Vertex {
public:
  Input<Vector<float>> x;
  Input<Vector<float>> y;
  Output<Vector<float>> out; // 6 per element

  bool compute() {
    for (unsigned i = 0; i < x.size(); ++i) {
      const float a = x[i], b = y[i];
      out[6 * i + 0] = sqrt(a);
      out[6 * i + 1] = exp(-a);
      out[6 * i + 2] = atan2(b, a);
      out[6 * i + 3] = erf(a);
      out[6 * i + 4] = std::log(a) + fabs(b);
      out[6 * i + 5] = pow(a, 0.5f) + tanh(b);
    }
    return true;
  }
};
