// Copyright (c) Aspen contributors.
// Vertex type names as Poplar spells them and as PopLibs' templateVertex writes them:
// `Fill<unsigned int>` for `unsigned`, enum arguments as `ns::Enum::VALUE`, integral and
// bool arguments as numbers and `true`/`false`, vector types by their <ipudef.h> names.
#include <ipudef.h>
#include <poplar/HalfFloat.hpp>
#include <poplar/Vertex.hpp>

using namespace poplar;

namespace compat {
enum class Op { ADD, MUL };
enum Mode { PLAIN = 0, SCALED = 3 };

template <typename T> class Fill : public Vertex {
public:
  Output<Vector<T>> out;
  T value;
  bool compute() {
    for (auto &x : out)
      x = value;
    return true;
  }
};
template class Fill<unsigned>;
template class Fill<int>;
template class Fill<half>;

template <Op op, typename T, unsigned Stride, bool Negate, Mode M> class Combine : public Vertex {
public:
  Input<Vector<T>> a;
  InOut<Vector<T>> b;
  bool compute() {
    for (unsigned i = 0; i < b.size(); i += Stride) {
      T r = op == Op::ADD ? T(a[i] + b[i]) : T(a[i] * b[i]);
      r = Negate ? T(-r) : r;
      b[i] = M == SCALED ? T(r * T(3)) : r;
    }
    return true;
  }
};
template class Combine<Op::ADD, float, 1, false, PLAIN>;
template class Combine<Op::MUL, int, 2u, true, SCALED>;

template <typename T, typename V> class Width : public Vertex {
public:
  Output<unsigned> out;
  bool compute() {
    *out = sizeof(V) / sizeof(T);
    return true;
  }
};
template class Width<float, float2>;
template class Width<half, half4>;
template class Width<int, int2>;
template class Width<short, short2>;
template class Width<char, char4>;
} // namespace compat
