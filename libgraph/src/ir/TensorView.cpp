// Copyright (c) Aspen contributors.
#include "ir/TensorView.hpp"

#include "ir/TensorAlgebra.hpp"

namespace aspen::ir {

std::size_t TensorView::numElements() const {
  std::size_t n = 1;
  for (std::size_t d : shape)
    n *= d;
  return n;
}

std::string TensorView::describe() const {
  return tensorName(*this) + " " + shapeString(shape) + " " + std::string(elementType.toString());
}

} // namespace aspen::ir
