// Copyright (c) Aspen contributors.
// Codelet corpus, macro-generated instantiations (2 of 2): instantiations through
// a type alias and a typedef, a macro defined in this file that expands one from
// MacroOps.hpp, and a defaulted argument given explicitly: 6 vertex types.
#include "MacroOps.hpp"

namespace macro_corpus {
using Count = unsigned int;
typedef short Small;
} // namespace macro_corpus

#define LOCAL_INSTANTIATE(T) MACRO_CORPUS_INSTANTIATE_OP(macro_corpus::Unary, macro_corpus::UnaryOp::ABS, T)

template class macro_corpus::Unary<macro_corpus::UnaryOp::NEGATE, macro_corpus::Count>;
LOCAL_INSTANTIATE(macro_corpus::Small)
LOCAL_INSTANTIATE(macro_corpus::Count)
using ScaleCount = macro_corpus::ScaleBy<macro_corpus::Count, 4, double>;
template class macro_corpus::ScaleBy<macro_corpus::Count, 4, double>;
template class macro_corpus::ScaleBy<float, 2, float, true>;
template class macro_corpus::ScaleBy<macro_corpus::Small, 2, float, false>;
