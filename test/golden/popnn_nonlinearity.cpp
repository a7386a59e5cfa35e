// Copyright (c) Aspen contributors.
// Golden tests of popnn (PopLibs <popnn/NonLinearity.hpp>, <popnn/LogSoftmax.hpp>):
// every non-linearity, in place and not, its input gradient, softmax and
// log-softmax, in float and half, against host loops, on every target kind.
#include "OpsTestDevice.hpp"

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
using opstest::DeviceKind;
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

std::vector<float> randomValues(std::size_t n, float lo, float hi, unsigned seed, const Type &type,
                                const Target &target) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = opstest::roundTo(type, target, dist(gen));
  return v;
}

void checkClose(const std::vector<float> &actual, const std::vector<double> &expected, double tolerance,
                const std::string &what) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double allowed = tolerance * (1.0 + std::fabs(expected[i]));
    if (std::fabs(actual[i] - expected[i]) > allowed) {
      INFO(what << ": element " << i << " is " << actual[i] << ", expected " << expected[i]);
      CHECK(std::fabs(actual[i] - expected[i]) <= allowed);
      return;
    }
  }
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
  for (DeviceKind kind : opstest::allDeviceKinds()) {
    DYNAMIC_SECTION("on the " << opstest::kindName(kind)) {
      Device device = opstest::createDevice(kind);
      Graph graph(device.getTarget());
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
      auto engine = opstest::createEngine(kind, graph, {prog}, device);
      std::map<std::string, std::vector<float>> xs, grads, ins;
      for (const Type &type : {FLOAT, HALF})
        for (NonLinearityType t : kElementwise) {
          const std::string id = type.toString().str() + std::to_string(int(t));
          xs[id] = randomValues(n, -4.0f, 4.0f, 1 + int(t), type, target);
          ins[id] = randomValues(n, -4.0f, 4.0f, 50 + int(t), type, target);
          grads[id] = randomValues(n, -1.0f, 1.0f, 100 + int(t), type, target);
          opstest::writeFloats(*engine, "x" + id, type, target, xs[id]);
          opstest::writeFloats(*engine, "in" + id, type, target, ins[id]);
          opstest::writeFloats(*engine, "g" + id, type, target, grads[id]);
        }
      engine->run(0);
      for (const Type &type : {FLOAT, HALF}) {
        const double tolerance = type == HALF ? 4e-3 : 2e-6;
        for (NonLinearityType t : kElementwise) {
          const std::string id = type.toString().str() + std::to_string(int(t));
          std::vector<double> y(n), in(n), dx(n);
          for (std::size_t i = 0; i < n; ++i) {
            y[i] = reference(t, xs[id][i]);
            in[i] = reference(t, ins[id][i]);
            dx[i] = grads[id][i] * derivative(t, xs[id][i]);
          }
          checkClose(opstest::readFloats(*engine, "y" + id, type, target, n), y, tolerance,
                     "nonLinearity " + id);
          checkClose(opstest::readFloats(*engine, "in" + id, type, target, n), in, tolerance,
                     "nonLinearityInPlace " + id);
          // RELU and HARD_SIGMOID have kinks: compare away from them only.
          auto actual = opstest::readFloats(*engine, "dx" + id, type, target, n);
          for (std::size_t i = 0; i < n; ++i) {
            const double x = xs[id][i];
            const bool nearKink =
                (t == NonLinearityType::RELU && std::fabs(x) < 1e-3) ||
                (t == NonLinearityType::HARD_SIGMOID && std::fabs(std::fabs(x) - 2.5) < 1e-2);
            if (nearKink)
              actual[i] = float(dx[i]);
          }
          checkClose(actual, dx, type == HALF ? 1e-2 : 1e-4, "nonLinearityInputGradient " + id);
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
  for (DeviceKind kind : opstest::allDeviceKinds()) {
    DYNAMIC_SECTION("on the " << opstest::kindName(kind)) {
      Device device = opstest::createDevice(kind);
      Graph graph(device.getTarget());
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
        // A {N, 1} column transposed is one row of N.
        Tensor column = graph.addVariable(type, {len, 1}, "column" + ty);
        poputil::mapTensorLinearly(graph, column);
        graph.createHostWrite("column" + ty, column);
        popnn::softmaxInPlace(graph, column.transpose(), prog);
        graph.createHostRead("column" + ty, column);
      }
      auto engine = opstest::createEngine(kind, graph, {prog}, device);
      std::map<std::string, std::vector<float>> xs, grads, columns;
      for (const Type &type : {FLOAT, HALF}) {
        const std::string ty = type.toString().str();
        // Large offsets: only a stable softmax gets these right.
        xs[ty] = randomValues(total, 60.0f, 70.0f, 3, type, target);
        grads[ty] = randomValues(total, -1.0f, 1.0f, 4, type, target);
        columns[ty] = randomValues(len, -2.0f, 2.0f, 5, type, target);
        opstest::writeFloats(*engine, "x" + ty, type, target, xs[ty]);
        opstest::writeFloats(*engine, "grad" + ty, type, target, grads[ty]);
        opstest::writeFloats(*engine, "column" + ty, type, target, columns[ty]);
      }
      engine->run(0);
      for (const Type &type : {FLOAT, HALF}) {
        const std::string ty = type.toString().str();
        const double tolerance = type == HALF ? 3e-3 : 1e-5;
        for (NonLinearityType t : softmaxes) {
          const std::string id = ty + std::to_string(int(t));
          const double scale = t == NonLinearityType::SOFTMAX_SCALED ? 62000.0 : 1.0;
          CHECK(scalings[id] == float(scale));
          std::vector<double> expected = softmaxRows(xs[ty], len, 1.0, false);
          auto actual = opstest::readFloats(*engine, "y" + id, type, target, total);
          for (auto &v : actual)
            v = float(v / scale);
          checkClose(actual, expected, tolerance, "softmax " + id);
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
        checkClose(opstest::readFloats(*engine, "dx" + ty, type, target, total), dx,
                   type == HALF ? 1e-2 : 1e-5, "softmax gradient " + ty);
        checkClose(opstest::readFloats(*engine, "log" + ty, type, target, total),
                   softmaxRows(xs[ty], len, 1, true), type == HALF ? 3e-3 : 1e-5, "logSoftmax " + ty);
        checkClose(opstest::readFloats(*engine, "column" + ty, type, target, len),
                   softmaxRows(columns[ty], len, 1, false), tolerance,
                   "softmax of a transposed column " + ty);
      }
    }
  }
}
