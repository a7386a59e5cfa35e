// Copyright (c) Aspen contributors.
// popfloat's gfloat cast: each value rounded to a float format of `manBits` mantissa bits,
// `expBits` exponent bits and exponent bias `bias` (docs/poplibs-coverage.md), and stored in
// its native type. Worker w takes the w-th share of the elements.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>
#include <limits>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

namespace popfloat {
namespace experimental {
namespace gfloat_detail {

enum Flags : unsigned { kDenorms = 1, kInfsAndNans = 2, kNanoo = 4 };
// The order of popfloat::experimental::RoundType.
enum Round : unsigned { RZ = 1, RN = 2, RA = 3, RU = 4, RD = 5 };

/// `x` rounded to the gfloat format (see the vertex).
inline float quantise(float x, unsigned manBits, unsigned expBits, int bias, unsigned flags, unsigned round) {
  const bool infsAndNans = flags & kInfsAndNans, nanoo = flags & kNanoo;
  const int maxExpField = (1 << expBits) - 1 - (infsAndNans ? 1 : 0);
  const double maxValue = std::ldexp(2.0 - std::ldexp(1.0, -int(manBits)), maxExpField - bias);
  const double overflow = nanoo ? std::numeric_limits<double>::quiet_NaN() : maxValue;
  if (std::isnan(x))
    return x;
  if (std::isinf(x))
    return float(infsAndNans ? double(x) : std::copysign(overflow, double(x)));
  const double v = x;
  const double minNorm = std::ldexp(1.0, 1 - bias);
  int e = 0;
  std::frexp(std::fabs(v), &e); // |v| in [2^(e-1), 2^e)
  const int exponent = std::fabs(v) >= minNorm ? e - 1 : 1 - bias;
  const double quantum = std::ldexp(1.0, exponent - int(manBits));
  const double scaled = v / quantum; // exact: a power-of-two scaling
  double n = std::trunc(scaled);
  const double rest = scaled - n; // in (-1, 1), same sign as v
  switch (round) {
  case RN:
    if (std::fabs(rest) > 0.5 || (std::fabs(rest) == 0.5 && std::fmod(n, 2.0) != 0.0))
      n += rest > 0 ? 1 : -1;
    break;
  case RA:
    if (std::fabs(rest) >= 0.5)
      n += rest > 0 ? 1 : -1;
    break;
  case RU:
    if (rest > 0)
      n += 1;
    break;
  case RD:
    if (rest < 0)
      n -= 1;
    break;
  default: // RZ
    break;
  }
  double r = n * quantum;
  if (!(flags & kDenorms) && std::fabs(r) < minNorm)
    r = std::copysign(0.0, v);
  if (std::fabs(r) > maxValue)
    r = std::copysign(overflow, v);
  return float(r);
}

inline void share(std::size_t n, unsigned workerId, unsigned numWorkers, std::size_t &begin,
                  std::size_t &end) {
  begin = n * workerId / numWorkers;
  end = n * (workerId + 1) / numWorkers;
}

} // namespace gfloat_detail

/// out[i] = in[i] rounded to the gfloat format `param`: mantissa bits, exponent bits, bias, and
/// flags (bit 0 keeps denormals, else they become zero; bit 1 reserves the top exponent for
/// infinities and NaNs, else infinite inputs saturate). `nanoo` makes overflow NaN (else it
/// saturates to the format's largest value); `round` is a RoundType (RZ .. RD).
template <typename In, typename Out> class CastToGfloat : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<In>> in;
  poplar::Output<poplar::Vector<Out>> out;
  poplar::Input<poplar::Vector<unsigned>> param; // {manBits, expBits, bias, denorms | infsAndNans << 1}
  unsigned nanoo;
  unsigned round;

  bool compute(unsigned workerId) {
    if (in.size() != out.size() || param.size() != 4)
      return false;
    std::size_t begin, end;
    gfloat_detail::share(out.size(), workerId, numWorkers(), begin, end);
    for (std::size_t i = begin; i < end; ++i)
      out[i] = Out(gfloat_detail::quantise(float(in[i]), param[0], param[1], int(param[2]),
                                           param[3] | (nanoo ? gfloat_detail::kNanoo : 0u), round));
    return true;
  }
};

template class CastToGfloat<float, float>;
template class CastToGfloat<half, half>;
template class CastToGfloat<half, float>;
template class CastToGfloat<float, half>;

/// In place: data[i] rounded as CastToGfloat does.
template <typename T> class CastToGfloatInPlace : public poplar::MultiVertex {
public:
  poplar::InOut<poplar::Vector<T>> data;
  poplar::Input<poplar::Vector<unsigned>> param; // {manBits, expBits, bias, denorms | infsAndNans << 1}
  unsigned nanoo;
  unsigned round;

  bool compute(unsigned workerId) {
    if (param.size() != 4)
      return false;
    std::size_t begin, end;
    gfloat_detail::share(data.size(), workerId, numWorkers(), begin, end);
    for (std::size_t i = begin; i < end; ++i)
      data[i] = T(gfloat_detail::quantise(float(data[i]), param[0], param[1], int(param[2]),
                                          param[3] | (nanoo ? gfloat_detail::kNanoo : 0u), round));
    return true;
  }
};

template class CastToGfloatInPlace<float>;
template class CastToGfloatInPlace<half>;

} // namespace experimental
} // namespace popfloat
