// Copyright (c) Aspen contributors.
// popops::map / mapInPlace / mapWithOutput over expression trees (Expr.hpp), fused into
// generated codelets, against host loops, float and half, on every test target; also the
// unfused path (enableGenerateCodelet=false) and a forced generated single operator.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace poplar;
using namespace popops::expr;
using aspen::test::inputs;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;

TEST_CASE("popops::map fuses expressions", "[popops][map]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t n = 1000;
      const auto a = inputs(n, -2.0f, 2.0f, 21), b = inputs(n, 0.5f, 3.0f, 22),
                 s = inputs(1, 0.25f, 1.0f, 23);
      Tensor A = mappedVariable(graph, type, {10, 100}, "A");
      Tensor B = mappedVariable(graph, type, {10, 100}, "B");
      Tensor Brow = mappedVariable(graph, type, {100}, "Brow");
      Tensor S = mappedVariable(graph, type, {}, "S");
      Tensor inPlace = mappedVariable(graph, type, {10, 100}, "inPlace");
      Tensor withOut = mappedVariable(graph, type, {10, 100}, "withOut");
      program::Sequence prog;
      prog.add(program::Copy(A, inPlace));
      // Momentum-style blend with constants, a square root and a division.
      Tensor blend =
          popops::map(graph, Const(0.9f) * _1 + Const(0.1f) * Sqrt(_2) / (_2 + 1.0f), {A, B}, prog);
      // Select with a comparison, a scalar tensor and a broadcast row.
      Tensor sel = popops::map(graph, Select(_1 * _3, Neg(_2), _1 > _3), {A, Brow, S}, prog);
      // Clamp and exp, in place.
      popops::mapInPlace(graph, Exp(Clamp(_1, Const(-1.0f), Const(1.0f))) - _2, {inPlace, B}, prog);
      // Into a given output, through a cast to int and back.
      popops::mapWithOutput(graph, Cast(Cast(_1 * 4.0f, INT), type) + _2, {A, B}, withOut, prog);
      // The same blend computed one operator at a time.
      Tensor unfused = popops::map(graph, Const(0.9f) * _1 + Const(0.1f) * Sqrt(_2) / (_2 + 1.0f), {A, B},
                                   prog, "unfused", {{"enableGenerateCodelet", "false"}});
      // A single operator through a generated codelet.
      Tensor forced =
          popops::map(graph, Mul(_1, _2), {A, B}, prog, "forced", {{"forceGenerateCodelet", "true"}});
      std::vector<float> gotBlend, gotSel, gotInPlace, gotWithOut, gotUnfused, gotForced;
      dev.read(graph, blend, gotBlend);
      dev.read(graph, sel, gotSel);
      dev.read(graph, inPlace, gotInPlace);
      dev.read(graph, withOut, gotWithOut);
      dev.read(graph, unfused, gotUnfused);
      dev.read(graph, forced, gotForced);
      dev.write(graph, A, a);
      dev.write(graph, B, b);
      dev.write(graph, Brow, std::vector<float>(b.begin(), b.begin() + 100));
      dev.write(graph, S, s);
      dev.run(graph, prog);
      const Target &target = dev.getTarget();
      // Half arithmetic rounds after every operation.
      auto r = [&](float x) { return type == HALF ? aspen::test::roundToHalf(target, x) : x; };
      std::vector<float> wBlend(n), wSel(n), wInPlace(n), wWithOut(n), wForced(n);
      for (std::size_t k = 0; k < n; ++k) {
        const float x = a[k], y = b[k], row = b[k % 100], sc = s[0];
        wBlend[k] = r(r(r(0.9f) * x) + r(r(r(0.1f) * r(std::sqrt(y))) / r(y + 1.0f)));
        wSel[k] = x > sc ? r(x * sc) : -row;
        wInPlace[k] = r(r(std::exp(std::min(std::max(x, -1.0f), 1.0f))) - y);
        wWithOut[k] = r(static_cast<float>(static_cast<int>(r(x * 4.0f))) + y);
        wForced[k] = r(x * y);
      }
      const double rel = type == HALF ? 2e-3 : 2e-6, abs = type == HALF ? 2e-3 : 1e-6;
      requireClose(gotBlend, wBlend, rel, abs, "fused blend");
      requireClose(gotSel, wSel, rel, abs, "select with broadcast and scalar");
      requireClose(gotInPlace, wInPlace, rel, abs, "mapInPlace");
      requireClose(gotWithOut, wWithOut, rel, abs, "mapWithOutput with casts");
      requireClose(gotUnfused, wBlend, rel, abs, "unfused blend");
      requireClose(gotForced, wForced, rel, abs, "forced generated codelet");
    });
  }
}

TEST_CASE("popops::map on integers and booleans", "[popops][map]") {
  aspen::test::forEachTarget([&](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    const std::size_t n = 200;
    std::vector<int> a(n), b(n);
    for (std::size_t k = 0; k < n; ++k) {
      a[k] = static_cast<int>(k * 37 % 101) - 50;
      b[k] = static_cast<int>(k % 7) + 1;
    }
    Tensor A = mappedVariable(graph, INT, {n}, "A");
    Tensor B = mappedVariable(graph, INT, {n}, "B");
    program::Sequence prog;
    Tensor arith = popops::map(graph, (_1 % _2) * 3 + Abs(_1) / _2, {A, B}, prog);
    Tensor logic = popops::map(graph, (_1 > 0) && !(_2 == 3), {A, B}, prog);
    std::vector<int> gotArith;
    std::vector<unsigned char> gotLogic;
    dev.read(graph, arith, gotArith);
    dev.read(graph, logic, gotLogic);
    dev.write(graph, A, a);
    dev.write(graph, B, b);
    dev.run(graph, prog);
    for (std::size_t k = 0; k < n; ++k) {
      INFO("element " << k);
      REQUIRE(gotArith[k] == (a[k] % b[k]) * 3 + std::abs(a[k]) / b[k]);
      REQUIRE(static_cast<bool>(gotLogic[k]) == ((a[k] > 0) && !(b[k] == 3)));
    }
  });
}

TEST_CASE("popops::map with several expressions: new outputs, in place and into given outputs",
          "[popops][map]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t n = 300;
      const auto a = inputs(n, -2.0f, 2.0f, 31), b = inputs(n, 0.5f, 2.0f, 32);
      Tensor A = mappedVariable(graph, type, {3, 100}, "A");
      Tensor B = mappedVariable(graph, type, {3, 100}, "B");
      Tensor X = mappedVariable(graph, type, {3, 100}, "X");
      Tensor Y = mappedVariable(graph, type, {3, 100}, "Y");
      Tensor U = mappedVariable(graph, type, {3, 100}, "U");
      Tensor V = mappedVariable(graph, type, {3, 100}, "V");
      Tensor P = mappedVariable(graph, type, {3, 100}, "P");
      Tensor Q = mappedVariable(graph, type, {3, 100}, "Q");
      Tensor W = mappedVariable(graph, BOOL, {3, 100}, "W");
      program::Sequence prog;
      prog.add(program::Copy(A, X));
      prog.add(program::Copy(B, Y));
      prog.add(program::Copy(A, P));
      prog.add(program::Copy(B, Q));
      // Three results of two types from one pass.
      const std::vector<Tensor> outs = popops::map(graph, {_1 + _2, _1 * _2, Sqrt(_2) > _1}, {A, B}, prog);
      REQUIRE(outs.size() == 3);
      REQUIRE(outs[2].elementType() == BOOL);
      // In place: each expression reads the values from before the call.
      popops::mapInPlace(graph, {_1 + _2, _1 * _2}, {X, Y}, prog);
      // The same one expression at a time.
      popops::mapInPlace(graph, {_1 + _2, _1 * _2}, {P, Q}, prog, "unfused",
                         {{"enableGenerateCodelet", "false"}});
      // Into given outputs.
      popops::mapWithOutput(graph, {_2 - _1, Max(_1, _2), _1 < _2}, {A, B}, {U, V, W}, prog);
      std::vector<float> gotSum, gotProduct, gotX, gotY, gotP, gotQ, gotU, gotV;
      std::vector<unsigned char> gotGreater, gotW;
      dev.read(graph, outs[0], gotSum);
      dev.read(graph, outs[1], gotProduct);
      dev.read(graph, outs[2], gotGreater);
      dev.read(graph, X, gotX);
      dev.read(graph, Y, gotY);
      dev.read(graph, P, gotP);
      dev.read(graph, Q, gotQ);
      dev.read(graph, U, gotU);
      dev.read(graph, V, gotV);
      dev.read(graph, W, gotW);
      dev.write(graph, A, a);
      dev.write(graph, B, b);
      dev.run(graph, prog);
      auto r = [&](float x) { return aspen::test::roundTo(type, dev.getTarget(), x); };
      std::vector<float> wSum(n), wProduct(n), wDifference(n), wMax(n);
      for (std::size_t k = 0; k < n; ++k) {
        wSum[k] = r(a[k] + b[k]);
        wProduct[k] = r(a[k] * b[k]);
        wDifference[k] = r(b[k] - a[k]);
        wMax[k] = std::max(a[k], b[k]);
        INFO("element " << k);
        REQUIRE(static_cast<bool>(gotGreater[k]) == (r(std::sqrt(b[k])) > a[k]));
        REQUIRE(static_cast<bool>(gotW[k]) == (a[k] < b[k]));
      }
      const double rel = type == HALF ? 2e-3 : 2e-6, abs = type == HALF ? 2e-3 : 1e-6;
      requireClose(gotSum, wSum, rel, abs, "map: first result");
      requireClose(gotProduct, wProduct, rel, abs, "map: second result");
      requireClose(gotX, wSum, rel, abs, "mapInPlace: first tensor");
      requireClose(gotY, wProduct, rel, abs, "mapInPlace: second tensor (reads the first's old values)");
      requireClose(gotP, wSum, rel, abs, "unfused mapInPlace: first tensor");
      requireClose(gotQ, wProduct, rel, abs, "unfused mapInPlace: second tensor");
      requireClose(gotU, wDifference, rel, abs, "mapWithOutput: first output");
      requireClose(gotV, wMax, 0, 0, "mapWithOutput: second output");
    });
  }
}

TEST_CASE("popops integer division, remainder and shifts are defined for every input", "[popops][map]") {
  // Division by zero and INT_MIN / -1 follow RISC-V's rules (x / 0 = -1 or the largest unsigned,
  // x % 0 = x, INT_MIN / -1 = INT_MIN with remainder 0); shift counts use their low 5 bits. The
  // host's division would trap, so none of this may reach it.
  const int intMin = std::numeric_limits<int>::min();
  const std::vector<int> a{7, -7, 0, intMin, intMin, 5, -1, 100, 3, 1};
  const std::vector<int> b{0, 0, 0, -1, 0, 2, -1, -7, 33, 32};
  auto quotient = [](int x, int y) {
    return y == 0 ? -1 : y == -1 ? static_cast<int>(0u - unsigned(x)) : x / y;
  };
  auto remainder = [](int x, int y) { return y == 0 ? x : y == -1 ? 0 : x % y; };
  auto shl = [](int x, int y) { return static_cast<int>(unsigned(x) << (unsigned(y) & 31u)); };
  const std::vector<unsigned> ua{7, 0, 9, 4000000000u}, ub{0, 0, 2, 3};
  aspen::test::forEachTarget([&](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    Tensor A = mappedVariable(graph, INT, {a.size()}, "A");
    Tensor B = mappedVariable(graph, INT, {b.size()}, "B");
    Tensor UA = mappedVariable(graph, UNSIGNED_INT, {ua.size()}, "UA");
    Tensor UB = mappedVariable(graph, UNSIGNED_INT, {ub.size()}, "UB");
    program::Sequence prog;
    Tensor q = popops::div(graph, A, B, prog), r = popops::rem(graph, A, B, prog);
    Tensor s = popops::shiftLeft(graph, A, B, prog);
    Tensor uq = popops::div(graph, UA, UB, prog), ur = popops::rem(graph, UA, UB, prog);
    // The same through a generated codelet.
    const std::vector<Tensor> fused = popops::map(graph, {_1 / _2, _1 % _2, _1 << _2}, {A, B}, prog);
    std::vector<int> gotQ, gotR, gotS, gotFusedQ, gotFusedR, gotFusedS;
    std::vector<unsigned> gotUQ, gotUR;
    dev.read(graph, q, gotQ);
    dev.read(graph, r, gotR);
    dev.read(graph, s, gotS);
    dev.read(graph, uq, gotUQ);
    dev.read(graph, ur, gotUR);
    dev.read(graph, fused[0], gotFusedQ);
    dev.read(graph, fused[1], gotFusedR);
    dev.read(graph, fused[2], gotFusedS);
    dev.write(graph, A, a);
    dev.write(graph, B, b);
    dev.write(graph, UA, ua);
    dev.write(graph, UB, ub);
    dev.run(graph, prog);
    for (std::size_t k = 0; k < a.size(); ++k) {
      INFO(a[k] << " op " << b[k]);
      CHECK(gotQ[k] == quotient(a[k], b[k]));
      CHECK(gotR[k] == remainder(a[k], b[k]));
      CHECK(gotS[k] == shl(a[k], b[k]));
      CHECK(gotFusedQ[k] == quotient(a[k], b[k]));
      CHECK(gotFusedR[k] == remainder(a[k], b[k]));
      CHECK(gotFusedS[k] == shl(a[k], b[k]));
    }
    for (std::size_t k = 0; k < ua.size(); ++k) {
      INFO(ua[k] << " op " << ub[k]);
      CHECK(gotUQ[k] == (ub[k] ? ua[k] / ub[k] : ~0u));
      CHECK(gotUR[k] == (ub[k] ? ua[k] % ub[k] : ua[k]));
    }
  });
}

// The generated codelet's loop is vectorised 8 lanes wide when its operators allow it
// (ExpressionGenerator.cpp, "widen"): the results are the scalar loop's, bit for bit, in the
// vector body, its remainder and each worker's tail (5,003 elements: on 4 tiles each worker has
// ~208, on 1,472 tiles a few). The host references round each operation as the codelet does
// (this file is compiled without floating-point contraction, test/ops.cmake).
TEST_CASE("popops::map vectorised loops match a scalar host loop bit for bit", "[popops][map]") {
  const std::size_t n = 5003;
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const auto a = inputs(n, -3.0f, 3.0f, 31), b = inputs(n, -2.0f, 2.0f, 32);
      Tensor A = mappedVariable(graph, type, {n}, "A");
      Tensor B = mappedVariable(graph, type, {n}, "B");
      program::Sequence prog;
      // popops_bench's map; then a division, a square root, a comparison and a select.
      Tensor bench = popops::map(graph, Const(0.5f) * _1 + _2 * _2 - Const(1.0f), {A, B}, prog);
      Tensor mixed = popops::map(graph, Select(Sqrt(Abs(_1)) / (_2 * _2 + 0.25f), Max(_1, _2) - _2, _1 < _2),
                                 {A, B}, prog);
      std::vector<float> gotBench, gotMixed;
      dev.read(graph, bench, gotBench);
      dev.read(graph, mixed, gotMixed);
      dev.write(graph, A, a);
      dev.write(graph, B, b);
      dev.run(graph, prog);
      const Target &target = dev.getTarget();
      auto r = [&](float x) { return type == HALF ? aspen::test::roundToHalf(target, x) : x; };
      for (std::size_t k = 0; k < n; ++k) {
        INFO("element " << k);
        const float x = a[k], y = b[k];
        const float wantBench = r(r(r(0.5f * x) + r(y * y)) - 1.0f);
        const float wantMixed =
            x < y ? r(r(std::sqrt(std::fabs(x))) / r(r(y * y) + 0.25f)) : r(std::max(x, y) - y);
        REQUIRE(std::memcmp(&gotBench[k], &wantBench, sizeof(float)) == 0);
        REQUIRE(std::memcmp(&gotMixed[k], &wantMixed, sizeof(float)) == 0);
      }
    });
  }
}

TEST_CASE("popops::map vectorised integer and boolean loops match a host loop", "[popops][map]") {
  const std::size_t n = 5003;
  aspen::test::forEachTarget([&](TestDevice &dev) {
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    std::vector<int> a(n), b(n);
    for (std::size_t k = 0; k < n; ++k) {
      a[k] = static_cast<int>(k * 7919 % 2003) - 1000;
      b[k] = static_cast<int>(k * 104729 % 37) - 5;
    }
    Tensor A = mappedVariable(graph, INT, {n}, "A");
    Tensor B = mappedVariable(graph, INT, {n}, "B");
    program::Sequence prog;
    Tensor arith = popops::map(graph, Max(_1 * 3 + _2, Neg(_1)) ^ (_2 << 2), {A, B}, prog);
    Tensor logic = popops::map(graph, (_1 > _2) || !(_2 == 3), {A, B}, prog);
    std::vector<int> gotArith;
    std::vector<unsigned char> gotLogic;
    dev.read(graph, arith, gotArith);
    dev.read(graph, logic, gotLogic);
    dev.write(graph, A, a);
    dev.write(graph, B, b);
    dev.run(graph, prog);
    for (std::size_t k = 0; k < n; ++k) {
      INFO("element " << k);
      const int shifted = static_cast<int>(static_cast<unsigned>(b[k]) << (static_cast<unsigned>(2) & 31u));
      REQUIRE(gotArith[k] == (std::max(a[k] * 3 + b[k], -a[k]) ^ shifted));
      REQUIRE(static_cast<bool>(gotLogic[k]) == ((a[k] > b[k]) || !(b[k] == 3)));
    }
  });
}
