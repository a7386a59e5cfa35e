// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Loop helpers of Poplar codelets. On the IPU `rptsize_t` is the count type of a
// hardware repeat loop; on the simulated IPU loops are plain C++, so it is an
// unsigned integer wide enough for any vector size.
#ifndef POPLAR_LOOPS_HPP
#define POPLAR_LOOPS_HPP

#include <cstdint>

/// The count type of a repeat loop (`for (rptsize_t i = 0; i < n; ++i)`).
typedef std::uint32_t rptsize_t;

#endif
