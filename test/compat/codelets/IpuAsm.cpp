// Copyright (c) Aspen contributors.
// IPU assembly in `asm`, unguarded: refused with file:line (the simulated IPU runs C
// and C++ vertex code only).
#include <poplar/Vertex.hpp>

class Asm : public poplar::Vertex {
public:
  poplar::Output<int> out;
  bool compute() {
    int x = 0;
    asm volatile("setzi %0, 0x1" : "=r"(x));
    *out = x;
    return true;
  }
};
