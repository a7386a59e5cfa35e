// Copyright (c) Aspen contributors. PopLibs-compatible public API.
#ifndef POPOPS_SORTORDER_HPP
#define POPOPS_SORTORDER_HPP

#include <iosfwd>

namespace popops {

/// Order required of a sorting operation's result.
enum class SortOrder { NONE, ASCENDING, DESCENDING };

std::ostream &operator<<(std::ostream &os, const SortOrder &o);

} // namespace popops

#endif
