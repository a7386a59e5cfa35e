// Copyright (c) Aspen contributors.
// A client of popnn/InstanceNorm.hpp written as a Poplar 3.x user writes one: the forward pass
// (statistics, whitening, normalisation), both overloads of the parameter gradients and of the
// input gradients, both parameter updates, run on an IPUModel through an Engine and checked
// against a host reference in double: per (n, c) mean and variance over the field, whitening,
// gamma/beta, and the gradients derived on the host (themselves checked by finite differences).
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/codelets.hpp>
#include <popnn/InstanceNorm.hpp>
#include <popnn/codelets.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

// The host model of instance norm over acts {N, C, F} (the field flattened).
struct HostInstanceNorm {
  std::size_t N, C, F;
  std::vector<double> x, gamma, beta, g; // acts, per-channel params, gradient of the output
  double eps;

  std::size_t at(std::size_t n, std::size_t c, std::size_t f) const { return (n * C + c) * F + f; }

  double mean(std::size_t n, std::size_t c, const std::vector<double> &v) const {
    double s = 0;
    for (std::size_t f = 0; f < F; ++f)
      s += v[at(n, c, f)];
    return s / double(F);
  }
  double var(std::size_t n, std::size_t c, const std::vector<double> &v, bool unbiased) const {
    const double m = mean(n, c, v);
    double s = 0;
    for (std::size_t f = 0; f < F; ++f)
      s += (v[at(n, c, f)] - m) * (v[at(n, c, f)] - m);
    return s / double(unbiased && F > 1 ? F - 1 : F);
  }
  double invStd(std::size_t n, std::size_t c, const std::vector<double> &v, bool unbiased) const {
    return 1.0 / std::sqrt(var(n, c, v, unbiased) + eps);
  }
  std::vector<double> whitened(const std::vector<double> &v) const {
    std::vector<double> w(v.size());
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t c = 0; c < C; ++c) {
        const double m = mean(n, c, v), s = invStd(n, c, v, false);
        for (std::size_t f = 0; f < F; ++f)
          w[at(n, c, f)] = (v[at(n, c, f)] - m) * s;
      }
    return w;
  }
  std::vector<double> normalised(const std::vector<double> &v) const {
    std::vector<double> y = whitened(v);
    for (std::size_t i = 0; i < y.size(); ++i)
      y[i] = y[i] * gamma[(i / F) % C] + beta[(i / F) % C];
    return y;
  }
  // The loss whose gradient with respect to the output is g: sum of g * y.
  double loss(const std::vector<double> &v) const {
    const std::vector<double> y = normalised(v);
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i)
      l += g[i] * y[i];
    return l;
  }
  // dL/dgamma[c] = sum over n, f of g * xhat; dL/dbeta[c] = sum of g.
  std::pair<std::vector<double>, std::vector<double>> paramGrads() const {
    const std::vector<double> w = whitened(x);
    std::vector<double> dg(C, 0.0), db(C, 0.0);
    for (std::size_t i = 0; i < w.size(); ++i) {
      dg[(i / F) % C] += g[i] * w[i];
      db[(i / F) % C] += g[i];
    }
    return {dg, db};
  }
  // dL/dx = gamma * s * (g - mean(g) - xhat * mean(g * xhat)), means over the field of (n, c):
  // xhat = (x - m) s depends on x directly, through m (d m / d x = 1/F) and through s
  // (d s / d x = -s^3 (x - m) / F).
  std::vector<double> inputGrads() const {
    const std::vector<double> w = whitened(x);
    std::vector<double> dx(x.size());
    for (std::size_t n = 0; n < N; ++n)
      for (std::size_t c = 0; c < C; ++c) {
        double mg = 0, mgx = 0;
        for (std::size_t f = 0; f < F; ++f) {
          mg += g[at(n, c, f)];
          mgx += g[at(n, c, f)] * w[at(n, c, f)];
        }
        mg /= double(F);
        mgx /= double(F);
        const double s = invStd(n, c, x, false);
        for (std::size_t f = 0; f < F; ++f) {
          const std::size_t i = at(n, c, f);
          dx[i] = gamma[c] * s * (g[i] - mg - w[i] * mgx);
        }
      }
    return dx;
  }
};

void runClient(const std::vector<std::size_t> &shape) {
  IPUModel ipuModel;
  ipuModel.tilesPerIPU = 4;
  Device device = ipuModel.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);

  const std::size_t N = shape[0], C = shape[1];
  std::size_t F = 1;
  for (std::size_t d = 2; d < shape.size(); ++d)
    F *= shape[d];
  const float eps = 1e-3f;

  Tensor acts = graph.addVariable(FLOAT, shape, "acts");
  Tensor gradsIn = graph.addVariable(FLOAT, shape, "gradsIn");
  Tensor gamma = graph.addVariable(FLOAT, {C}, "gamma");
  Tensor beta = graph.addVariable(FLOAT, {C}, "beta");
  Tensor gammaA = graph.addVariable(FLOAT, {C}, "gammaA"), betaA = graph.addVariable(FLOAT, {C}, "betaA");
  Tensor gammaB = graph.addVariable(FLOAT, {C}, "gammaB"), betaB = graph.addVariable(FLOAT, {C}, "betaB");
  for (Tensor t : {acts, gradsIn, gamma, beta, gammaA, betaA, gammaB, betaB})
    poputil::mapTensorLinearly(graph, t);
  Tensor lr = graph.addConstant(FLOAT, {}, -0.25f, "lr");
  graph.setTileMapping(lr, 1);

  Sequence prog;
  Tensor mean, invStdDev;
  std::tie(mean, invStdDev) =
      popnn::in::instanceNormStatistics(graph, acts, eps, prog, false, false, FLOAT, "in");
  auto unbiased = popnn::in::instanceNormStatistics(graph, acts, eps, prog, true, true, FLOAT, "inUnbiased");
  Tensor whiteOnly = popnn::in::instanceNormWhiten(graph, acts, mean, invStdDev, prog, "whiten");
  Tensor normed, whitened;
  std::tie(normed, whitened) =
      popnn::in::instanceNormalise(graph, acts, gamma, beta, mean, invStdDev, prog, "normalise");
  auto pg1 = popnn::in::instanceNormParamGradients(graph, acts, gradsIn, mean, invStdDev, prog);
  auto pg2 = popnn::in::instanceNormParamGradients(graph, whitened, gradsIn, prog, FLOAT, "pg");
  Tensor dx1 = popnn::in::instanceNormGradients(graph, acts, gradsIn, mean, invStdDev, gamma, prog);
  Tensor dx2 =
      popnn::in::instanceNormGradients(graph, whitened, gradsIn, invStdDev, gamma, prog, FLOAT, "grads");
  popnn::in::instanceNormParamUpdate(graph, pg1.first, pg1.second, -0.5f, gammaA, betaA, prog, "update");
  popnn::in::instanceNormParamUpdate(graph, pg2.first, pg2.second, lr, gammaB, betaB, prog, "updateT");

  const std::map<std::string, Tensor> reads{
      {"mean", mean},       {"isd", invStdDev}, {"meanU", unbiased.first}, {"isdU", unbiased.second},
      {"white", whiteOnly}, {"normed", normed}, {"whitened", whitened},    {"gd1", pg1.first},
      {"bd1", pg1.second},  {"gd2", pg2.first}, {"bd2", pg2.second},       {"dx1", dx1},
      {"dx2", dx2},         {"gammaA", gammaA}, {"betaA", betaA},          {"gammaB", gammaB},
      {"betaB", betaB}};
  for (const auto &r : reads)
    graph.createHostRead(r.first, r.second);
  graph.createHostWrite("acts", acts);
  graph.createHostWrite("gradsIn", gradsIn);
  graph.createHostWrite("gamma", gamma);
  graph.createHostWrite("beta", beta);
  graph.createHostWrite("gammaA", gammaA);
  graph.createHostWrite("betaA", betaA);
  graph.createHostWrite("gammaB", gammaB);
  graph.createHostWrite("betaB", betaB);

  HostInstanceNorm h{N, C, F, {}, {}, {}, {}, eps};
  std::vector<float> hx(N * C * F), hg(N * C * F), hgamma(C), hbeta(C);
  for (std::size_t i = 0; i < hx.size(); ++i) {
    // Different offsets and spreads per (n, c), so each statistic is its own.
    const std::size_t nc = i / F;
    hx[i] = float(nc) * 0.7f - 1.0f + (0.5f + 0.3f * float(nc % 4)) * std::sin(1.3f * float(i) + 0.2f);
    hg[i] = std::cos(0.9f * float(i)) * 0.5f + 0.1f;
  }
  for (std::size_t c = 0; c < C; ++c) {
    hgamma[c] = 0.8f + 0.3f * float(c);
    hbeta[c] = -0.2f + 0.15f * float(c);
  }
  h.x.assign(hx.begin(), hx.end());
  h.g.assign(hg.begin(), hg.end());
  h.gamma.assign(hgamma.begin(), hgamma.end());
  h.beta.assign(hbeta.begin(), hbeta.end());

  Engine engine(graph, prog);
  engine.load(device);
  engine.writeTensor("acts", hx.data(), hx.data() + hx.size());
  engine.writeTensor("gradsIn", hg.data(), hg.data() + hg.size());
  engine.writeTensor("gamma", hgamma.data(), hgamma.data() + C);
  engine.writeTensor("beta", hbeta.data(), hbeta.data() + C);
  for (const char *p : {"gammaA", "gammaB"})
    engine.writeTensor(p, hgamma.data(), hgamma.data() + C);
  for (const char *p : {"betaA", "betaB"})
    engine.writeTensor(p, hbeta.data(), hbeta.data() + C);
  engine.run(0);

  auto read = [&](const std::string &name) {
    std::vector<float> v(reads.at(name).numElements());
    engine.readTensor(name, v.data(), v.data() + v.size());
    return v;
  };
  auto near = [](double got, double want, double tol) {
    return std::fabs(got - want) <= tol * (1 + std::fabs(want));
  };

  // Statistics: {N * C}, ordered n * C + c.
  const auto gm = read("mean"), gs = read("isd"), gmU = read("meanU"), gsU = read("isdU");
  REQUIRE(gm.size() == N * C);
  REQUIRE(gs.size() == N * C);
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c) {
      INFO("n " << n << " c " << c);
      CHECK(near(gm[n * C + c], h.mean(n, c, h.x), 1e-5));
      CHECK(near(gs[n * C + c], h.invStd(n, c, h.x, false), 1e-4));
      CHECK(near(gmU[n * C + c], h.mean(n, c, h.x), 1e-5));
      CHECK(near(gsU[n * C + c], h.invStd(n, c, h.x, true), 1e-4));
    }

  // Whitening and normalisation.
  const auto w = h.whitened(h.x), y = h.normalised(h.x);
  const auto gw = read("white"), gw2 = read("whitened"), gy = read("normed");
  REQUIRE(gy.size() == y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    INFO("element " << i);
    CHECK(near(gw[i], w[i], 1e-4));
    CHECK(near(gw2[i], w[i], 1e-4));
    CHECK(near(gy[i], y[i], 1e-4));
  }

  // The host gradients against finite differences of the host forward pass.
  const auto dx = h.inputGrads();
  const auto pg = h.paramGrads();
  for (std::size_t i : {std::size_t(0), std::size_t(3), dx.size() / 2, dx.size() - 1}) {
    HostInstanceNorm hp = h, hm = h;
    const double step = 1e-5;
    hp.x[i] += step;
    hm.x[i] -= step;
    INFO("finite difference at " << i);
    CHECK(near((hp.loss(hp.x) - hm.loss(hm.x)) / (2 * step), dx[i], 1e-5));
  }
  for (std::size_t c = 0; c < C; ++c) {
    HostInstanceNorm hp = h, hm = h;
    const double step = 1e-5;
    hp.gamma[c] += step;
    hm.gamma[c] -= step;
    CHECK(near((hp.loss(h.x) - hm.loss(h.x)) / (2 * step), pg.first[c], 1e-5));
  }

  // Device gradients against the host.
  const auto gd1 = read("gd1"), bd1 = read("bd1"), gd2 = read("gd2"), bd2 = read("bd2");
  REQUIRE(gd1.size() == C);
  REQUIRE(bd2.size() == C);
  for (std::size_t c = 0; c < C; ++c) {
    INFO("channel " << c);
    CHECK(near(gd1[c], pg.first[c], 1e-4));
    CHECK(near(bd1[c], pg.second[c], 1e-4));
    CHECK(near(gd2[c], pg.first[c], 1e-4));
    CHECK(near(bd2[c], pg.second[c], 1e-4));
  }
  const auto gdx1 = read("dx1"), gdx2 = read("dx2");
  REQUIRE(gdx1.size() == dx.size());
  for (std::size_t i = 0; i < dx.size(); ++i) {
    INFO("element " << i);
    CHECK(near(gdx1[i], dx[i], 2e-4));
    CHECK(near(gdx2[i], dx[i], 2e-4));
  }

  // Parameter updates: float scale -0.5, tensor scale -0.25.
  const auto ga = read("gammaA"), ba = read("betaA"), gb = read("gammaB"), bb = read("betaB");
  for (std::size_t c = 0; c < C; ++c) {
    INFO("channel " << c);
    CHECK(near(ga[c], h.gamma[c] - 0.5 * pg.first[c], 1e-4));
    CHECK(near(ba[c], h.beta[c] - 0.5 * pg.second[c], 1e-4));
    CHECK(near(gb[c], h.gamma[c] - 0.25 * pg.first[c], 1e-4));
    CHECK(near(bb[c], h.beta[c] - 0.25 * pg.second[c], 1e-4));
  }
}

} // namespace

TEST_CASE("popnn::in: an instance-norm layer forward and backward, as a Poplar client writes it",
          "[compat][popnn]") {
  SECTION("{N, C, H, W}") {
    runClient({2, 3, 4, 5});
  }
  SECTION("{N, C, L}") {
    runClient({3, 2, 7});
  }
}

TEST_CASE("popnn::in flop estimates count per channel as PopLibs does", "[compat][popnn]") {
  for (std::uint64_t c : {1u, 3u, 64u})
    for (std::uint64_t a : {1u, 20u, 4096u}) {
      // The terms listed one by one (PopLibs' norm flop model), each over c channels.
      const std::uint64_t stats = (a - 1) * c + c + a * c + (a - 1) * c + c + c + c + c + c;
      const std::uint64_t acts = 4 * a * c;
      CHECK(popnn::in::getFwdFlops(c, a, true) == stats + acts);
      CHECK(popnn::in::getFwdFlops(c, a, false) == acts);
      const std::uint64_t bwd = ((a - 1) * c + c) + (a * c + (a - 1) * c + c + a * c) + (a * c + c + a * c);
      CHECK(popnn::in::getBwdFlops(c, a) == bwd);
      const std::uint64_t wu = ((a - 1) * c + c + c) + (a * c + (a - 1) * c + c + c);
      CHECK(popnn::in::getWuFlops(c, a) == wu);
    }
}
