// Copyright (c) Aspen contributors.
// What popops' graph builders share beyond libops' common helpers (common/OpsCommon.hpp):
// the names of popops' operator enumerations.
#pragma once

#include "common/OpsCommon.hpp"
#include "popops/ExprOp.hpp"
#include "popops/ExprOpUtils.hpp"
#include "popops/OperationDef.hpp"
#include "popops/OperationDefUtil.hpp"
#include "poputil/VertexTemplates.hpp"
#include "poputil/exceptions.hpp"

#include <string>

namespace aspen::ops {

std::string toString(popops::expr::UnaryOpType op);  // "ABSOLUTE"
std::string toString(popops::expr::BinaryOpType op); // "ADD"
std::string toString(popops::Operation op);          // "ADD"

} // namespace aspen::ops
