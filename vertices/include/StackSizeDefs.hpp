// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// "StackSizeDefs.hpp" as PopLibs' IPU paths include it (without poplar/): the same
// stack-size annotations as <poplar/StackSizeDefs.hpp>.
#include <poplar/StackSizeDefs.hpp>
