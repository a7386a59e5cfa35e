// Copyright (c) Aspen contributors.
// Floating-point contraction: `b + q * c` rounds the product, then the sum, as a host
// reference written the same way does (Aspen compiles codelets with -ffp-contract=off;
// docs/codelets.md). fmaf is the fused operation, when a codelet asks for it.
#include <cmath>
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

using namespace poplar;

class Relax : public MultiVertex {
public:
  Input<Vector<float>> b;
  Input<Vector<float>> q;
  Input<Vector<float>> c;
  Output<Vector<float>> out;
  Output<Vector<float>> fused;
  Output<Vector<half>> hout; // the same in half arithmetic

  bool compute(unsigned workerId) {
    for (unsigned i = workerId; i < out.size(); i += numWorkers()) {
      out[i] = b[i] + q[i] * c[i];
      fused[i] = std::fma(q[i], c[i], b[i]);
      half hb = b[i], hq = q[i], hc = c[i];
      hout[i] = hb + hq * hc;
    }
    return true;
  }
};
