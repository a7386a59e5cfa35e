// Copyright (c) Aspen contributors.
// Code written for hardware, calling the IPU's arithmetic builtins unguarded: the
// overloaded forms of <ipu_builtins.h> (as PopLibs' casts and elementwise codelets call
// them), the typed forms (`__builtin_ipu_f32v2absmax`, ...) and the ipu:: forms of
// <ipu_intrinsics>, on field data reinterpreted as float2 and half4.
#include <ipu_builtins.h>
#include <ipu_intrinsics>
#include <poplar/Vertex.hpp>

#include <cstring>

using namespace poplar;

extern "C" void compat_c_absmax(const float *a, const float *b, float *out, unsigned n); // IpuBuiltinsC.c

template <class R, class T> R as(T x) {
  R r;
  std::memcpy(&r, &x, sizeof r);
  return r;
}

class FloatBuiltins : public Vertex {
public:
  Input<Vector<float, VectorLayout::SPAN, 8>> a; // 2n
  Input<Vector<float, VectorLayout::ONE_PTR, 8>> b;
  Input<Vector<float, VectorLayout::ONE_PTR, 8>> limits; // {lower, upper}
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> maxOut;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> minOut;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> absmaxOut;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> absaddOut;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> clampOut;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> absOut; // andc of the sign bit
  Output<Vector<int, VectorLayout::ONE_PTR, 8>> ltOut;    // lane masks as int
  Output<Vector<int, VectorLayout::ONE_PTR, 8>> geOut;
  Output<Vector<int, VectorLayout::ONE_PTR, 8>> scalarOut; // per element: f32cmplt, isinf
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> fromC;   // IpuBuiltinsC.c

  bool compute() {
    const float2 *pa = reinterpret_cast<const float2 *>(&a[0]);
    const float2 *pb = reinterpret_cast<const float2 *>(&b[0]);
    const float2 lim = {limits[0], limits[1]};
    const float2 sign = {-0.0f, -0.0f};
    for (unsigned i = 0; i < a.size() / 2; ++i) {
      const float2 x = pa[i], y = pb[i];
      reinterpret_cast<float2 *>(&maxOut[0])[i] = __builtin_ipu_max(x, y);
      reinterpret_cast<float2 *>(&minOut[0])[i] = __builtin_ipu_f32v2min(x, y);
      reinterpret_cast<float2 *>(&absmaxOut[0])[i] = __builtin_ipu_f32v2absmax(x, y);
      reinterpret_cast<float2 *>(&absaddOut[0])[i] = ipu::absadd(x, y);
      reinterpret_cast<float2 *>(&clampOut[0])[i] = __builtin_ipu_clamp(x, lim);
      reinterpret_cast<float2 *>(&absOut[0])[i] = ipu::andc(x, sign);
      reinterpret_cast<int2 *>(&ltOut[0])[i] = as<int2>(__builtin_ipu_cmplt(x, y));
      reinterpret_cast<int2 *>(&geOut[0])[i] = as<int2>(ipu::cmpge(x, y));
    }
    for (unsigned i = 0; i < a.size(); ++i) {
      // PopLibs' form: a compare of a float with a float constant, read as bits.
      const int lt = as<int>(__builtin_ipu_cmplt(__builtin_ipu_andc_f32(a[i], 2.0f), 0.0f));
      scalarOut[i] = (lt & 1) | __builtin_ipu_isinf(a[i]) << 1 | __builtin_ipu_isnan(b[i]) << 2 |
                     __builtin_ipu_isfinite(b[i]) << 3;
    }
    compat_c_absmax(&a[0], &b[0], &fromC[0], a.size());
    return true;
  }
};

class HalfBuiltins : public Vertex {
public:
  Input<Vector<half, VectorLayout::SPAN, 8>> a; // 4n
  Input<Vector<half, VectorLayout::ONE_PTR, 8>> b;
  Input<Vector<half, VectorLayout::ONE_PTR, 8>> limits; // {lower, upper}
  Output<Vector<half, VectorLayout::ONE_PTR, 8>> maxOut;
  Output<Vector<half, VectorLayout::ONE_PTR, 8>> absaddOut;
  Output<Vector<half, VectorLayout::ONE_PTR, 8>> clampOut;
  Output<Vector<half, VectorLayout::ONE_PTR, 8>> expOut;
  Output<Vector<half, VectorLayout::ONE_PTR, 8>> sigmOut;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> sumOut; // 2 per half4
  Output<Vector<int, VectorLayout::ONE_PTR, 8>> gtOut;    // lane masks as int

  bool compute() {
    const half4 *pa = reinterpret_cast<const half4 *>(&a[0]);
    const half4 *pb = reinterpret_cast<const half4 *>(&b[0]);
    const half2 lim = {limits[0], limits[1]};
    for (unsigned i = 0; i < a.size() / 4; ++i) {
      const half4 x = pa[i], y = pb[i];
      reinterpret_cast<half4 *>(&maxOut[0])[i] = ipu::max(x, y);
      reinterpret_cast<half4 *>(&absaddOut[0])[i] = __builtin_ipu_f16v4absadd(x, y);
      reinterpret_cast<half4 *>(&clampOut[0])[i] = ipu::clamp(x, lim);
      reinterpret_cast<float2 *>(&sumOut[0])[i] = __builtin_ipu_sum(x);
      const short4 gt = as<short4>(__builtin_ipu_f16v4cmpgt(x, y));
      for (unsigned k = 0; k < 4; ++k)
        gtOut[4 * i + k] = gt[k];
    }
    const half2 *pa2 = reinterpret_cast<const half2 *>(&a[0]);
    for (unsigned i = 0; i < a.size() / 2; ++i) {
      reinterpret_cast<half2 *>(&expOut[0])[i] = __builtin_ipu_exp(pa2[i]);
      reinterpret_cast<half2 *>(&sigmOut[0])[i] = __builtin_ipu_f16v2sigm(pa2[i]);
    }
    return true;
  }
};
