// Copyright (c) Aspen contributors.
// The file of the "target.saveArchive" option: the executable's code as an `ar` archive.
#pragma once

#include "exe/ExecutableData.hpp"

#include <string>

namespace aspen::compiler {

/// Writes `path` as a Unix `ar` archive (the format `ar t` and `ar x` read) with one member per
/// vertex library of `exe` — the `.gp` files its vertices run from, the code of the simulated
/// IPU — named `<first 11 characters of its content hash>.gp`, in the executable's order.
/// Poplar's archive holds per-tile IPU ELF objects; Aspen's tiles run host code from the
/// `.gp` libraries, so these are its code. Throws `poplar::poplar_error` naming the option and
/// a file that cannot be written.
void writeCodeArchive(const std::string &path, const exe::ExecutableData &exe);

} // namespace aspen::compiler
