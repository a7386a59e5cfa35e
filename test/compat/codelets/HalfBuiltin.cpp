// Copyright (c) Aspen contributors.
// `half` as Graphcore's popc has it: a built-in 16-bit float. Implicit conversions
// from float, integers and field proxies (`half h = in;`), assignments across half and
// float fields, arithmetic rounded to half after each operation, <cmath> on halves.
#include <cmath>
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

using namespace poplar;

static_assert(sizeof(half) == 2, "half is two bytes");

half twice(half x) {
  return x + x;
}

class HalfMix : public Vertex {
public:
  Input<float> in;
  Input<Vector<float>> fin;
  Input<Vector<half>> hin;
  Output<Vector<half>> hout;
  Output<Vector<float>> fout;
  Output<half> scalar;
  Output<float> widenedOut;

  bool compute() {
    half h = in; // from an Input<float>
    half k = 3;  // from an int
    unsigned u = 2u;
    half j = u; // from an unsigned
    *scalar = h * k + j;
    float widened = h;                  // half -> float: no -Wdouble-promotion error, as on the IPU
    widened = floorf(widened + hin[0]); // (PopLibs builds with -Werror -Wdouble-promotion)
    *widenedOut = widened;
    for (unsigned i = 0; i < hout.size(); ++i) {
      hout[i] = fin[i]; // float field into half field
      fout[i] = hin[i]; // half field into float field
    }
    for (unsigned i = 0; i < hout.size(); ++i) {
      half x = hin[i];
      half y = x > 0 ? std::sqrt(x) : 0; // built-in: `cond ? h : 0` is not ambiguous
      hout[i] = hout[i] + twice(y);
    }
    return true;
  }
};
