// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Short vector types (float2, half4, int2, ...): see <ipudef.h>.
#ifndef POPLAR_VECTORTYPES_HPP
#define POPLAR_VECTORTYPES_HPP
#include <ipudef.h>
#endif
