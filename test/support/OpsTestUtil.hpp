// Copyright (c) Aspen contributors.
// Small helpers for operation golden tests: deterministic inputs, host rounding to half,
// and element-wise comparison with a tolerance that names the first mismatch.
#pragma once

#include <catch2/catch.hpp>
#include <poplar/Target.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace aspen::test {

/// `n` values drawn uniformly from [lo, hi), rounded to multiples of 1/64 so that they
/// are exact in half precision for |x| < 32.
inline std::vector<float> inputs(std::size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = std::round(dist(rng) * 64.0f) / 64.0f;
  return v;
}

/// `x` rounded to the nearest half (ties to even), as the device stores it.
inline float roundToHalf(const poplar::Target &target, float x) {
  std::uint16_t h;
  poplar::copyFloatToDeviceHalf(target, &x, &h, 1);
  float back;
  poplar::copyDeviceHalfToFloat(target, &h, &back, 1);
  return back;
}

/// Compares `got` with `want` element by element: |got - want| <= abs + rel * |want|.
inline void requireClose(const std::vector<float> &got, const std::vector<float> &want, double rel,
                         double abs, const std::string &what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    const bool ok = (std::isnan(w) && std::isnan(g)) || (std::isinf(w) && g == w) ||
                    std::fabs(g - w) <= abs + rel * std::fabs(w);
    if (!ok) {
      std::ostringstream os;
      os << what << ": element " << i << " is " << g << ", expected " << w;
      FAIL(os.str());
    }
  }
}

} // namespace aspen::test
