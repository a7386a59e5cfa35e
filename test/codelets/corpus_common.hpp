// Copyright (c) Aspen contributors.
// Shared by the codelet test corpus: a local header, so that the codelet cache
// key must cover it.
#pragma once

#ifndef CORPUS_SCALE
#error "compile the corpus with -DCORPUS_SCALE=<n>"
#endif

namespace corpus {
/// The operation the templated corpus vertices apply.
enum class Op { ADD, MUL };
/// A class type used as a template argument.
struct Twice {
  template <class T> static T apply(T x) { return x + x; }
};
} // namespace corpus
