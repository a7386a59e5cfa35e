// A small vertex library calling into a runtime library built separately
// (LinkRuntime.cpp): `popc -o stub.gp LinkStub.cpp` leaves the calls to the linker,
// which resolves them when the two are linked into one image (popc with both .gp
// files, or both added to one graph).
#include <poplar/Vertex.hpp>

using namespace poplar;

float rt_axpy(float a, float x, float y);
extern "C" int rt_clamp(int v, int lo, int hi);
extern unsigned rt_calls;

class Axpy : public Vertex {
public:
  Input<Vector<float>> x;
  InOut<Vector<float>> y;
  Input<Vector<int>> raw;
  Output<Vector<int>> clamped;
  float a;

  bool compute() {
    for (unsigned i = 0; i < x.size(); ++i)
      y[i] = rt_axpy(a, x[i], y[i]);
    for (unsigned i = 0; i < raw.size(); ++i)
      clamped[i] = rt_clamp(raw[i], -3, 5);
    ++rt_calls;
    return true;
  }
};
