// Copyright (c) Aspen contributors.
// Issue 26 item 3 (in part): popfloat's headers as HPC programs include them for half casts —
// popfloat/experimental/CastToHalf.hpp with libpopfloat — against a host reference that decodes
// every half bit pattern by its formula; the gfloat enumerations' names; addCodelets.
#include <popfloat/experimental/CastToHalf.hpp>
#include <popfloat/experimental/GfloatExpr.hpp>
#include <popfloat/experimental/GfloatExprUtil.hpp>
#include <popfloat/experimental/codelets.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/codelets.hpp>
#include <poputil/exceptions.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

using namespace popfloat::experimental;

namespace {

/// The value of half bits `h` by IEEE 754's formula: (-1)^s * 2^(e-15) * 1.m, denormals
/// 2^-14 * 0.m, e = 31 infinity or NaN.
double decodeHalf(std::uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  if (e == 31)
    return m ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  if (e == 0)
    return sign * std::ldexp(m / 1024.0, -14);
  return sign * std::ldexp(1.0 + m / 1024.0, e - 15);
}

std::uint32_t bitsOf(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

} // namespace

TEST_CASE("popfloat halfToSingle decodes every half exactly", "[compat][popfloat]") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const double want = decodeHalf(static_cast<std::uint16_t>(h));
    const float got = halfToSingle(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      CHECK(std::isnan(got));
    } else if (got != want) {
      FAIL("half 0x" << std::hex << h << " decoded as " << got << ", expected " << want);
    }
  }
  // Signed zeros keep their sign.
  CHECK(bitsOf(halfToSingle(0x8000)) == 0x80000000u);
}

TEST_CASE("popfloat singleToHalf rounds to nearest even and saturates finite overflow",
          "[compat][popfloat]") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const std::uint16_t bits = static_cast<std::uint16_t>(h);
    const double v = decodeHalf(bits);
    if (std::isnan(v)) {
      const float nan = halfToSingle(bits);
      CHECK(std::isnan(decodeHalf(singleToHalf(nan))));
      continue;
    }
    // Every half goes back to itself.
    if (singleToHalf(float(v)) != bits)
      FAIL("half 0x" << std::hex << h << " did not round-trip");
    // Halfway to the next half of larger magnitude rounds to the one with an even mantissa.
    const std::uint16_t next = static_cast<std::uint16_t>(bits + 1);
    if ((bits & 0x7FFF) < 0x7BFF) {
      const double mid = (v + decodeHalf(next)) / 2;
      const std::uint16_t even = (bits & 1) ? next : bits;
      if (singleToHalf(float(mid)) != even)
        FAIL("midpoint above half 0x" << std::hex << h << " did not round to even");
      // Just above the midpoint rounds away, just below rounds back.
      const float above = std::nextafter(float(mid), float(decodeHalf(next)));
      const float below = std::nextafter(float(mid), float(v));
      if (float(mid) == float(mid) && above != float(mid) && below != float(mid)) {
        CHECK(singleToHalf(above) == next);
        CHECK(singleToHalf(below) == bits);
      }
    }
  }
  // Beyond half's range: the largest half of the sign, with or without NaN-on-overflow.
  for (bool nanoo : {false, true}) {
    CHECK(singleToHalf(65504.0f, nanoo) == 0x7BFF);
    CHECK(singleToHalf(65520.0f, nanoo) == 0x7BFF);
    CHECK(singleToHalf(1e10f, nanoo) == 0x7BFF);
    CHECK(singleToHalf(-1e30f, nanoo) == 0xFBFF);
    CHECK(singleToHalf(std::numeric_limits<float>::max(), nanoo) == 0x7BFF);
  }
  CHECK(singleToHalf(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(singleToHalf(-std::numeric_limits<float>::infinity()) == 0xFC00);
  CHECK(std::isnan(decodeHalf(singleToHalf(std::numeric_limits<float>::quiet_NaN()))));
  // Below half the smallest denormal (2^-25): zero of the sign; just above it: the denormal.
  CHECK(singleToHalf(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(singleToHalf(-std::ldexp(1.0f, -26)) == 0x8000);
  CHECK(singleToHalf(std::ldexp(1.0f, -25)) == 0x0000); // the tie goes to even (zero)
  CHECK(singleToHalf(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(singleToHalf(0.1f) == 0x2E66);
  CHECK(singleToHalf(-2.5f) == 0xC100);
}

TEST_CASE("popfloat's enumerations have their names; addCodelets is accepted", "[compat][popfloat]") {
  CHECK(roundTypeToString(RoundType::RN) == "RN");
  CHECK(roundTypeToString(RoundType::SX) == "SX");
  CHECK(formatTypeToString(FormatType::QUANTISED_FP32) == "QUANTISED_FP32");
  CHECK(formatTypeToString(FormatType::ENABLE_DENORM_GF16) == "ENABLE_DENORM_GF16");
  CHECK(srDensityTypeToString(SRDensityType::TRUNCATED_LOGIT_NORMAL) == "TRUNCATED_LOGIT_NORMAL");
  CHECK(specTypeToString(SpecType::INT16) == "INT16");
  CHECK(specTypeToPoplarType(SpecType::FP16) == poplar::HALF);
  CHECK(specTypeToPoplarType(SpecType::INT8) == poplar::CHAR);
  CHECK(poputil::templateVertex("popfloat::experimental::CastToGfloat32", poplar::FLOAT, RoundType::RZ) ==
        "popfloat::experimental::CastToGfloat32<float,popfloat::experimental::RoundType::RZ>");
  CHECK_THROWS_AS(specTypeToPoplarType(SpecType::AUTO), poputil::poplibs_error);
  CHECK_THROWS_AS(roundTypeToString(static_cast<RoundType>(99)), poputil::poplibs_error);

  poplar::IPUModel model;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  CHECK_NOTHROW(popfloat::experimental::addCodelets(graph));
}
