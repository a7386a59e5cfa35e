// A runtime library built on its own (popc -o runtime.gp LinkRuntime.cpp), as codelet
// users ship helper code that other vertex libraries call into. LinkStub.cpp's vertices
// call its functions and count in its variable; the IPU linker makes one image of both.
#include <poplar/Vertex.hpp>

float rt_axpy(float a, float x, float y) {
  return a * x + y;
}

extern "C" int rt_clamp(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

// How often this tile's vertices called into the runtime: each tile has its own.
unsigned rt_calls = 0;

// The runtime library has a vertex of its own.
class RuntimeCalls : public poplar::Vertex {
public:
  poplar::Output<poplar::Vector<unsigned>> calls;

  bool compute() {
    calls[0] = rt_calls;
    return true;
  }
};
