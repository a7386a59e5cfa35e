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

#include <cmath>

using namespace poplar;
using namespace popops::expr;
using aspen::test::inputs;
using aspen::test::requireClose;
using aspen::test::TestDevice;

namespace {

Tensor mappedVariable(Graph &graph, const Type &type, const std::vector<std::size_t> &shape,
                      const char *name) {
  Tensor t = graph.addVariable(type, shape, name);
  poputil::mapTensorLinearly(graph, t);
  return t;
}

} // namespace

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
