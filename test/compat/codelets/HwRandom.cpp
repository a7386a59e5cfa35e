// Code written for IPU hardware: samples from the tile's hardware random number generator.
#include <ipu_builtins.h>
#include <ipudef.h>
#include <poplar/Vertex.hpp>

using namespace poplar;

class Uniform32 : public Vertex {
public:
  Output<Vector<unsigned>> out;

  bool compute() {
    for (unsigned i = 0; i < out.size(); ++i)
      out[i] = __builtin_ipu_urand32();
    return true;
  }
};

// 64-bit samples, as {low, high} words.
class Uniform64 : public Vertex {
public:
  Output<Vector<unsigned>> out;

  bool compute() {
    for (unsigned i = 0; i + 1 < out.size(); i += 2) {
      const unsigned long long r = __builtin_ipu_urand64();
      out[i] = static_cast<unsigned>(r);
      out[i + 1] = static_cast<unsigned>(r >> 32);
    }
    return true;
  }
};

// Uniform on [-0.5, 0.5): float and half.
class UniformFloat : public Vertex {
public:
  Output<Vector<float>> out;
  Output<Vector<half>> hout;

  bool compute() {
    for (unsigned i = 0; i < out.size(); ++i)
      out[i] = __builtin_ipu_urand_f32();
    for (unsigned i = 0; i < hout.size(); ++i)
      hout[i] = __builtin_ipu_urand_f16();
    return true;
  }
};

// Standard normal samples, two at a time.
class Gaussian : public Vertex {
public:
  Output<Vector<float>> out;
  Output<Vector<half>> hout;

  bool compute() {
    for (unsigned i = 0; i + 1 < out.size(); i += 2) {
      const float2 g = __builtin_ipu_f32v2grand();
      out[i] = g[0];
      out[i + 1] = g[1];
    }
    for (unsigned i = 0; i + 1 < hout.size(); i += 2) {
      const half2 g = __builtin_ipu_f16v2grand();
      hout[i] = g[0];
      hout[i + 1] = g[1];
    }
    return true;
  }
};

// Every worker draws from its own generator into its slice.
class UniformWorkers : public MultiVertex {
public:
  Output<Vector<unsigned>> out;

  bool compute(unsigned workerId) {
    const unsigned per = out.size() / numWorkers();
    for (unsigned i = workerId * per; i < (workerId + 1) * per; ++i)
      out[i] = __builtin_ipu_urand32();
    return true;
  }
};
