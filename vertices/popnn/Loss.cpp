// Copyright (c) Aspen contributors.
// popnn's loss vertices: per-row loss and deltas for sum-squared and
// cross-entropy losses, arg-max/arg-min of rows, and the accuracy count.
// A label equal to -1 (MASKED_LABEL_CODE) gives zero loss and zero deltas and
// is never counted as correct.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cmath>
#include <cstddef>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

namespace popnn {
namespace loss_detail {

template <typename LabelType> inline bool isMasked(LabelType label) {
  return label == LabelType(-1);
}

// Added to probabilities before the logarithm so that a zero probability gives
// a large finite loss.
inline float logEpsilon(float) {
  return 1.0e-7f;
}
inline float logEpsilon(half) {
  return 6.0e-5f;
}

} // namespace loss_detail

/// For each row b of `probs` {rows, numClasses}: deltas = probs - onehot(label),
/// loss[b] = 0.5 * sum(deltas^2).
template <typename FPType, typename LabelType> class LossSumSquared : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<FPType>> probs;
  poplar::Input<poplar::Vector<LabelType>> labels;
  poplar::Output<poplar::Vector<FPType>> deltas;
  poplar::Output<poplar::Vector<FPType>> loss;
  unsigned numClasses;

  bool compute() {
    const std::size_t rows = labels.size();
    if (probs.size() != rows * numClasses || deltas.size() != probs.size() || loss.size() != rows)
      return false;
    for (std::size_t b = 0; b < rows; ++b) {
      const LabelType label = labels[b];
      const bool masked = loss_detail::isMasked(label);
      float sum = 0.0f;
      for (unsigned c = 0; c < numClasses; ++c) {
        const std::size_t i = b * numClasses + c;
        const float expected = (!masked && std::size_t(label) == c) ? 1.0f : 0.0f;
        const float delta = masked ? 0.0f : float(probs[i]) - expected;
        deltas[i] = FPType(delta);
        sum += 0.5f * delta * delta;
      }
      loss[b] = FPType(sum);
    }
    return true;
  }
};

template class LossSumSquared<float, unsigned int>;
template class LossSumSquared<float, int>;
template class LossSumSquared<half, unsigned int>;
template class LossSumSquared<half, int>;

/// For each row b of softmax outputs `probs` {rows, numClasses}, scaled by
/// `modelOutputScaling`:
///   deltas = deltasScale / modelOutputScaling * (probs - modelOutputScaling * onehot(label)),
///   loss[b] = -(log(probs[label] + eps) - log(modelOutputScaling)).
template <typename FPType, typename LabelType> class LossCrossEntropy : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<FPType>> probs;
  poplar::Input<poplar::Vector<LabelType>> labels;
  poplar::Output<poplar::Vector<FPType>> deltas;
  poplar::Output<poplar::Vector<FPType>> loss;
  poplar::Input<FPType> deltasScale;
  poplar::Input<FPType> modelOutputScaling;
  unsigned numClasses;

  bool compute() {
    const std::size_t rows = labels.size();
    if (probs.size() != rows * numClasses || deltas.size() != probs.size() || loss.size() != rows)
      return false;
    const float outScale = float(*modelOutputScaling);
    const float scale = float(*deltasScale) / outScale;
    const float logOutScale = std::log(outScale);
    const float eps = loss_detail::logEpsilon(FPType());
    for (std::size_t b = 0; b < rows; ++b) {
      const LabelType label = labels[b];
      const bool masked = loss_detail::isMasked(label);
      float rowLoss = 0.0f;
      for (unsigned c = 0; c < numClasses; ++c) {
        const std::size_t i = b * numClasses + c;
        const bool isLabel = !masked && std::size_t(label) == c;
        const float p = float(probs[i]);
        deltas[i] = FPType(masked ? 0.0f : scale * (p - (isLabel ? outScale : 0.0f)));
        if (isLabel)
          rowLoss = -(std::log(p + eps) - logOutScale);
      }
      loss[b] = FPType(rowLoss);
    }
    return true;
  }
};

template class LossCrossEntropy<float, unsigned int>;
template class LossCrossEntropy<float, int>;
template class LossCrossEntropy<half, unsigned int>;
template class LossCrossEntropy<half, int>;

/// For each row of `in` {rows, rowLength}: the largest (or, when `findMin`,
/// the smallest) element and its index, the first one on ties.
template <typename T> class ReduceRowsWithIndex : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<T>> in;
  poplar::Output<poplar::Vector<T>> value;
  poplar::Output<poplar::Vector<unsigned>> index;
  unsigned rowLength;
  unsigned findMin;

  bool compute() {
    const std::size_t rows = index.size();
    if (rowLength == 0 || in.size() != rows * rowLength || value.size() != rows)
      return false;
    for (std::size_t r = 0; r < rows; ++r) {
      const T *row = in.data() + r * rowLength;
      float best = float(row[0]);
      unsigned bestIndex = 0;
      for (unsigned i = 1; i < rowLength; ++i) {
        const float x = float(row[i]);
        if (findMin ? x < best : x > best) {
          best = x;
          bestIndex = i;
        }
      }
      value[r] = row[bestIndex];
      index[r] = bestIndex;
    }
    return true;
  }
};

template class ReduceRowsWithIndex<float>;
template class ReduceRowsWithIndex<half>;
template class ReduceRowsWithIndex<int>;
template class ReduceRowsWithIndex<unsigned int>;

/// numCorrect += the number of rows whose arg-max equals their label.
template <typename LabelType> class CalcAccuracy : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<unsigned>> maxIndex;
  poplar::Input<poplar::Vector<LabelType>> expected;
  poplar::InOut<unsigned> numCorrect;

  bool compute() {
    if (maxIndex.size() != expected.size())
      return false;
    unsigned count = *numCorrect;
    for (std::size_t i = 0; i < maxIndex.size(); ++i)
      if (!loss_detail::isMasked(expected[i]) && std::size_t(expected[i]) == maxIndex[i])
        ++count;
    *numCorrect = count;
    return true;
  }
};

template class CalcAccuracy<unsigned int>;
template class CalcAccuracy<int>;

} // namespace popnn
