// Copyright (c) Aspen contributors.
// Golden tests of popnn (PopLibs <popnn/NonLinearity.hpp>, <popnn/LogSoftmax.hpp>):
// every non-linearity, in place and not, its input gradient, softmax and
// log-softmax, in float and half, against host loops, on every target kind.
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <popnn/LogSoftmax.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using aspen::test::TestTarget;
using popnn::NonLinearityType;

namespace {

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

/// The reference of each element-wise non-linearity, in double.
double reference(NonLinearityType t, double x) {
  switch (t) {
  case NonLinearityType::SIGMOID:
    return sigmoid(x);
  case NonLinearityType::HARD_SIGMOID:
    return std::max(0.0, std::min(1.0, 0.2 * x + 0.5));
  case NonLinearityType::RELU:
    return std::max(0.0, x);
  case NonLinearityType::TANH:
    return std::tanh(x);
  case NonLinearityType::GELU:
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  case NonLinearityType::GELU_ERF:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case NonLinearityType::SWISH:
    return x * sigmoid(x);
  default:
    return 0;
  }
}

/// The derivative, by central differences of the reference (independent of
/// the closed forms the vertices use).
double derivative(NonLinearityType t, double x) {
  const double h = 1e-5;
  return (reference(t, x + h) - reference(t, x - h)) / (2 * h);
}

/// Whether the gradient of `t` is given its input (else its output).
bool gradientTakesInput(NonLinearityType t) {
  return t == NonLinearityType::GELU || t == NonLinearityType::GELU_ERF || t == NonLinearityType::SWISH;
}

const std::vector<NonLinearityType> kElementwise = {
    NonLinearityType::SIGMOID, NonLinearityType::HARD_SIGMOID, NonLinearityType::RELU,
    NonLinearityType::TANH,    NonLinearityType::GELU,         NonLinearityType::GELU_ERF,
    NonLinearityType::SWISH,
};

/// Softmax of each row of `x` {rows, len}, times `scale`, or its logarithm.
std::vector<double> softmaxRows(const std::vector<float> &x, std::size_t len, double scale, bool log) {
  std::vector<double> y(x.size());
  for (std::size_t r = 0; r < x.size() / len; ++r) {
    double maxValue = -INFINITY, sum = 0;
    for (std::size_t i = 0; i < len; ++i)
      maxValue = std::max(maxValue, double(x[r * len + i]));
    for (std::size_t i = 0; i < len; ++i)
      sum += std::exp(x[r * len + i] - maxValue);
    for (std::size_t i = 0; i < len; ++i)
      y[r * len + i] =
          log ? x[r * len + i] - maxValue - std::log(sum) : scale * std::exp(x[r * len + i] - maxValue) / sum;
  }
  return y;
}

} // namespace

TEST_CASE("popnn_nonlinearity: element-wise non-linearities and their gradients match host loops",
          "[popnn]") {
  const std::size_t n = 301;
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      popnn::addCodelets(graph);
      const Target &target = graph.getTarget();
      program::Sequence prog;
      for (const Type &type : {FLOAT, HALF}) {
        const std::string ty = type.toString().str();
        for (NonLinearityType t : kElementwise) {
          const std::string id = ty + std::to_string(int(t));
          Tensor x = graph.addVariable(type, {7, 43}, "x" + id);
          Tensor inPlace = graph.addVariable(type, {n}, "inPlace" + id);
          Tensor grad = graph.addVariable(type, {7, 43}, "g" + id);
          poputil::mapTensorLinearly(graph, x);
          poputil::mapTensorLinearly(graph, inPlace);
          poputil::mapTensorLinearly(graph, grad);
          graph.createHostWrite("x" + id, x);
          graph.createHostWrite("in" + id, inPlace);
          graph.createHostRead("in" + id, inPlace);
          graph.createHostWrite("g" + id, grad);
          Tensor y = popnn::nonLinearity(graph, t, x, prog, "nl" + id);
          popnn::nonLinearityInPlace(graph, t, inPlace, prog, "nlInPlace" + id);
          Tensor dx = popnn::nonLinearityInputGradient(graph, t, gradientTakesInput(t) ? x : y, grad, prog);
          graph.createHostRead("y" + id, y);
          graph.createHostRead("dx" + id, dx);
        }
      }
      auto engine = dev.createEngine(graph, {prog});
      std::map<std::string, std::vector<float>> xs, grads, ins;
      for (const Type &type : {FLOAT, HALF})
        for (NonLinearityType t : kElementwise) {
          const std::string id = type.toString().str() + std::to_string(int(t));
          xs[id] = aspen::test::randomValues(n, -4.0f, 4.0f, 1 + int(t), type, target);
          ins[id] = aspen::test::randomValues(n, -4.0f, 4.0f, 50 + int(t), type, target);
          grads[id] = aspen::test::randomValues(n, -1.0f, 1.0f, 100 + int(t), type, target);
          aspen::test::writeFloats(*engine, "x" + id, type, target, xs[id]);
          aspen::test::writeFloats(*engine, "in" + id, type, target, ins[id]);
          aspen::test::writeFloats(*engine, "g" + id, type, target, grads[id]);
        }
      engine->run(0);
      for (const Type &type : {FLOAT, HALF}) {
        const double tolerance = type == HALF ? 1e-3 : 2e-6;
        for (NonLinearityType t : kElementwise) {
          const std::string id = type.toString().str() + std::to_string(int(t));
          std::vector<double> y(n), in(n), dx(n);
          for (std::size_t i = 0; i < n; ++i) {
            y[i] = reference(t, xs[id][i]);
            in[i] = reference(t, ins[id][i]);
            dx[i] = grads[id][i] * derivative(t, xs[id][i]);
          }
          requireClose(aspen::test::readFloats(*engine, "y" + id, type, target, n), y, tolerance, tolerance,
                       "nonLinearity " + id);
          requireClose(aspen::test::readFloats(*engine, "in" + id, type, target, n), in, tolerance, tolerance,
                       "nonLinearityInPlace " + id);
          // RELU and HARD_SIGMOID have kinks: compare away from them only.
          auto actual = aspen::test::readFloats(*engine, "dx" + id, type, target, n);
          for (std::size_t i = 0; i < n; ++i) {
            const double x = xs[id][i];
            const bool nearKink =
                (t == NonLinearityType::RELU && std::fabs(x) < 1e-3) ||
                (t == NonLinearityType::HARD_SIGMOID && std::fabs(std::fabs(x) - 2.5) < 1e-2);
            if (nearKink)
              actual[i] = float(dx[i]);
          }
          requireClose(actual, dx, type == HALF ? 2e-3 : 1e-5, type == HALF ? 2e-3 : 1e-5,
                       "nonLinearityInputGradient " + id);
        }
      }
    }
  }
}

TEST_CASE("popnn_nonlinearity: softmax variants and log-softmax work over the innermost dimension",
          "[popnn]") {
  const std::vector<std::size_t> shape = {3, 4, 19};
  const std::size_t total = 3 * 4 * 19, len = 19;
  const std::vector<NonLinearityType> softmaxes = {
      NonLinearityType::SOFTMAX, NonLinearityType::SOFTMAX_STABLE, NonLinearityType::SOFTMAX_SCALED};
  for (TestTarget kind : aspen::test::allTargets()) {
    DYNAMIC_SECTION("on the " << aspen::test::targetName(kind)) {
      TestDevice dev(kind);
      Graph graph(dev.getTarget());
      popnn::addCodelets(graph);
      const Target &target = graph.getTarget();
      program::Sequence prog;
      std::map<std::string, float> scalings;
      for (const Type &type : {FLOAT, HALF}) {
        const std::string ty = type.toString().str();
        Tensor x = graph.addVariable(type, shape, "x" + ty);
        poputil::mapTensorLinearly(graph, x);
        graph.createHostWrite("x" + ty, x);
        for (NonLinearityType t : softmaxes) {
          const std::string id = ty + std::to_string(int(t));
          float scaling = 0;
          Tensor y = popnn::nonLinearity(graph, t, x, scaling, prog, "softmax" + id);
          scalings[id] = scaling;
          graph.createHostRead("y" + id, y);
        }
        Tensor grad = graph.addVariable(type, shape, "grad" + ty);
        poputil::mapTensorLinearly(graph, grad);
        graph.createHostWrite("grad" + ty, grad);
        Tensor probs = popnn::softmaxStable(graph, x, prog);
        Tensor dx = popnn::nonLinearityInputGradient(graph, NonLinearityType::SOFTMAX, probs, grad, prog);
        graph.createHostRead("dx" + ty, dx);
        Tensor logs = popnn::logSoftmax(graph, x, prog, "logSoftmax" + ty);
        graph.createHostRead("log" + ty, logs);
        Tensor logsInPlace = graph.clone(x, "logsInPlace" + ty);
        prog.add(program::Copy(x, logsInPlace));
        popnn::logSoftmaxInPlace(graph, logsInPlace, prog);
        graph.createHostRead("logInPlace" + ty, logsInPlace);
        // A {N, 1} column transposed is one row of N.
        Tensor column = graph.addVariable(type, {len, 1}, "column" + ty);
        poputil::mapTensorLinearly(graph, column);
        graph.createHostWrite("column" + ty, column);
        popnn::softmaxInPlace(graph, column.transpose(), prog);
        graph.createHostRead("column" + ty, column);
      }
      auto engine = dev.createEngine(graph, {prog});
      std::map<std::string, std::vector<float>> xs, grads, columns;
      for (const Type &type : {FLOAT, HALF}) {
        const std::string ty = type.toString().str();
        // Large offsets: only a stable softmax gets these right.
        xs[ty] = aspen::test::randomValues(total, 60.0f, 70.0f, 3, type, target);
        grads[ty] = aspen::test::randomValues(total, -1.0f, 1.0f, 4, type, target);
        columns[ty] = aspen::test::randomValues(len, -2.0f, 2.0f, 5, type, target);
        aspen::test::writeFloats(*engine, "x" + ty, type, target, xs[ty]);
        aspen::test::writeFloats(*engine, "grad" + ty, type, target, grads[ty]);
        aspen::test::writeFloats(*engine, "column" + ty, type, target, columns[ty]);
      }
      engine->run(0);
      for (const Type &type : {FLOAT, HALF}) {
        const std::string ty = type.toString().str();
        const double tolerance = type == HALF ? 1e-3 : 1e-5;
        for (NonLinearityType t : softmaxes) {
          const std::string id = ty + std::to_string(int(t));
          const double scale = t == NonLinearityType::SOFTMAX_SCALED ? 62000.0 : 1.0;
          CHECK(scalings[id] == float(scale));
          std::vector<double> expected = softmaxRows(xs[ty], len, 1.0, false);
          auto actual = aspen::test::readFloats(*engine, "y" + id, type, target, total);
          for (auto &v : actual)
            v = float(v / scale);
          requireClose(actual, expected, tolerance, tolerance, "softmax " + id);
        }
        const auto p = softmaxRows(xs[ty], len, 1.0, false);
        std::vector<double> dx(total);
        for (std::size_t r = 0; r < total / len; ++r) {
          double dot = 0;
          for (std::size_t i = 0; i < len; ++i)
            dot += grads[ty][r * len + i] * p[r * len + i];
          for (std::size_t i = 0; i < len; ++i)
            dx[r * len + i] = p[r * len + i] * (grads[ty][r * len + i] - dot);
        }
        const double gradTolerance = type == HALF ? 2e-3 : 1e-5, logTolerance = type == HALF ? 1e-3 : 1e-5;
        requireClose(aspen::test::readFloats(*engine, "dx" + ty, type, target, total), dx, gradTolerance,
                     gradTolerance, "softmax gradient " + ty);
        requireClose(aspen::test::readFloats(*engine, "log" + ty, type, target, total),
                     softmaxRows(xs[ty], len, 1, true), logTolerance, logTolerance, "logSoftmax " + ty);
        requireClose(aspen::test::readFloats(*engine, "logInPlace" + ty, type, target, total),
                     softmaxRows(xs[ty], len, 1, true), logTolerance, logTolerance,
                     "logSoftmaxInPlace " + ty);
        requireClose(aspen::test::readFloats(*engine, "column" + ty, type, target, len),
                     softmaxRows(columns[ty], len, 1, false), tolerance, tolerance,
                     "softmax of a transposed column " + ty);
      }
    }
  }
}
