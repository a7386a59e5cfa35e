// Copyright (c) Aspen contributors.
// Nothing in a codelet file breaks popc's own generated code: macros named like the
// names it uses (`quarter`, `half(x)`, `Input`, `min`), Eigen's explicit and partial
// specialisations, an anonymous namespace, `extern "C"` functions and a helper from a
// C source (CHelper.c, built in the same popc call).
#include <Eigen/Core>
#include <poplar/Vertex.hpp>

#define quarter 4
#define half(x) ((x) / 2)
#define min(a, b) ((a) < (b) ? (a) : (b))
#define Input Input
#define compat_scale(x) ((x)*quarter)

extern "C" int compat_c_triple(int x); // CHelper.c

extern "C" int compat_cpp_add(int a, int b) {
  return a + b;
}

namespace {
int clampTo(int x, int hi) {
  return min(x, hi);
}

class Hidden : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<int>> in;
  poplar::Output<poplar::Vector<int>> out;
  bool compute() {
    Eigen::Matrix2f m;
    m << 1, 2, 3, 4;
    const float trace = m.trace(); // 5
    for (unsigned i = 0; i < out.size(); ++i)
      out[i] = compat_cpp_add(clampTo(compat_c_triple(in[i]), 100), half(compat_scale(in[i]))) +
               static_cast<int>(trace);
    return true;
  }
};
} // namespace

// An explicit and a partial specialisation of a template of the codelet's own.
template <typename T, typename U> struct Traits { static constexpr int id = 0; };
template <typename T> struct Traits<T, T> { static constexpr int id = 1; };
template <> struct Traits<int, float> { static constexpr int id = 2; };

class TraitsIds : public poplar::Vertex {
public:
  poplar::Output<poplar::Vector<int>> out;
  bool compute() {
    out[0] = Traits<float, int>::id;
    out[1] = Traits<int, int>::id;
    out[2] = Traits<int, float>::id;
    return true;
  }
};
