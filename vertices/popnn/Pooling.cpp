// Copyright (c) Aspen contributors.
// popnn's 2-D pooling vertices over planes (one batch entry, one channel) of
// {inHeight, inWidth} elements. Window (oy, ox) covers input rows
// oy * strideHeight + ky - padHeight (ky < kernelHeight) and likewise for
// columns; positions outside the input are padding and never contribute.
// The workers split the planes.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cstddef>
#include <limits>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

namespace popnn {
namespace pool_detail {

// The values of popnn::PoolingType (libops/include/popnn/PoolingDef.hpp).
enum Kind : unsigned { MAX = 0, AVG = 1, SUM = 2 };

/// The window geometry shared by the pooling vertices.
struct Geometry {
  unsigned inHeight, inWidth, outHeight, outWidth;
  unsigned kernelHeight, kernelWidth, strideHeight, strideWidth;
  int padHeight, padWidth;

  /// The input rows [y0, y1) and columns [x0, x1) of window (oy, ox), clipped to the input.
  void window(unsigned oy, unsigned ox, int &y0, int &y1, int &x0, int &x1) const {
    y0 = int(oy * strideHeight) - padHeight;
    x0 = int(ox * strideWidth) - padWidth;
    y1 = y0 + int(kernelHeight);
    x1 = x0 + int(kernelWidth);
    if (y0 < 0)
      y0 = 0;
    if (x0 < 0)
      x0 = 0;
    if (y1 > int(inHeight))
      y1 = int(inHeight);
    if (x1 > int(inWidth))
      x1 = int(inWidth);
  }
  std::size_t inPlane() const { return std::size_t(inHeight) * inWidth; }
  std::size_t outPlane() const { return std::size_t(outHeight) * outWidth; }
};

inline void workerPlanes(std::size_t planes, unsigned workerId, unsigned numWorkers, std::size_t &begin,
                         std::size_t &end) {
  begin = planes * workerId / numWorkers;
  end = planes * (workerId + 1) / numWorkers;
}

} // namespace pool_detail

/// Forward pooling: out {planes, outHeight, outWidth} from in {planes, inHeight, inWidth}.
template <typename T> class Pool2D : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<T>> in;
  poplar::Output<poplar::Vector<T>> out;
  unsigned poolingType;
  unsigned inHeight, inWidth, outHeight, outWidth;
  unsigned kernelHeight, kernelWidth, strideHeight, strideWidth;
  int padHeight, padWidth;

  bool compute(unsigned workerId) {
    const pool_detail::Geometry g{inHeight,    inWidth,      outHeight,   outWidth,  kernelHeight,
                                  kernelWidth, strideHeight, strideWidth, padHeight, padWidth};
    if (g.outPlane() == 0 || out.size() % g.outPlane() != 0)
      return false;
    const std::size_t planes = out.size() / g.outPlane();
    if (in.size() != planes * g.inPlane())
      return false;
    std::size_t begin, end;
    pool_detail::workerPlanes(planes, workerId, numWorkers(), begin, end);
    for (std::size_t p = begin; p < end; ++p) {
      const T *src = in.data() + p * g.inPlane();
      T *dst = out.data() + p * g.outPlane();
      for (unsigned oy = 0; oy < outHeight; ++oy) {
        for (unsigned ox = 0; ox < outWidth; ++ox) {
          int y0, y1, x0, x1;
          g.window(oy, ox, y0, y1, x0, x1);
          float acc = poolingType == pool_detail::MAX ? std::numeric_limits<float>::lowest() : 0.0f;
          unsigned count = 0;
          for (int y = y0; y < y1; ++y) {
            for (int x = x0; x < x1; ++x) {
              const float v = float(src[std::size_t(y) * inWidth + x]);
              if (poolingType == pool_detail::MAX)
                acc = v > acc ? v : acc;
              else
                acc += v;
              ++count;
            }
          }
          if (poolingType == pool_detail::AVG && count != 0)
            acc /= float(count);
          dst[std::size_t(oy) * outWidth + ox] = T(acc);
        }
      }
    }
    return true;
  }
};

template class Pool2D<float>;
template class Pool2D<half>;

/// Gradient of max pooling: each window's gradient goes to the inputs equal to
/// the window's maximum (divided among them when `scaleByMatches`).
template <typename T> class MaxPool2DGrad : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<T>> in;
  poplar::Input<poplar::Vector<T>> pooled;
  poplar::Input<poplar::Vector<T>> pooledGrad;
  poplar::Output<poplar::Vector<T>> inGrad;
  unsigned scaleByMatches;
  unsigned inHeight, inWidth, outHeight, outWidth;
  unsigned kernelHeight, kernelWidth, strideHeight, strideWidth;
  int padHeight, padWidth;

  bool compute(unsigned workerId) {
    const pool_detail::Geometry g{inHeight,    inWidth,      outHeight,   outWidth,  kernelHeight,
                                  kernelWidth, strideHeight, strideWidth, padHeight, padWidth};
    if (g.inPlane() == 0 || inGrad.size() % g.inPlane() != 0)
      return false;
    const std::size_t planes = inGrad.size() / g.inPlane();
    if (in.size() != inGrad.size() || pooled.size() != planes * g.outPlane() ||
        pooledGrad.size() != pooled.size())
      return false;
    std::size_t begin, end;
    pool_detail::workerPlanes(planes, workerId, numWorkers(), begin, end);
    for (std::size_t p = begin; p < end; ++p) {
      const T *act = in.data() + p * g.inPlane();
      const T *maxima = pooled.data() + p * g.outPlane();
      const T *grads = pooledGrad.data() + p * g.outPlane();
      T *dst = inGrad.data() + p * g.inPlane();
      for (std::size_t i = 0; i < g.inPlane(); ++i)
        dst[i] = T(0.0f);
      for (unsigned oy = 0; oy < outHeight; ++oy) {
        for (unsigned ox = 0; ox < outWidth; ++ox) {
          int y0, y1, x0, x1;
          g.window(oy, ox, y0, y1, x0, x1);
          const std::size_t o = std::size_t(oy) * outWidth + ox;
          const float maxValue = float(maxima[o]);
          float grad = float(grads[o]);
          if (scaleByMatches) {
            unsigned matches = 0;
            for (int y = y0; y < y1; ++y)
              for (int x = x0; x < x1; ++x)
                matches += float(act[std::size_t(y) * inWidth + x]) == maxValue;
            if (matches != 0)
              grad /= float(matches);
          }
          for (int y = y0; y < y1; ++y) {
            for (int x = x0; x < x1; ++x) {
              const std::size_t i = std::size_t(y) * inWidth + x;
              if (float(act[i]) == maxValue)
                dst[i] = T(float(dst[i]) + grad);
            }
          }
        }
      }
    }
    return true;
  }
};

template class MaxPool2DGrad<float>;
template class MaxPool2DGrad<half>;

/// Gradient of sum pooling (and of average pooling when `average`, where each
/// window's gradient is divided by its number of non-padding inputs).
template <typename T> class SumPool2DGrad : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<T>> pooledGrad;
  poplar::Output<poplar::Vector<T>> inGrad;
  unsigned average;
  unsigned inHeight, inWidth, outHeight, outWidth;
  unsigned kernelHeight, kernelWidth, strideHeight, strideWidth;
  int padHeight, padWidth;

  bool compute(unsigned workerId) {
    const pool_detail::Geometry g{inHeight,    inWidth,      outHeight,   outWidth,  kernelHeight,
                                  kernelWidth, strideHeight, strideWidth, padHeight, padWidth};
    if (g.inPlane() == 0 || inGrad.size() % g.inPlane() != 0)
      return false;
    const std::size_t planes = inGrad.size() / g.inPlane();
    if (pooledGrad.size() != planes * g.outPlane())
      return false;
    std::size_t begin, end;
    pool_detail::workerPlanes(planes, workerId, numWorkers(), begin, end);
    for (std::size_t p = begin; p < end; ++p) {
      const T *grads = pooledGrad.data() + p * g.outPlane();
      T *dst = inGrad.data() + p * g.inPlane();
      for (std::size_t i = 0; i < g.inPlane(); ++i)
        dst[i] = T(0.0f);
      for (unsigned oy = 0; oy < outHeight; ++oy) {
        for (unsigned ox = 0; ox < outWidth; ++ox) {
          int y0, y1, x0, x1;
          g.window(oy, ox, y0, y1, x0, x1);
          const int count = (y1 - y0) * (x1 - x0);
          if (count <= 0)
            continue;
          float grad = float(grads[std::size_t(oy) * outWidth + ox]);
          if (average)
            grad /= float(count);
          for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x)
              dst[std::size_t(y) * inWidth + x] = T(float(dst[std::size_t(y) * inWidth + x]) + grad);
        }
      }
    }
    return true;
  }
};

template class SumPool2DGrad<float>;
template class SumPool2DGrad<half>;

} // namespace popnn
