// Copyright (c) Aspen contributors.
// Issue 26 item 4: a program that adds popops', poplin's and poprand's codelets (not popnn's)
// and calls the popnn ops PopLibs builds from popops vertices — logSoftmax, the softmax
// non-linearities and their gradient, and the forward SIGMOID, HARD_SIGMOID, RELU, TANH and
// GELU_ERF — runs them; results against host loops. With popnn's codelets added, the same ops
// give the same results.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/codelets.hpp>
#include <popnn/LogSoftmax.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/codelets.hpp>
#include <popops/codelets.hpp>
#include <poprand/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace poplar;
using popnn::NonLinearityType;

namespace {

constexpr std::size_t kRows = 3, kCols = 5;

std::vector<float> input() {
  std::vector<float> v(kRows * kCols);
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = 0.37f * float(i % 7) - 1.1f + 0.05f * float(i);
  return v;
}

std::vector<float> softmaxRef(const std::vector<float> &x, bool log, float scale) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r < kRows; ++r) {
    double max = x[r * kCols];
    for (std::size_t c = 1; c < kCols; ++c)
      max = std::max<double>(max, x[r * kCols + c]);
    double sum = 0;
    for (std::size_t c = 0; c < kCols; ++c)
      sum += std::exp(x[r * kCols + c] - max);
    for (std::size_t c = 0; c < kCols; ++c)
      y[r * kCols + c] = log ? float(x[r * kCols + c] - max - std::log(sum))
                             : float(scale * std::exp(x[r * kCols + c] - max) / sum);
  }
  return y;
}

float elementRef(NonLinearityType t, float x) {
  switch (t) {
  case NonLinearityType::SIGMOID:
    return float(1.0 / (1.0 + std::exp(-double(x))));
  case NonLinearityType::HARD_SIGMOID:
    return std::min(1.0f, std::max(0.0f, 0.2f * x + 0.5f));
  case NonLinearityType::RELU:
    return x > 0 ? x : 0.0f;
  case NonLinearityType::TANH:
    return float(std::tanh(double(x)));
  case NonLinearityType::GELU_ERF:
    return float(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
  default:
    return NAN;
  }
}

struct Results {
  std::vector<float> logSoftmax, softmax, stable, scaled, grad;
  std::vector<std::vector<float>> elementwise;
};

const NonLinearityType kElementwise[] = {NonLinearityType::SIGMOID, NonLinearityType::HARD_SIGMOID,
                                         NonLinearityType::RELU, NonLinearityType::TANH,
                                         NonLinearityType::GELU_ERF};

/// Builds and runs every op on one graph; `withPopnn` adds popnn's codelets too.
Results run(bool withPopnn, const std::vector<float> &x, const std::vector<float> &dy) {
  IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  poprand::addCodelets(graph);
  if (withPopnn)
    popnn::addCodelets(graph);
  CHECK(graph.hasCodelet("popnn::SoftmaxRows<float>") == withPopnn);
  Tensor in = graph.addVariable(FLOAT, {kRows, kCols}, "in");
  Tensor outGrad = graph.addVariable(FLOAT, {kRows, kCols}, "outGrad");
  poputil::mapTensorLinearly(graph, in);
  poputil::mapTensorLinearly(graph, outGrad);
  graph.createHostWrite("in", in);
  graph.createHostWrite("outGrad", outGrad);
  program::Sequence prog;
  Tensor logSm = popnn::logSoftmax(graph, in, prog, "logSoftmax");
  Tensor sm = popnn::nonLinearity(graph, NonLinearityType::SOFTMAX, in, prog, "softmax");
  Tensor stable = popnn::nonLinearity(graph, NonLinearityType::SOFTMAX_STABLE, in, prog, "stable");
  float scaling = 0;
  Tensor scaled = popnn::nonLinearity(graph, NonLinearityType::SOFTMAX_SCALED, in, scaling, prog, "scaled");
  CHECK(scaling == Approx(62000.0f));
  Tensor grad = popnn::nonLinearityInputGradient(graph, NonLinearityType::SOFTMAX, sm, outGrad, prog, "grad");
  graph.createHostRead("logSoftmax", logSm);
  graph.createHostRead("softmax", sm);
  graph.createHostRead("stable", stable);
  graph.createHostRead("scaled", scaled);
  graph.createHostRead("grad", grad);
  std::vector<std::string> names;
  for (NonLinearityType t : kElementwise) {
    Tensor y = popnn::nonLinearity(graph, t, in, prog);
    names.push_back("nl" + std::to_string(names.size()));
    graph.createHostRead(names.back(), y);
  }
  Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("in", x.data(), x.data() + x.size());
  engine.writeTensor("outGrad", dy.data(), dy.data() + dy.size());
  engine.run(0);
  auto read = [&](const std::string &name) {
    std::vector<float> v(kRows * kCols);
    engine.readTensor(name, v.data(), v.data() + v.size());
    return v;
  };
  Results r{read("logSoftmax"), read("softmax"), read("stable"), read("scaled"), read("grad"), {}};
  for (const std::string &n : names)
    r.elementwise.push_back(read(n));
  return r;
}

void checkNear(const std::vector<float> &got, const std::vector<float> &want, float tolerance) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(tolerance).epsilon(1e-5));
  }
}

void checkAgainstHost(const Results &r, const std::vector<float> &x, const std::vector<float> &dy) {
  checkNear(r.logSoftmax, softmaxRef(x, true, 1.0f), 1e-5f);
  const std::vector<float> sm = softmaxRef(x, false, 1.0f);
  checkNear(r.softmax, sm, 1e-6f);
  checkNear(r.stable, sm, 1e-6f);
  checkNear(r.scaled, softmaxRef(x, false, 62000.0f), 1e-2f);
  // d/dx softmax: y * (dy - sum(dy * y)) per row.
  std::vector<float> dx(x.size());
  for (std::size_t row = 0; row < kRows; ++row) {
    double dot = 0;
    for (std::size_t c = 0; c < kCols; ++c)
      dot += double(dy[row * kCols + c]) * sm[row * kCols + c];
    for (std::size_t c = 0; c < kCols; ++c)
      dx[row * kCols + c] = float(sm[row * kCols + c] * (dy[row * kCols + c] - dot));
  }
  checkNear(r.grad, dx, 1e-6f);
  for (std::size_t k = 0; k < r.elementwise.size(); ++k) {
    std::vector<float> want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      want[i] = elementRef(kElementwise[k], x[i]);
    INFO("non-linearity " << k);
    checkNear(r.elementwise[k], want, 1e-6f);
  }
}

} // namespace

TEST_CASE("popnn ops PopLibs builds from popops vertices run with popops/poplin/poprand codelets only",
          "[compat][popnn]") {
  const std::vector<float> x = input();
  std::vector<float> dy(x.size());
  for (std::size_t i = 0; i < dy.size(); ++i)
    dy[i] = 0.3f - 0.11f * float(i % 4);
  checkAgainstHost(run(false, x, dy), x, dy);
  checkAgainstHost(run(true, x, dy), x, dy);
}

TEST_CASE("popnn ops PopLibs builds from popnn vertices still need popnn's codelets", "[compat][popnn]") {
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor in = graph.addVariable(FLOAT, {4}, "in");
  poputil::mapTensorLinearly(graph, in);
  program::Sequence prog;
  // SWISH and GELU (tanh form) are popnn vertices in PopLibs too: the error names the vertex.
  try {
    popnn::nonLinearity(graph, NonLinearityType::SWISH, in, prog);
    FAIL("SWISH without popnn's codelets was accepted");
  } catch (const poplar::poplar_error &e) {
    CHECK(std::string(e.what()).find("popnn::NonLinearity") != std::string::npos);
  }
}
