// Copyright (c) Aspen contributors.
// Codelet corpus (bad input): a vertex type the codelet compiler cannot register.
// The explicit instantiation names a private member type, which the source may
// do ([temp.explicit]) but no other code can spell.
#include <poplar/Vertex.hpp>

class Outer {
  struct Priv {
    int x;
  };
  friend struct Friend;
};

template <typename T> class Holder : public poplar::Vertex {
public:
  poplar::Output<int> out;
  bool compute() {
    *out = int(sizeof(T));
    return true;
  }
};

template class Holder<Outer::Priv>;
template class Holder<int>;
