// Copyright (c) Aspen contributors.
// popops::Fill<T>: every element of a 1-D region set to the state value `in`.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include "VertexUtil.hpp"

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

template <typename T> class Fill : public MultiVertex {
public:
  Output<Vector<T, VectorLayout::SPAN, 8>> out;
  T in;

  void compute(unsigned wid) {
    unsigned begin, end;
    vertexutil::workerRange(out.size(), wid, numWorkers(), begin, end);
    T *dst = &out[0];
    const T value = in;
    for (unsigned i = begin; i < end; ++i)
      dst[i] = value;
  }
};

template class Fill<float>;
template class Fill<half>;
template class Fill<int>;
template class Fill<unsigned int>;
template class Fill<bool>;
template class Fill<char>;
template class Fill<signed char>;
template class Fill<unsigned char>;
template class Fill<short>;
template class Fill<unsigned short>;
template class Fill<long long>;
template class Fill<unsigned long long>;

} // namespace popops
