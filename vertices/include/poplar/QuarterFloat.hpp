// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// `quarter`: the IPU's 8-bit float storage type. The simulated IPU stores and
// moves quarters as bytes; arithmetic on them is not provided.
#ifndef POPLAR_QUARTERFLOAT_HPP
#define POPLAR_QUARTERFLOAT_HPP

#include <cstdint>

namespace poplar {

/// One 8-bit float, stored as its bit pattern.
struct quarter {
  std::uint8_t bits;
};

/// The metadata (format and scale) of a quarter tensor.
struct QuarterMetadata {
  std::uint8_t bits;
};

} // namespace poplar

using poplar::quarter;

#endif
