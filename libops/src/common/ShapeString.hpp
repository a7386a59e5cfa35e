// Copyright (c) Aspen contributors.
// Formatting of shapes and tensors for PopLibs error messages.
#pragma once

#include <poplar/Tensor.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace aspen::ops {

/// `{2,3}` for a shape.
inline std::string shapeString(const std::vector<std::size_t> &shape) {
  std::string s = "{";
  for (std::size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "}";
}

/// `'name' {2,3} float` for a tensor (Poplar's short description).
inline std::string describe(const poplar::Tensor &t) {
  if (!t.valid())
    return "<invalid tensor>";
  return t.shortString();
}

} // namespace aspen::ops
