// Copyright (c) Aspen contributors.
// popops::Cast1D<In, Out>: dst = convert(src) over a 1-D region. float -> half
// rounds to nearest even (the half class's conversion); to bool is `x != 0`.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include "VertexUtil.hpp"

using namespace poplar;

namespace popops {

namespace {
template <typename To, typename From> struct Convert {
  static To apply(From x) { return static_cast<To>(x); }
};
// Integers reach half through float (the half class converts from float and integers alike).
template <typename From> struct Convert<bool, From> {
  static bool apply(From x) { return static_cast<float>(x) != 0.0f; }
};
template <> struct Convert<bool, bool> {
  static bool apply(bool x) { return x; }
};
} // namespace

template <typename InType, typename OutType> class Cast1D : public MultiVertex {
public:
  Input<Vector<InType, VectorLayout::SPAN, 8>> src;
  Output<Vector<OutType, VectorLayout::SPAN, 8>> dst;

  void compute(unsigned wid) {
    unsigned begin, end;
    vertexutil::workerRange(dst.size(), wid, numWorkers(), begin, end);
    const InType *in = &src[0];
    OutType *out = &dst[0];
    for (unsigned i = begin; i < end; ++i)
      out[i] = Convert<OutType, InType>::apply(in[i]);
  }
};

#define POPOPS_CAST_FROM(IN)                                                                                 \
  template class Cast1D<IN, float>;                                                                          \
  template class Cast1D<IN, half>;                                                                           \
  template class Cast1D<IN, int>;                                                                            \
  template class Cast1D<IN, unsigned int>;                                                                   \
  template class Cast1D<IN, bool>;
POPOPS_CAST_FROM(float)
POPOPS_CAST_FROM(half)
POPOPS_CAST_FROM(int)
POPOPS_CAST_FROM(unsigned int)
POPOPS_CAST_FROM(bool)

// The narrow integer types convert to and from the four main numeric types.
#define POPOPS_CAST_NARROW(N)                                                                                \
  template class Cast1D<N, float>;                                                                           \
  template class Cast1D<N, half>;                                                                            \
  template class Cast1D<N, int>;                                                                             \
  template class Cast1D<N, unsigned int>;                                                                    \
  template class Cast1D<float, N>;                                                                           \
  template class Cast1D<half, N>;                                                                            \
  template class Cast1D<int, N>;                                                                             \
  template class Cast1D<unsigned int, N>;
POPOPS_CAST_NARROW(char)
POPOPS_CAST_NARROW(signed char)
POPOPS_CAST_NARROW(unsigned char)
POPOPS_CAST_NARROW(short)
POPOPS_CAST_NARROW(unsigned short)

} // namespace popops
