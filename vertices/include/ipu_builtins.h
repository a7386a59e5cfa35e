/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * <ipu_builtins.h> of Graphcore's SDK: the IPU builtins, typed and overloaded, in
 * every build popc makes (docs/codelets.md, "IPU builtins"). */
#ifndef ASPEN_IPU_BUILTINS_H
#define ASPEN_IPU_BUILTINS_H

#include <ipu_arith_builtins.h>

#endif
