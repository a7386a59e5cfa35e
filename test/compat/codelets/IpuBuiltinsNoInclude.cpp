// Copyright (c) Aspen contributors.
// The typed IPU builtins need no #include with Graphcore's compiler: this file includes
// only poplar/Vertex.hpp. Byte permutations (PopLibs' combine8bit, built on
// shuf8x8lo), bit reversal, sign-bit counting and class tests.
#include <poplar/Vertex.hpp>

using namespace poplar;

namespace {
template <class R, class T> R as(T x) {
  R r;
  __builtin_memcpy(&r, &x, sizeof r);
  return r;
}
// Four bytes, from the least significant byte of each input, into one word (PopLibs
// writes the casts as reinterpret_cast, which needs <ipudef.h>'s vectors to be
// `vector_size` types, docs/codelets.md).
unsigned combine8bit(unsigned in0, unsigned in1, unsigned in2, unsigned in3) {
  auto a = as<ushort2>(__builtin_ipu_shuf8x8lo(in0, in1));
  auto b = as<ushort2>(__builtin_ipu_shuf8x8lo(in2, in3));
  return as<unsigned>(__builtin_shufflevector(a, b, 0, 2));
}
} // namespace

class Permutations : public Vertex {
public:
  // Words given as 16-bit halves (lo, hi), results likewise: exact through the harness.
  Input<Vector<int, VectorLayout::SPAN, 4>> halves; // 2 per word, 4 words per group
  Output<Vector<int, VectorLayout::ONE_PTR, 4>> out;

  bool compute() {
    const unsigned words = halves.size() / 2;
    auto word = [&](unsigned w) { return unsigned(halves[2 * w]) | unsigned(halves[2 * w + 1]) << 16; };
    auto put = [&](unsigned slot, unsigned v) {
      out[2 * slot] = int(v & 0xffffu);
      out[2 * slot + 1] = int(v >> 16);
    };
    for (unsigned w = 0; w < words; ++w) {
      const unsigned x = word(w), y = word((w + 1) % words);
      put(5 * w + 0, __builtin_ipu_shuf8x8lo(x, y));
      put(5 * w + 1, __builtin_ipu_shuf8x8hi(x, y));
      put(5 * w + 2, __builtin_ipu_bitrev8(x));
      put(5 * w + 3, __builtin_ipu_cms(int(x)));
      put(5 * w + 4, combine8bit(x, y, x >> 8, y >> 8));
    }
    return true;
  }
};

class Classes : public Vertex {
public:
  Input<Vector<float, VectorLayout::SPAN, 8>> in; // 2n
  Output<Vector<int, VectorLayout::ONE_PTR, 8>> out;

  bool compute() {
    const float2 *p = reinterpret_cast<const float2 *>(&in[0]);
    for (unsigned i = 0; i < in.size() / 2; ++i) {
      const int2 nan = __builtin_ipu_isnan_v2f32(p[i]), inf = __builtin_ipu_isinf_v2f32(p[i]);
      const int2 fin = __builtin_ipu_isfinite_v2f32(p[i]);
      for (unsigned k = 0; k < 2; ++k)
        out[2 * i + k] = nan[k] | inf[k] << 1 | fin[k] << 2;
    }
    const float2 lo = __builtin_ipu_sort4x32lo(p[0], p[1]), hi = __builtin_ipu_sort4x32hi(p[0], p[1]);
    out[in.size()] = __builtin_ipu_isnan_f32(lo[1]) | __builtin_ipu_isinf_f32(hi[0]) << 1 |
                     (lo[0] == in[0]) << 2 | (hi[1] == in[3]) << 3;
    return true;
  }
};
