/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * <ipu_builtins.h> as Graphcore's SDK ships it: the IPU's builtins, typed and
 * overloaded, in every build popc makes (docs/codelets.md, "IPU builtins" and "IPU
 * builtins backed by the runtime"). Each group lives in a header of its own. */
#ifndef ASPEN_IPU_BUILTINS_H
#define ASPEN_IPU_BUILTINS_H

#include <ipu_arith_builtins.h>
#include <ipu_tile_builtins.h>

#endif
