// Copyright (c) Aspen contributors.
// Codelet corpus: helpers two codelet files share (an inline function, a function
// template, a class with a static member and an inline variable), compiled into
// two vertex libraries that one graph adds (SharedA.cpp, SharedB.cpp).
#pragma once

#include <poplar/Vertex.hpp>

namespace shared_corpus {

inline float scaled(float x) {
  return 2.0f * x + 1.0f;
}
template <typename T> T clampTo(T x, T hi) {
  return x > hi ? hi : x;
}
struct Counter {
  static int calls;
};
inline int Counter::calls = 0;

} // namespace shared_corpus
