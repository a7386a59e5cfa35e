// Copyright (c) Aspen contributors.
// popops::TopK<T>: the k largest (or smallest) of each row of `rowLen` elements and
// their indices within the row; ties keep the lower index first. `order`: 0 = the
// selection order (descending for largest, ascending for smallest), 1 = ascending,
// 2 = descending. popops::PermuteRows<V> gathers values by those indices.
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

template <typename T> class TopK : public Vertex {
public:
  Input<Vector<T, VectorLayout::SPAN, 8>> in;
  Output<Vector<T, VectorLayout::SPAN, 8>> out;
  Output<Vector<unsigned, VectorLayout::SPAN, 4>> indices;
  unsigned rowLen;
  unsigned k;
  bool largest;
  unsigned order;

  bool compute() {
    using C = typename vertexutil::Compute<T>::type;
    if (rowLen == 0 || k == 0 || k > rowLen)
      return k == 0;
    const unsigned rows = in.size() / rowLen;
    std::vector<unsigned> idx(rowLen);
    for (unsigned r = 0; r < rows; ++r) {
      const T *row = &in[r * rowLen];
      std::iota(idx.begin(), idx.end(), 0u);
      auto better = [&](unsigned a, unsigned b) {
        const C va = static_cast<C>(row[a]), vb = static_cast<C>(row[b]);
        if (va != vb)
          return largest ? va > vb : va < vb;
        return a < b;
      };
      std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), better);
      const bool reverse = (order == 1 && largest) || (order == 2 && !largest);
      for (unsigned j = 0; j < k; ++j) {
        const unsigned src = idx[reverse ? k - 1 - j : j];
        out[r * k + j] = row[src];
        indices[r * k + j] = src;
      }
    }
    return true;
  }
};

template <typename V> class PermuteRows : public Vertex {
public:
  Input<Vector<V, VectorLayout::SPAN, 8>> in;
  Input<Vector<unsigned, VectorLayout::SPAN, 4>> indices;
  Output<Vector<V, VectorLayout::SPAN, 8>> out;
  unsigned rowLen;
  unsigned k;

  bool compute() {
    if (k == 0)
      return true;
    const unsigned rows = out.size() / k;
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned j = 0; j < k; ++j) {
        const unsigned src = indices[r * k + j];
        if (src >= rowLen)
          return false;
        out[r * k + j] = in[r * rowLen + src];
      }
    return true;
  }
};

template class TopK<float>;
template class TopK<half>;
template class TopK<int>;
template class TopK<unsigned int>;
template class PermuteRows<float>;
template class PermuteRows<half>;
template class PermuteRows<int>;
template class PermuteRows<unsigned int>;

} // namespace popops
