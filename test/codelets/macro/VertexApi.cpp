// Copyright (c) Aspen contributors.
// Codelet corpus: the vertex-side API Poplar 3.x codelets use besides fields —
// SupervisorVertexIf, poplar/Loops.hpp, poplar/Alignment.hpp, TileConstants,
// `quarter` through Vertex.hpp.
#include <poplar/Alignment.hpp>
#include <poplar/Loops.hpp>
#include <poplar/TileConstants.hpp>
#include <poplar/Vertex.hpp>

#include <type_traits>

static_assert(sizeof(quarter) == 1, "quarter is visible through Vertex.hpp");
static_assert(NUM_WORKERS == CTXT_WORKERS && CTXT_WORKERS == 6, "six workers");

template <typename T> constexpr bool hasAssemblyVersion() {
  return false;
}

// out[i] = in[i] + DATA_PATH_BYTES (8); a C++ fallback vertex as PopLibs writes them,
// WORKER_ALIGN an attribute of the class as in PopLibs' MaxPoolingGradientScale.
template <typename T>
class WORKER_ALIGN AddAlign : public poplar::SupervisorVertexIf<hasAssemblyVersion<T>()> {
public:
  poplar::Input<poplar::Vector<T, poplar::VectorLayout::SPAN, 8>> in;
  poplar::Output<poplar::Vector<T, poplar::VectorLayout::ONE_PTR, 8>> out;
  bool compute() {
    if (!poplar::isAligned(&in[0], 8))
      return false;
    for (rptsize_t i = 0; i < in.size(); ++i)
      out[i] = in[i] + T(DATA_PATH_BYTES) + T(poplar::alignUp(3, 4) - 4);
    return true;
  }
};
template class AddAlign<float>;
template class AddAlign<int>;

// A supervisor-based vertex (the assembly-version branch).
class SupervisorCount : public poplar::SupervisorVertexIf<true> {
public:
  poplar::Output<unsigned> count;
  bool compute() {
    *count = CTXT_WORKERS;
    return true;
  }
};
