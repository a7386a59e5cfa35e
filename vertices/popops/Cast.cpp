// Copyright (c) Aspen contributors.
// popops::Cast1D<In, Out>: dst = convert(src) over a 1-D region. float -> half
// rounds to nearest even (the half class's conversion); to bool is `x != 0`.
#include <poplar/HalfFloat.hpp>
#include <poplar/QuarterFloat.hpp>
#include <poplar/Vertex.hpp>

#include <limits>
#include <type_traits>

#include "VertexUtil.hpp"

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

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

// fp8: conversions that need the metadata of the quarter side(s) (docs/fp8.md).
// Integers go through float (exact for every quarter value; for 8-bit integers too);
// quarter to an integer truncates and saturates, NaN gives 0.
template <typename To, typename From> struct QuarterConvert {
  static quarter apply(From x, quarter_metadata, quarter_metadata out) {
    return toQuarter(static_cast<float>(x), out);
  }
};
template <typename To> struct QuarterConvert<To, quarter> {
  static To apply(quarter x, quarter_metadata in, quarter_metadata) {
    const float f = toFloat(x, in);
    if (f != f)
      return To(0);
    if (f <= static_cast<float>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (f >= static_cast<float>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(f);
  }
};
template <> struct QuarterConvert<float, quarter> {
  static float apply(quarter x, quarter_metadata in, quarter_metadata) { return toFloat(x, in); }
};
template <> struct QuarterConvert<half, quarter> {
  static half apply(quarter x, quarter_metadata in, quarter_metadata) { return toHalf(x, in); }
};
template <> struct QuarterConvert<quarter, float> {
  static quarter apply(float x, quarter_metadata, quarter_metadata out) { return toQuarter(x, out); }
};
template <> struct QuarterConvert<quarter, half> {
  static quarter apply(half x, quarter_metadata, quarter_metadata out) { return toQuarter(x, out); }
};
// Through float, which holds every quarter value of every scale exactly.
template <> struct QuarterConvert<quarter, quarter> {
  static quarter apply(quarter x, quarter_metadata in, quarter_metadata out) {
    return toQuarter(toFloat(x, in), out);
  }
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
    constexpr bool quarterIn = std::is_same<InType, quarter>::value;
    constexpr bool quarterOut = std::is_same<OutType, quarter>::value;
    if constexpr (quarterIn || quarterOut) {
      quarter_metadata inMd{}, outMd{};
      if constexpr (quarterIn)
        inMd = unpackMetadata(*src.getMetadata());
      if constexpr (quarterOut)
        outMd = unpackMetadata(*dst.getMetadata());
      for (unsigned i = begin; i < end; ++i)
        out[i] = QuarterConvert<OutType, InType>::apply(in[i], inMd, outMd);
    } else {
      for (unsigned i = begin; i < end; ++i)
        out[i] = Convert<OutType, InType>::apply(in[i]);
    }
  }
};

// fp8 casts (docs/fp8.md).
template class Cast1D<quarter, float>;
template class Cast1D<quarter, half>;
template class Cast1D<float, quarter>;
template class Cast1D<half, quarter>;
template class Cast1D<quarter, quarter>;
#define POPOPS_CAST_QUARTER_INT(N)                                                                           \
  template class Cast1D<quarter, N>;                                                                         \
  template class Cast1D<N, quarter>;
POPOPS_CAST_QUARTER_INT(char)
POPOPS_CAST_QUARTER_INT(signed char)
POPOPS_CAST_QUARTER_INT(unsigned char)
POPOPS_CAST_QUARTER_INT(int)
POPOPS_CAST_QUARTER_INT(unsigned int)

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
