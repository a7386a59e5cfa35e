// Copyright (c) Aspen contributors.
// Codelet test corpus, part 3: a vertex calling an IPU builtin backed by the runtime, so its
// library carries the builtins' table (codelets_library: "only libraries calling a builtin").
#include <ipu_builtins.h>
#include <poplar/Vertex.hpp>

using namespace poplar;

class TileOfVertex : public Vertex {
public:
  Output<unsigned> out;
  bool compute() {
    *out = __builtin_ipu_get_tile_id();
    return true;
  }
};
