// Copyright (c) Aspen contributors.
// popops::Iota<T>: out[i] = start + i over a 1-D region.
#include <poplar/Vertex.hpp>

#include "VertexUtil.hpp"

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

template <typename T> class Iota : public MultiVertex {
public:
  Output<Vector<T, VectorLayout::SPAN, 8>> out;
  T start;

  void compute(unsigned wid) {
    unsigned begin, end;
    vertexutil::workerRange(out.size(), wid, numWorkers(), begin, end);
    for (unsigned i = begin; i < end; ++i)
      out[i] = static_cast<T>(start + static_cast<T>(i));
  }
};

template class Iota<int>;
template class Iota<unsigned int>;

} // namespace popops
