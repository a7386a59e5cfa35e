// Copyright (c) Aspen contributors.
// popc's command line reaches the compiler: -D, -X <flag>, -I, -isystem, -std= and the
// "compile-flags" of a JSON target list. The vertex reports what it was built with.
#include <compat_flags.h>
#include <compat_sys.h>
#include <poplar/Vertex.hpp>

#ifndef FROM_D
#error "-D FROM_D=... not passed"
#endif
#ifndef FROM_X
#define FROM_X 0
#endif
#ifndef FROM_JSON
#define FROM_JSON 0
#endif

class Built : public poplar::Vertex {
public:
  poplar::Output<poplar::Vector<int>> out; // 6

  bool compute() {
    out[0] = FROM_D;
    out[1] = FROM_X;
    out[2] = FROM_JSON;
    out[3] = COMPAT_FROM_I + COMPAT_FROM_ISYSTEM;
    out[4] = __cplusplus >= 202002L ? 20 : 17;
#ifdef __POPC__
    out[5] = 1;
#else
    out[5] = 0;
#endif
    return true;
  }
};
