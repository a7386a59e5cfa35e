/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * Short vector types of the IPU (float2, half4, int2, ...) for host-compiled
 * codelets. They are GCC-style `vector_size` vectors, as the SDK's ipudef.h declares
 * them for Graphcore's clang: `v[i]`, element-wise arithmetic (with vectors, and with a
 * scalar, which is splatted), comparisons giving lane masks (0 / -1), `{a, b}`
 * initialisation, `__builtin_convertvector`, and a cast between a vector and a scalar
 * of the same size reinterprets its bits (`(ushort2)0x00020001u` is {1, 2}, not a
 * splat as OpenCL's `ext_vector_type` would make it). Swizzles (`v.x`, `v.lo`) are
 * refused, as Graphcore's compiler refuses them. Under GCC (the host's own tests of
 * these headers) half2 and half4 are small structs of the `half` class with the same
 * operators. Sizes and alignments match the IPU (float2: 8 bytes, half4: 8 bytes,
 * ...), so codelets may reinterpret aligned field data as these types. */
#ifndef ASPEN_IPUDEF_H
#define ASPEN_IPUDEF_H

#define ASPEN_VECTOR_TYPE(name, elem, n) typedef elem name __attribute__((vector_size(sizeof(elem) * (n))))

ASPEN_VECTOR_TYPE(float2, float, 2);
ASPEN_VECTOR_TYPE(float4, float, 4);
ASPEN_VECTOR_TYPE(int2, int, 2);
ASPEN_VECTOR_TYPE(int4, int, 4);
ASPEN_VECTOR_TYPE(uint2, unsigned int, 2);
ASPEN_VECTOR_TYPE(uint4, unsigned int, 4);
ASPEN_VECTOR_TYPE(short2, short, 2);
ASPEN_VECTOR_TYPE(short4, short, 4);
ASPEN_VECTOR_TYPE(ushort2, unsigned short, 2);
ASPEN_VECTOR_TYPE(ushort4, unsigned short, 4);
ASPEN_VECTOR_TYPE(char2, char, 2);
ASPEN_VECTOR_TYPE(char4, char, 4);
ASPEN_VECTOR_TYPE(uchar2, unsigned char, 2);
ASPEN_VECTOR_TYPE(uchar4, unsigned char, 4);
ASPEN_VECTOR_TYPE(schar2, signed char, 2);
ASPEN_VECTOR_TYPE(schar4, signed char, 4);
ASPEN_VECTOR_TYPE(long2, long, 2);
ASPEN_VECTOR_TYPE(long4, long, 4);
ASPEN_VECTOR_TYPE(longlong2, long long, 2);
ASPEN_VECTOR_TYPE(longlong4, long long, 4);
ASPEN_VECTOR_TYPE(ulonglong2, unsigned long long, 2);

#ifdef __cplusplus
#include <poplar/HalfFloat.hpp>
#elif defined(__clang__) && defined(__FLT16_MAX__)
typedef _Float16 half; /* C: as in C++, clang's built-in 16-bit float */
#define ASPEN_HALF_BUILTIN 1
#endif

#ifdef ASPEN_HALF_BUILTIN
ASPEN_VECTOR_TYPE(half2, half, 2);
ASPEN_VECTOR_TYPE(half4, half, 4);
ASPEN_VECTOR_TYPE(half8, half, 8);
#endif
#undef ASPEN_VECTOR_TYPE

/* The SDK's ipudef.h gives C++ code built for an IPU target the repeat-count type. */
#if defined(__cplusplus) && defined(__IPU__)
#include <poplar/Loops.hpp>
#endif

#if defined(__cplusplus) && !defined(ASPEN_HALF_BUILTIN)
namespace poplar {
namespace aspen_detail {

/// N halves with element-wise arithmetic; an aggregate, so `half4 v = {a, b, c, d};`.
template <unsigned N> struct alignas(2 * N) HalfVector {
  half elements[N];

  half &operator[](unsigned i) { return elements[i]; }
  const half &operator[](unsigned i) const { return elements[i]; }

#define ASPEN_HALFVEC_OP(op)                                                                                 \
  friend HalfVector operator op(const HalfVector &a, const HalfVector &b) {                                  \
    HalfVector r;                                                                                            \
    for (unsigned i = 0; i < N; ++i)                                                                         \
      r.elements[i] = a.elements[i] op b.elements[i];                                                        \
    return r;                                                                                                \
  }                                                                                                          \
  friend HalfVector operator op(const HalfVector &a, half b) {                                               \
    HalfVector r;                                                                                            \
    for (unsigned i = 0; i < N; ++i)                                                                         \
      r.elements[i] = a.elements[i] op b;                                                                    \
    return r;                                                                                                \
  }                                                                                                          \
  friend HalfVector operator op(half a, const HalfVector &b) {                                               \
    HalfVector r;                                                                                            \
    for (unsigned i = 0; i < N; ++i)                                                                         \
      r.elements[i] = a op b.elements[i];                                                                    \
    return r;                                                                                                \
  }                                                                                                          \
  HalfVector &operator op##=(const HalfVector &b) {                                                          \
    return *this = *this op b;                                                                               \
  }                                                                                                          \
  HalfVector &operator op##=(half b) {                                                                       \
    return *this = *this op b;                                                                               \
  }
  ASPEN_HALFVEC_OP(+)
  ASPEN_HALFVEC_OP(-)
  ASPEN_HALFVEC_OP(*)
  ASPEN_HALFVEC_OP(/)
#undef ASPEN_HALFVEC_OP

  friend HalfVector operator-(const HalfVector &a) {
    HalfVector r;
    for (unsigned i = 0; i < N; ++i)
      r.elements[i] = -a.elements[i];
    return r;
  }
  friend bool operator==(const HalfVector &a, const HalfVector &b) {
    for (unsigned i = 0; i < N; ++i)
      if (!(a.elements[i] == b.elements[i]))
        return false;
    return true;
  }
  friend bool operator!=(const HalfVector &a, const HalfVector &b) {
    return !(a == b);
  }
};

} // namespace aspen_detail
} // namespace poplar

typedef poplar::aspen_detail::HalfVector<2> half2;
typedef poplar::aspen_detail::HalfVector<4> half4;
typedef poplar::aspen_detail::HalfVector<8> half8;
#endif

#endif
