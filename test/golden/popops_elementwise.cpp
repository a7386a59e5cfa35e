// Copyright (c) Aspen contributors.
// popops element-wise operators (ElementWise.hpp) against host loops, float and half,
// on every test target: binary, unary, comparison and logical operators, in-place and
// WithOutput forms, numpy broadcasting, scalar constants, views, select and clamp.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

using namespace poplar;
using aspen::test::inputs;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;

namespace {

using BinaryFn = std::function<Tensor(Graph &, const Tensor &, const Tensor &, program::Sequence &)>;
using UnaryFn = std::function<Tensor(Graph &, const Tensor &, program::Sequence &)>;

struct BinaryCase {
  const char *name;
  BinaryFn op;
  std::function<float(float, float)> ref;
};
struct UnaryCase {
  const char *name;
  UnaryFn op;
  std::function<float(float)> ref;
};

#define BINARY(fn, expr)                                                                                     \
  BinaryCase {                                                                                               \
#fn, [](Graph & g, const Tensor &a, const Tensor &b,                                                     \
            program::Sequence                                                                                \
                &p) { return popops::fn(g, a, b, p); }, [](float a,                                          \
                                                           float b) { return static_cast<float>(expr); }     \
  }
#define UNARY(fn, expr)                                                                                      \
  UnaryCase {                                                                                                \
#fn, [](Graph & g, const Tensor &a,                                                                      \
            program::Sequence                                                                                \
                &p) { return popops::fn(g, a, p); }, [](float a) { return static_cast<float>(expr); }        \
  }

const std::vector<BinaryCase> &binaryCases() {
  static const std::vector<BinaryCase> cases{
      BINARY(add, a + b),          BINARY(sub, a - b),           BINARY(mul, a * b),
      BINARY(div, a / b),          BINARY(max, std::max(a, b)),  BINARY(min, std::min(a, b)),
      BINARY(pow, std::pow(a, b)), BINARY(rem, std::fmod(a, b)),
  };
  return cases;
}

const std::vector<UnaryCase> &unaryCases() {
  static const std::vector<UnaryCase> cases{
      UNARY(neg, -a),
      UNARY(abs, std::fabs(a)),
      UNARY(exp, std::exp(a)),
      UNARY(log, std::log(a)),
      UNARY(sqrt, std::sqrt(a)),
      UNARY(rsqrt, 1.0f / std::sqrt(a)),
      UNARY(sigmoid, 1.0f / (1.0f + std::exp(-a))),
      UNARY(tanh, std::tanh(a)),
      UNARY(square, a * a),
      UNARY(sin, std::sin(a)),
      UNARY(cos, std::cos(a)),
      UNARY(ceil, std::ceil(a)),
      UNARY(floor, std::floor(a)),
      UNARY(signum, (a > 0) - (a < 0)),
  };
  return cases;
}

// Host reference of an operation on (already device-exact) inputs, rounded like the device.
float deviceRound(const Target &target, const Type &type, float x) {
  return type == HALF ? aspen::test::roundToHalf(target, x) : x;
}

double relTol(const Type &type) {
  return type == HALF ? 2e-3 : 2e-6;
}
double absTol(const Type &type) {
  return type == HALF ? 1e-3 : 1e-6;
}

} // namespace

TEST_CASE("popops binary and unary operators match host loops", "[popops][elementwise]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::vector<std::size_t> shape{37, 19};
      const std::size_t n = 37 * 19;
      const auto a = inputs(n, 0.25f, 4.0f, 1), b = inputs(n, 0.5f, 2.0f, 2);
      const auto s = inputs(n, -3.0f, 3.0f, 3);
      Tensor A = mappedVariable(graph, type, shape, "A");
      Tensor B = mappedVariable(graph, type, shape, "B");
      Tensor S = mappedVariable(graph, type, shape, "S");
      program::Sequence prog;
      std::vector<std::vector<float>> binaryOut(binaryCases().size()), unaryOut(unaryCases().size()),
          signedOut(unaryCases().size());
      for (std::size_t i = 0; i < binaryCases().size(); ++i)
        dev.read(graph, binaryCases()[i].op(graph, A, B, prog), binaryOut[i]);
      for (std::size_t i = 0; i < unaryCases().size(); ++i)
        dev.read(graph, unaryCases()[i].op(graph, A, prog), unaryOut[i]);
      // Operators defined for negative inputs too.
      const std::vector<std::size_t> signedOps{0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 13};
      for (std::size_t i : signedOps)
        dev.read(graph, unaryCases()[i].op(graph, S, prog), signedOut[i]);
      dev.write(graph, A, a);
      dev.write(graph, B, b);
      dev.write(graph, S, s);
      dev.run(graph, prog);
      const Target &target = dev.getTarget();
      for (std::size_t i = 0; i < binaryCases().size(); ++i) {
        std::vector<float> want(n);
        for (std::size_t k = 0; k < n; ++k)
          want[k] = deviceRound(target, type, binaryCases()[i].ref(a[k], b[k]));
        requireClose(binaryOut[i], want, relTol(type), absTol(type), binaryCases()[i].name);
      }
      for (std::size_t i = 0; i < unaryCases().size(); ++i) {
        std::vector<float> want(n);
        for (std::size_t k = 0; k < n; ++k)
          want[k] = deviceRound(target, type, unaryCases()[i].ref(a[k]));
        requireClose(unaryOut[i], want, relTol(type), absTol(type), unaryCases()[i].name);
      }
      for (std::size_t i : signedOps) {
        std::vector<float> want(n);
        for (std::size_t k = 0; k < n; ++k)
          want[k] = deviceRound(target, type, unaryCases()[i].ref(s[k]));
        requireClose(signedOut[i], want, relTol(type), absTol(type),
                     std::string(unaryCases()[i].name) + " (signed)");
      }
    });
  }
}

TEST_CASE("popops comparisons and logical operators give bool results", "[popops][elementwise]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t n = 300;
      auto a = inputs(n, -2.0f, 2.0f, 4), b = inputs(n, -2.0f, 2.0f, 5);
      for (std::size_t k = 0; k < n; k += 7)
        b[k] = a[k]; // some equal pairs
      Tensor A = mappedVariable(graph, type, {n}, "A");
      Tensor B = mappedVariable(graph, type, {n}, "B");
      program::Sequence prog;
      std::vector<Tensor> outs{popops::eq(graph, A, B, prog), popops::neq(graph, A, B, prog),
                               popops::gt(graph, A, B, prog), popops::gteq(graph, A, B, prog),
                               popops::lt(graph, A, B, prog), popops::lteq(graph, A, B, prog)};
      Tensor lt = outs[4], gt = outs[2];
      outs.push_back(popops::logicalAnd(graph, lt, outs[1], prog));
      outs.push_back(popops::logicalOr(graph, lt, gt, prog));
      outs.push_back(popops::logicalNot(graph, lt, prog));
      std::vector<std::vector<unsigned char>> got(outs.size());
      for (std::size_t i = 0; i < outs.size(); ++i) {
        REQUIRE(outs[i].elementType() == BOOL);
        dev.read(graph, outs[i], got[i]);
      }
      dev.write(graph, A, a);
      dev.write(graph, B, b);
      dev.run(graph, prog);
      for (std::size_t k = 0; k < n; ++k) {
        const float x = a[k], y = b[k];
        const bool want[] = {
            x == y, x != y, x > y, x >= y, x < y, x <= y, (x < y) && (x != y), (x < y) || (x > y), !(x < y)};
        for (std::size_t i = 0; i < outs.size(); ++i) {
          INFO("output " << i << " element " << k);
          REQUIRE(static_cast<bool>(got[i][k]) == want[i]);
        }
      }
    });
  }
}

TEST_CASE("popops in-place, WithOutput, broadcast, constant and view forms", "[popops][elementwise]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t rows = 8, cols = 16;
      const auto m = inputs(rows * cols, -4.0f, 4.0f, 6), v = inputs(cols, -1.0f, 1.0f, 7),
                 c = inputs(rows, 0.5f, 2.0f, 8), t = inputs(rows * cols, -4.0f, 4.0f, 9);
      Tensor M = mappedVariable(graph, type, {rows, cols}, "M");
      Tensor V = mappedVariable(graph, type, {cols}, "V");
      Tensor C = mappedVariable(graph, type, {rows, 1}, "C");
      Tensor T = mappedVariable(graph, type, {cols, rows}, "T");
      Tensor inPlace = mappedVariable(graph, type, {rows, cols}, "inPlace");
      Tensor withOut = mappedVariable(graph, type, {rows, cols}, "withOut");
      program::Sequence prog;
      prog.add(program::Copy(M, inPlace));
      Tensor rowBroadcast = popops::add(graph, M, V, prog);  // {8,16} + {16}
      Tensor colBroadcast = popops::mul(graph, C, V, prog);  // {8,1} * {16} -> {8,16}
      Tensor plusConst = popops::add(graph, M, 2.0f, prog);  // scalar constant
      Tensor constMinus = popops::sub(graph, 1.0f, M, prog); // constant first
      Tensor viewSum = popops::add(graph, T.transpose(), M, prog);
      popops::mulInPlace(graph, inPlace, 0.5f, prog);
      popops::subInPlace(graph, inPlace, V, prog);
      popops::maxWithOutput(graph, M, T.transpose(), withOut, prog);
      std::vector<float> gotRow, gotCol, gotPlus, gotMinus, gotView, gotInPlace, gotWithOut;
      dev.read(graph, rowBroadcast, gotRow);
      dev.read(graph, colBroadcast, gotCol);
      dev.read(graph, plusConst, gotPlus);
      dev.read(graph, constMinus, gotMinus);
      dev.read(graph, viewSum, gotView);
      dev.read(graph, inPlace, gotInPlace);
      dev.read(graph, withOut, gotWithOut);
      dev.write(graph, M, m);
      dev.write(graph, V, v);
      dev.write(graph, C, c);
      dev.write(graph, T, t);
      dev.run(graph, prog);
      const Target &target = dev.getTarget();
      auto r = [&](float x) { return deviceRound(target, type, x); };
      std::vector<float> wRow(rows * cols), wCol(rows * cols), wPlus(rows * cols), wMinus(rows * cols),
          wView(rows * cols), wInPlace(rows * cols), wWithOut(rows * cols);
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) {
          const std::size_t k = i * cols + j;
          const float tt = t[j * rows + i];
          wRow[k] = r(m[k] + v[j]);
          wCol[k] = r(c[i] * v[j]);
          wPlus[k] = r(m[k] + 2.0f);
          wMinus[k] = r(1.0f - m[k]);
          wView[k] = r(tt + m[k]);
          wInPlace[k] = r(r(m[k] * 0.5f) - v[j]);
          wWithOut[k] = std::max(m[k], tt);
        }
      requireClose(gotRow, wRow, relTol(type), absTol(type), "row broadcast");
      requireClose(gotCol, wCol, relTol(type), absTol(type), "column broadcast");
      requireClose(gotPlus, wPlus, relTol(type), absTol(type), "constant operand");
      requireClose(gotMinus, wMinus, relTol(type), absTol(type), "constant first operand");
      requireClose(gotView, wView, relTol(type), absTol(type), "transposed view");
      requireClose(gotInPlace, wInPlace, relTol(type), absTol(type), "in place");
      requireClose(gotWithOut, wWithOut, relTol(type), absTol(type), "with output");
    });
  }
}

TEST_CASE("popops select and clamp", "[popops][elementwise]") {
  for (const Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    aspen::test::forEachTarget([&](TestDevice &dev) {
      Graph graph(dev.getTarget());
      popops::addCodelets(graph);
      const std::size_t n = 257;
      const auto a = inputs(n, -3.0f, 3.0f, 10), b = inputs(n, -3.0f, 3.0f, 11);
      const auto lo = inputs(n, -1.0f, 0.0f, 12), hi = inputs(n, 0.0f, 1.0f, 13);
      Tensor A = mappedVariable(graph, type, {n}, "A");
      Tensor B = mappedVariable(graph, type, {n}, "B");
      Tensor L = mappedVariable(graph, type, {n}, "L");
      Tensor H = mappedVariable(graph, type, {n}, "H");
      program::Sequence prog;
      Tensor cond = popops::gt(graph, A, B, prog);
      Tensor sel = popops::select(graph, A, B, cond, prog);
      Tensor cl = popops::clamp(graph, A, L, H, prog);
      popops::clampInPlace(graph, B, L, H, prog);
      std::vector<float> gotSel, gotClamp, gotClampInPlace;
      dev.read(graph, sel, gotSel);
      dev.read(graph, cl, gotClamp);
      dev.read(graph, B, gotClampInPlace);
      dev.write(graph, A, a);
      dev.write(graph, B, b);
      dev.write(graph, L, lo);
      dev.write(graph, H, hi);
      dev.run(graph, prog);
      std::vector<float> wSel(n), wClamp(n), wClampB(n);
      for (std::size_t k = 0; k < n; ++k) {
        wSel[k] = a[k] > b[k] ? a[k] : b[k];
        wClamp[k] = std::min(std::max(a[k], lo[k]), hi[k]);
        wClampB[k] = std::min(std::max(b[k], lo[k]), hi[k]);
      }
      requireClose(gotSel, wSel, 0, 0, "select");
      requireClose(gotClamp, wClamp, 0, 0, "clamp");
      requireClose(gotClampInPlace, wClampB, 0, 0, "clampInPlace");
    });
  }
}
