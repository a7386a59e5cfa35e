// Copyright (c) Aspen contributors.
// Unit tests: poplar::Type (spellings, sizes, equivalent_device_type) and the
// binary16 conversions (util/Half), checked exhaustively against an independent
// reference: the compiler's own _Float16 arithmetic where it has one, else an exact
// software conversion (test/support/HalfReference.hpp).
#include "HalfReference.hpp"
#include "util/Half.hpp"
#include "util/HostConvert.hpp"

#include <poplar/Target.hpp>
#include <poplar/Type.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <unordered_set>
#include <vector>

using namespace poplar;
using aspen::util::doubleToHalf;
using aspen::util::floatToHalf;
using aspen::util::halfToDouble;
using aspen::util::halfToFloat;

namespace {

using aspen::test::referenceHalfBits;
using aspen::test::referenceHalfValue;
bool isNaNBits(std::uint16_t bits) {
  return (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff) != 0;
}

} // namespace

TEST_CASE("Type spellings and sizes", "[types]") {
  struct Expected {
    const Type *type;
    const char *name;
    std::size_t size;
  };
  const Expected expected[] = {
      {&BOOL, "bool", 1},
      {&CHAR, "char", 1},
      {&SIGNED_CHAR, "signed char", 1},
      {&UNSIGNED_CHAR, "unsigned char", 1},
      {&SHORT, "short", 2},
      {&UNSIGNED_SHORT, "unsigned short", 2},
      {&INT, "int", 4},
      {&UNSIGNED_INT, "unsigned int", 4},
      {&LONG, "long", sizeof(long)},
      {&UNSIGNED_LONG, "unsigned long", sizeof(unsigned long)},
      {&LONGLONG, "long long", 8},
      {&UNSIGNED_LONGLONG, "unsigned long long", 8},
      {&HALF, "half", 2},
      {&FLOAT, "float", 4},
      {&DOUBLE, "double", 8},
      {&QUARTER, "quarter", 1},
      {&QUARTER_METADATA, "quarter_metadata", 1},
  };
  std::unordered_set<Type> seen;
  for (const auto &e : expected) {
    INFO(e.name);
    CHECK(e.type->toString() == StringRef(e.name));
    CHECK(e.type->size() == e.size);
    CHECK(e.type->valid());
    std::ostringstream os;
    os << *e.type;
    CHECK(os.str() == e.name);
    CHECK(seen.insert(*e.type).second); // all distinct, hashable
  }
  CHECK_FALSE(Type().valid());
  CHECK(FLOAT == Type(Type::Id::Float));
  CHECK(FLOAT != HALF);
}

TEST_CASE("Type classification", "[types]") {
  CHECK(FLOAT.isFloatingPoint());
  CHECK(HALF.isFloatingPoint());
  CHECK(DOUBLE.isFloatingPoint());
  CHECK_FALSE(INT.isFloatingPoint());
  CHECK(INT.isIntegral());
  CHECK(UNSIGNED_LONGLONG.isIntegral());
  CHECK(BOOL.isIntegral());
  CHECK_FALSE(FLOAT.isIntegral());
  CHECK(INT.isSigned());
  CHECK(SHORT.isSigned());
  CHECK_FALSE(UNSIGNED_INT.isSigned());
  CHECK_FALSE(BOOL.isSigned());
  CHECK(FLOAT.isSigned());
}

TEST_CASE("equivalent_device_type maps host types", "[types]") {
  CHECK(equivalent_device_type<bool>().value == BOOL);
  CHECK(equivalent_device_type<char>().value == CHAR);
  CHECK(equivalent_device_type<signed char>().value == SIGNED_CHAR);
  CHECK(equivalent_device_type<unsigned char>().value == UNSIGNED_CHAR);
  CHECK(equivalent_device_type<short>().value == SHORT);
  CHECK(equivalent_device_type<unsigned short>().value == UNSIGNED_SHORT);
  CHECK(equivalent_device_type<int>().value == INT);
  CHECK(equivalent_device_type<unsigned>().value == UNSIGNED_INT);
  CHECK(equivalent_device_type<long>().value == LONG);
  CHECK(equivalent_device_type<unsigned long>().value == UNSIGNED_LONG);
  CHECK(equivalent_device_type<long long>().value == LONGLONG);
  CHECK(equivalent_device_type<unsigned long long>().value == UNSIGNED_LONGLONG);
  CHECK(equivalent_device_type<float>().value == FLOAT);
  CHECK(equivalent_device_type<double>().value == DOUBLE);
}

TEST_CASE("half to float is exact for all 65536 bit patterns", "[half]") {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float reference = static_cast<float>(referenceHalfValue(h));
    const float actual = halfToFloat(h);
    if (isNaNBits(h)) {
      REQUIRE(std::isnan(actual));
      REQUIRE(std::signbit(actual) == std::signbit(reference));
      continue;
    }
    INFO("half bits 0x" << std::hex << bits);
    REQUIRE(std::bit_cast<std::uint32_t>(actual) == std::bit_cast<std::uint32_t>(reference));
    REQUIRE(halfToDouble(h) == static_cast<double>(reference));
  }
}

TEST_CASE("float to half round-trips every half and rounds midpoints to even", "[half]") {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float value = halfToFloat(h);
    if (isNaNBits(h)) {
      REQUIRE(isNaNBits(floatToHalf(value)));
      REQUIRE(isNaNBits(doubleToHalf(value)));
      continue;
    }
    INFO("half bits 0x" << std::hex << bits);
    REQUIRE(floatToHalf(value) == h);
    REQUIRE(doubleToHalf(value) == h);
    // Midpoint to the next half of larger magnitude (finite halves only), and
    // values just either side of it, against the reference's rounding.
    const std::uint16_t next = static_cast<std::uint16_t>(h + 1);
    if ((h & 0x7fff) >= 0x7c00 || (next & 0x7fff) > 0x7c00 || (next & 0x8000) != (h & 0x8000))
      continue;
    const double a = halfToDouble(h);
    const double b = (next & 0x7fff) == 0x7c00 ? std::copysign(65536.0, a) : halfToDouble(next);
    const double mid = (a + b) / 2; // exact in double (and in float)
    const double probes[] = {mid, std::nextafter(mid, 0.0), std::nextafter(mid, 2 * mid)};
    for (double probe : probes) {
      REQUIRE(doubleToHalf(probe) == referenceHalfBits(probe));
      const float f = static_cast<float>(probe);
      REQUIRE(floatToHalf(f) == referenceHalfBits(f));
    }
  }
}

TEST_CASE("float and double to half match the reference on random and special inputs", "[half]") {
  std::mt19937_64 rng(1234);
  for (int i = 0; i < 1000000; ++i) {
    const auto fbits = static_cast<std::uint32_t>(rng());
    const float f = std::bit_cast<float>(fbits);
    const std::uint16_t expected = referenceHalfBits(f);
    const std::uint16_t actual = floatToHalf(f);
    if (std::isnan(f)) {
      REQUIRE(isNaNBits(actual));
      continue;
    }
    INFO("float bits 0x" << std::hex << fbits);
    REQUIRE(actual == expected);
  }
  // Doubles concentrated in and around half's range (exponents -30..20).
  std::uniform_int_distribution<int> exponent(-30, 20);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 1000000; ++i) {
    const double d = std::ldexp(mantissa(rng), exponent(rng)) * ((rng() & 1) ? -1 : 1);
    INFO("double " << d);
    REQUIRE(doubleToHalf(d) == referenceHalfBits(d));
  }
  const double specials[] = {0.0,
                             -0.0,
                             65504.0,
                             65519.99,
                             65520.0,
                             -65520.0,
                             1e300,
                             std::numeric_limits<double>::denorm_min(),
                             std::ldexp(1.0, -24),
                             std::ldexp(1.0, -25),
                             std::nextafter(std::ldexp(1.0, -25), 1.0),
                             std::ldexp(1.5, -25),
                             std::ldexp(1.0, -14),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (double d : specials) {
    INFO("double " << d);
    REQUIRE(doubleToHalf(d) == referenceHalfBits(d));
  }
  REQUIRE(isNaNBits(doubleToHalf(std::numeric_limits<double>::quiet_NaN())));
}

TEST_CASE("copyFloatToDeviceHalf and friends convert arrays, unaligned too", "[half]") {
  const Target target = Target::createCPUTarget();
  const std::vector<float> values = {0.0f, 1.0f, -2.5f, 0.1f, 65504.0f, 1e-7f, 70000.0f};
  std::vector<unsigned char> buffer(1 + 2 * values.size());
  copyFloatToDeviceHalf(target, values.data(), buffer.data() + 1, values.size());
  std::vector<float> back(values.size());
  copyDeviceHalfToFloat(target, buffer.data() + 1, back.data(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint16_t bits;
    std::memcpy(&bits, buffer.data() + 1 + 2 * i, 2);
    CHECK(bits == referenceHalfBits(values[i]));
    CHECK(back[i] == static_cast<float>(referenceHalfValue(referenceHalfBits(values[i]))));
  }
  const std::vector<double> doubles = {0.333333333333, -1e-5, 3.0e4};
  std::vector<std::uint16_t> halves(doubles.size());
  copyDoubleToDeviceHalf(target, doubles.data(), halves.data(), doubles.size());
  std::vector<double> doublesBack(doubles.size());
  copyDeviceHalfToDouble(target, halves.data(), doublesBack.data(), doubles.size());
  for (std::size_t i = 0; i < doubles.size(); ++i) {
    CHECK(halves[i] == referenceHalfBits(doubles[i]));
    CHECK(doublesBack[i] == referenceHalfValue(referenceHalfBits(doubles[i])));
  }
}

TEST_CASE("host to device conversion saturates and rounds", "[types]") {
  const float floats[] = {1.9f, -1.9f, 3e10f, -3e10f, std::numeric_limits<float>::quiet_NaN()};
  int ints[5];
  aspen::util::convertHostToDevice(FLOAT, floats, INT, ints, 5);
  CHECK(ints[0] == 1);
  CHECK(ints[1] == -1);
  CHECK(ints[2] == std::numeric_limits<int>::max());
  CHECK(ints[3] == std::numeric_limits<int>::min());
  CHECK(ints[4] == 0);
  const int small[] = {0, 3, -7};
  bool bools[3];
  aspen::util::convertHostToDevice(INT, small, BOOL, bools, 3);
  CHECK_FALSE(bools[0]);
  CHECK(bools[1]);
  CHECK(bools[2]);
  std::uint16_t halves[3];
  aspen::util::convertHostToDevice(INT, small, HALF, halves, 3);
  CHECK(halves[1] == referenceHalfBits(3.0f));
  double back[3];
  aspen::util::convertDeviceToHost(HALF, halves, DOUBLE, back, 3);
  CHECK(back[2] == -7.0);
  CHECK_THROWS_AS(aspen::util::convertHostToDevice(FLOAT, floats, QUARTER, halves, 1), type_error);
}
