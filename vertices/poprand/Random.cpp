// Copyright (c) Aspen contributors.
// poprand's vertices. Every random number comes from Philox-4x32-10 (a
// counter-based generator) keyed by the 64-bit seed; the counter holds the
// element's global index, the seed modifier and a word naming the operation
// (and, for the graph's random state, its use count). Each element's value
// therefore depends only on (seed, modifier, operation, index): never on which
// worker or host thread computes it.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

namespace poprand {
namespace rand_detail {

// The values of the `distribution` field (libops/src/poprand/RandomGen.cpp).
enum Distribution : unsigned {
  UNIFORM = 0,
  NORMAL = 1,
  TRUNCATED_NORMAL = 2,
  BERNOULLI = 3,
  LOG_UNIFORM = 4
};

struct Block {
  std::uint32_t v[4];
};

inline std::uint32_t mulHi(std::uint32_t a, std::uint32_t b) {
  return std::uint32_t((std::uint64_t(a) * b) >> 32);
}

/// Philox-4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11).
inline Block philox(Block ctr, std::uint32_t key0, std::uint32_t key1) {
  const std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  const std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (unsigned round = 0; round < 10; ++round) {
    const std::uint32_t hi0 = mulHi(kMul0, ctr.v[0]), lo0 = kMul0 * ctr.v[0];
    const std::uint32_t hi1 = mulHi(kMul1, ctr.v[2]), lo1 = kMul1 * ctr.v[2];
    ctr = Block{{hi1 ^ ctr.v[1] ^ key0, lo1, hi0 ^ ctr.v[3] ^ key1, lo0}};
    key0 += kWeyl0;
    key1 += kWeyl1;
  }
  return ctr;
}

/// The key and the two fixed counter words of one operation.
struct Stream {
  std::uint32_t key0, key1, word2, word3;

  /// Four random words for element `index`, attempt `attempt` (for rejection sampling).
  Block draw(std::uint64_t index, std::uint32_t attempt) const {
    const Block ctr{{std::uint32_t(index), std::uint32_t(index >> 32) ^ (attempt << 20), word2, word3}};
    return philox(ctr, key0, key1);
  }
};

/// `seed` holds either an explicit seed {lo, hi} (the result depends only on
/// it and `modifier`) or the graph's random state {lo, hi, modifier, uses}.
template <typename SeedVector>
inline Stream makeStream(const SeedVector &seed, unsigned modifier, unsigned salt, unsigned distribution) {
  Stream s;
  s.key0 = seed[0];
  s.key1 = seed[1];
  if (seed.size() >= 4) {
    s.word2 = seed[2] ^ (salt * 0x9E3779B9u);
    s.word3 = seed[3] ^ (distribution << 28);
  } else {
    s.word2 = modifier;
    s.word3 = (salt * 0x85EBCA6Bu) ^ (distribution << 28);
  }
  return s;
}

/// A float in [0, 1) from the top 24 bits of `x`.
inline float unitFloat(std::uint32_t x) {
  return float(x >> 8) * (1.0f / 16777216.0f);
}
/// A float in (0, 1] (safe for log).
inline float unitFloatOpen(std::uint32_t x) {
  return float((x >> 8) + 1) * (1.0f / 16777216.0f);
}

/// A standard normal value (Box-Muller) from two random words.
inline float standardNormal(std::uint32_t a, std::uint32_t b) {
  const float radius = std::sqrt(-2.0f * std::log(unitFloatOpen(a)));
  return radius * std::cos(6.283185307179586f * unitFloat(b));
}

template <typename T> inline T fromFloat(float v) {
  return T(v);
}
template <> inline int fromFloat<int>(float v) {
  return int(std::lround(v));
}

} // namespace rand_detail

/// Fills `out` (elements baseIndex, baseIndex + 1, ... of the result) with
/// random values of distribution `distribution`:
///   UNIFORM: [param0, param1] (INT: integers in [param0, param1]);
///   NORMAL: mean param0, standard deviation param1;
///   TRUNCATED_NORMAL: as NORMAL, redrawn outside mean +- param2 * stdDev;
///   BERNOULLI: 1 with probability param0;
///   LOG_UNIFORM: exp(uniform(param0, param1)) with param0, param1 natural
///     logarithms of the bounds.
template <typename T> class RandomGen : public poplar::MultiVertex {
public:
  poplar::Output<poplar::Vector<T>> out;
  poplar::Input<poplar::Vector<unsigned>> seed;
  unsigned baseIndexLo;
  unsigned baseIndexHi;
  unsigned seedModifier;
  unsigned salt;
  unsigned distribution;
  float param0;
  float param1;
  float param2;

  bool compute(unsigned workerId) {
    using namespace rand_detail;
    if (seed.size() != 2 && seed.size() != 4)
      return false;
    const Stream stream = makeStream(seed, seedModifier, salt, distribution);
    const std::uint64_t base = (std::uint64_t(baseIndexHi) << 32) | baseIndexLo;
    const std::size_t n = out.size();
    const std::size_t begin = n * workerId / numWorkers();
    const std::size_t end = n * (workerId + 1) / numWorkers();
    for (std::size_t i = begin; i < end; ++i) {
      const std::uint64_t index = base + i;
      const Block r = stream.draw(index, 0);
      float v = 0.0f;
      switch (distribution) {
      case UNIFORM:
        if (std::is_integral<T>::value) {
          const double range = double(param1) - double(param0) + 1.0;
          const std::uint64_t wide = (std::uint64_t(r.v[1]) << 32) | r.v[0];
          v = float(double(param0) + std::floor(double(wide % std::uint64_t(range))));
        } else {
          v = param0 + (param1 - param0) * unitFloat(r.v[0]);
        }
        break;
      case NORMAL:
        v = param0 + param1 * standardNormal(r.v[0], r.v[1]);
        break;
      case TRUNCATED_NORMAL: {
        float z = standardNormal(r.v[0], r.v[1]);
        for (std::uint32_t attempt = 1; std::fabs(z) > param2 && attempt < 4096; ++attempt) {
          const Block again = stream.draw(index, attempt);
          z = standardNormal(again.v[0], again.v[1]);
        }
        if (std::fabs(z) > param2)
          z = 0.0f; // practically unreachable: keeps the value inside the bounds
        v = param0 + param1 * z;
        break;
      }
      case BERNOULLI:
        v = unitFloat(r.v[0]) < param0 ? 1.0f : 0.0f;
        break;
      case LOG_UNIFORM: {
        const float lv = param0 + (param1 - param0) * unitFloat(r.v[0]);
        v = std::exp(lv);
        const float lo = std::exp(param0), hi = std::exp(param1);
        v = v < lo ? lo : (v > hi ? hi : v);
        break;
      }
      default:
        return false;
      }
      out[i] = fromFloat<T>(v);
    }
    return true;
  }
};

template class RandomGen<float>;
template class RandomGen<half>;
template class RandomGen<int>;

/// out[i] = in[i] * scale with probability keepProbability, else 0.
template <typename T> class Dropout : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<T>> in;
  poplar::Output<poplar::Vector<T>> out;
  poplar::Input<poplar::Vector<unsigned>> seed;
  unsigned baseIndexLo;
  unsigned baseIndexHi;
  unsigned seedModifier;
  unsigned salt;
  float keepProbability;
  float scale;

  bool compute(unsigned workerId) {
    using namespace rand_detail;
    if ((seed.size() != 2 && seed.size() != 4) || in.size() != out.size())
      return false;
    // Dropout draws from its own stream: distribution 7 is no generator's.
    const Stream stream = makeStream(seed, seedModifier, salt, 7);
    const std::uint64_t base = (std::uint64_t(baseIndexHi) << 32) | baseIndexLo;
    const std::size_t n = out.size();
    const std::size_t begin = n * workerId / numWorkers();
    const std::size_t end = n * (workerId + 1) / numWorkers();
    for (std::size_t i = begin; i < end; ++i) {
      const Block r = stream.draw(base + i, 0);
      out[i] = unitFloat(r.v[0]) < keepProbability ? T(float(in[i]) * scale) : T(0.0f);
    }
    return true;
  }
};

template class Dropout<float>;
template class Dropout<half>;

/// Counts one more use of the graph's random state {lo, hi, modifier, uses},
/// so that the next operation seeded by it draws different numbers.
class AdvanceState : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<unsigned>> state;

  bool compute() {
    if (state.size() != 4)
      return false;
    state[3] = state[3] + 1u;
    return true;
  }
};

} // namespace poprand
