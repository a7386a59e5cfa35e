// Copyright (c) Aspen contributors.
// Codelet corpus (bad input): fields of types no vertex field may have.
#include <poplar/Vertex.hpp>

#include <string>
#include <vector>

struct SomeStruct {
  double a, b;
};

class StructEdge : public poplar::Vertex {
public:
  poplar::Input<SomeStruct> in;
  bool compute() { return in->a == 0; }
};

class StringVectorEdge : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<std::string>> names;
  bool compute() { return names.size() == 0; }
};

class ContainerState : public poplar::Vertex {
public:
  std::vector<int> values;
  bool compute() { return values.empty(); }
};
