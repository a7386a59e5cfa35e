// Copyright (c) Aspen contributors.
// The casts real codelets do on field data: `reinterpret_cast<T *>(&in[0])` on an
// Input (as lattice-Boltzmann codelets write it), `reinterpret_cast<const float2 *>`,
// and data() on every kind of field.
#include <ipudef.h>
#include <poplar/Vertex.hpp>

using namespace poplar;

template <typename T> class SumPairs : public Vertex {
public:
  Input<Vector<T, VectorLayout::ONE_PTR, 8>> in;
  InOut<Vector<T, VectorLayout::ONE_PTR, 8>> acc;
  Output<Vector<T>> out;
  unsigned n;

  bool compute() {
    const T *inPtr = reinterpret_cast<T *>(&in[0]); // an Input's element, as non-const
    T *accPtr = reinterpret_cast<T *>(&acc[0]);
    const float2 *pairs = reinterpret_cast<const float2 *>(&in[0]);
    for (unsigned i = 0; i < n; ++i)
      accPtr[i] += inPtr[i];
    for (unsigned i = 0; i < n / 2; ++i)
      out[i] = pairs[i][0] + pairs[i][1];
    T *outData = out.data();
    outData[n / 2] = static_cast<T>(n);
    return true;
  }
};
template class SumPairs<float>;

// A list of read-only edges has `const` rows, as Poplar's: PopLibs' sparse codelets walk a
// row with `auto *iter = &list[i][0]` and later assign a `const T *` to it. A row still
// binds to `const Input<Vector<T>> &`.
class WalkRows : public Vertex {
public:
  Vector<Input<Vector<unsigned, VectorLayout::ONE_PTR>>> rows;
  Output<Vector<unsigned>> sums;

  static unsigned first(const Input<Vector<unsigned, VectorLayout::ONE_PTR>> &row) { return row[0]; }

  bool compute() {
    for (unsigned r = 0; r < rows.size(); ++r) {
      auto *iter = &rows[r][0];
      unsigned total = 0;
      while (*iter != 0) {
        total += *iter;
        iter = reinterpret_cast<const unsigned *>(iter) + 1;
      }
      sums[r] = total + 1000 * first(rows[r]);
    }
    return true;
  }
};
