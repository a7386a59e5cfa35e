// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_OPERATIONDEFUTIL_HPP
#define POPOPS_OPERATIONDEFUTIL_HPP

#include <popops/Operation.hpp>
#include <popops/OperationDef.hpp>
#include <poputil/VertexTemplates.hpp>

#include <string>

namespace poputil {

/// Spells `popops::Operation` in vertex names: `popops::Operation::ADD`.
template <> struct VertexTemplateToString<popops::Operation> {
  static std::string to_string(const popops::Operation &op) {
    return "popops::Operation::" + popops::toString(op);
  }
};

} // namespace poputil

#endif
