// Copyright (c) Aspen contributors.
// Issue 26 item 3: popfloat's gfloat casts (popfloat/experimental/CastToGfloat.hpp) written as
// programs use them, checked against a host reference that lists every value of the format
// from its bit fields and picks, for each input, the neighbour the rounding mode asks for.
#include <popfloat/experimental/CastToGfloat.hpp>
#include <popfloat/experimental/codelets.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/TypeConversion.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace poplar;
using namespace popfloat::experimental;

namespace {

struct Format {
  unsigned man, exp;
  int bias;
  bool denorms, infNan;
};

struct Grid {
  std::vector<double> values; // non-negative values of the format, ascending, then the first value beyond
  std::vector<bool> evenMantissa;
  double max, minNorm;
};

Grid gridOf(const Format &f) {
  Grid g;
  const int maxField = (1 << f.exp) - 1 - (f.infNan ? 1 : 0);
  for (int e = 0; e <= maxField + 1; ++e)
    for (unsigned m = 0; m < (1u << f.man); ++m) {
      const double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - int(f.man))
                              : std::ldexp(1.0 + std::ldexp(double(m), -int(f.man)), e - f.bias);
      g.values.push_back(v);
      g.evenMantissa.push_back(m % 2 == 0);
      if (e == maxField + 1)
        break; // only the first value beyond the largest: where overflow starts
    }
  g.max = g.values[g.values.size() - 2];
  g.minNorm = std::ldexp(1.0, 1 - f.bias);
  return g;
}

/// The reference cast of x (round to the format as if denormals existed; then flush them when
/// the format has none; overflow saturates or, with nanoo, is NaN).
double reference(double x, const Format &f, const Grid &g, RoundType mode, bool nanoo) {
  const double overflow = nanoo ? std::numeric_limits<double>::quiet_NaN() : g.max;
  if (std::isnan(x))
    return x;
  if (std::isinf(x))
    return f.infNan ? x : std::copysign(overflow, x);
  const double a = std::fabs(x);
  std::size_t pick;
  if (a >= g.values.back()) {
    pick = g.values.size() - 1;
  } else {
    const std::size_t hi = std::upper_bound(g.values.begin(), g.values.end(), a) - g.values.begin();
    const std::size_t lo = hi - 1;
    if (g.values[lo] == a) {
      pick = lo;
    } else {
      const double dLo = a - g.values[lo], dHi = g.values[hi] - a;
      const bool positive = x > 0;
      switch (mode) {
      case RoundType::RZ:
        pick = lo;
        break;
      case RoundType::RN:
        pick = dLo < dHi ? lo : dHi < dLo ? hi : (g.evenMantissa[lo] ? lo : hi);
        break;
      case RoundType::RA:
        pick = dLo < dHi ? lo : hi;
        break;
      case RoundType::RU:
        pick = positive ? hi : lo;
        break;
      default: // RD
        pick = positive ? lo : hi;
        break;
      }
    }
  }
  double r = pick == g.values.size() - 1 ? overflow : g.values[pick];
  if (!f.denorms && r < g.minNorm)
    r = 0;
  return std::copysign(r, x);
}

std::vector<float> inputs(const Format &f, const Grid &g) {
  std::vector<float> v{0.0f, -0.0f, 1.0f, -1.0f, 0.3f, -0.7f, 3.14159f, 100.0f, -1e-3f, 7.5f, 2.25f};
  // Grid points, midpoints and near-midpoints, scaled into the format's range.
  for (std::size_t i = 0; i + 1 < g.values.size(); i += std::max<std::size_t>(1, g.values.size() / 40)) {
    const double a = g.values[i], b = g.values[i + 1];
    for (double x : {a, (a + b) / 2, a + (b - a) * 0.49, a + (b - a) * 0.51})
      for (double s : {1.0, -1.0})
        v.push_back(float(s * x));
  }
  for (double x :
       {g.max, g.max * 1.01, g.values.back(), g.values.back() * 3, g.minNorm / 3, g.minNorm * 0.99})
    for (double s : {1.0, -1.0})
      v.push_back(float(s * x));
  v.push_back(std::numeric_limits<float>::infinity());
  v.push_back(-std::numeric_limits<float>::infinity());
  v.push_back(std::numeric_limits<float>::quiet_NaN());
  (void)f;
  return v;
}

void checkCast(const Format &f, const Type &calc, RoundType mode, bool nanoo) {
  INFO("format m" << f.man << " e" << f.exp << " bias " << f.bias << (f.denorms ? " denorms" : "")
                  << (f.infNan ? " inf/nan" : "") << ", " << calc << ", " << roundTypeToString(mode)
                  << (nanoo ? ", nanoo" : ""));
  IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  popfloat::experimental::addCodelets(graph);
  const Grid grid = gridOf(f);
  std::vector<float> host = inputs(f, grid);
  if (calc == HALF) // a half input holds only half values: the reference sees those
    for (float &x : host)
      if (std::isfinite(x)) {
        std::uint16_t h = 0;
        convertToDeviceType(HALF, ArrayRef<float>(&x, 1), &h);
        float back = 0;
        convertFromDeviceType(HALF, &h, ArrayRef<float>(&back, 1));
        x = std::isinf(back) ? std::copysign(65504.0f, x) : back;
      }
  Tensor in = graph.addVariable(calc, {host.size()}, "in");
  poputil::mapTensorLinearly(graph, in);
  program::Sequence prog;
  GfloatCast::FormatConfig format(f.man, f.exp, f.bias, f.denorms, f.infNan, calc);
  GfloatCast::RoundConfig round(mode, 24, calc);
  GfloatCast gf(format, round, nanoo);
  CHECK(gf.getGFStorageType() == calc);
  CHECK(gf.getFormatConfig().getFormatType() ==
        (calc == FLOAT ? FormatType::QUANTISED_FP32 : FormatType::QUANTISED_FP16));
  gf.createCastOpParamsTensor(graph, prog, "params");
  Tensor gfloat = gf.castNativeToGfloat(graph, in, prog, "toGfloat");
  Tensor native = gf.castGfloatToNative(graph, gfloat, prog, "toNative");
  // The static forms with the cast's own configuration, in place on a copy.
  Tensor copy = graph.clone(in, "copy");
  prog.add(program::Copy(in, copy));
  GfloatCast::castNativeToGfloatInPlace(graph, copy, gf.getCastOpParams(), prog, gf.getNativeToGFConfig(),
                                        "inPlace");
  graph.createHostWrite("in", in);
  graph.createHostRead("native", native);
  graph.createHostRead("copy", copy);
  Engine engine(graph, prog);
  engine.load(device);
  std::vector<char> raw(host.size() * graph.getTarget().getTypeSize(calc));
  convertToDeviceType(calc, ArrayRef<float>(host), raw.data());
  engine.writeTensor("in", raw.data(), raw.data() + raw.size());
  engine.run(0);
  for (const char *name : {"native", "copy"}) {
    engine.readTensor(name, raw.data(), raw.data() + raw.size());
    std::vector<float> out(host.size());
    convertFromDeviceType(calc, raw.data(), out);
    for (std::size_t i = 0; i < host.size(); ++i) {
      const double want = reference(host[i], f, grid, mode, nanoo);
      INFO(name << ": input " << host[i] << " gave " << out[i] << ", expected " << want);
      if (std::isnan(want))
        CHECK(std::isnan(out[i]));
      else
        CHECK(double(out[i]) == want);
    }
  }
}

} // namespace

TEST_CASE("GfloatCast: float gfloats in each rounding mode against the host reference",
          "[compat][popfloat]") {
  const Format f{3, 4, 7, true, true}; // 1/4/3 with denormals, infinities and NaNs
  for (RoundType mode : {RoundType::RZ, RoundType::RN, RoundType::RA, RoundType::RU, RoundType::RD})
    checkCast(f, FLOAT, mode, false);
  checkCast(f, FLOAT, RoundType::RN, true);
}

TEST_CASE("GfloatCast: formats without denormals or infinities, and other biases", "[compat][popfloat]") {
  checkCast({2, 5, 15, false, false}, FLOAT, RoundType::RN, false);
  checkCast({2, 5, 15, false, false}, FLOAT, RoundType::RU, true);
  checkCast({7, 8, 127, true, true}, FLOAT, RoundType::RN, false); // bfloat16's values
  checkCast({4, 3, 2, true, false}, FLOAT, RoundType::RD, false);
}

TEST_CASE("GfloatCast: half gfloats computed in half", "[compat][popfloat]") {
  checkCast({6, 5, 15, true, true}, HALF, RoundType::RN, false);
  checkCast({3, 4, 7, false, true}, HALF, RoundType::RZ, true);
}

TEST_CASE("GfloatCast from options; IEEE half computed in half casts halves to themselves",
          "[compat][popfloat]") {
  const GfloatCast::GfloatFormatOptions formatOptions(
      {{"numMantissaBits", "3"}, {"numExponentBits", "4"}, {"numExponentBias", "7"}});
  CHECK(formatOptions.numMantissaBits == 3);
  CHECK(formatOptions.enableDenorms);
  const GfloatCast::GfloatCastOptions castOptions({{"roundMode", "RU"}, {"enableNanooMode", "false"}});
  CHECK(castOptions.roundMode == RoundType::RU);
  GfloatCast fromOptions(formatOptions, castOptions, FLOAT);
  CHECK(fromOptions.getRoundMode() == RoundType::RU);
  CHECK_FALSE(fromOptions.isNanooModeEnabled());
  CHECK(fromOptions.getFormatConfig().getNumExponentBits() == 4);
  CHECK(GfloatCast::FormatConfig(10, 5, 15, true, true, HALF).getFormatType() == FormatType::IEEE_FP16);
  CHECK(GfloatCast::FormatConfig(10, 5, 15, true, true, SpecType::FP16).getCalculationType() == HALF);
  CHECK_FALSE(GfloatCast::FormatConfig(3, 4, 7, true, true, FLOAT).isPackedFloatFormat());
}
