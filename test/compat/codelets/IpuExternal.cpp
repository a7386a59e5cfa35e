// A vertex whose IPU build is IPU assembly, as PopLibs' IS_EXTERNAL_CODELET marks it under
// __IPU__: its compute on hardware is in a .S file, which the simulator cannot run, so a
// DeviceManager IPU device runs this library's cpu build. `build` says which build ran.
#include <poplar/Vertex.hpp>

using namespace poplar;

class Square : public Vertex {
public:
#ifdef __IPU__
  static const bool isExternalCodelet = true;
#endif
  Input<Vector<float>> in;
  Output<Vector<float>> out;
  Output<unsigned> build;

  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = in[i] * in[i];
#ifdef __IPU__
    *build = __IPU_ARCH_VERSION__;
#else
    *build = 0;
#endif
    return true;
  }
};
