// Copyright (c) Aspen contributors.
#include "ir/GraphData.hpp"

#include "ir/TensorAlgebra.hpp"

namespace aspen::ir {

std::string GraphData::describeVariable(VarId v) const {
  if (v >= variables.size())
    return "unknown variable " + std::to_string(v);
  const Variable &var = variables[v];
  const std::string name = var.name.empty() ? "<unnamed>" : var.name;
  return "'" + name + "' (" + (var.isConstant ? "constant " : "variable ") + std::to_string(v) + ", " +
         shapeString(var.shape) + " " + var.type.toString().str() + ")";
}

} // namespace aspen::ir
