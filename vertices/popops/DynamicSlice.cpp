// Copyright (c) Aspen contributors.
// popops' slicing vertices. The library views the sliced tensor as rows (one per
// index of the sliced dimension) of `regionSize` elements; each vertex serves one
// column region of those rows.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include <cstring>
#include <type_traits>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

/// subT row k = baseT row (offset + k) mod numBaseElements.
template <typename T> class DynamicSlice1D : public Vertex {
public:
  Input<unsigned> offset;
  Input<Vector<T, VectorLayout::SPAN, 8>> baseT;
  Output<Vector<T, VectorLayout::SPAN, 8>> subT;
  unsigned numBaseElements;
  unsigned numSubElements;
  unsigned regionSize;

  bool compute() {
    unsigned row = numBaseElements ? *offset % numBaseElements : 0;
    for (unsigned k = 0; k < numSubElements; ++k) {
      std::memcpy(&subT[k * regionSize], &baseT[row * regionSize], sizeof(T) * regionSize);
      if (++row == numBaseElements)
        row = 0;
    }
    return true;
  }
};

/// baseT row (offset + k) mod numBaseElements = subT row k.
template <typename T> class DynamicUpdateSlice1D : public Vertex {
public:
  Input<unsigned> offset;
  InOut<Vector<T, VectorLayout::SPAN, 8>> baseT;
  Input<Vector<T, VectorLayout::SPAN, 8>> subT;
  unsigned numBaseElements;
  unsigned numSubElements;
  unsigned regionSize;

  bool compute() {
    unsigned row = numBaseElements ? *offset % numBaseElements : 0;
    for (unsigned k = 0; k < numSubElements; ++k) {
      std::memcpy(&baseT[row * regionSize], &subT[k * regionSize], sizeof(T) * regionSize);
      if (++row == numBaseElements)
        row = 0;
    }
    return true;
  }
};

/// subT row i = baseT row offsets[i] (zeros when the offset is out of range).
template <typename T> class MultiSlice : public Vertex {
public:
  Input<Vector<unsigned, VectorLayout::SPAN, 4>> offsets;
  Input<Vector<T, VectorLayout::SPAN, 8>> baseT;
  Output<Vector<T, VectorLayout::SPAN, 8>> subT;
  unsigned numBaseElements;
  unsigned regionSize;

  bool compute() {
    for (unsigned i = 0; i < offsets.size(); ++i) {
      T *dst = &subT[i * regionSize];
      if (offsets[i] < numBaseElements)
        std::memcpy(dst, &baseT[offsets[i] * regionSize], sizeof(T) * regionSize);
      else
        for (unsigned j = 0; j < regionSize; ++j)
          dst[j] = T(0);
    }
    return true;
  }
};

/// baseT row offsets[i] = subT row i (out-of-range offsets ignored).
template <typename T> class MultiUpdate : public Vertex {
public:
  Input<Vector<unsigned, VectorLayout::SPAN, 4>> offsets;
  InOut<Vector<T, VectorLayout::SPAN, 8>> baseT;
  Input<Vector<T, VectorLayout::SPAN, 8>> subT;
  unsigned numBaseElements;
  unsigned regionSize;

  bool compute() {
    for (unsigned i = 0; i < offsets.size(); ++i)
      if (offsets[i] < numBaseElements)
        std::memcpy(&baseT[offsets[i] * regionSize], &subT[i * regionSize], sizeof(T) * regionSize);
    return true;
  }
};

/// baseT row offsets[i] += scale * subT row i (accumulated in float for half).
template <typename T, typename ScaleT> class MultiUpdateAdd : public Vertex {
public:
  Input<Vector<unsigned, VectorLayout::SPAN, 4>> offsets;
  InOut<Vector<T, VectorLayout::SPAN, 8>> baseT;
  Input<Vector<T, VectorLayout::SPAN, 8>> subT;
  Input<ScaleT> scale;
  unsigned numBaseElements;
  unsigned regionSize;

  bool compute() {
    using C = typename std::conditional<std::is_same<T, half>::value, float, T>::type;
    const C k = static_cast<C>(static_cast<float>(*scale));
    for (unsigned i = 0; i < offsets.size(); ++i) {
      if (offsets[i] >= numBaseElements)
        continue;
      T *dst = &baseT[offsets[i] * regionSize];
      const T *src = &subT[i * regionSize];
      for (unsigned j = 0; j < regionSize; ++j)
        dst[j] = static_cast<T>(static_cast<C>(dst[j]) + k * static_cast<C>(src[j]));
    }
    return true;
  }
};

/// baseT row offsets[i] = max(baseT row offsets[i], subT row i).
template <typename T> class MultiUpdateMax : public Vertex {
public:
  Input<Vector<unsigned, VectorLayout::SPAN, 4>> offsets;
  InOut<Vector<T, VectorLayout::SPAN, 8>> baseT;
  Input<Vector<T, VectorLayout::SPAN, 8>> subT;
  unsigned numBaseElements;
  unsigned regionSize;

  bool compute() {
    for (unsigned i = 0; i < offsets.size(); ++i) {
      if (offsets[i] >= numBaseElements)
        continue;
      T *dst = &baseT[offsets[i] * regionSize];
      const T *src = &subT[i * regionSize];
      for (unsigned j = 0; j < regionSize; ++j)
        if (src[j] > dst[j])
          dst[j] = src[j];
    }
    return true;
  }
};

#define POPOPS_SLICE(T)                                                                                      \
  template class DynamicSlice1D<T>;                                                                          \
  template class DynamicUpdateSlice1D<T>;                                                                    \
  template class MultiSlice<T>;                                                                              \
  template class MultiUpdate<T>;                                                                             \
  template class MultiUpdateMax<T>;
POPOPS_SLICE(float)
POPOPS_SLICE(half)
POPOPS_SLICE(int)
POPOPS_SLICE(unsigned int)
template class DynamicSlice1D<bool>;
template class DynamicUpdateSlice1D<bool>;
template class MultiSlice<bool>;
template class MultiUpdate<bool>;
template class MultiUpdateAdd<float, float>;
template class MultiUpdateAdd<half, half>;
template class MultiUpdateAdd<half, float>;
template class MultiUpdateAdd<int, int>;
template class MultiUpdateAdd<unsigned int, unsigned int>;

} // namespace popops
