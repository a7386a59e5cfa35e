// Copyright (c) Aspen contributors.
// Compiled with the compiler's include roots by the layering_includes test, which expects it to
// fail: the compiler must not see the runtime's private headers.
#include "TileMemory.hpp"
