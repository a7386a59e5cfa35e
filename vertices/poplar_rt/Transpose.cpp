// Copyright (c) Aspen contributors.
// Poplar's built-in transpose vertices (namespace poplar_rt), which PopLibs adds by name
// (popops::rearrange::addTransposeVertices, popsparse) without adding any codelets:
// libpoplar loads this library (poplar_rt.gp, beside libpoplar.so) the first time a
// graph asks for a poplar_rt:: vertex. Field names and meanings are as PopLibs connects
// them; every variant transposes each rows x columns row-major matrix of `src` into the
// columns x rows matrix at the same place in `dst`. The worker-split fields (workerCount,
// numTranspositions, workList) only say how the IPU divides the work; the host run
// transposes every matrix whatever they say. docs/poplibs-from-source.md.
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

// The vertices of this source never write through their Input fields, so the exchange may
// let them read edge data in place (docs/exchange.md, "Reading in place"). The declaration
// covers the vertex types of the object that defines it: each source says it for its own.
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;

using namespace poplar;

namespace poplar_rt {

namespace {

template <typename T> void transposeAll(const T *src, T *dst, unsigned size, unsigned rows, unsigned cols) {
  const unsigned matrix = rows * cols;
  if (matrix == 0)
    return;
  for (unsigned base = 0; base + matrix <= size; base += matrix)
    for (unsigned r = 0; r < rows; ++r)
      for (unsigned c = 0; c < cols; ++c)
        dst[base + c * rows + r] = src[base + r * cols + c];
}

/// The side of the blocks the 1-D vertices count rows and columns in: 8 for 1-byte
/// elements (fp8, as unsigned char), else 4.
template <typename T> constexpr unsigned blockSide() {
  return sizeof(T) == 1 ? 8 : 4;
}

} // namespace

/// A list of matrices, one edge each.
template <typename T> class Transpose2D : public Vertex {
public:
  Vector<Input<Vector<T>>> src;
  Vector<Output<Vector<T>>> dst;
  unsigned short numSrcRows;
  unsigned short numSrcColumns;

  bool compute() {
    for (unsigned m = 0; m < dst.size(); ++m)
      transposeAll(&src[m][0], &dst[m][0], src[m].size(), numSrcRows, numSrcColumns);
    return true;
  }
};

/// Matrices back to back in one edge, split among the six workers.
template <typename T> class Transpose1D : public Vertex {
public:
  Input<Vector<T>> src;
  Output<Vector<T>> dst;
  unsigned short numSrcRowsD4Or8;
  unsigned short numSrcColumnsD4Or8;
  unsigned short numTranspositions;
  unsigned short workerCount;

  bool compute() {
    transposeAll(&src[0], &dst[0], src.size(), numSrcRowsD4Or8 * blockSide<T>(),
                 numSrcColumnsD4Or8 * blockSide<T>());
    return true;
  }
};

/// Matrices back to back in one edge, all on one worker.
template <typename T> class Transpose1DSingleWorker : public Vertex {
public:
  Input<Vector<T>> src;
  Output<Vector<T>> dst;
  unsigned short numSrcRowsD4Or8;
  unsigned short numSrcColumnsD4Or8;
  unsigned short numTranspositionsM1;

  bool compute() {
    transposeAll(&src[0], &dst[0], src.size(), numSrcRowsD4Or8 * blockSide<T>(),
                 numSrcColumnsD4Or8 * blockSide<T>());
    return true;
  }
};

/// A few matrices back to back, each split among the workers by a work list.
template <typename T> class SplitTranspose1D : public Vertex {
public:
  Input<Vector<T>> src;
  Output<Vector<T>> dst;
  Input<Vector<unsigned short>> workList;
  unsigned short numSrcRowsD4Or8;
  unsigned short numSrcColumnsD4Or8;

  bool compute() {
    transposeAll(&src[0], &dst[0], src.size(), numSrcRowsD4Or8 * blockSide<T>(),
                 numSrcColumnsD4Or8 * blockSide<T>());
    return true;
  }
};

#define ASPEN_POPLAR_RT_TRANSPOSES(T)                                                                        \
  template class Transpose2D<T>;                                                                             \
  template class Transpose1D<T>;                                                                             \
  template class Transpose1DSingleWorker<T>;                                                                 \
  template class SplitTranspose1D<T>;

ASPEN_POPLAR_RT_TRANSPOSES(float)
ASPEN_POPLAR_RT_TRANSPOSES(half)
ASPEN_POPLAR_RT_TRANSPOSES(int)
ASPEN_POPLAR_RT_TRANSPOSES(unsigned int)
ASPEN_POPLAR_RT_TRANSPOSES(short)
ASPEN_POPLAR_RT_TRANSPOSES(unsigned short)
ASPEN_POPLAR_RT_TRANSPOSES(char)
ASPEN_POPLAR_RT_TRANSPOSES(signed char)
ASPEN_POPLAR_RT_TRANSPOSES(unsigned char)

} // namespace poplar_rt
