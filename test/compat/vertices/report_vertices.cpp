// Copyright (c) Aspen contributors.
// Codelets of test/compat/engine_get_report.cpp, written as Poplar codelets are.
#include <poplar/Vertex.hpp>

using namespace poplar;

class AddOne : public Vertex {
public:
  InOut<Vector<float>> data;

  bool compute() {
    for (unsigned i = 0; i < data.size(); ++i)
      data[i] += 1.0f;
    return true;
  }
};

class Double : public Vertex {
public:
  InOut<Vector<float>> data;

  bool compute() {
    for (unsigned i = 0; i < data.size(); ++i)
      data[i] *= 2.0f;
    return true;
  }
};
