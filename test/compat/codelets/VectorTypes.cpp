// Copyright (c) Aspen contributors.
// IPU vector types as <ipudef.h> declares them, used the way IPU codelets use them:
// element access ([i]), casts between a vector and a scalar of its size (bits
// reinterpreted, as Graphcore's vector_size types do), arithmetic with vectors and scalars, comparisons
// giving lane masks, conversions with __builtin_convertvector, and templates
// instantiated with vector types (registered as Poplar spells them: Kernel<float,float2>).
#include <ipudef.h>
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

using namespace poplar;

static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 is 8 bytes");
static_assert(sizeof(float4) == 16, "float4 is 16 bytes");
static_assert(sizeof(half4) == 8 && sizeof(half2) == 4, "half4 is 8 bytes");
static_assert(sizeof(int2) == 8 && sizeof(short2) == 4 && sizeof(char4) == 4, "small vectors");

// out[i] = a[i] * scale + b[i], N elements at a time through the vector type V.
template <typename T, typename V> class AxpyVec : public Vertex {
public:
  Input<Vector<T, VectorLayout::SPAN, 8>> a;
  Input<Vector<T, VectorLayout::SPAN, 8>> b;
  Output<Vector<T, VectorLayout::SPAN, 8>> out;
  T scale;

  bool compute() {
    constexpr unsigned N = sizeof(V) / sizeof(T);
    const V *av = reinterpret_cast<const V *>(&a[0]);
    const V *bv = reinterpret_cast<const V *>(&b[0]);
    V *ov = reinterpret_cast<V *>(&out[0]);
    for (unsigned i = 0; i < out.size() / N; ++i) {
      V prod = av[i] * scale;
      ov[i] = prod + bv[i];
    }
    for (unsigned i = out.size() / N * N; i < out.size(); ++i) {
      T prod = a[i] * scale;
      out[i] = prod + b[i];
    }
    return true;
  }
};
template class AxpyVec<float, float2>;
template class AxpyVec<float, float4>;
template class AxpyVec<half, half4>;
template class AxpyVec<half, half2>;

// Element access, swizzles, comparisons and conversions on one float4 per input.
class Lanes : public Vertex {
public:
  Input<Vector<float, VectorLayout::SPAN, 16>> in; // 4 elements
  Output<Vector<float>> out;                       // 14 elements
  Output<Vector<int>> mask;                        // 4 elements
  Output<Vector<half>> halves;                     // 4 elements

  bool compute() {
    float4 v = *reinterpret_cast<const float4 *>(&in[0]);
    float2 lo = {v[0], v[1]}, hi = {v[2], v[3]};
    float2 swapped = {lo[1], lo[0]};
    out[0] = v[0];
    out[1] = v[3];
    out[2] = v[1] + v[2];
    out[3] = swapped[0];
    out[4] = hi[1] - lo[0];
    float4 scaled = 2.0f * v - float4{1, 1, 1, 1};
    for (unsigned i = 0; i < 4; ++i)
      out[5 + i] = scaled[i];
    int4 gt = v > float4{0.5f, 0.5f, 0.5f, 0.5f};
    for (unsigned i = 0; i < 4; ++i)
      mask[i] = gt[i];
    int4 truncated = __builtin_convertvector(v, int4);
    out[9] = static_cast<float>(truncated[0] + truncated[1] + truncated[2] + truncated[3]);
    half4 h = __builtin_convertvector(v, half4);
    h = h * h;
    for (unsigned i = 0; i < 4; ++i)
      halves[i] = h[i];
    short2 s = {3, -4};
    char4 c = {1, 2, 3, 4};
    int2 n = {7, 9};
    out[10] = static_cast<float>(s[0] * s[1] + c[3]);
    out[11] = static_cast<float>((n + 1)[1]);
    // A cast from a scalar of the vector's size keeps its bits (lane 0 the low half).
    const unsigned packed = 0x00020001u;
    ushort2 pair = (ushort2)packed;
    out[12] = static_cast<float>(pair[0] + 10 * pair[1]);
    uint2 words = reinterpret_cast<uint2>(0x0000000300000002ull);
    out[13] = static_cast<float>(words[0] + 10 * words[1]);
    return true;
  }
};
