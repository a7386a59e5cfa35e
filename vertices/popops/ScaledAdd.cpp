// Copyright (c) Aspen contributors.
// popops::ScaledAdd<A, B, Scale>: A = a*A + b*B (mode 0), a*A - b*B (mode 1) or
// (1-a)*A + b*B (mode 2) over a 1-D region, with scalar scale tensors a and b.
// Half data is computed in float.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

#include "VertexUtil.hpp"

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace popops {

template <typename AType, typename BType, typename ScaleType> class ScaledAdd : public MultiVertex {
public:
  InOut<Vector<AType, VectorLayout::SPAN, 8>> A;
  Input<Vector<BType, VectorLayout::SPAN, 8>> B;
  Input<ScaleType> scaleA;
  Input<ScaleType> scaleB;
  unsigned mode;

  void compute(unsigned wid) {
    using C = typename vertexutil::Compute<typename vertexutil::Compute<AType>::type>::type;
    unsigned begin, end;
    vertexutil::workerRange(A.size(), wid, numWorkers(), begin, end);
    C a = static_cast<C>(static_cast<float>(*scaleA));
    C b = static_cast<C>(static_cast<float>(*scaleB));
    if (mode == 1)
      b = -b;
    else if (mode == 2)
      a = 1 - a;
    AType *dst = &A[0];
    const BType *src = &B[0];
    for (unsigned i = begin; i < end; ++i)
      dst[i] = static_cast<AType>(
          a * static_cast<C>(dst[i]) +
          b * static_cast<C>(static_cast<typename vertexutil::Compute<BType>::type>(src[i])));
  }
};

template class ScaledAdd<float, float, float>;
template class ScaledAdd<half, half, half>;
template class ScaledAdd<half, half, float>;
template class ScaledAdd<float, half, float>;
template class ScaledAdd<half, float, float>;
template class ScaledAdd<int, int, int>;
template class ScaledAdd<unsigned int, unsigned int, unsigned int>;

} // namespace popops
