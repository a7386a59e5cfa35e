// Copyright (c) Aspen contributors.
// popfloat::experimental::GfloatCast: gfloat formats stored in their native type, cast on the
// popfloat::experimental::CastToGfloat vertices (vertices/popfloat/CastToGfloat.cpp).
#include <popfloat/experimental/CastToGfloat.hpp>

#include "common/OpsCommon.hpp"

#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Expr.hpp>
#include <poputil/OptionParsing.hpp>
#include <poputil/VertexTemplates.hpp>

#include <cfloat>
#include <cmath>
#include <map>
#include <string>

using namespace poplar;

namespace popfloat {
namespace experimental {

namespace {

constexpr unsigned kDenorms = 1, kInfsAndNans = 2;

[[noreturn]] void fail(const std::string &op, const std::string &what) {
  throw poputil::poplibs_error("popfloat::experimental::" + op + ": " + what);
}

/// Rejects a format the calculation type cannot hold exactly: its largest value and its
/// smallest step must be representable in `calculationType`.
void checkFormat(unsigned man, unsigned exp, int bias, bool denorms, bool infsAndNans,
                 const Type &calculationType) {
  const std::string op = "GfloatCast::FormatConfig";
  const bool isHalf = calculationType == HALF;
  if (!isHalf && calculationType != FLOAT)
    fail(op, "calculationType " + calculationType.toString().str() + " is not FLOAT or HALF");
  const unsigned maxMan = isHalf ? 10 : 23, maxExp = isHalf ? 5 : 8;
  if (man > maxMan)
    fail(op, "numMantissaBits " + std::to_string(man) + " is more than " + calculationType.toString().str() +
                 "'s " + std::to_string(maxMan));
  if (exp == 0 || exp > maxExp)
    fail(op, "numExponentBits " + std::to_string(exp) + " must be 1.." + std::to_string(maxExp) + " for " +
                 calculationType.toString().str());
  const int maxField = (1 << exp) - 1 - (infsAndNans ? 1 : 0);
  if (maxField < 1)
    fail(op,
         "numExponentBits " + std::to_string(exp) + " leaves no normal exponent with infinities and NaNs");
  const double maxValue = std::ldexp(2.0 - std::ldexp(1.0, -int(man)), maxField - bias);
  const double minStep = std::ldexp(1.0, (denorms ? 1 - bias : 1 - bias) - int(man));
  const double typeMax = isHalf ? 65504.0 : double(FLT_MAX);
  const double typeMinStep = isHalf ? std::ldexp(1.0, -24) : std::ldexp(1.0, -149);
  if (maxValue > typeMax || minStep < typeMinStep)
    fail(op, "exponentBias " + std::to_string(bias) + " with " + std::to_string(exp) + " exponent and " +
                 std::to_string(man) + " mantissa bits gives values " + calculationType.toString().str() +
                 " cannot hold (largest " + std::to_string(maxValue) + ")");
}

Type specType(SpecType s, const Type &otherwise, const std::string &op, const std::string &what) {
  switch (s) {
  case SpecType::AUTO:
    return otherwise;
  case SpecType::FP32:
    return FLOAT;
  case SpecType::FP16:
    return HALF;
  default:
    fail(op,
         what + " " + specTypeToString(s) +
             ": Aspen stores gfloats in their native type (FP32 or FP16); packed storage is not provided");
  }
}

/// {manBits, expBits, bias, flags} from a packed format (getPackedFloatParameters).
std::vector<unsigned> unpack(unsigned packed) {
  return {packed & 0xFFu, (packed >> 8) & 0xFFu, static_cast<unsigned>(int((packed >> 16) & 0xFFu) - 128),
          (packed >> 24) & 3u};
}

void checkParam(const Tensor &param, const std::string &op) {
  aspen::ops::requireValid(param, "popfloat::experimental::" + op, "param");
  if ((param.elementType() != UNSIGNED_INT && param.elementType() != INT) || param.numElements() != 4)
    fail(op, "param " + aspen::ops::describe(param) +
                 " is not a cast parameter tensor (4 UNSIGNED_INT from createCastOpParamsTensor)");
}

void checkCast(const Tensor &input, const GfloatCast::CastConfig &cfg, const std::string &op) {
  aspen::ops::requireValid(input, "popfloat::experimental::" + op, "input");
  if (input.elementType() != FLOAT && input.elementType() != HALF)
    fail(op, "input " + aspen::ops::describe(input) + " has element type " +
                 input.elementType().toString().str() + "; casts take FLOAT or HALF");
  if (!cfg.getStoreAsNative())
    fail(op,
         "format " + formatTypeToString(cfg.getFormatType()) + " is a packed storage format, not provided");
}

unsigned roundOf(const GfloatCast::CastConfig &cfg, const std::string &op) {
  const RoundType r = cfg.getRoundMode();
  if (r == RoundType::SR || r == RoundType::SX)
    fail(op, "round mode " + roundTypeToString(r) + ": stochastic rounding is not provided");
  if (r == RoundType::INV)
    fail(op, "round mode INV: set roundMode (RZ, RN, RA, RU or RD)");
  return static_cast<unsigned>(r);
}

void addCastVertices(Graph &graph, const Tensor &in, const Tensor *out, const Tensor &param, ComputeSet &cs,
                     const GfloatCast::CastConfig &cfg, unsigned round) {
  const std::string vertex =
      out ? poputil::templateVertex("popfloat::experimental::CastToGfloat", in.elementType(),
                                    out->elementType())
          : poputil::templateVertex("popfloat::experimental::CastToGfloatInPlace", in.elementType());
  const Tensor flatIn = in.flatten();
  const Tensor flatParam = param.flatten().elementType() == UNSIGNED_INT
                               ? param.flatten()
                               : param.flatten().reinterpret(UNSIGNED_INT);
  for (const auto &w : aspen::ops::splitByTile(graph, in)) {
    VertexRef v =
        out ? graph.addVertex(cs, vertex,
                              {{"in", aspen::ops::gather(flatIn, w.regions)},
                               {"out", aspen::ops::gather(out->flatten(), w.regions)},
                               {"param", flatParam}})
            : graph.addVertex(cs, vertex,
                              {{"data", aspen::ops::gather(flatIn, w.regions)}, {"param", flatParam}});
    graph.setInitialValue(v["nanoo"], unsigned(cfg.isNanooModeEnabled() ? 1 : 0));
    graph.setInitialValue(v["round"], round);
    graph.setTileMapping(v, w.tile);
    graph.setPerfEstimate(v, aspen::ops::multiVertexCycles(graph.getTarget(), w.numElements(), 1, 12.0, 20),
                          4 * w.numElements());
  }
}

} // namespace

// ---- options -----------------------------------------------------------------------------

void GfloatCast::GfloatFormatOptions::parseGfloatFormatOptions(const OptionFlags &options) {
  *this = GfloatFormatOptions();
  const poplibs::OptionSpec spec{
      {"numMantissaBits", poplibs::OptionHandler::createWithNumber(numMantissaBits)},
      {"numExponentBits", poplibs::OptionHandler::createWithNumber(numExponentBits)},
      {"numExponentBias", poplibs::OptionHandler::createWithNumber(numExponentBias)},
      {"enableDenorms", poplibs::OptionHandler::createWithBool(enableDenorms)},
      {"enableInfsAndNans", poplibs::OptionHandler::createWithBool(enableInfsAndNans)}};
  spec.parse(options);
}

void GfloatCast::GfloatCastOptions::parseGfloatCastOptions(const OptionFlags &options) {
  *this = GfloatCastOptions();
  std::map<std::string, RoundType> rounds;
  for (RoundType r : {RoundType::INV, RoundType::RZ, RoundType::RN, RoundType::RA, RoundType::RU,
                      RoundType::RD, RoundType::SR, RoundType::SX})
    rounds[roundTypeToString(r)] = r;
  std::map<std::string, SRDensityType> densities;
  for (int d = 0; d <= static_cast<int>(SRDensityType::TRUNCATED_LOGIT_NORMAL); ++d)
    densities[srDensityTypeToString(static_cast<SRDensityType>(d))] = static_cast<SRDensityType>(d);
  const poplibs::OptionSpec spec{
      {"roundMode", poplibs::OptionHandler::createWithEnum(roundMode, rounds)},
      {"srNoiseDensity", poplibs::OptionHandler::createWithEnum(srNoiseDensity, densities)},
      {"numSRBits", poplibs::OptionHandler::createWithNumber(numSRBits)},
      {"srNoiseOffset", poplibs::OptionHandler::createWithNumber(srNoiseOffset)},
      {"srNoiseScale", poplibs::OptionHandler::createWithNumber(srNoiseScale)},
      {"srNoiseMax", poplibs::OptionHandler::createWithNumber(srNoiseMax)},
      {"srNoiseMin", poplibs::OptionHandler::createWithNumber(srNoiseMin)},
      {"bernoulliProb", poplibs::OptionHandler::createWithNumber(bernoulliProb)},
      {"enableNanooMode", poplibs::OptionHandler::createWithBool(enableNanooMode)}};
  spec.parse(options);
}

// ---- FormatConfig ------------------------------------------------------------------------

GfloatCast::FormatConfig::FormatConfig(unsigned numMantissaBits_, unsigned numExponentBits_,
                                       int exponentBias_, bool enableDenorms_, bool enableInfsAndNans_,
                                       Type calculationType_)
    : calculationType(calculationType_), numMantissaBits(numMantissaBits_), numExponentBits(numExponentBits_),
      exponentBias(exponentBias_), enableDenorms(enableDenorms_), enableInfsAndNans(enableInfsAndNans_) {
  checkFormat(numMantissaBits, numExponentBits, exponentBias, enableDenorms, enableInfsAndNans,
              calculationType);
  nativeType = storageType = calculationType;
  if (calculationType == FLOAT)
    formatType = FormatType::QUANTISED_FP32;
  else if (numMantissaBits == 10 && numExponentBits == 5 && exponentBias == 15 && enableDenorms &&
           enableInfsAndNans)
    formatType = FormatType::IEEE_FP16;
  else
    formatType = FormatType::QUANTISED_FP16;
  packedFloatParameters = (numMantissaBits & 0xFFu) | ((numExponentBits & 0xFFu) << 8) |
                          ((static_cast<unsigned>(exponentBias + 128) & 0xFFu) << 16) |
                          ((enableDenorms ? kDenorms : 0u) << 24) |
                          ((enableInfsAndNans ? kInfsAndNans : 0u) << 24);
  packedFloatBits = 1 + numMantissaBits + numExponentBits;
}

GfloatCast::FormatConfig::FormatConfig(unsigned numMantissaBits_, unsigned numExponentBits_,
                                       int exponentBias_, bool enableDenorms_, bool enableInfsAndNans_,
                                       SpecType specCalculationType)
    : FormatConfig(numMantissaBits_, numExponentBits_, exponentBias_, enableDenorms_, enableInfsAndNans_,
                   specType(specCalculationType, FLOAT, "GfloatCast::FormatConfig", "specCalculationType")) {}

GfloatCast::FormatConfig::FormatConfig(GfloatFormatOptions o, Type calculationType_)
    : FormatConfig(o.numMantissaBits, o.numExponentBits, int(o.numExponentBias), o.enableDenorms,
                   o.enableInfsAndNans, calculationType_) {}

GfloatCast::FormatConfig::FormatConfig(const FormatConfig &other) = default;

// ---- RoundConfig -------------------------------------------------------------------------

GfloatCast::RoundConfig::RoundConfig(RoundType roundMode, unsigned numSRBits_, Type calculationType,
                                     SRDensityType srNoiseDensity_, float srNoiseOffset_, float srNoiseScale_,
                                     float srNoiseMax_, float srNoiseMin_, float bernoulliProb_)
    : roundModeType(roundMode), numSRBits(numSRBits_), srNoiseDensity(srNoiseDensity_),
      bernoulliProb(bernoulliProb_), srNoiseOffset(srNoiseOffset_), srNoiseScale(srNoiseScale_),
      srNoiseMax(srNoiseMax_), srNoiseMin(srNoiseMin_) {
  const unsigned mantissa = calculationType == HALF ? 10 : 23;
  if (numSRBits > mantissa + 1)
    numSRBits = mantissa + 1;
  roundingParams = {static_cast<unsigned>(roundModeType)};
  noiseParams = {};
  densityParam = static_cast<unsigned>(srNoiseDensity);
  srBitMask = {numSRBits >= 32 ? ~0u : ((1u << numSRBits) - 1)};
}

GfloatCast::RoundConfig::RoundConfig(const GfloatCast::RoundConfig &roundCfg) = default;

GfloatCast::RoundConfig::RoundConfig(GfloatCastOptions o, Type calculationType)
    : RoundConfig(o.roundMode, o.numSRBits, calculationType, o.srNoiseDensity, float(o.srNoiseOffset),
                  float(o.srNoiseScale), float(o.srNoiseMax), float(o.srNoiseMin), float(o.bernoulliProb)) {}

// ---- CastConfig --------------------------------------------------------------------------

GfloatCast::CastConfig::CastConfig(FormatType floatFormatType_, Type calculationType_, Type storageType_,
                                   RoundConfig roundCfg, bool enableNanooMode_)
    : calculationType(calculationType_), storageType(storageType_), roundConfig(roundCfg),
      enableNanooMode(enableNanooMode_), floatFormatType(floatFormatType_) {
  storeAsNative = floatFormatType == FormatType::QUANTISED_FP32 ||
                  floatFormatType == FormatType::QUANTISED_FP16 || floatFormatType == FormatType::IEEE_FP16;
}

GfloatCast::CastConfig GfloatCast::CastConfig::createCastNativeToGF(FormatType formatType,
                                                                    Type calculationType, Type storageType,
                                                                    RoundConfig roundCfg,
                                                                    bool enableNanooMode) {
  return CastConfig(formatType, calculationType, storageType, roundCfg, enableNanooMode);
}

GfloatCast::CastConfig GfloatCast::CastConfig::createCastGFToNative(FormatType formatType,
                                                                    Type calculationType, Type storageType) {
  return CastConfig(formatType, calculationType, storageType, RoundConfig(), false);
}

// ---- GfloatCast --------------------------------------------------------------------------

GfloatCast::GfloatCast(const FormatConfig &formatCfg_, const RoundConfig &roundCfg,
                       const bool enableNanooMode, const SpecType &GFType, const SpecType &NativeType)
    : formatCfg(formatCfg_), castOpParamSet(false) {
  const Type calc = formatCfg.getCalculationType();
  const Type gfStorage = specType(GFType, formatCfg.getStorageType(), "GfloatCast", "GFType");
  if (gfStorage == HALF && calc == FLOAT)
    checkFormat(formatCfg.getNumMantissaBits(), formatCfg.getNumExponentBits(), formatCfg.getExponentBias(),
                formatCfg.isDenormEnabled(), formatCfg.infAndNansEnabled(), HALF);
  const Type nativeStorage = specType(NativeType, calc, "GfloatCast", "NativeType");
  nativeToGFCastCfg =
      CastConfig::createCastNativeToGF(formatCfg.getFormatType(), calc, gfStorage, roundCfg, enableNanooMode);
  gfToNativeCastCfg = CastConfig::createCastGFToNative(formatCfg.getFormatType(), calc, nativeStorage);
}

GfloatCast::GfloatCast(const GfloatFormatOptions &formatOptions, const GfloatCastOptions &castOptions,
                       Type calculationType, const SpecType &GFType, const SpecType &NativeType)
    : GfloatCast(FormatConfig(formatOptions, calculationType), RoundConfig(castOptions, calculationType),
                 castOptions.enableNanooMode, GFType, NativeType) {}

GfloatCast::GfloatCast(const GfloatCast &other)
    : nativeToGFCastCfg(other.nativeToGFCastCfg), gfToNativeCastCfg(other.gfToNativeCastCfg),
      formatCfg(other.formatCfg), gfParams(other.gfParams ? new Tensor(*other.gfParams) : nullptr),
      castOpParamSet(other.castOpParamSet) {}

// ---- parameters --------------------------------------------------------------------------

Tensor GfloatCast::createCastOpParamsTensor(Graph &graph, const ComputeSet &, Type calculationType,
                                            const unsigned gfPacked, const DebugContext &debugContext) {
  program::Sequence unused;
  return createCastOpParamsTensor(graph, unused, calculationType, gfPacked, debugContext);
}

Tensor GfloatCast::createCastOpParamsTensor(Graph &, const ComputeSet &, Type, Tensor, const DebugContext &) {
  fail("GfloatCast::createCastOpParamsTensor",
       "a packed format held in a tensor needs a Sequence (the form taking a ComputeSet is not provided)");
}

Tensor GfloatCast::createCastOpParamsTensor(Graph &graph, program::Sequence &, Type calculationType,
                                            const unsigned gfStruct, const DebugContext &debugContext) {
  const std::vector<unsigned> p = unpack(gfStruct);
  checkFormat(p[0], p[1], int(p[2]), p[3] & kDenorms, p[3] & kInfsAndNans, calculationType);
  Tensor param = graph.addConstant<unsigned>(UNSIGNED_INT, {4}, p, {debugContext, "gfloatParams"});
  graph.setTileMapping(param, 0);
  return param;
}

Tensor GfloatCast::createCastOpParamsTensor(Graph &graph, program::Sequence &prog, Type calculationType,
                                            Tensor gfStruct, const DebugContext &debugContext) {
  (void)calculationType;
  aspen::ops::requireValid(gfStruct, "popfloat::experimental::GfloatCast::createCastOpParamsTensor",
                           "gfStruct");
  if ((gfStruct.elementType() != UNSIGNED_INT && gfStruct.elementType() != INT) ||
      gfStruct.numElements() != 1)
    fail("GfloatCast::createCastOpParamsTensor",
         "gfStruct " + aspen::ops::describe(gfStruct) + " must be one UNSIGNED_INT or INT");
  using namespace popops::expr;
  const Tensor s = gfStruct.flatten().elementType() == UNSIGNED_INT
                       ? gfStruct.flatten()
                       : popops::cast(graph, gfStruct.flatten(), UNSIGNED_INT, prog);
  const DebugContext dc{debugContext, "gfloatParams"};
  const Tensor man = popops::map(graph, BitwiseAnd(_1, Const(0xFFu)), {s}, prog, dc);
  const Tensor exp = popops::map(graph, BitwiseAnd(Shr(_1, Const(8u)), Const(0xFFu)), {s}, prog, dc);
  const Tensor bias =
      popops::map(graph, Sub(BitwiseAnd(Shr(_1, Const(16u)), Const(0xFFu)), Const(128u)), {s}, prog, dc);
  const Tensor flags = popops::map(graph, BitwiseAnd(Shr(_1, Const(24u)), Const(3u)), {s}, prog, dc);
  return concat({man, exp, bias, flags});
}

void GfloatCast::createCastOpParamsTensor(Graph &graph, program::Sequence &prog,
                                          const DebugContext &debugContext) {
  gfParams.reset(new Tensor(createCastOpParamsTensor(graph, prog, formatCfg.getCalculationType(),
                                                     formatCfg.getPackedFloatParameters(), debugContext)));
  castOpParamSet = true;
}

void GfloatCast::createCastOpParamsTensor(Graph &graph, const ComputeSet &cs) {
  gfParams.reset(new Tensor(createCastOpParamsTensor(graph, cs, formatCfg.getCalculationType(),
                                                     formatCfg.getPackedFloatParameters())));
  castOpParamSet = true;
}

// ---- casts -------------------------------------------------------------------------------

Tensor GfloatCast::castNativeToGfloat(Graph &graph, Tensor input, const Tensor &param, const ComputeSet &cs,
                                      const CastConfig &cfg, const DebugContext &debugContext) {
  const std::string op = "GfloatCast::castNativeToGfloat";
  checkCast(input, cfg, op);
  checkParam(param, op);
  const unsigned round = roundOf(cfg, op);
  Tensor out = graph.clone(cfg.getStorageType(), input, {debugContext, "gfloat"});
  ComputeSet set = cs;
  addCastVertices(graph, input, &out, param, set, cfg, round);
  return out;
}

Tensor GfloatCast::castNativeToGfloat(Graph &graph, Tensor input, const Tensor &param,
                                      program::Sequence &prog, const CastConfig &cfg,
                                      const DebugContext &debugContext) {
  const ComputeSet cs = graph.addComputeSet({debugContext, "castNativeToGfloat"});
  Tensor out = castNativeToGfloat(graph, input, param, cs, cfg, debugContext);
  prog.add(program::Execute(cs, debugContext));
  return out;
}

Tensor GfloatCast::castNativeToGfloat(Graph &graph, Tensor input, program::Sequence &prog,
                                      const DebugContext &debugContext) {
  if (!castOpParamSet || !gfParams)
    fail("GfloatCast::castNativeToGfloat", "no cast parameters: call createCastOpParamsTensor first");
  return castNativeToGfloat(graph, input, *gfParams, prog, nativeToGFCastCfg, debugContext);
}

void GfloatCast::castNativeToGfloatInPlace(Graph &graph, Tensor input, const Tensor &param,
                                           const ComputeSet &cs, const CastConfig &cfg,
                                           const DebugContext &) {
  const std::string op = "GfloatCast::castNativeToGfloatInPlace";
  checkCast(input, cfg, op);
  checkParam(param, op);
  if (!cfg.inPlaceOp(input.elementType()))
    fail(op, "input " + aspen::ops::describe(input) + " is " + input.elementType().toString().str() +
                 " but the gfloat is stored as " + cfg.getStorageType().toString().str());
  if (!input.isParallelWriteable())
    fail(op, "input " + aspen::ops::describe(input) + " cannot be written in place");
  const unsigned round = roundOf(cfg, op);
  ComputeSet set = cs;
  addCastVertices(graph, input, nullptr, param, set, cfg, round);
}

void GfloatCast::castNativeToGfloatInPlace(Graph &graph, Tensor input, const Tensor &param,
                                           program::Sequence &prog, const CastConfig &cfg,
                                           const DebugContext &debugContext) {
  const ComputeSet cs = graph.addComputeSet({debugContext, "castNativeToGfloatInPlace"});
  castNativeToGfloatInPlace(graph, input, param, cs, cfg, debugContext);
  prog.add(program::Execute(cs, debugContext));
}

void GfloatCast::castNativeToGfloatInPlace(Graph &graph, Tensor input, program::Sequence &prog,
                                           const DebugContext &debugContext) {
  if (!castOpParamSet || !gfParams)
    fail("GfloatCast::castNativeToGfloatInPlace", "no cast parameters: call createCastOpParamsTensor first");
  castNativeToGfloatInPlace(graph, input, *gfParams, prog, nativeToGFCastCfg, debugContext);
}

void GfloatCast::castNativeToGfloatInPlace(Graph &graph, Tensor input, const ComputeSet &cs) {
  if (!castOpParamSet || !gfParams)
    fail("GfloatCast::castNativeToGfloatInPlace", "no cast parameters: call createCastOpParamsTensor first");
  castNativeToGfloatInPlace(graph, input, *gfParams, cs, nativeToGFCastCfg);
}

Tensor GfloatCast::castGfloatToNative(Graph &graph, Tensor input, const Tensor &param,
                                      program::Sequence &prog, const CastConfig &cfg,
                                      const DebugContext &debugContext) {
  const std::string op = "GfloatCast::castGfloatToNative";
  checkCast(input, cfg, op);
  checkParam(param, op);
  return popops::cast(graph, input, cfg.getStorageType(), prog, {debugContext, "native"});
}

Tensor GfloatCast::castGfloatToNative(Graph &graph, Tensor input, const Tensor &param, const ComputeSet &cs,
                                      const CastConfig &cfg, const DebugContext &debugContext) {
  const std::string op = "GfloatCast::castGfloatToNative";
  checkCast(input, cfg, op);
  checkParam(param, op);
  return popops::cast(graph, input, cfg.getStorageType(), cs, {debugContext, "native"});
}

Tensor GfloatCast::castGfloatToNative(Graph &graph, Tensor input, program::Sequence &prog,
                                      const DebugContext &debugContext) {
  if (!castOpParamSet || !gfParams)
    fail("GfloatCast::castGfloatToNative", "no cast parameters: call createCastOpParamsTensor first");
  return castGfloatToNative(graph, input, *gfParams, prog, gfToNativeCastCfg, debugContext);
}

Tensor GfloatCast::castGfloatToNative(Graph &graph, Tensor input, const ComputeSet &cs) {
  if (!castOpParamSet || !gfParams)
    fail("GfloatCast::castGfloatToNative", "no cast parameters: call createCastOpParamsTensor first");
  return castGfloatToNative(graph, input, *gfParams, cs, gfToNativeCastCfg);
}

} // namespace experimental
} // namespace popfloat
