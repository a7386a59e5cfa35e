// Copyright (c) Aspen contributors.
// popnn's element-wise non-linearities and their gradients. The kind of
// non-linearity is a state field (its popnn::NonLinearityType value) so one
// vertex type per element type serves all of them; the switch sits outside
// the element loops so that each loop stays simple enough to vectorise.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

namespace popnn {
namespace nl_detail {

// The values of popnn::NonLinearityType (libops/include/popnn/NonLinearityDef.hpp).
enum Kind : unsigned {
  SIGMOID = 0,
  HARD_SIGMOID = 1,
  RELU = 2,
  TANH = 3,
  GELU = 4,
  GELU_ERF = 5,
  SWISH = 6,
};

constexpr float kGeluAlpha = 0.7978845608f; // sqrt(2 / pi)
constexpr float kGeluBeta = 0.044715f;
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

inline float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

/// Applies `f` to elements [begin, end) of `data` in float.
template <typename T, typename F> inline void apply(T *data, std::size_t begin, std::size_t end, F f) {
  for (std::size_t i = begin; i < end; ++i)
    data[i] = T(f(float(data[i])));
}

/// grad[i] = f(act[i], outGrad[i]) for i in [begin, end), in float.
template <typename T, typename F>
inline void applyGrad(const T *act, const T *outGrad, T *inGrad, std::size_t begin, std::size_t end, F f) {
  for (std::size_t i = begin; i < end; ++i)
    inGrad[i] = T(f(float(act[i]), float(outGrad[i])));
}

} // namespace nl_detail

/// Applies non-linearity `nonLinearityType` to `data` in place; the workers
/// split the elements.
template <typename T> class NonLinearity : public poplar::MultiVertex {
public:
  poplar::InOut<poplar::Vector<T>> data;
  unsigned nonLinearityType;

  bool compute(unsigned workerId) {
    using namespace nl_detail;
    const std::size_t n = data.size();
    const std::size_t begin = n * workerId / numWorkers();
    const std::size_t end = n * (workerId + 1) / numWorkers();
    T *d = data.data();
    switch (nonLinearityType) {
    case SIGMOID:
      apply(d, begin, end, [](float x) { return sigmoid(x); });
      break;
    case HARD_SIGMOID:
      apply(d, begin, end, [](float x) { return std::fmin(1.0f, std::fmax(0.0f, 0.2f * x + 0.5f)); });
      break;
    case RELU:
      apply(d, begin, end, [](float x) { return x > 0.0f ? x : 0.0f; });
      break;
    case TANH:
      apply(d, begin, end, [](float x) { return std::tanh(x); });
      break;
    case GELU:
      apply(d, begin, end,
            [](float x) { return 0.5f * x * (1.0f + std::tanh(kGeluAlpha * (x + kGeluBeta * x * x * x))); });
      break;
    case GELU_ERF:
      apply(d, begin, end, [](float x) { return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2)); });
      break;
    case SWISH:
      apply(d, begin, end, [](float x) { return x * sigmoid(x); });
      break;
    default:
      return false;
    }
    return true;
  }
};

template class NonLinearity<float>;
template class NonLinearity<half>;

/// The gradient at the input of a non-linearity: `act` holds its outputs (its
/// inputs for GELU, GELU_ERF and SWISH), `outGrad` the gradient at its output.
template <typename T> class NonLinearityGrad : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<T>> act;
  poplar::Input<poplar::Vector<T>> outGrad;
  poplar::Output<poplar::Vector<T>> inGrad;
  unsigned nonLinearityType;

  bool compute(unsigned workerId) {
    using namespace nl_detail;
    const std::size_t n = inGrad.size();
    if (act.size() != n || outGrad.size() != n)
      return false;
    const std::size_t begin = n * workerId / numWorkers();
    const std::size_t end = n * (workerId + 1) / numWorkers();
    const T *y = act.data();
    const T *g = outGrad.data();
    T *dx = inGrad.data();
    switch (nonLinearityType) {
    case SIGMOID:
      applyGrad(y, g, dx, begin, end, [](float a, float d) { return d * a * (1.0f - a); });
      break;
    case HARD_SIGMOID:
      applyGrad(y, g, dx, begin, end,
                [](float a, float d) { return a > 0.0f && a < 1.0f ? 0.2f * d : 0.0f; });
      break;
    case RELU:
      applyGrad(y, g, dx, begin, end, [](float a, float d) { return a > 0.0f ? d : 0.0f; });
      break;
    case TANH:
      applyGrad(y, g, dx, begin, end, [](float a, float d) { return d * (1.0f - a * a); });
      break;
    case GELU:
      applyGrad(y, g, dx, begin, end, [](float x, float d) {
        const float t = std::tanh(kGeluAlpha * (x + kGeluBeta * x * x * x));
        const float dInner = kGeluAlpha * (1.0f + 3.0f * kGeluBeta * x * x);
        return d * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * dInner);
      });
      break;
    case GELU_ERF:
      applyGrad(y, g, dx, begin, end, [](float x, float d) {
        const float cdf = 0.5f * (1.0f + std::erf(x * kInvSqrt2));
        const float pdf = kInvSqrt2Pi * std::exp(-0.5f * x * x);
        return d * (cdf + x * pdf);
      });
      break;
    case SWISH:
      applyGrad(y, g, dx, begin, end, [](float x, float d) {
        const float s = sigmoid(x);
        return d * (s + x * s * (1.0f - s));
      });
      break;
    default:
      return false;
    }
    return true;
  }
};

template class NonLinearityGrad<float>;
template class NonLinearityGrad<half>;

} // namespace popnn
