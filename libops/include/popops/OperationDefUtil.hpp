// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_OPERATIONDEFUTIL_HPP
#define POPOPS_OPERATIONDEFUTIL_HPP

#include <popops/OperationDef.hpp>
#include <poputil/VertexTemplates.hpp>

#include <string>

namespace poputil {

/// Spells `popops::Operation` in vertex names: `popops::Operation::ADD`.
template <> struct VertexTemplateToString<popops::Operation> {
  static std::string to_string(const popops::Operation &op) {
    switch (op) {
    case popops::Operation::ADD:
      return "popops::Operation::ADD";
    case popops::Operation::MUL:
      return "popops::Operation::MUL";
    case popops::Operation::MIN:
      return "popops::Operation::MIN";
    case popops::Operation::MAX:
      return "popops::Operation::MAX";
    case popops::Operation::LOGICAL_AND:
      return "popops::Operation::LOGICAL_AND";
    case popops::Operation::LOGICAL_OR:
      return "popops::Operation::LOGICAL_OR";
    case popops::Operation::SQUARE_ADD:
      return "popops::Operation::SQUARE_ADD";
    case popops::Operation::LOG_ADD:
      return "popops::Operation::LOG_ADD";
    }
    return "popops::Operation::UNKNOWN";
  }
};

} // namespace poputil

#endif
