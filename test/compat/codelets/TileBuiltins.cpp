// Code written for IPU hardware: the builtins whose meaning comes from the tile running
// the vertex, called unguarded (no #ifdef __IPU__).
#include <ipu_builtins.h>
#include <poplar/Vertex.hpp>

using namespace poplar;

// The tile this vertex runs on, and the worker context running it.
class WhereAmI : public Vertex {
public:
  Output<Vector<unsigned>> out; // {tile, worker}

  bool compute() {
    out[0] = __builtin_ipu_get_tile_id();
    out[1] = __builtin_ipu_get_worker_id();
    return true;
  }
};

// Each worker writes its own id and the tile's.
class WorkersOfTile : public MultiVertex {
public:
  Output<Vector<unsigned>> out; // 2 per worker

  bool compute(unsigned workerId) {
    out[2 * workerId] = __builtin_ipu_get_worker_id();
    out[2 * workerId + 1] = __builtin_ipu_get_tile_id();
    return true;
  }
};

// The tile's cycle counter around a loop of `n` iterations; also what the loop computed,
// so that it is not removed.
class TimedLoop : public Vertex {
public:
  Input<Vector<float>> in;
  Input<unsigned> n;
  Output<Vector<unsigned>> stamps; // {low, high} before, {low, high} after
  Output<float> sum;

  bool compute() {
    const unsigned l0 = __builtin_ipu_get_scount_l(), h0 = __builtin_ipu_get_scount_h();
    float s = 0.0f;
    const unsigned size = in.size();
    for (unsigned i = 0; i < n; ++i)
      s = s * 0.5f + in[i % size];
    const unsigned l1 = __builtin_ipu_get_scount_l(), h1 = __builtin_ipu_get_scount_h();
    *sum = s;
    stamps[0] = l0;
    stamps[1] = h0;
    stamps[2] = l1;
    stamps[3] = h1;
    return true;
  }
};

// One reading of the tile's cycle counter (64 bits, as two words).
class Stamp : public Vertex {
public:
  Output<Vector<unsigned>> out;

  bool compute() {
    const unsigned h = __builtin_ipu_get_scount_h(), l = __builtin_ipu_get_scount_l();
    out[0] = l;
    out[1] = h;
    return true;
  }
};
