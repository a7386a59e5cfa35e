/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * <ipu_builtins.h> as Graphcore's SDK ships it: the IPU's builtins, declared for
 * host-compiled codelets (docs/codelets.md). Each group lives in a header of its own. */
#ifndef ASPEN_IPU_BUILTINS_H
#define ASPEN_IPU_BUILTINS_H

#include <ipu_tile_builtins.h>

#endif
