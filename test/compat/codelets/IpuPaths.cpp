// Code written for IPU hardware with device paths split by #ifdef __IPU__, as PopLibs'
// codelets split them: the IPU path takes its worker id from the worker status register
// and works on float2 pairs with the IPU's builtins; the other path is plain C++.
// `build` says which build ran: __IPU_ARCH_VERSION__ in the IPU build, 0 in the cpu build.
#include <ipu_builtins.h>
#include <poplar/Vertex.hpp>
#ifdef __IPU__
#include <ipu_vector_math>
#include <tilearch.h>
#endif

using namespace poplar;

#ifdef __IPU__
static inline unsigned workerIndex() {
  return __builtin_ipu_get(CSR_W_WSR__INDEX) & CSR_W_WSR__CTXTID_M1__MASK;
}
#endif

// out[i] = clamp(a * in[i] + b, -lim, lim), worker w taking elements w, w + 6, ...;
// owner[i] = the worker that wrote out[i].
class ScaleClamp : public MultiVertex {
public:
  Input<Vector<float, VectorLayout::SPAN, 8>> in;
  Output<Vector<float, VectorLayout::SPAN, 8>> out;
  Output<Vector<unsigned>> owner;
  Output<unsigned> build;
  float a, b, lim;

  bool compute(unsigned workerId) {
#ifdef __IPU__
    const unsigned w = workerIndex();
    if (w != workerId)
      return false;
    if (w == 0)
      *build = __IPU_ARCH_VERSION__;
    // Pairs of elements: pair p is elements 2p and 2p + 1, worker w takes pairs w, w + 6, ...
    // (the same elements as the C++ path when the caller's n is a multiple of 12).
    const float2 *in2 = reinterpret_cast<const float2 *>(&in[0]);
    float2 *out2 = reinterpret_cast<float2 *>(&out[0]);
    const float2 av = {a, a}, bv = {b, b}, range = {-lim, lim};
    for (unsigned p = w; p < in.size() / 2; p += numWorkers()) {
      out2[p] = __builtin_ipu_f32v2clamp(av * in2[p] + bv, range);
      owner[2 * p] = w;
      owner[2 * p + 1] = w;
    }
#else
    if (workerId == 0)
      *build = 0;
    for (unsigned p = workerId; p < in.size() / 2; p += numWorkers()) {
      for (unsigned i = 2 * p; i < 2 * p + 2; ++i) {
        const float y = a * in[i] + b;
        out[i] = y < -lim ? -lim : y > lim ? lim : y;
        owner[i] = workerId;
      }
    }
#endif
    return true;
  }
};

// A vertex with the same result either way, reading its worker through the register on the
// IPU (a worker vertex runs in one worker context).
class WorkerOf : public Vertex {
public:
  Output<Vector<unsigned>> out; // {worker, build}

  bool compute() {
#ifdef __IPU__
    out[0] = __builtin_ipu_get(CSR_W_WSR__INDEX) & CSR_W_WSR__CTXTID_M1__MASK;
    out[1] = __IPU_ARCH_VERSION__;
#else
    out[0] = __builtin_ipu_get_worker_id();
    out[1] = 0;
#endif
    return true;
  }
};
