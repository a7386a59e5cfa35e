// Copyright (c) Aspen contributors.
// Formats a tensor's host bytes the way Poplar's PrintTensor program does.
#pragma once

#include "poplar/Type.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace aspen::rt {

/// Writes `title: [...]` then a newline: elements separated by single spaces;
/// floating-point values (half as float) fixed with 7 decimals; integers and
/// bools plain; rank >= 2 as nested brackets, each inner row on its own line
/// indented two spaces per level; a scalar without brackets. An empty title
/// prints the brackets alone. `data` holds the elements in row-major order as
/// device bytes.
void printTensor(std::ostream &os, const std::string &title, poplar::Type::Id type,
                 const std::vector<std::uint64_t> &shape, const std::uint8_t *data);

/// One element of `type` at `p` as PrintTensor writes it.
std::string formatElement(poplar::Type::Id type, const std::uint8_t *p);

} // namespace aspen::rt
