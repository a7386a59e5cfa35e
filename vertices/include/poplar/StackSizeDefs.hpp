// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Stack-size annotations for assembly codelets. Host-compiled codelets use the
// host stack, so the macros expand to nothing.
#ifndef POPLAR_STACKSIZEDEFS_HPP
#define POPLAR_STACKSIZEDEFS_HPP

#define DEF_STACK_USAGE(size, function)
#define DEF_STACK_SIZE_OWN(size, function)
#define DEF_FUNC_CALL_PTRS(caller, callees)

#endif
