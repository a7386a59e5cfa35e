// Copyright (c) Aspen contributors.
// The headers codelets see (vertices/include), compiled into a host program:
// the vertex ABI layout of every field type (docs/internals.md, "Host layout of
// vertex fields"), `half` against an independent IEEE binary16 reference, and
// the ipudef.h vector types.
#include "codelets/CodeletAbi.h"

#include <ipu_builtins.h>
#include <ipu_intrinsics>
#include <ipudef.h>
#include <poplar/HalfFloat.hpp>
#include <poplar/IeeeHalf.hpp>
#include <poplar/Quarter.hpp> // the host header too: no clash with QuarterFloat.hpp (docs/fp8.md)
#include <poplar/TileConstants.hpp>
#include <poplar/Vertex.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

using namespace poplar;

namespace {

// ---- the ABI layout ----------------------------------------------------------------

template <class F> void checkPointerAndSize() {
  static_assert(sizeof(F) == 16, "pointer + 32-bit size, padded to 16 bytes");
  static_assert(alignof(F) == 8, "pointer aligned");
  static_assert(std::is_trivially_default_constructible<F>::value, "no constructor runs on a vertex");
  static_assert(std::is_standard_layout<F>::value, "plain layout");
}

TEST_CASE("codelets_headers: every field type has the documented host layout", "[codelets][abi]") {
  static_assert(sizeof(Input<float>) == 8 && sizeof(Output<half>) == 8 && sizeof(InOut<int>) == 8, "T *ptr");
  static_assert(std::is_trivially_default_constructible<Input<float>>::value, "trivial");
  static_assert(std::is_trivially_default_constructible<InOut<unsigned>>::value, "trivial");
  checkPointerAndSize<Input<Vector<float>>>();
  checkPointerAndSize<Output<Vector<half, VectorLayout::ONE_PTR, 8>>>();
  checkPointerAndSize<InOut<Vector<int, VectorLayout::SHORT_SPAN>>>();
  checkPointerAndSize<Input<Vector<float, VectorLayout::SCALED_PTR32, 4>>>();
  checkPointerAndSize<Input<Vector<float, VectorLayout::SCALED_PTR64, 8>>>();
  checkPointerAndSize<Input<Vector<float, VectorLayout::SCALED_PTR128, 16>>>();
  checkPointerAndSize<Input<Vector<float, VectorLayout::COMPACT_PTR, 8, true>>>();
  checkPointerAndSize<Vector<unsigned>>();
  checkPointerAndSize<Vector<int, VectorLayout::ONE_PTR>>();
  checkPointerAndSize<Vector<Input<Vector<float>>>>();
  checkPointerAndSize<Vector<Output<Vector<float>>, VectorLayout::ONE_PTR>>();
  checkPointerAndSize<Vector<Input<float>>>();
  checkPointerAndSize<Input<VectorList<float, VectorListLayout::DELTAN>>>();
  checkPointerAndSize<InOut<VectorList<int, VectorListLayout::DELTANELEMENTS, 8>>>();
  checkPointerAndSize<Output<VectorList<half, VectorListLayout::COMPACT_DELTAN>>>();
  static_assert(sizeof(half) == 2 && alignof(half) == 2, "binary16 storage");
  static_assert(std::is_trivially_default_constructible<half>::value, "trivial");
  static_assert(std::is_trivially_copyable<half>::value, "trivially copyable");
  static_assert(MultiVertex::numWorkers() == 6 && CTXT_WORKERS == 6, "six workers");
  // An edge's pointer is the first member; a vector's size follows at byte 8.
  float data[3] = {1, 2, 3};
  Input<Vector<float>> in;
  const float *p = data;
  const std::uint32_t n = 3;
  std::memcpy(reinterpret_cast<char *>(&in), &p, 8);
  std::memcpy(reinterpret_cast<char *>(&in) + 8, &n, 4);
  REQUIRE(in.size() == 3);
  REQUIRE(in[2] == 3.0f);
  float sum = 0;
  for (float x : in)
    sum += x;
  REQUIRE(sum == 6.0f);
  REQUIRE(in.data() == data);
}

TEST_CASE("codelets_headers: edges read and write through their pointers", "[codelets][abi]") {
  int value = 7;
  Input<int> in;
  in.aspenPtr_ = &value;
  REQUIRE(*in == 7);
  REQUIRE(static_cast<const int &>(in) == 7);
  Output<int> out;
  out.aspenPtr_ = &value;
  *out = 9;
  REQUIRE(value == 9);
  out = 11;
  REQUIRE(value == 11);
  InOut<int> io;
  io.aspenPtr_ = &value;
  *io += 1;
  REQUIRE(value == 12);

  // A jagged list: two rows of lengths 2 and 3.
  float r0[2] = {1, 2}, r1[3] = {3, 4, 5};
  Input<Vector<float>> rows[2];
  const float *ptrs[2] = {r0, r1};
  const std::uint32_t sizes[2] = {2, 3};
  for (int i = 0; i < 2; ++i) {
    std::memcpy(reinterpret_cast<char *>(&rows[i]), &ptrs[i], 8);
    std::memcpy(reinterpret_cast<char *>(&rows[i]) + 8, &sizes[i], 4);
  }
  Vector<Input<Vector<float>>> list;
  Input<Vector<float>> *rowsPtr = rows;
  const std::uint32_t two = 2;
  std::memcpy(reinterpret_cast<char *>(&list), &rowsPtr, 8);
  std::memcpy(reinterpret_cast<char *>(&list) + 8, &two, 4);
  REQUIRE(list.size() == 2);
  REQUIRE(list[1].size() == 3);
  REQUIRE(list[1][2] == 5.0f);
}

// ---- half against an independent reference ------------------------------------------

/// The value of binary16 bits, from the definition (sign, exponent, fraction).
double referenceHalfValue(std::uint16_t bits) {
  const int sign = bits >> 15 ? -1 : 1;
  const int exponent = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  if (exponent == 0)
    return sign * std::ldexp(static_cast<double>(fraction), -24);
  if (exponent == 31)
    return fraction ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(static_cast<double>(1024 + fraction), exponent - 25);
}

/// The non-negative finite halves in increasing order, with their bits.
struct HalfTable {
  std::vector<double> values;
  std::vector<std::uint16_t> bits;
  HalfTable() {
    for (unsigned b = 0; b < 0x7c00; ++b) {
      values.push_back(referenceHalfValue(static_cast<std::uint16_t>(b)));
      bits.push_back(static_cast<std::uint16_t>(b));
    }
  }
};
const HalfTable &halfTable() {
  static HalfTable t;
  return t;
}

/// Round to nearest, ties to even, by search in the table of all halves.
std::uint16_t referenceRound(double x) {
  const HalfTable &t = halfTable();
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  const double maxHalf = 65504.0, overflow = 65520.0; // 65520 is the midpoint to 2^16
  if (a >= overflow)
    return sign | 0x7c00;
  if (a >= maxHalf)
    return sign | 0x7bff;
  const auto it = std::upper_bound(t.values.begin(), t.values.end(), a);
  const std::size_t hi = static_cast<std::size_t>(it - t.values.begin());
  const std::size_t lo = hi - 1;
  const double dlo = a - t.values[lo], dhi = t.values[hi] - a;
  std::size_t pick = dlo < dhi ? lo : dhi < dlo ? hi : (t.bits[lo] % 2 == 0 ? lo : hi);
  return sign | t.bits[pick];
}

std::uint16_t bitsOf(half h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

TEST_CASE("codelets_headers: half to float is exact for every bit pattern", "[codelets][half]") {
  for (unsigned b = 0; b < 0x10000; ++b) {
    const double expected = referenceHalfValue(static_cast<std::uint16_t>(b));
    const float viaClass = half::fromBits(static_cast<std::uint16_t>(b));
    const float viaSoftware = aspen_detail::softHalfToFloat(static_cast<std::uint16_t>(b));
    if (std::isnan(expected)) {
      REQUIRE(std::isnan(viaClass));
      REQUIRE(std::isnan(viaSoftware));
    } else {
      REQUIRE(static_cast<double>(viaClass) == expected);
      REQUIRE(static_cast<double>(viaSoftware) == expected);
      REQUIRE(std::signbit(viaClass) == std::signbit(expected));
    }
  }
}

TEST_CASE("codelets_headers: float to half rounds to nearest even", "[codelets][half]") {
  const HalfTable &t = halfTable();
  std::vector<float> samples;
  for (std::size_t i = 0; i + 1 < t.values.size(); ++i) {
    const float v = static_cast<float>(t.values[i]);
    const float mid = static_cast<float>((t.values[i] + t.values[i + 1]) / 2); // exact in float
    samples.insert(samples.end(), {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)});
  }
  samples.insert(samples.end(),
                 {65504.0f, 65519.0f, 65520.0f, 65536.0f, 1e30f, 1e-30f, 2.9802322e-8f, 5.9604645e-8f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()});
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> anyBits(0, 0x7f7fffff);
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t b = anyBits(rng);
    float f;
    std::memcpy(&f, &b, 4);
    samples.push_back(f);
  }
  for (float s : samples) {
    for (float f : {s, -s}) {
      const std::uint16_t expected = referenceRound(f);
      INFO("value " << f);
      REQUIRE(bitsOf(half(f)) == expected);
      REQUIRE(aspen_detail::softFloatToHalf(f) == expected);
    }
  }
  // Doubles round once, directly to half (no double rounding through float).
  const double justAboveTie = (t.values[1000] + t.values[1001]) / 2 + 1e-12;
  REQUIRE(bitsOf(half(justAboveTie)) == referenceRound(justAboveTie));
  REQUIRE(std::isnan(static_cast<float>(half(std::nanf("")))));
}

TEST_CASE("codelets_headers: poplar::IeeeHalf as popfloat's codelets use it", "[codelets][half]") {
  // Every bit pattern reads back as the reference's value and classifies as IEEE binary16 does.
  for (unsigned b = 0; b < 0x10000; ++b) {
    const IeeeHalf h = IeeeHalf::fromBits(static_cast<std::uint16_t>(b));
    const double expected = referenceHalfValue(static_cast<std::uint16_t>(b));
    INFO("bits " << b);
    REQUIRE(h.bit16() == b);
    REQUIRE(h.isNaN() == std::isnan(expected));
    REQUIRE(h.isInf() == std::isinf(expected));
    REQUIRE(h.isZero() == (expected == 0.0));
    if (!std::isnan(expected))
      REQUIRE(static_cast<double>(static_cast<float>(h)) == expected);
  }
  // From a float: round to nearest even, as the reference rounds.
  for (float f : {0.1f, -2.5f, 65519.0f, 65520.0f, 1e-7f, 3.14159f, -0.0f})
    REQUIRE(IeeeHalf(f).bit16() == referenceRound(f));
  CHECK(IeeeHalf(1.0f) == IeeeHalf::fromBits(0x3c00));
  CHECK(IeeeHalf(0.0f) == IeeeHalf(-0.0f)); // compared as values
  CHECK(IeeeHalf(1.0f) != IeeeHalf(2.0f));
}

TEST_CASE("codelets_headers: half arithmetic rounds each operation", "[codelets][half]") {
  const half a = 1.5f, b = 2;
  const half c = a * b;
  static_assert(std::is_same<decltype(a * b), half>::value, "half op half is half");
  static_assert(std::is_same<decltype(a * 2.0f), float>::value, "half op float is float");
  static_assert(std::is_same<decltype(a + 1), half>::value, "half op int is half");
  REQUIRE(static_cast<float>(c) == 3.0f);
  // 2049 is not a half: 2048 + 1 rounds to even (2048).
  REQUIRE(static_cast<float>(half(2048.0f) + half(1.0f)) == 2048.0f);
  REQUIRE(static_cast<float>(half(2048.0f) + half(3.0f)) == 2052.0f);
  half x = 0.25_h;
  x += 1;
  REQUIRE(static_cast<float>(x) == 1.25f);
  REQUIRE(-x < 0);
  REQUIRE(half(65504.0f) * half(2.0f) == std::numeric_limits<half>::infinity());
  REQUIRE(static_cast<float>(std::numeric_limits<half>::max()) == 65504.0f);
  REQUIRE(static_cast<float>(std::numeric_limits<half>::epsilon()) == 0.0009765625f);
  REQUIRE(static_cast<float>(std::numeric_limits<half>::denorm_min()) == std::ldexp(1.0f, -24));
  REQUIRE(std::sqrt(half(4.0f)) == 2.0f);
}

// ---- ipudef.h ------------------------------------------------------------------------

TEST_CASE("codelets_headers: ipudef.h vector types are element-wise", "[codelets][ipudef]") {
  static_assert(sizeof(float2) == 8 && sizeof(float4) == 16 && sizeof(int2) == 8 && sizeof(half2) == 4 &&
                    sizeof(half4) == 8 && alignof(half4) == 8 && sizeof(short4) == 8 && sizeof(char4) == 4 &&
                    sizeof(uint2) == 8 && sizeof(ushort2) == 4,
                "IPU vector sizes");
  const float2 a = {1.0f, 2.0f}, b = {3.0f, 5.0f};
  const float2 c = a * b + a;
  REQUIRE(c[0] == 4.0f);
  REQUIRE(c[1] == 12.0f);
  const int2 i = {7, -3};
  const int2 j = i / 2;
  REQUIRE(j[0] == 3);
  REQUIRE(j[1] == -1);
  const half4 h = {half(1.0f), half(2.0f), half(3.0f), half(2048.0f)};
  const half4 g = h * half(2.0f) + h;
  REQUIRE(static_cast<float>(g[0]) == 3.0f);
  REQUIRE(static_cast<float>(g[2]) == 9.0f);
  REQUIRE(static_cast<float>(g[3]) == 6144.0f);
  half2 p = {half(0.5f), half(0.25f)};
  p += p;
  REQUIRE(static_cast<float>(p[0]) == 1.0f);
  REQUIRE(static_cast<float>(p[1]) == 0.5f);
  REQUIRE((p == half2{half(1.0f), half(0.5f)}));
}

// The named layout constants the compiler writes fields with (CodeletAbi.h) are
// the layout Vertex.hpp declares: checked when this test is built.
static_assert(sizeof(Input<float>) == ASPEN_FIELD_POINTER_BYTES, "scalar edge");
static_assert(sizeof(Output<float>) == ASPEN_FIELD_POINTER_BYTES, "scalar edge");
static_assert(sizeof(Input<Vector<float>>) == ASPEN_FIELD_VECTOR_BYTES, "vector edge");
static_assert(sizeof(Vector<unsigned>) == ASPEN_FIELD_VECTOR_BYTES, "state array");
static_assert(sizeof(Vector<Input<Vector<float>>>) == ASPEN_FIELD_VECTOR_BYTES, "list of vector edges");
static_assert(sizeof(Input<VectorList<float, VectorListLayout::DELTANELEMENTS>>) == ASPEN_FIELD_VECTOR_BYTES,
              "vector list");
static_assert(sizeof(Vector<Input<float>>) == ASPEN_FIELD_VECTOR_BYTES, "list of scalar edges");
static_assert(offsetof(Input<Vector<float>>, aspenSize_) == ASPEN_FIELD_SIZE_OFFSET, "count after pointer");
static_assert(offsetof(Vector<unsigned>, aspenSize_) == ASPEN_FIELD_SIZE_OFFSET, "count after pointer");
static_assert(ASPEN_FIELD_SIZE_OFFSET + sizeof(std::uint32_t) == ASPEN_FIELD_SIZED_BYTES, "sized field");
static_assert(sizeof(Input<Vector<float>>) == ASPEN_FIELD_DESCRIPTOR_BYTES, "a descriptor is a vector edge");
static_assert(sizeof(float *) == ASPEN_FIELD_SCALAR_ENTRY_BYTES, "pointer table entry");
// fp8: the host class and the codelet types live side by side in one translation unit.
static_assert(!std::is_same<poplar::QuarterMetadata, MetadataType>::value, "distinct types");
// fp8: quarter edges end with the pointer to their metadata (docs/fp8.md).
static_assert(sizeof(quarter) == 1 && sizeof(MetadataType) == 1, "one byte each");
static_assert(sizeof(Input<quarter>) == ASPEN_FIELD_QUARTER_SCALAR_BYTES, "quarter scalar edge");
static_assert(sizeof(InOut<quarter>) == ASPEN_FIELD_QUARTER_SCALAR_BYTES, "quarter scalar edge");
static_assert(sizeof(Input<Vector<quarter>>) == ASPEN_FIELD_QUARTER_VECTOR_BYTES, "quarter vector edge");
static_assert(sizeof(Output<Vector<quarter, VectorLayout::ONE_PTR>>) == ASPEN_FIELD_QUARTER_VECTOR_BYTES,
              "quarter vector edge");
static_assert(offsetof(Input<quarter>, aspenMetadata_) ==
                  ASPEN_FIELD_QUARTER_SCALAR_BYTES - ASPEN_FIELD_METADATA_POINTER_BYTES,
              "metadata pointer last");
static_assert(offsetof(Input<Vector<quarter>>, aspenSize_) == ASPEN_FIELD_SIZE_OFFSET, "count after pointer");
static_assert(sizeof(Vector<Input<Vector<quarter, VectorLayout::ONE_PTR>>, VectorLayout::ONE_PTR>) ==
                  ASPEN_FIELD_QUARTER_VECTOR_BYTES,
              "list of quarter vector edges: one metadata pointer");
static_assert(sizeof(Vector<Input<quarter>>) == ASPEN_FIELD_QUARTER_VECTOR_BYTES, "list of quarter edges");
static_assert(sizeof(Input<VectorList<quarter, VectorListLayout::DELTANELEMENTS>>) ==
                  ASPEN_FIELD_QUARTER_VECTOR_BYTES,
              "quarter vector list");
static_assert(sizeof(Vector<Input<Vector<quarter>>>{}[0]) == ASPEN_FIELD_DESCRIPTOR_BYTES,
              "entries stay ordinary descriptors");

} // namespace

TEST_CASE("codelets_headers: half builtins round once, ties to even, against the reference",
          "[codelets][builtins]") {
  // Random pairs of finite halves (every exponent): absadd is |x| + |y| rounded once
  // (the double sum of two halves is exact), max/min/absmax pick an operand, compares
  // give a lane of all ones.
  std::mt19937 rng(21);
  std::uniform_int_distribution<unsigned> pattern(0, 0xffff);
  auto finiteHalf = [&] {
    for (;;) {
      const auto b = static_cast<std::uint16_t>(pattern(rng));
      if ((b & 0x7c00u) != 0x7c00u)
        return b;
    }
  };
  auto fromBits = [](std::uint16_t b) {
    half h;
    std::memcpy(static_cast<void *>(&h), &b, 2);
    return h;
  };
  for (int n = 0; n < 50000; ++n) {
    const std::uint16_t xb[2] = {finiteHalf(), finiteHalf()}, yb[2] = {finiteHalf(), finiteHalf()};
    const half2 x = {fromBits(xb[0]), fromBits(xb[1])}, y = {fromBits(yb[0]), fromBits(yb[1])};
    const half2 sum = __builtin_ipu_f16v2absadd(x, y), mx = __builtin_ipu_max(x, y), amx = ipu::absmax(x, y);
    const half2 lt = __builtin_ipu_f16v2cmplt(x, y);
    for (int k = 0; k < 2; ++k) {
      const double xv = referenceHalfValue(xb[k]), yv = referenceHalfValue(yb[k]);
      INFO(std::hex << xb[k] << " " << yb[k]);
      REQUIRE(bitsOf(sum[k]) == referenceRound(std::fabs(xv) + std::fabs(yv)));
      REQUIRE(referenceHalfValue(bitsOf(mx[k])) == std::max(xv, yv));
      REQUIRE(referenceHalfValue(bitsOf(amx[k])) == std::max(std::fabs(xv), std::fabs(yv)));
      REQUIRE(bitsOf(lt[k]) == (xv < yv ? 0xffffu : 0u));
    }
  }
  // Float forms and the permutations PopLibs relies on.
  const float2 a = {-2.0f, 3.0f}, b = {1.0f, -4.0f};
  REQUIRE(__builtin_ipu_absmax(a, b)[1] == 4.0f);
  REQUIRE(__builtin_ipu_f32absadd(-2.0f, 0.5f) == 2.5f);
  REQUIRE(__builtin_ipu_andc(-2.0f, -0.0f) == 2.0f);
  REQUIRE(__builtin_ipu_f32clamp(5.0f, float2{-1.0f, 1.0f}) == 1.0f);
  REQUIRE(__builtin_ipu_shuf8x8lo(0x44332211u, 0x88776655u) == 0x66225511u);
  REQUIRE(__builtin_ipu_shuf8x8hi(0x44332211u, 0x88776655u) == 0x88447733u);
  REQUIRE(__builtin_ipu_bitrev8(0x0180f001u) == 0x80010f80u);
  REQUIRE(__builtin_ipu_cms(0) == 31u);
  REQUIRE(__builtin_ipu_cms(-1) == 31u);
  REQUIRE(__builtin_ipu_cms(0x40000000) == 0u);
  REQUIRE(__builtin_ipu_cms(0x00010000) == 14u);
  // <ipu_vector_math> functions PopLibs' IPU paths call (atan2, asin, expm1, nearbyint).
  const float2 p = {0.5f, -2.5f}, q = {-1.5f, 0.25f};
  const float2 t = ipu::atan2(p, q), s = ipu::asin(float2{0.5f, -0.25f}), e = ipu::expm1(q);
  const float2 n = ipu::nearbyint(p);
  for (int k = 0; k < 2; ++k) {
    REQUIRE(t[k] == std::atan2(p[k], q[k]));
    REQUIRE(e[k] == std::expm1(q[k]));
    REQUIRE(n[k] == std::nearbyint(p[k]));
  }
  REQUIRE(s[0] == std::asin(0.5f));
  REQUIRE(n[0] == 0.0f);
  REQUIRE(n[1] == -2.0f);
}

TEST_CASE("fp8: codelet-side packing agrees with the host QuarterMetadata binary", "[codelets][fp8]") {
  for (auto f : {poplar::QuarterMetadata::Format::F143, poplar::QuarterMetadata::Format::F152})
    for (int s = -32; s <= 31; ++s) {
      const poplar::QuarterMetadata host(f, static_cast<std::int8_t>(s));
      const quarter_metadata md = poplar::unpackMetadata(host.getBinary());
      CHECK(md.scale == s);
      CHECK((md.fmt == quarter_metadata::f143) == (f == poplar::QuarterMetadata::Format::F143));
      CHECK(poplar::packMetadata(md) == host.getBinary());
    }
}

TEST_CASE("fp8: toQuarter with NaN on overflow off saturates, as PopLibs' casts ask", "[codelets][fp8]") {
  for (auto fmt : {quarter_metadata::f143, quarter_metadata::f152}) {
    const quarter_metadata md{fmt, 0};
    const float inf = std::numeric_limits<float>::infinity();
    for (float x : {1e30f, inf})
      CHECK(poplar::toQuarter(x, md, false).value == 0x7f);
    for (float x : {-1e30f, -inf})
      CHECK(poplar::toQuarter(x, md, false).value == 0xff);
    CHECK(poplar::toQuarter(1e30f, md, true).value == 0x80);
    CHECK(poplar::toQuarter(std::numeric_limits<float>::quiet_NaN(), md, false).value == 0x80);
    // 0x7f is the largest finite value: one more step of it overflows.
    const float largest = poplar::toFloat(poplar::toQuarter(1e30f, md, false), md);
    CHECK(poplar::toQuarter(largest, md).value == 0x7f);
    for (float x : {0.0f, 1.0f, -3.5f, 0.01f, largest})
      CHECK(poplar::toQuarter(x, md, false).value == poplar::toQuarter(x, md).value);
  }
}
