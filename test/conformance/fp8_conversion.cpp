// Copyright (c) Aspen contributors.
// Conformance: poplar/Quarter.hpp and poplar/TypeConversion.hpp (issue 15 item 8):
// QuarterMetadata's API and binary form, and host conversion of both fp8 formats
// with scales, checked against an independent reference (support/QuarterReference.hpp)
// at the corner cases: every bit pattern, midpoints (ties to even), subnormals,
// underflow, saturation and NaN on overflow, infinities and NaN.
#include "QuarterReference.hpp"

#include <poplar/Quarter.hpp>
#include <poplar/Type.hpp>
#include <poplar/TypeConversion.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

using poplar::QuarterMetadata;
using Format = poplar::QuarterMetadata::Format;

namespace {

aspen::test::QuarterFormat refFormat(Format f) {
  return f == Format::F143 ? aspen::test::f143() : aspen::test::f152();
}

const int kScales[] = {-32, -7, -1, 0, 1, 5, 31};

std::vector<float> decodeAll(const QuarterMetadata &md) {
  std::vector<std::uint8_t> bits(256);
  for (unsigned i = 0; i < 256; ++i)
    bits[i] = static_cast<std::uint8_t>(i);
  std::vector<float> out(256);
  poplar::convertFromDeviceType(poplar::QUARTER, md, bits.data(), out);
  return out;
}

std::vector<std::uint8_t> encode(const QuarterMetadata &md, const std::vector<double> &xs,
                                 bool nanOnOverflow = true) {
  std::vector<std::uint8_t> out(xs.size());
  poplar::convertToDeviceType(poplar::QUARTER, md, xs, out.data(), nanOnOverflow);
  return out;
}

} // namespace

TEST_CASE("QuarterMetadata: format, scale and binary round trip", "[fp8]") {
  QuarterMetadata dflt;
  CHECK(dflt.getFormat() == Format::F143);
  CHECK(dflt.getScale() == 0);
  CHECK(dflt.getBinary() == 0x80);
  for (Format f : {Format::F143, Format::F152})
    for (int s = -32; s <= 31; ++s) {
      QuarterMetadata md(f, static_cast<std::int8_t>(s));
      CHECK(md.getFormat() == f);
      CHECK(md.getScale() == s);
      const std::uint8_t b = md.getBinary();
      CHECK((b & 0x3f) == (static_cast<unsigned>(s) & 0x3f));
      CHECK((b >> 6) == (f == Format::F143 ? 2u : 0u)); // bit 7: F143, as PopLibs reads it
      CHECK(QuarterMetadata(b) == md);
    }
  CHECK(QuarterMetadata(Format::F152, 3) != QuarterMetadata(Format::F143, 3));
  std::ostringstream os;
  os << QuarterMetadata(Format::F152, -4);
  CHECK(os.str() == "F152 scale -4");
  CHECK(poplar::QUARTER.requiresMetadata());
  CHECK(!poplar::QUARTER_METADATA.requiresMetadata());
  CHECK(!poplar::FLOAT.requiresMetadata());
}

TEST_CASE("fp8 decode: every bit pattern of both formats at several scales", "[fp8]") {
  for (Format f : {Format::F143, Format::F152})
    for (int s : kScales) {
      QuarterMetadata md(f, static_cast<std::int8_t>(s));
      const auto values = decodeAll(md);
      for (unsigned b = 0; b < 256; ++b) {
        INFO(md << " bits 0x" << std::hex << b);
        const double ref = aspen::test::quarterValue(static_cast<std::uint8_t>(b), refFormat(f), s);
        if (std::isnan(ref)) {
          CHECK(std::isnan(values[b]));
        } else {
          CHECK(values[b] == static_cast<float>(ref));
          CHECK(static_cast<double>(static_cast<float>(ref)) == ref); // exact in float
        }
      }
      // The range as the formats define it.
      const double largest = f == Format::F143 ? 240.0 : 57344.0;
      const double smallest = f == Format::F143 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -17);
      CHECK(values[0x7f] == static_cast<float>(std::ldexp(largest, s)));
      CHECK(values[0x01] == static_cast<float>(std::ldexp(smallest, s)));
      CHECK(values[0xff] == -values[0x7f]);
      CHECK(values[0x00] == 0.0f);
      CHECK(!std::signbit(values[0x00]));
    }
}

TEST_CASE("fp8 encode: values, midpoints and near-midpoints round to nearest even", "[fp8]") {
  for (Format f : {Format::F143, Format::F152})
    for (int s : kScales) {
      QuarterMetadata md(f, static_cast<std::int8_t>(s));
      const auto rf = refFormat(f);
      std::vector<double> xs;
      for (int b = 0; b <= 0x7f; ++b) {
        const double v = aspen::test::quarterValue(static_cast<std::uint8_t>(b), rf, s);
        const double next = b < 0x7f ? aspen::test::quarterValue(static_cast<std::uint8_t>(b + 1), rf, s)
                                     : std::ldexp(1.0, (1 << rf.exponentBits) - rf.bias + s);
        const double mid = (v + next) / 2;
        for (double x : {v, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300), (v + mid) / 2,
                         (mid + next) / 2}) {
          xs.push_back(x);
          xs.push_back(-x);
        }
      }
      const auto got = encode(md, xs);
      for (std::size_t i = 0; i < xs.size(); ++i) {
        INFO(md << " x = " << xs[i]);
        CHECK(static_cast<unsigned>(got[i]) == aspen::test::quarterNearest(xs[i], rf, s));
      }
    }
}

TEST_CASE("fp8 encode: float inputs, subnormals, underflow, zeros", "[fp8]") {
  for (Format f : {Format::F143, Format::F152}) {
    QuarterMetadata md(f, -3);
    const auto rf = refFormat(f);
    const double minSub = aspen::test::quarterValue(1, rf, -3);
    std::vector<float> xs = {0.0f,
                             -0.0f,
                             static_cast<float>(minSub),
                             static_cast<float>(minSub / 2),         // tie with zero: to even (zero)
                             static_cast<float>(minSub / 2 * 1.001), // just above: min subnormal
                             static_cast<float>(-minSub / 4),        // underflows to +0 (0x80 is NaN)
                             static_cast<float>(minSub * 3 / 2),     // tie 1|2: to 2 (even)
                             static_cast<float>(minSub * 5 / 2),     // tie 2|3: to 2
                             std::numeric_limits<float>::denorm_min(),
                             1.0f,
                             -1.5f,
                             3.14159f};
    std::vector<std::uint8_t> got(xs.size());
    poplar::convertToDeviceType(poplar::QUARTER, md, xs, got.data());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      INFO(md << " x = " << xs[i]);
      CHECK(static_cast<unsigned>(got[i]) == aspen::test::quarterNearest(xs[i], rf, -3));
    }
    CHECK(got[1] == 0x00); // -0 is stored as +0
    CHECK(got[3] == 0x00);
    CHECK(got[4] == 0x01);
    CHECK(got[5] == 0x00);
    CHECK(got[6] == 0x02);
    CHECK(got[7] == 0x02);
  }
}

TEST_CASE("fp8 encode: overflow gives NaN, or saturates when asked; infinities and NaN", "[fp8]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (Format f : {Format::F143, Format::F152})
    for (int s : {-4, 0, 9}) {
      QuarterMetadata md(f, static_cast<std::int8_t>(s));
      const auto rf = refFormat(f);
      const double largest = aspen::test::quarterValue(0x7f, rf, s);
      const double beyond = std::ldexp(1.0, (1 << rf.exponentBits) - rf.bias + s);
      const double tie = (largest + beyond) / 2; // ties to the (even) next binade: overflow
      const std::vector<double> xs = {largest,     std::nextafter(tie, 0.0), tie, beyond * 4, inf, -inf, -tie,
                                      std::nan("")};
      const auto nan = encode(md, xs, true);
      const auto sat = encode(md, xs, false);
      INFO(md);
      CHECK(nan[0] == 0x7f);
      CHECK(nan[1] == 0x7f);
      CHECK(nan[2] == 0x80);
      CHECK(nan[3] == 0x80);
      CHECK(nan[4] == 0x80);
      CHECK(nan[5] == 0x80);
      CHECK(nan[6] == 0x80);
      CHECK(nan[7] == 0x80);
      CHECK(sat[2] == 0x7f);
      CHECK(sat[3] == 0x7f);
      CHECK(sat[4] == 0x7f);
      CHECK(sat[5] == 0xff);
      CHECK(sat[6] == 0xff);
      CHECK(sat[7] == 0x80); // NaN stays NaN
      for (std::size_t i = 0; i < xs.size(); ++i) {
        CHECK(static_cast<unsigned>(nan[i]) == aspen::test::quarterNearest(xs[i], rf, s, true));
        CHECK(static_cast<unsigned>(sat[i]) == aspen::test::quarterNearest(xs[i], rf, s, false));
      }
    }
}

TEST_CASE("fp8 host conversion of other types still goes through convertToDeviceType", "[fp8]") {
  const std::vector<float> xs = {1.0f, -2.5f, 65504.0f};
  std::vector<std::uint16_t> half(xs.size());
  poplar::convertToDeviceType(poplar::HALF, xs, half.data());
  CHECK(half[0] == 0x3c00);
  CHECK(half[1] == 0xc100);
  CHECK(half[2] == 0x7bff);
  std::vector<float> back(xs.size());
  poplar::convertFromDeviceType(poplar::HALF, half.data(), back);
  CHECK(back == xs);
}
