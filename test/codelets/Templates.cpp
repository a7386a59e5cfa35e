// Copyright (c) Aspen contributors.
// Codelet test corpus, part 2: templated vertices with several explicit
// instantiations and the canonical spelling of their names (type, bool,
// unsigned, enum and class-type arguments, namespaces).
#include "corpus_common.hpp"

#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

using namespace poplar;

namespace ns {

// out[i] = op(in[i], N) (or in[i] when !Enabled).
template <typename T, unsigned N, bool Enabled, corpus::Op Operation> class Param : public Vertex {
public:
  Input<Vector<T>> in;
  Output<Vector<T, VectorLayout::ONE_PTR>> out;
  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i) {
      T value = in[i];
      if (Enabled)
        value = Operation == corpus::Op::ADD ? T(value + T(N)) : T(value * T(N));
      out[i] = value;
    }
    return true;
  }
};

template class Param<float, 3, true, corpus::Op::ADD>;
template class Param<unsigned, 7, false, corpus::Op::MUL>;
template class Param<int, 2, true, corpus::Op::MUL>;
template class Param<half, 1, true, corpus::Op::ADD>;

namespace inner {
// out = Twice::apply(in) for a class-type argument.
template <class F, typename T> class Apply : public Vertex {
public:
  Input<T> in;
  Output<T> out;
  bool compute() {
    *out = F::apply(*in);
    return true;
  }
};
template class Apply<corpus::Twice, float>;
template class Apply<corpus::Twice, unsigned short>;
} // namespace inner

} // namespace ns

// A plain (non-template) vertex in the global namespace: out = CORPUS_SCALE.
class Plain : public Vertex {
public:
  Output<int> out;
  bool compute() {
    *out = CORPUS_SCALE;
    return true;
  }
};
