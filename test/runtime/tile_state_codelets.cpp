// Copyright (c) Aspen contributors.
// Codelets with global and static variables (docs/tile-model.md, "What a tile
// owns"): every tile that runs them owns its copy, as on an IPU. popc compiles
// this file and tile_state_c.c into one library (test/runtime.cmake).
#include <poplar/Vertex.hpp>

using namespace poplar;

extern "C" int tileStateAccumulate(int x); // tile_state_c.c: C globals

namespace {
volatile int seed = 7;    // .data, read by the constructor below
unsigned globalTotal = 0; // .bss
int startAt() {
  return seed * 6 - 1;
} // not a constant: a guarded static's first value
/// Set by the library's constructor when it is loaded: each tile's copy starts with it.
struct AtLoad {
  int value;
  AtLoad() : value(seed * 100) {}
} atLoad;
} // namespace

/// Counts its runs on this tile with a function-local static (1 on the first run).
class StaticCounter : public Vertex {
public:
  Output<unsigned> out;
  void compute() {
    static unsigned runs = 0;
    *out = ++runs;
  }
};

/// A function-local static with a dynamic initialiser (and so a guard variable):
/// 41 + the runs on this tile.
class GuardedCounter : public Vertex {
public:
  Output<int> out;
  void compute() {
    static int value = startAt();
    *out = ++value;
  }
};

/// Adds to a global that ReadTotal (another vertex type of the library) reads.
class AddToTotal : public Vertex {
public:
  Input<unsigned> x;
  void compute() { globalTotal += *x; }
};

/// The global's value on this tile, and what the library's constructor set (700).
class ReadTotal : public Vertex {
public:
  Output<unsigned> total;
  Output<int> atLoadValue;
  void compute() {
    *total = globalTotal;
    *atLoadValue = atLoad.value;
  }
};

/// Drives the C code's globals with x.
class CAccumulate : public Vertex {
public:
  Input<int> x;
  Output<int> out;
  void compute() { *out = tileStateAccumulate(*x); }
};
