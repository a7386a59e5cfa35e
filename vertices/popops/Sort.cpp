// Copyright (c) Aspen contributors.
// popops' sorting vertices: each sorts consecutive rows of `rowLen` elements
// ascending (stable); the key-value form permutes `values` like `keys`.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include "VertexUtil.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

template <typename T> class SortRows : public Vertex {
public:
  InOut<Vector<T, VectorLayout::SPAN, 8>> data;
  unsigned rowLen;

  bool compute() {
    using C = typename vertexutil::Compute<T>::type;
    if (rowLen == 0)
      return true;
    std::vector<C> row(rowLen);
    for (unsigned base = 0; base + rowLen <= data.size(); base += rowLen) {
      for (unsigned i = 0; i < rowLen; ++i)
        row[i] = static_cast<C>(data[base + i]);
      std::stable_sort(row.begin(), row.end());
      for (unsigned i = 0; i < rowLen; ++i)
        data[base + i] = static_cast<T>(row[i]);
    }
    return true;
  }
};

template <typename K, typename V> class SortRowsKeyValue : public Vertex {
public:
  InOut<Vector<K, VectorLayout::SPAN, 8>> keys;
  InOut<Vector<V, VectorLayout::SPAN, 8>> values;
  unsigned rowLen;

  bool compute() {
    using C = typename vertexutil::Compute<K>::type;
    if (rowLen == 0)
      return true;
    std::vector<unsigned> order(rowLen);
    std::vector<K> k(rowLen);
    std::vector<V> v(rowLen);
    for (unsigned base = 0; base + rowLen <= keys.size(); base += rowLen) {
      std::iota(order.begin(), order.end(), 0u);
      std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
        return static_cast<C>(keys[base + a]) < static_cast<C>(keys[base + b]);
      });
      for (unsigned i = 0; i < rowLen; ++i) {
        k[i] = keys[base + order[i]];
        v[i] = values[base + order[i]];
      }
      for (unsigned i = 0; i < rowLen; ++i) {
        keys[base + i] = k[i];
        values[base + i] = v[i];
      }
    }
    return true;
  }
};

#define POPOPS_SORT_KV(K)                                                                                    \
  template class SortRowsKeyValue<K, float>;                                                                 \
  template class SortRowsKeyValue<K, half>;                                                                  \
  template class SortRowsKeyValue<K, int>;                                                                   \
  template class SortRowsKeyValue<K, unsigned int>;
template class SortRows<float>;
template class SortRows<half>;
template class SortRows<int>;
template class SortRows<unsigned int>;
POPOPS_SORT_KV(float)
POPOPS_SORT_KV(half)
POPOPS_SORT_KV(int)
POPOPS_SORT_KV(unsigned int)

} // namespace popops
