// Copyright (c) Aspen contributors.
// Codelets of test/compat/introspect_worklists.cpp: vertices whose work is described by
// per-worker lists of unsigned shorts, connected as constants, as PopLibs' sorting vertices
// are (a 2-D input field whose rows a perf estimator reads through the introspector).
#include <poplar/Vertex.hpp>

using namespace poplar;

// Worker w walks row w of `work`: { pairs-1, (first, distance) x pairs }. Each entry orders
// keys[first] <= keys[first + distance], moving `values` with their keys. `flip` is a state
// field the estimator also reads.
class PairSwapKeyVal : public MultiVertex {
public:
  Vector<Input<Vector<unsigned short, VectorLayout::ONE_PTR, 4>>> work;
  InOut<Vector<float, VectorLayout::ONE_PTR>> keys;
  InOut<Vector<unsigned, VectorLayout::ONE_PTR>> values;
  unsigned flip;

  void compute(unsigned wid) {
    if (wid >= work.size())
      return;
    const unsigned short *row = &work[wid][0];
    const unsigned pairs = unsigned(row[0]) + 1;
    for (unsigned p = 0; p < pairs; ++p) {
      const unsigned a = row[1 + 2 * p];
      const unsigned b = a + row[2 + 2 * p];
      const bool outOfOrder = flip ? keys[a] < keys[b] : keys[b] < keys[a];
      if (outOfOrder) {
        const float k = keys[a];
        keys[a] = keys[b];
        keys[b] = k;
        const unsigned v = values[a];
        values[a] = values[b];
        values[b] = v;
      }
    }
  }
};

// The same rows as a VectorList, and a list of scalar edges.
class PairListCount : public Vertex {
public:
  Input<VectorList<unsigned short, VectorListLayout::DELTANELEMENTS>> work;
  Vector<Input<unsigned>> limits;
  Output<unsigned> total;

  bool compute() {
    unsigned t = 0;
    for (unsigned i = 0; i < work.size(); ++i)
      t += work[i].size();
    for (unsigned i = 0; i < limits.size(); ++i)
      t += limits[i];
    *total = t;
    return true;
  }
};
