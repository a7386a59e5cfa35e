// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// IEEE binary16 on the host: see <poplar/HalfFloat.hpp>.
#ifndef POPLAR_IEEEHALF_HPP
#define POPLAR_IEEEHALF_HPP
#include <poplar/HalfFloat.hpp>
#endif
