// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPUTIL_EXCEPTIONS_HPP
#define POPUTIL_EXCEPTIONS_HPP

#include <stdexcept>
#include <string>

namespace poputil {

/// Thrown when a PopLibs operation is given arguments it cannot accept (shapes or
/// types that do not match, dimensions out of range, unsupported combinations).
/// `what()` names the operation and the tensors and shapes at fault.
struct poplibs_error : std::runtime_error {
  std::string type;
  explicit poplibs_error(const std::string &s);
  explicit poplibs_error(const char *s);
};

/// Older spelling of `poplibs_error`.
typedef poplibs_error poplib_error;

} // namespace poputil

#endif
