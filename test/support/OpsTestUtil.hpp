// Copyright (c) Aspen contributors.
// Small helpers for operation tests: deterministic inputs, host rounding to half, moving
// float data in and out of FLOAT or HALF tensors of an engine, mapped test variables, and
// element-wise comparison with a tolerance that names the first mismatch.
#pragma once

#include <catch2/catch.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poputil/TileMapping.hpp>

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

/// A smooth deterministic pattern in [-1, 1]: element i is sin(a * i + b).
inline std::vector<float> sinePattern(std::size_t n, float a, float b) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = std::sin(a * float(i) + b);
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

/// `x` rounded to the nearest value of `type` (FLOAT or HALF).
inline float roundTo(const poplar::Type &type, const poplar::Target &target, float x) {
  return type == poplar::HALF ? roundToHalf(target, x) : x;
}

/// `n` values drawn uniformly from [lo, hi), already rounded to `type` so that a host
/// reference sees exactly the device's inputs.
inline std::vector<float> randomValues(std::size_t n, float lo, float hi, unsigned seed,
                                       const poplar::Type &type, const poplar::Target &target) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = roundTo(type, target, dist(gen));
  return v;
}

/// A variable of `type` and `shape`, mapped linearly over the tiles.
inline poplar::Tensor mappedVariable(poplar::Graph &graph, const poplar::Type &type,
                                     const std::vector<std::size_t> &shape, const std::string &name) {
  poplar::Tensor t = graph.addVariable(type, shape, name);
  poputil::mapTensorLinearly(graph, t);
  return t;
}

/// Writes `values` to the host-write handle of a FLOAT or HALF tensor.
inline void writeFloats(poplar::Engine &engine, const std::string &handle, const poplar::Type &type,
                        const poplar::Target &target, const std::vector<float> &values) {
  if (type == poplar::HALF) {
    std::vector<std::uint16_t> bits(values.size());
    poplar::copyFloatToDeviceHalf(target, values.data(), bits.data(), values.size());
    engine.writeTensor(handle, bits.data(), bits.data() + bits.size());
  } else {
    engine.writeTensor(handle, values.data(), values.data() + values.size());
  }
}

/// Reads `n` elements of a FLOAT or HALF tensor's host-read handle as floats.
inline std::vector<float> readFloats(poplar::Engine &engine, const std::string &handle,
                                     const poplar::Type &type, const poplar::Target &target, std::size_t n) {
  std::vector<float> values(n);
  if (type == poplar::HALF) {
    std::vector<std::uint16_t> bits(n);
    engine.readTensor(handle, bits.data(), bits.data() + bits.size());
    poplar::copyDeviceHalfToFloat(target, bits.data(), values.data(), n);
  } else {
    engine.readTensor(handle, values.data(), values.data() + values.size());
  }
  return values;
}

/// Compares `got` with `want` element by element: |got - want| <= abs + rel * |want|.
template <class Want>
void requireClose(const std::vector<float> &got, const std::vector<Want> &want, double rel, double abs,
                  const std::string &what) {
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
