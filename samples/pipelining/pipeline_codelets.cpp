// The vertices of the pipelining sample: one d x d linear layer's forward
// product, its backward product, the weight-gradient accumulation, the loss
// gradient and the SGD update.
#include <poplar/Vertex.hpp>

using namespace poplar;

// y = W x, W row-major d x d.
class MatVec : public Vertex {
public:
  Input<Vector<float>> w;
  Input<Vector<float>> x;
  Output<Vector<float>> y;
  bool compute() {
    const unsigned n = x.size();
    for (unsigned i = 0; i < y.size(); ++i) {
      float s = 0.0f;
      for (unsigned j = 0; j < n; ++j)
        s += w[i * n + j] * x[j];
      y[i] = s;
    }
    return true;
  }
};

// gx = W^T gy.
class MatTVec : public Vertex {
public:
  Input<Vector<float>> w;
  Input<Vector<float>> gy;
  Output<Vector<float>> gx;
  bool compute() {
    const unsigned n = gx.size();
    for (unsigned j = 0; j < n; ++j) {
      float s = 0.0f;
      for (unsigned i = 0; i < gy.size(); ++i)
        s += w[i * n + j] * gy[i];
      gx[j] = s;
    }
    return true;
  }
};

// dW += gy x^T (the gradient accumulation of one micro-batch).
class OuterAccumulate : public Vertex {
public:
  InOut<Vector<float>> dw;
  Input<Vector<float>> gy;
  Input<Vector<float>> x;
  bool compute() {
    const unsigned n = x.size();
    for (unsigned i = 0; i < gy.size(); ++i)
      for (unsigned j = 0; j < n; ++j)
        dw[i * n + j] += gy[i] * x[j];
    return true;
  }
};

// g = y - target (the gradient of 0.5 |y - target|^2).
class Residual : public Vertex {
public:
  Input<Vector<float>> y;
  Input<Vector<float>> target;
  Output<Vector<float>> g;
  bool compute() {
    for (unsigned i = 0; i < g.size(); ++i)
      g[i] = y[i] - target[i];
    return true;
  }
};

// w -= scale * dw; dw = 0.
class SgdStep : public Vertex {
public:
  InOut<Vector<float>> w;
  InOut<Vector<float>> dw;
  float scale;
  bool compute() {
    for (unsigned i = 0; i < w.size(); ++i) {
      w[i] -= scale * dw[i];
      dw[i] = 0.0f;
    }
    return true;
  }
};
