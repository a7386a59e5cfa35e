// Vertex types whose base only the instantiation knows: `std::conditional_t<...>` over
// MultiVertex, Vertex and SupervisorVertex chosen by template parameters, as PopLibs'
// convolution vertices choose theirs (issue 24). Both compute overloads are declared; each
// instantiation defines and runs only the one its base calls (a MultiVertex's
// compute(unsigned) on every worker, a Vertex's or SupervisorVertex's compute() once).
// `owner` says who ran each element: the worker id, or 100 + the base's kind.
#include <poplar/Vertex.hpp>

#include <type_traits>

using namespace poplar;

namespace cond {

enum class Kind { MULTI, SINGLE, SUPERVISOR };

template <Kind K>
using BaseOf = std::conditional_t<K == Kind::MULTI, MultiVertex,
                                  std::conditional_t<K == Kind::SUPERVISOR, SupervisorVertex, Vertex>>;

template <class T, Kind K> class Scale : public BaseOf<K> {
public:
  Input<Vector<T>> in;
  Output<Vector<T>> out;
  Output<Vector<unsigned>> owner;
  T factor;

  bool compute();
  bool compute(unsigned workerId);
};

template <class T, Kind K> bool Scale<T, K>::compute() {
  for (unsigned i = 0; i < in.size(); ++i) {
    out[i] = in[i] * factor;
    owner[i] = 100 + static_cast<unsigned>(K);
  }
  return true;
}

template <class T, Kind K> bool Scale<T, K>::compute(unsigned workerId) {
  for (unsigned i = workerId; i < in.size(); i += MultiVertex::numWorkers()) {
    out[i] = in[i] * factor;
    owner[i] = workerId;
  }
  return true;
}

// Defined only for the overload each base calls: the other is never named.
template <> bool Scale<float, Kind::MULTI>::compute();
template <> bool Scale<int, Kind::SINGLE>::compute(unsigned);
template <> bool Scale<int, Kind::SUPERVISOR>::compute(unsigned);

template class Scale<float, Kind::MULTI>;
template class Scale<int, Kind::SINGLE>;
template class Scale<int, Kind::SUPERVISOR>;
template class Scale<short, Kind::MULTI>;

// The base written directly at the class, as PopLibs writes it, and a single compute.
template <class T, bool multi>
class Negate : public std::conditional_t<multi, MultiVertex, SupervisorVertex> {
public:
  InOut<Vector<T>> data;
  void compute(unsigned workerId) {
    for (unsigned i = workerId; i < data.size(); i += (multi ? MultiVertex::numWorkers() : 1u))
      data[i] = -data[i];
  }
  void compute() { compute(0); }
};
template class Negate<float, true>;
template class Negate<float, false>;

// As PopLibs' convolution vertices: a SupervisorVertex whose compute is IPU assembly in an
// IPU build (compute() declared, never defined), a MultiVertex in C++ in the cpu build.
#ifdef __IPU__
#define COND_EXTERNAL true
#else
#define COND_EXTERNAL false
#endif
template <class T>
class Twice : public std::conditional_t<COND_EXTERNAL && std::is_same<T, float>::value, SupervisorVertex,
                                        MultiVertex> {
public:
  InOut<Vector<T>> data;
#ifdef __IPU__
  static const bool isExternalCodelet = std::is_same<T, float>::value;
#endif
  void compute();
  void compute(unsigned workerId) {
    for (unsigned i = workerId; i < data.size(); i += MultiVertex::numWorkers())
      data[i] = data[i] * 2;
  }
};
template class Twice<float>;
template class Twice<int>;

// Not vertex types: a dependent base that names a vertex base but is not one for this
// instantiation, and one that names none; both have a compute member and fields.
struct Plain {
  unsigned tag;
};
template <class T> class Helper : public std::conditional_t<(sizeof(T) > 64), MultiVertex, Plain> {
public:
  T value;
  void compute() {}
};
template class Helper<float>;

template <class T> class Other : public std::conditional_t<(sizeof(T) > 2), Plain, Plain> {
public:
  T value;
  bool compute() { return true; }
};
template class Other<int>;

} // namespace cond
