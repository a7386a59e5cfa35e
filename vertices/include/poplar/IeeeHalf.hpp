// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// IEEE binary16 on the host (see <poplar/HalfFloat.hpp>), and poplar::IeeeHalf: a
// half held as its bit pattern, as Poplar's host header declares it and PopLibs'
// popfloat codelets use it (construct from a float, `bit16()`, `fromBits`, to float).
#ifndef POPLAR_IEEEHALF_HPP
#define POPLAR_IEEEHALF_HPP
#include <poplar/HalfFloat.hpp>

#include <cstdint>

namespace poplar {

class IeeeHalf {
public:
  IeeeHalf() = default;
  /// The half nearest to `value` (ties to even).
  explicit IeeeHalf(float value) : bits_(floatToHalf(value)) {}
  static IeeeHalf fromBits(std::uint16_t bits) {
    IeeeHalf h;
    h.bits_ = bits;
    return h;
  }
  operator float() const { return halfToFloat(bits_); }
  std::uint16_t bit16() const { return bits_; }
  bool isNaN() const { return (bits_ & 0x7c00u) == 0x7c00u && (bits_ & 0x03ffu) != 0; }
  bool isInf() const { return (bits_ & 0x7fffu) == 0x7c00u; }
  bool isZero() const { return (bits_ & 0x7fffu) == 0; }
  bool operator==(IeeeHalf other) const { return float(*this) == float(other); }
  bool operator!=(IeeeHalf other) const { return !(*this == other); }

private:
  std::uint16_t bits_ = 0;
};

} // namespace poplar

#endif
