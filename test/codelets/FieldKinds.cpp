// Copyright (c) Aspen contributors.
// Codelet test corpus, part 1: every kind of field and every layout, state
// fields, MultiVertex, SupervisorVertex, private fields, inherited fields,
// print.h, ipudef.h vector types and half arithmetic. Compiled with
// -DCORPUS_SCALE=3 -I<this directory>. Checked by test/unit/codelets_library.cpp.
#include "corpus_common.hpp"

#include <ipudef.h>
#include <poplar/AvailableVTypes.h>
#include <poplar/HalfFloat.hpp>
#include <poplar/StackSizeDefs.hpp>
#include <poplar/TileConstants.hpp>
#include <poplar/Vertex.hpp>
#include <print.h>

#include <cmath>

using namespace poplar;

#ifdef __IPU__
#error "__IPU__ must not be defined for host codelets"
#endif
#ifndef __POPC__
#error "__POPC__ must be defined for codelets"
#endif

// Scalar edges of every direction: out = a * b * CORPUS_SCALE; acc += 1.
class ScalarEdges : public Vertex {
public:
  Input<float> a;
  Input<int> b;
  Output<float> out;
  InOut<unsigned> acc;
  bool compute() {
    *out = a * static_cast<float>(*b) * CORPUS_SCALE;
    *acc = acc + 1;
    return true;
  }
};

// Vector edges in every VectorLayout. out[i] = span[i] + shortSpan[i] + onePtr[i]
// + ptr32[i] + ptr64[i] + ptr128[i] + compact[i] for i < n; inout[i] *= 2.
class Layouts : public Vertex {
public:
  Input<Vector<float>> span;
  Input<Vector<float, VectorLayout::SHORT_SPAN>> shortSpan;
  Input<Vector<float, VectorLayout::ONE_PTR>> onePtr;
  Input<Vector<float, VectorLayout::SCALED_PTR32, 4>> ptr32;
  Input<Vector<float, VectorLayout::SCALED_PTR64, 8>> ptr64;
  Input<Vector<float, VectorLayout::SCALED_PTR128, 16>> ptr128;
  Input<Vector<float, VectorLayout::COMPACT_PTR, 8, true>> compact;
  Output<Vector<float, VectorLayout::ONE_PTR>> out;
  InOut<Vector<int, VectorLayout::SPAN>> inout;
  unsigned short n;
  bool compute() {
    if (span.size() != n || shortSpan.size() != n)
      return false;
    for (unsigned i = 0; i < n; ++i)
      out[i] = span[i] + shortSpan[i] + onePtr[i] + ptr32[i] + ptr64[i] + ptr128[i] + compact[i];
    for (auto &x : inout)
      x *= 2;
    return true;
  }
};

// Lists of edges: rows (Vector<Input<Vector>>), scalar edges (Vector<Input<T>>)
// and VectorList in both list layouts.
// outRows[i][j] = rows[i][j] * (sum of scalars); lists[i][j] += 1 for DELTAN;
// total = sum of every element of deltaN.
class EdgeLists : public Vertex {
public:
  Vector<Input<Vector<float>>> rows;
  Vector<Output<Vector<float, VectorLayout::ONE_PTR>>, VectorLayout::ONE_PTR> outRows;
  Vector<Input<float>> scalars;
  Vector<InOut<int>> counters;
  InOut<VectorList<int, VectorListLayout::DELTAN>> lists;
  Input<VectorList<float, VectorListLayout::DELTANELEMENTS, 4>> deltaN;
  Output<float> total;
  bool compute() {
    float factor = 0;
    for (unsigned i = 0; i < scalars.size(); ++i)
      factor += scalars[i];
    for (unsigned i = 0; i < rows.size(); ++i)
      for (unsigned j = 0; j < rows[i].size(); ++j)
        outRows[i][j] = rows[i][j] * factor;
    for (unsigned i = 0; i < counters.size(); ++i)
      *counters[i] += static_cast<int>(i) + 1;
    for (unsigned i = 0; i < lists.size(); ++i)
      for (unsigned j = 0; j < lists[i].size(); ++j)
        lists[i][j] += 1;
    float sum = 0;
    for (unsigned i = 0; i < deltaN.size(); ++i)
      for (float x : deltaN[i])
        sum += x;
    *total = sum;
    return true;
  }
};

// State fields of every kind. out[i] = c * weights[offsets[i]] + n + s + (flag ? 1 : 0) + h + k.
enum class Mode : unsigned char { Off, On };
class StateFields : public Vertex {
public:
  unsigned n;
  const float c;
  Vector<unsigned> offsets;
  Vector<int, VectorLayout::ONE_PTR> weights;
  short s;
  bool flag;
  half h;
  long long k;
  Mode mode;
  Output<Vector<float>> out;
  bool compute() {
    for (unsigned i = 0; i < offsets.size(); ++i)
      out[i] = c * static_cast<float>(weights[offsets[i]]) + static_cast<float>(n) + s +
               (flag ? 1.0f : 0.0f) + static_cast<float>(h) + static_cast<float>(k) +
               (mode == Mode::On ? 100.0f : 0.0f);
    return true;
  }
};

// A MultiVertex: worker w scales elements w, w + 6, ... of data.
template <typename T> class MultiScale : public MultiVertex {
public:
  InOut<Vector<T, VectorLayout::ONE_PTR, 8>> data;
  unsigned n;
  T factor;
  void compute(unsigned workerId) {
    static_assert(numWorkers() == CTXT_WORKERS, "six workers");
    for (unsigned i = workerId; i < n; i += numWorkers())
      data[i] = data[i] * factor;
  }
};
template class MultiScale<float>;
template class MultiScale<int>;

// A supervisor vertex (legacy): out = sum(in).
class SuperSum : public SupervisorVertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float sum = 0;
    for (float x : in)
      sum += x;
    *out = sum;
    return true;
  }
};

// Private fields and a private compute.
class PrivateFields : public Vertex {
  Input<Vector<int>> in;
  Output<Vector<int, VectorLayout::ONE_PTR>> out;
  int bias;
  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = in[i] + bias;
    return true;
  }

public:
  DEF_STACK_USAGE(0, "PrivateFields");
};

// Fields inherited from a templated base: out[i] = in[i] * 2 (via corpus::Twice).
template <typename T> class DerivedBase : public Vertex {
public:
  Input<Vector<T>> in;
};
template <typename T> class Derived : public DerivedBase<T> {
public:
  Output<Vector<T, VectorLayout::ONE_PTR>> out;
  bool compute() {
    for (unsigned i = 0; i < this->in.size(); ++i)
      out[i] = corpus::Twice::apply(this->in[i]);
    return true;
  }
};
template class Derived<float>;

// print.h: prints "sum=<sum of in>".
class Printer : public Vertex {
public:
  Input<Vector<int>> in;
  bool compute() {
    int sum = 0;
    for (int x : in)
      sum += x;
    printf("sum=%d\n", sum);
    return true;
  }
};

// ipudef.h vector types: out = in * scale as float2 pairs; hout = hin * hscale as half4.
class VectorTypes : public Vertex {
public:
  Input<Vector<float, VectorLayout::ONE_PTR, 8>> in;
  Output<Vector<float, VectorLayout::ONE_PTR, 8>> out;
  Input<Vector<half, VectorLayout::ONE_PTR, 8>> hin;
  Output<Vector<half, VectorLayout::ONE_PTR, 8>> hout;
  unsigned pairs; // float2 pairs; also half4 groups
  float scale;
  bool compute() {
    const float2 s = {scale, scale};
    const auto *src = reinterpret_cast<const float2 *>(&in[0]);
    auto *dst = reinterpret_cast<float2 *>(&out[0]);
    for (unsigned i = 0; i < pairs; ++i)
      dst[i] = src[i] * s;
    const half4 hs = {half(scale), half(scale), half(scale), half(scale)};
    const auto *hsrc = reinterpret_cast<const half4 *>(&hin[0]);
    auto *hdst = reinterpret_cast<half4 *>(&hout[0]);
    for (unsigned i = 0; i < pairs; ++i)
      hdst[i] = hsrc[i] * hs;
    return true;
  }
};

// Half arithmetic: y[i] = a * x[i] + y[i], each operation rounded to half.
class HalfAxpy : public Vertex {
public:
  Input<Vector<half>> x;
  InOut<Vector<half>> y;
  half a;
  bool compute() {
    for (unsigned i = 0; i < x.size(); ++i)
      y[i] = a * x[i] + y[i];
    return true;
  }
};

// compute() returning false, and a void compute().
class Fails : public Vertex {
public:
  Input<int> in;
  bool compute() { return *in > 0; }
};
class VoidCompute : public Vertex {
public:
  Output<int> out;
  void compute() { *out = 42; }
};

// A class deriving from Vertex without compute() is a base, not a vertex type.
class NotAVertexType : public Vertex {
public:
  Input<int> unused;
};
