// Copyright (c) Aspen contributors.
// What the recurrent-layer client tests (test/compat/popnn_{lstm,gru,recurrent}.cpp) share:
// the activations of their host models, central finite differences of a host loss, and the
// host side of a test graph (float tensors the host writes and cast into the layer's type,
// results cast to float and read back, compared within a relative tolerance).
#pragma once

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <popnn/NonLinearityDef.hpp>
#include <popops/Cast.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace aspen::test::recurrent {

/// Every value a layer reads, as named host arrays.
using Values = std::map<std::string, std::vector<double>>;

/// The activations the recurrent layers support, in double.
inline double activation(popnn::NonLinearityType t, double x) {
  switch (t) {
  case popnn::NonLinearityType::SIGMOID:
    return 1 / (1 + std::exp(-x));
  case popnn::NonLinearityType::RELU:
    return x > 0 ? x : 0;
  case popnn::NonLinearityType::HARD_SIGMOID:
    return std::max(0.0, std::min(1.0, 0.2 * x + 0.5));
  default:
    return std::tanh(x);
  }
}

/// dLoss/d(v[name]) by central differences; `loss` maps Values to a double.
template <class Loss> std::vector<double> numericGrad(const Loss &loss, Values v, const std::string &name) {
  std::vector<double> g(v.at(name).size());
  const double eps = 1e-6;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double keep = v[name][i];
    v[name][i] = keep + eps;
    const double lp = loss(v);
    v[name][i] = keep - eps;
    const double lm = loss(v);
    v[name][i] = keep;
    g[i] = (lp - lm) / (2 * eps);
  }
  return g;
}

/// The host side of a test graph whose layer computes in `type`.
struct HostIo {
  poplar::Graph &graph;
  poplar::program::Sequence &prog;
  poplar::Type type;
  std::map<std::string, poplar::Tensor> in, out;

  HostIo(poplar::Graph &graph, poplar::program::Sequence &prog, poplar::Type type)
      : graph(graph), prog(prog), type(type) {}

  /// A float tensor the host writes as `name`, cast into `dst`.
  void feed(const std::string &name, const poplar::Tensor &dst) {
    poplar::Tensor f = graph.addVariable(poplar::FLOAT, dst.shape(), name);
    graph.setTileMapping(f, 0);
    graph.createHostWrite(name, f);
    in[name] = f;
    prog.add(poplar::program::Copy(popops::cast(graph, f, type, prog), dst));
  }
  /// `src` cast to float, read as `name`.
  void fetch(const std::string &name, const poplar::Tensor &src) {
    poplar::Tensor f = popops::cast(graph, src, poplar::FLOAT, prog);
    graph.createHostRead(name, f);
    out[name] = f;
  }
  /// Values for every fed tensor, multiples of 1/256 (exact in half) in [-scale, scale] with
  /// scale from `scaleOf(name)`.
  template <class Scale> Values randomValues(unsigned seed, const Scale &scaleOf) const {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    Values v;
    for (const auto &kv : in) {
      std::vector<double> d(kv.second.numElements());
      for (auto &e : d)
        e = std::round(dist(rng) * scaleOf(kv.first) * 256) / 256;
      v[kv.first] = d;
    }
    return v;
  }
  void write(poplar::Engine &engine, const Values &v) const {
    for (const auto &kv : in) {
      std::vector<float> f(v.at(kv.first).begin(), v.at(kv.first).end());
      engine.writeTensor(kv.first, f.data(), f.data() + f.size());
    }
  }
  std::vector<double> read(poplar::Engine &engine, const std::string &name) const {
    std::vector<float> f(out.at(name).numElements());
    engine.readTensor(name, f.data(), f.data() + f.size());
    return std::vector<double>(f.begin(), f.end());
  }
};

/// Requires |got - want| <= tol (1 + |want|) element by element.
inline void checkClose(const std::vector<double> &got, const std::vector<double> &want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])));
  }
}

} // namespace aspen::test::recurrent
