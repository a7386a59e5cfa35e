// A client's own codelet, compiled ahead of time with `popc codelets.cpp -o codelets.gp`.
#include <poplar/Vertex.hpp>

class ClientScale : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> in;
  poplar::Output<poplar::Vector<float>> out;
  float factor;

  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i) {
      out[i] = in[i] * factor;
    }
    return true;
  }
};
