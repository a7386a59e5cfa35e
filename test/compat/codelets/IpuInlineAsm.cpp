// An IPU path in inline IPU assembly, as PopLibs' LogOps.hpp writes its f32max: the IPU build
// does not compile for the host, so popc warns (naming this file and the line) and a
// DeviceManager IPU device runs the cpu build. `build` says which build ran.
#include <poplar/Vertex.hpp>

using namespace poplar;

class Max2 : public Vertex {
public:
  Input<Vector<float>> a, b;
  Output<Vector<float>> out;
  Output<unsigned> build;

  bool compute() {
    for (unsigned i = 0; i < a.size(); ++i) {
#ifdef __IPU__
      float r;
      asm("f32max %[r], %[x], %[y]" : [r] "=r"(r) : [x] "r"(float(a[i])), [y] "r"(float(b[i])));
      out[i] = r;
#else
      out[i] = a[i] > b[i] ? a[i] : b[i];
#endif
    }
#ifdef __IPU__
    *build = __IPU_ARCH_VERSION__;
#else
    *build = 0;
#endif
    return true;
  }
};
