// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_VARIABLEMAPPINGMETHOD_HPP
#define POPLAR_VARIABLEMAPPINGMETHOD_HPP

namespace poplar {

/// How `Graph::addVariable` maps a new variable: not at all, or linearly over the tiles.
enum class VariableMappingMethod { NONE, LINEAR };

} // namespace poplar

#endif
