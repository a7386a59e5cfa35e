// Copyright (c) Aspen contributors.
// Compiled with libgraph's include roots by the layering_includes test, which expects it to fail:
// the front end must not see the compiler's private headers.
#include "exe/ExecutableData.hpp"
