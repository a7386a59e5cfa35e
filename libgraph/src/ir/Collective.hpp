// Copyright (c) Aspen contributors.
// How libgcl records a collective in a program: one Collective node whose
// executable step moves bytes between replicas (docs/replication.md). libgcl
// checks the arguments (shapes, groups, operators) before it calls this.
#pragma once

#include "ir/ProgramNode.hpp"
#include "poplar/DebugContext.hpp"
#include "poplar/Program.hpp"
#include "poplar/Tensor.hpp"

namespace aspen::ir {

/// A program that runs collective `spec` reading `src` and writing `dst` on
/// every replica (`dst` may be `src` for the in-place forms).
poplar::program::Program makeCollectiveProgram(const CollectiveSpec &spec, const poplar::Tensor &src,
                                               const poplar::Tensor &dst,
                                               const poplar::DebugContext &debugContext);

} // namespace aspen::ir
