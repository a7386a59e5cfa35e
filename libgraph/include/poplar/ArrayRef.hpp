// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_ARRAYREF_HPP
#define POPLAR_ARRAYREF_HPP

#include <gccs/ArrayRef.hpp>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace poplar {

// The class itself (not an alias template), so class template argument deduction works
// through either name: `poplar::ArrayRef(v)`, `gccs::ArrayRef(v)`.
using gccs::ArrayRef;

} // namespace poplar

#endif
