// Copyright (c) Aspen contributors.
// Code written for hardware, unguarded: <ipu_memory_intrinsics>' post-incrementing
// loads and stores and <ipu_vector_math> on vectors, as PopLibs' IPU paths use them.
#include <ipu_memory_intrinsics>
#include <ipu_vector_math>
#include <poplar/Vertex.hpp>

using namespace poplar;

class VectorMath : public Vertex {
public:
  Input<Vector<float, VectorLayout::SPAN, 8>> in;   // 2n
  Output<Vector<float, VectorLayout::SPAN, 8>> out; // 2n
  Input<Vector<half, VectorLayout::SPAN, 8>> hin;   // 4m
  Output<Vector<half, VectorLayout::SPAN, 8>> hout; // 4m

  bool compute() {
    const float2 *src = reinterpret_cast<const float2 *>(&in[0]);
    float2 *dst = reinterpret_cast<float2 *>(&out[0]);
    for (unsigned i = 0; i < in.size() / 2; ++i) {
      const float2 x = ipu::load_postinc(&src, 1);
      ipu::store_postinc(&dst, ipu::fma(ipu::sigmoid(x), ipu::fabs(x), float2{1.0f, 1.0f}), 1);
    }
    const half4 *hsrc = reinterpret_cast<const half4 *>(&hin[0]);
    half4 *hdst = reinterpret_cast<half4 *>(&hout[0]);
    for (unsigned i = 0; i < hin.size() / 4; ++i)
      ipu::store_postinc(&hdst, ipu::sqrt(ipu::load_postinc(&hsrc, 1)), 1);
    return true;
  }
};
