// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_OPERATION_HPP
#define POPOPS_OPERATION_HPP

#include <popops/OperationDef.hpp>

#include <iosfwd>
#include <string>

namespace popops {

/// "ADD", "MUL", ... for an Operation.
std::string toString(Operation op);
std::ostream &operator<<(std::ostream &os, const Operation &op);
/// Parses "ADD", "MUL", ... (as `toString` prints them); throws poputil::poplibs_error otherwise.
std::istream &operator>>(std::istream &is, Operation &op);

} // namespace popops

#endif
