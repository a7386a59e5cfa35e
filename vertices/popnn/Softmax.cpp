// Copyright (c) Aspen contributors.
// popnn's row-wise vertices: softmax, log-softmax and the softmax gradient over
// rows of `rowLength` elements. The workers split the rows; sums are in float.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

namespace popnn {
namespace softmax_detail {

/// Rows [begin, end) of `numRows` handled by one worker.
inline void workerRows(std::size_t numRows, unsigned workerId, unsigned numWorkers, std::size_t &begin,
                       std::size_t &end) {
  begin = numRows * workerId / numWorkers;
  end = numRows * (workerId + 1) / numWorkers;
}

} // namespace softmax_detail

/// Replaces each row x of `data` by `outputScale * softmax(x)` (when
/// `logOutput` is 0) or by `log(softmax(x))` (when 1), subtracting the row
/// maximum first so that large inputs do not overflow.
template <typename T> class SoftmaxRows : public poplar::MultiVertex {
public:
  poplar::InOut<poplar::Vector<T>> data;
  unsigned rowLength;
  float outputScale;
  unsigned logOutput;

  bool compute(unsigned workerId) {
    if (rowLength == 0 || data.size() % rowLength != 0)
      return false;
    std::size_t begin, end;
    softmax_detail::workerRows(data.size() / rowLength, workerId, numWorkers(), begin, end);
    for (std::size_t r = begin; r < end; ++r) {
      T *row = data.data() + r * rowLength;
      float maxValue = float(row[0]);
      for (unsigned i = 1; i < rowLength; ++i)
        maxValue = std::fmax(maxValue, float(row[i]));
      float sum = 0.0f;
      for (unsigned i = 0; i < rowLength; ++i)
        sum += std::exp(float(row[i]) - maxValue);
      if (logOutput) {
        const float logSum = std::log(sum);
        for (unsigned i = 0; i < rowLength; ++i)
          row[i] = T(float(row[i]) - maxValue - logSum);
      } else {
        const float scale = outputScale / sum;
        for (unsigned i = 0; i < rowLength; ++i)
          row[i] = T(std::exp(float(row[i]) - maxValue) * scale);
      }
    }
    return true;
  }
};

template class SoftmaxRows<float>;
template class SoftmaxRows<half>;

/// The gradient at the input of a softmax whose outputs, scaled by
/// `outputScale`, are `act`: inGrad = act * (outGrad - sum(outGrad * act) / outputScale)
/// per row.
template <typename T> class SoftmaxGradRows : public poplar::MultiVertex {
public:
  poplar::Input<poplar::Vector<T>> act;
  poplar::Input<poplar::Vector<T>> outGrad;
  poplar::Output<poplar::Vector<T>> inGrad;
  unsigned rowLength;
  float outputScale;

  bool compute(unsigned workerId) {
    const std::size_t n = inGrad.size();
    if (rowLength == 0 || n % rowLength != 0 || act.size() != n || outGrad.size() != n)
      return false;
    std::size_t begin, end;
    softmax_detail::workerRows(n / rowLength, workerId, numWorkers(), begin, end);
    for (std::size_t r = begin; r < end; ++r) {
      const T *y = act.data() + r * rowLength;
      const T *g = outGrad.data() + r * rowLength;
      T *dx = inGrad.data() + r * rowLength;
      float dot = 0.0f;
      for (unsigned i = 0; i < rowLength; ++i)
        dot += float(g[i]) * float(y[i]);
      dot /= outputScale;
      for (unsigned i = 0; i < rowLength; ++i)
        dx[i] = T(float(y[i]) * (float(g[i]) - dot));
    }
    return true;
  }
};

template class SoftmaxGradRows<float>;
template class SoftmaxGradRows<half>;

} // namespace popnn
