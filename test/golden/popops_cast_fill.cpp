// Copyright (c) Aspen contributors.
// popops::cast (Cast.hpp), fill / zero (Fill.hpp, Zero.hpp), scaledAddTo /
// scaledSubtractFrom (ScaledAdd.hpp) and iota (Encoding.hpp) against host loops.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popops/Cast.hpp>
#include <popops/Encoding.hpp>
#include <popops/Fill.hpp>
#include <popops/ScaledAdd.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

using namespace poplar;
using aspen::test::inputs;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;

namespace {

// Independent float -> half (round to nearest even) reference: exact arithmetic on the bits.
std::uint16_t referenceHalf(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const float a = std::fabs(f);
  if (a >= 65520.0f)
    return static_cast<std::uint16_t>(sign | 0x7c00u);
  // Scale to units of the half's last place and round half to even with nearbyint.
  int e;
  std::frexp(a, &e);
  const int exponent = std::max(e - 1, -14);
  const double ulp = std::ldexp(1.0, exponent - 10);
  const double q = std::nearbyint(a / ulp) * ulp; // default rounding mode: to nearest even
  float back = static_cast<float>(q);
  std::uint16_t h;
  // Encode q exactly.
  if (back == 0) {
    h = 0;
  } else {
    int e2;
    const double m = std::frexp(q, &e2); // q = m * 2^e2, m in [0.5, 1)
    if (e2 - 1 < -14) {
      h = static_cast<std::uint16_t>(q / std::ldexp(1.0, -24));
    } else {
      const unsigned mant = static_cast<unsigned>((m * 2 - 1) * 1024);
      h = static_cast<std::uint16_t>(((e2 - 1 + 15) << 10) | mant);
    }
  }
  return static_cast<std::uint16_t>(sign | h);
}

} // namespace

TEST_CASE("popops::cast converts between float, half, int and bool", "[popops][cast]") {
  aspen::test::forEachTarget([&](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    // Values that need rounding in half, including exact ties (x.5 ulp).
    std::vector<float> f{0.0f,
                         1.0f,
                         -2.5f,
                         1.0f + 1.0f / 2048,
                         1.0f + 3.0f / 2048,
                         3.14159265f,
                         -1e-5f,
                         65504.0f,
                         70000.0f,
                         1e-7f,
                         0.333333f,
                         2049.0f,
                         2051.0f,
                         -0.0f,
                         123.456f,
                         6e-8f};
    Tensor F = mappedVariable(graph, FLOAT, {f.size()}, "F");
    program::Sequence prog;
    Tensor toHalf = popops::cast(graph, F, HALF, prog);
    Tensor toInt = popops::cast(graph, F, INT, prog);
    Tensor toBool = popops::cast(graph, F, BOOL, prog);
    Tensor backToFloat = popops::cast(graph, toHalf, FLOAT, prog);
    Tensor intToFloat = mappedVariable(graph, FLOAT, {f.size()}, "intToFloat");
    popops::castWithOutput(graph, toInt, intToFloat, prog);
    Tensor viaCs = graph.addVariable(UNSIGNED_INT, {f.size()}, "viaCs");
    poputil::mapTensorLinearly(graph, viaCs);
    ComputeSet cs = graph.addComputeSet("castCs");
    popops::cast(graph, toBool, viaCs, cs);
    prog.add(program::Execute(cs));
    std::vector<std::uint16_t> gotHalfBits;
    Tensor halfBits = toHalf.reinterpret(UNSIGNED_SHORT);
    std::vector<int> gotInt;
    std::vector<unsigned char> gotBool;
    std::vector<float> gotBack, gotIntToFloat;
    std::vector<unsigned> gotViaCs;
    dev.read(graph, halfBits, gotHalfBits);
    dev.read(graph, toInt, gotInt);
    dev.read(graph, toBool, gotBool);
    dev.read(graph, backToFloat, gotBack);
    dev.read(graph, intToFloat, gotIntToFloat);
    dev.read(graph, viaCs, gotViaCs);
    dev.write(graph, F, f);
    dev.run(graph, prog);
    for (std::size_t i = 0; i < f.size(); ++i) {
      INFO("value " << f[i]);
      REQUIRE(gotHalfBits[i] == referenceHalf(f[i]));
      if (std::fabs(f[i]) < 1e9f) {
        REQUIRE(gotInt[i] == static_cast<int>(f[i]));
        REQUIRE(gotIntToFloat[i] == static_cast<float>(static_cast<int>(f[i])));
      }
      REQUIRE(static_cast<bool>(gotBool[i]) == (f[i] != 0.0f));
      REQUIRE(gotViaCs[i] == (f[i] != 0.0f ? 1u : 0u));
      REQUIRE(gotBack[i] == aspen::test::roundToHalf(dev.getTarget(), f[i]));
    }
  });
}

TEST_CASE("popops::fill, zero and iota", "[popops][fill]") {
  aspen::test::forEachTarget([&](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    Tensor F = mappedVariable(graph, FLOAT, {33, 7}, "F");
    Tensor H = mappedVariable(graph, HALF, {100}, "H");
    Tensor I = mappedVariable(graph, INT, {50}, "I");
    Tensor Z = mappedVariable(graph, FLOAT, {300}, "Z");
    Tensor U = mappedVariable(graph, UNSIGNED_INT, {1000}, "U");
    Tensor S = mappedVariable(graph, INT, {77}, "S");
    program::Sequence prog;
    popops::fill(graph, F, prog, 2.5f, "fillF");
    popops::fill(graph, H, prog, 0.1f);
    popops::fill(graph, I, prog, -7);
    popops::zero(graph, Z, prog);
    popops::iota(graph, U, 5u, prog);
    popops::iota(graph, S.slice(10, 77), -20, prog);
    std::vector<float> gotF, gotH, gotZ;
    std::vector<int> gotI, gotS;
    std::vector<unsigned> gotU;
    dev.write(graph, Z, inputs(300, -1.0f, 1.0f, 41));
    dev.read(graph, F, gotF);
    dev.read(graph, H, gotH);
    dev.read(graph, I, gotI);
    dev.read(graph, Z, gotZ);
    dev.read(graph, U, gotU);
    dev.read(graph, S, gotS);
    dev.run(graph, prog);
    REQUIRE(gotF == std::vector<float>(33 * 7, 2.5f));
    REQUIRE(gotH == std::vector<float>(100, aspen::test::roundToHalf(dev.getTarget(), 0.1f)));
    REQUIRE(gotI == std::vector<int>(50, -7));
    REQUIRE(gotZ == std::vector<float>(300, 0.0f));
    for (unsigned k = 0; k < 1000; ++k)
      REQUIRE(gotU[k] == 5 + k);
    for (int k = 10; k < 77; ++k)
      REQUIRE(gotS[k] == -20 + (k - 10));
  });
}

TEST_CASE("popops::scaledAddTo and scaledSubtractFrom", "[popops][scaledAdd]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t n = 513;
      const auto a = inputs(n, -2.0f, 2.0f, 51), b = inputs(n, -2.0f, 2.0f, 52);
      Tensor A1 = mappedVariable(graph, type, {n}, "A1");
      Tensor A2 = mappedVariable(graph, type, {n}, "A2");
      Tensor A3 = mappedVariable(graph, type, {n}, "A3");
      Tensor A4 = mappedVariable(graph, type, {n}, "A4");
      Tensor B = mappedVariable(graph, type, {n}, "B");
      Tensor k = graph.addVariable(FLOAT, {}, "k");
      graph.setTileMapping(k, 1);
      program::Sequence prog;
      popops::scaledAddTo(graph, A1, B, 0.25f, prog);       // A1 += 0.25 B
      popops::scaledSubtractFrom(graph, A2, B, k, prog);    // A2 -= k B
      popops::scaledAddTo(graph, A3, 0.5f, B, -1.5f, prog); // A3 = 0.5 A3 - 1.5 B
      popops::scaledAddTo(graph, A4, k, B, k, prog, popops::ScaledAddSpecialisation::X_MINUS_AX_PLUS_BY);
      std::vector<float> g1, g2, g3, g4;
      for (Tensor *t : {&A1, &A2, &A3, &A4})
        dev.write(graph, *t, a);
      dev.write(graph, B, b);
      dev.write(graph, k, std::vector<float>{0.75f});
      dev.read(graph, A1, g1);
      dev.read(graph, A2, g2);
      dev.read(graph, A3, g3);
      dev.read(graph, A4, g4);
      dev.run(graph, prog);
      auto r = [&](float x) { return type == HALF ? aspen::test::roundToHalf(dev.getTarget(), x) : x; };
      std::vector<float> w1(n), w2(n), w3(n), w4(n);
      for (std::size_t i = 0; i < n; ++i) {
        w1[i] = r(a[i] + 0.25f * b[i]);
        w2[i] = r(a[i] - 0.75f * b[i]);
        w3[i] = r(0.5f * a[i] - 1.5f * b[i]);
        w4[i] = r((1 - 0.75f) * a[i] + 0.75f * b[i]);
      }
      const double rel = type == HALF ? 2e-3 : 1e-6, abs = type == HALF ? 2e-3 : 1e-6;
      requireClose(g1, w1, rel, abs, "scaledAddTo constant");
      requireClose(g2, w2, rel, abs, "scaledSubtractFrom tensor");
      requireClose(g3, w3, rel, abs, "scaledAddTo aA + bB");
      requireClose(g4, w4, rel, abs, "X_MINUS_AX_PLUS_BY");
    });
  }
}
