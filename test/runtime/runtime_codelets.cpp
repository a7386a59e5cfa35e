// Copyright (c) Aspen contributors.
// Codelets for the runtime's end-to-end tests, compiled with Graph::addCodelets.
#include <poplar/Vertex.hpp>
#include <print.h>

using namespace poplar;

/// data[i] += 1
class AddOne : public Vertex {
public:
  InOut<Vector<float>> data;
  bool compute() {
    for (unsigned i = 0; i < data.size(); ++i)
      data[i] += 1.0f;
    return true;
  }
};

/// out[i] = in[i] * factor, split over the workers.
class ScaleMulti : public MultiVertex {
public:
  Input<Vector<float>> in;
  Output<Vector<float>> out;
  float factor;
  void compute(unsigned workerId) {
    for (unsigned i = workerId; i < in.size(); i += numWorkers())
      out[i] = in[i] * factor;
  }
};

/// out = sum(in)
class Sum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float s = 0.0f;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i];
    *out = s;
    return true;
  }
};

/// x -= 1; positive = x > 0; zero = x == 0
class CountDown : public Vertex {
public:
  InOut<int> x;
  Output<bool> positive;
  Output<bool> zero;
  bool compute() {
    *x = *x - 1;
    *positive = *x > 0;
    *zero = *x == 0;
    return true;
  }
};

/// Fails (returns false) when x is negative.
class CheckNonNegative : public Vertex {
public:
  Input<int> x;
  bool compute() { return *x >= 0; }
};

/// Prints its value with the codelet printf.
class Say : public Vertex {
public:
  Input<int> x;
  bool compute() {
    printf("say %d\n", int(*x));
    return true;
  }
};

/// Does nothing (dispatch benchmarks).
class Nop : public Vertex {
public:
  bool compute() { return true; }
};

/// y[i] = a * x[i] + y[i] for a slice of a large vector (benchmarks).
class Axpy : public Vertex {
public:
  Input<Vector<float>> x;
  InOut<Vector<float>> y;
  float a;
  bool compute() {
    for (unsigned i = 0; i < x.size(); ++i)
      y[i] += a * x[i];
    return true;
  }
};
