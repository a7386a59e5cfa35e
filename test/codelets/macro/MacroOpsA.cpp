// Copyright (c) Aspen contributors.
// Codelet corpus, macro-generated instantiations (1 of 2): 9 Unary vertex types
// from nested macros defined in MacroOps.hpp, 2 ScaleBy types with defaulted
// template arguments, and 1 spelled out in a namespace: 12 vertex types.
#include "MacroOps.hpp"

MACRO_CORPUS_INSTANTIATE_ALL(macro_corpus::Unary)
MACRO_CORPUS_INSTANTIATE_SCALE(float)
MACRO_CORPUS_INSTANTIATE_SCALE(half)

namespace macro_corpus {
template class ScaleBy<int, 3>;
} // namespace macro_corpus
