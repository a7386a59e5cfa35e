// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_OPERATIONDEF_HPP
#define POPOPS_OPERATIONDEF_HPP

namespace popops {

/// The combining operation of a reduction or multi-update.
enum class Operation {
  ADD,
  MUL,
  MIN,
  MAX,
  LOGICAL_AND, ///< bool operands only
  LOGICAL_OR,  ///< bool operands only
  SQUARE_ADD,  ///< squares each element, then adds
  LOG_ADD,     ///< acc = max + log(1 + exp(min - max)) (log-sum-exp)
};

} // namespace popops

#endif
