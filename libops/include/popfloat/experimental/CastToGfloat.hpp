// Copyright (c) Aspen contributors. PopLibs-compatible public API (popfloat, PopLibs 3.x).
// Casts to and from generic floats (gfloats): formats of chosen mantissa and exponent widths,
// exponent bias, denormals and infinities/NaNs, computed in float or half. Aspen stores a gfloat
// in its native type (QUANTISED_FP32 in float, QUANTISED_FP16 / IEEE_FP16 in half); the packed
// 8- and 16-bit storage formats and stochastic rounding are not provided and are rejected with
// poputil::poplibs_error (docs/poplibs-coverage.md).
#ifndef POPFLOAT_EXPERIMENTAL_CASTTOGFLOAT_HPP
#define POPFLOAT_EXPERIMENTAL_CASTTOGFLOAT_HPP

#include <popfloat/experimental/GfloatExpr.hpp>
#include <popfloat/experimental/GfloatExprUtil.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Type.hpp>
#include <poputil/exceptions.hpp>

#include <functional>
#include <memory>
#include <tuple>
#include <vector>

namespace popfloat {
namespace experimental {

class GfloatCast {
public:
  /// The format as options: numMantissaBits, numExponentBits, numExponentBias, enableDenorms,
  /// enableInfsAndNans (defaults: IEEE half's 10, 5, 15, true, true).
  struct GfloatFormatOptions {
    unsigned numMantissaBits;
    unsigned numExponentBits;
    unsigned numExponentBias;
    bool enableDenorms;
    bool enableInfsAndNans;
    void parseGfloatFormatOptions(const poplar::OptionFlags &options);
    GfloatFormatOptions(const poplar::OptionFlags &options) { parseGfloatFormatOptions(options); }
    GfloatFormatOptions() {
      numMantissaBits = 10;
      numExponentBits = 5;
      numExponentBias = 15;
      enableDenorms = true;
      enableInfsAndNans = true;
    }
  };

  /// A gfloat format and the type it is computed in. The format type is QUANTISED_FP32 when
  /// computed in float, IEEE_FP16 for half's own format computed in half, QUANTISED_FP16
  /// otherwise in half; the storage type is the calculation type (specCalculationType FP32 or
  /// FP16 chooses the calculation type; AUTO: float).
  struct FormatConfig {
    FormatConfig() = default;
    FormatConfig(unsigned numMantissaBits, unsigned numExponentBits, int exponentBias, bool enableDenorms,
                 bool enableInfsAndNans, SpecType specCalculationType = SpecType::AUTO);
    FormatConfig(GfloatFormatOptions formatOptions, poplar::Type calculationType);
    FormatConfig(unsigned numMantissaBits, unsigned numExponentBits, int exponentBias, bool enableDenorms,
                 bool enableInfsAndNans, poplar::Type calculationType);
    FormatConfig(const FormatConfig &formatConfig);
    FormatConfig &operator=(const FormatConfig &) = default;

    poplar::Type getCalculationType() const { return calculationType; }
    poplar::Type getNativeType() const { return nativeType; }
    poplar::Type getStorageType() const { return storageType; }
    FormatType getFormatType() const { return formatType; }
    unsigned getNumMantissaBits() const { return numMantissaBits; }
    unsigned getNumExponentBits() const { return numExponentBits; }
    int getExponentBias() const { return exponentBias; }
    bool isDenormEnabled() const { return enableDenorms; }
    bool infAndNansEnabled() const { return enableInfsAndNans; }
    bool isPackedFloatFormat() const {
      return formatType != FormatType::QUANTISED_FP16 && formatType != FormatType::QUANTISED_FP32 &&
             formatType != FormatType::IEEE_FP16;
    }
    unsigned getPackedFloatBits() const { return packedFloatBits; }
    bool isBlockFloat() const { return blockFloat; }
    unsigned getPackedFloatParameters() const { return packedFloatParameters; }
    bool operator==(FormatConfig &other) const {
      return std::tie(numMantissaBits, numExponentBits, exponentBias, enableDenorms, enableInfsAndNans,
                      calculationType) == std::tie(other.numMantissaBits, other.numExponentBits,
                                                   other.exponentBias, other.enableDenorms,
                                                   other.enableInfsAndNans, other.calculationType);
    }

  private:
    poplar::Type calculationType = poplar::FLOAT;
    unsigned numMantissaBits = 10;
    unsigned numExponentBits = 5;
    int exponentBias = 15;
    bool enableDenorms = true;
    bool enableInfsAndNans = true;
    poplar::Type nativeType = poplar::FLOAT;
    poplar::Type storageType = poplar::FLOAT;
    FormatType formatType = FormatType::QUANTISED_FP32;
    unsigned packedFloatParameters = 0;
    bool blockFloat = false;
    unsigned packedFloatBits = 0;
  };

  /// Rounding as options: roundMode (RZ, RN, RA, RU, RD, SR, SX), srNoiseDensity, numSRBits,
  /// srNoiseOffset, srNoiseScale, srNoiseMax, srNoiseMin, bernoulliProb, enableNanooMode.
  struct GfloatCastOptions {
    RoundType roundMode;
    SRDensityType srNoiseDensity;
    unsigned numSRBits;
    double srNoiseOffset;
    double srNoiseScale;
    double srNoiseMax;
    double srNoiseMin;
    double bernoulliProb;
    bool enableNanooMode;
    void parseGfloatCastOptions(const poplar::OptionFlags &options);
    GfloatCastOptions(const poplar::OptionFlags &options) { parseGfloatCastOptions(options); }
    GfloatCastOptions() {
      roundMode = RoundType::INV;
      srNoiseDensity = SRDensityType::INVALID;
      numSRBits = 24;
      srNoiseOffset = 0.0;
      srNoiseScale = 0.0;
      srNoiseMax = 0.0;
      srNoiseMin = 0.0;
      bernoulliProb = 0.0;
      enableNanooMode = true;
    }
  };

  /// How values are rounded. Aspen casts with the deterministic modes (RZ, RN, RA, RU, RD);
  /// SR and SX are kept in the configuration and rejected by the casts.
  struct RoundConfig {
    RoundConfig() = default;
    RoundConfig(RoundType roundMode, unsigned numSRBits, poplar::Type calculationType,
                SRDensityType srNoiseDensity = SRDensityType::INVALID, float srNoiseOffset = 0.0,
                float srNoiseScale = 0.0, float srNoiseMax = 0.0, float srNoiseMin = 0.0,
                float bernoulliProb = 0.0);
    RoundConfig(const GfloatCast::RoundConfig &roundCfg);
    RoundConfig(GfloatCastOptions castOptions, poplar::Type calculationType);
    RoundConfig &operator=(const RoundConfig &) = default;

    RoundType getRoundMode() const { return roundModeType; }
    unsigned getNumSRBits() const { return numSRBits; }
    SRDensityType getSRNoiseDensity() const { return srNoiseDensity; }
    std::vector<unsigned> getRoundingParams() const { return roundingParams; }
    std::vector<unsigned> getNoiseParams() const { return noiseParams; }
    unsigned getDensityParam() const { return densityParam; }
    float getBernoulliProbability() const { return bernoulliProb; }
    float getSRNoiseOffset() const { return srNoiseOffset; }
    float getSRNoiseScale() const { return srNoiseScale; }
    float getSRNoiseMax() const { return srNoiseMax; }
    float getSRNoiseMin() const { return srNoiseMin; }
    std::vector<unsigned> getSRBitMask() const { return srBitMask; }

  private:
    RoundType roundModeType = RoundType::RN;
    unsigned numSRBits = 24;
    SRDensityType srNoiseDensity = SRDensityType::INVALID;
    float bernoulliProb = 0;
    float srNoiseOffset = 0;
    float srNoiseScale = 0;
    float srNoiseMax = 0;
    float srNoiseMin = 0;
    std::vector<unsigned> noiseParams;
    unsigned densityParam = 0;
    std::vector<unsigned> srBitMask;
    std::vector<unsigned> roundingParams;
  };

  /// One direction of a cast: native to gfloat (with rounding) or gfloat to native.
  struct CastConfig {
    CastConfig() = default;
    static CastConfig createCastNativeToGF(FormatType formatType, poplar::Type calculationType,
                                           poplar::Type storageType, RoundConfig roundCfg,
                                           bool enableNanooMode);
    static CastConfig createCastGFToNative(FormatType formatType, poplar::Type calculationType,
                                           poplar::Type storageType);
    RoundType getRoundMode() const { return roundConfig.getRoundMode(); }
    unsigned getNumSRBits() const { return roundConfig.getNumSRBits(); }
    SRDensityType getSRNoiseDensity() const { return roundConfig.getSRNoiseDensity(); }
    std::vector<unsigned> getNoiseParams() const { return roundConfig.getNoiseParams(); }
    unsigned getDensityParam() const { return roundConfig.getDensityParam(); }
    float getBernoulliProbability() const { return roundConfig.getBernoulliProbability(); }
    float getSRNoiseOffset() const { return roundConfig.getSRNoiseOffset(); }
    float getSRNoiseScale() const { return roundConfig.getSRNoiseScale(); }
    float getSRNoiseMax() const { return roundConfig.getSRNoiseMax(); }
    float getSRNoiseMin() const { return roundConfig.getSRNoiseMin(); }
    std::vector<unsigned> getSRBitMask() const { return roundConfig.getSRBitMask(); }
    bool isNanooModeEnabled() const { return enableNanooMode; }
    std::vector<unsigned> getCastParams() const { return castParams; }
    poplar::Type getCalculationType() const { return calculationType; }
    poplar::Type getStorageType() const { return storageType; }
    bool inPlaceOp(poplar::Type inType) const { return inType == storageType; }
    FormatType getFormatType() const { return floatFormatType; }
    bool getStoreAsNative() const { return storeAsNative; }
    std::vector<unsigned> getRoundingParams() const { return roundConfig.getRoundingParams(); }

  private:
    CastConfig(FormatType floatFormatType, poplar::Type calculationType, poplar::Type storageType,
               RoundConfig roundCfg, bool enableNanooMode);
    poplar::Type calculationType = poplar::FLOAT;
    poplar::Type storageType = poplar::FLOAT;
    RoundConfig roundConfig;
    bool enableNanooMode = false;
    FormatType floatFormatType = FormatType::QUANTISED_FP32;
    bool storeAsNative = true;
    std::vector<unsigned> castParams;
  };

  GfloatCast(const FormatConfig &formatCfg, const RoundConfig &roundCfg, const bool enableNanooMode,
             const SpecType &GFType = SpecType::AUTO, const SpecType &NativeType = SpecType::AUTO);
  GfloatCast(const GfloatFormatOptions &formatOtions, const GfloatCastOptions &castOptions,
             poplar::Type calculationType, const SpecType &GFType = SpecType::AUTO,
             const SpecType &NativeType = SpecType::AUTO);
  GfloatCast(const GfloatCast &gfloatCast);

  /// The cast's parameter tensor: the format (mantissa bits, exponent bits, bias, flags) as
  /// UNSIGNED_INT values on tile 0. The casts take the format from their CastConfig; the tensor
  /// is checked to be one of these.
  static poplar::Tensor createCastOpParamsTensor(poplar::Graph &graph, const poplar::ComputeSet &cs,
                                                 poplar::Type calculationType, const unsigned gfPacked,
                                                 const poplar::DebugContext &debugContext = {});
  static poplar::Tensor createCastOpParamsTensor(poplar::Graph &graph, const poplar::ComputeSet &cs,
                                                 poplar::Type calculationType, poplar::Tensor gfPacked,
                                                 const poplar::DebugContext &debugContext = {});
  static poplar::Tensor createCastOpParamsTensor(poplar::Graph &graph, poplar::program::Sequence &prog,
                                                 poplar::Type calculationType, const unsigned gfStruct,
                                                 const poplar::DebugContext &debugContext = {});
  static poplar::Tensor createCastOpParamsTensor(poplar::Graph &graph, poplar::program::Sequence &prog,
                                                 poplar::Type calculationType, poplar::Tensor gfStruct,
                                                 const poplar::DebugContext &debugContext = {});
  void createCastOpParamsTensor(poplar::Graph &graph, poplar::program::Sequence &prog,
                                const poplar::DebugContext &debugContext = {});
  void createCastOpParamsTensor(poplar::Graph &graph, const poplar::ComputeSet &cs);

  /// `input` (float or half) rounded to the gfloat format, a new tensor of the storage type.
  static poplar::Tensor castNativeToGfloat(poplar::Graph &graph, poplar::Tensor input,
                                           const poplar::Tensor &param, poplar::program::Sequence &prog,
                                           const CastConfig &gfCastCfg,
                                           const poplar::DebugContext &debugContext = {});
  static poplar::Tensor castNativeToGfloat(poplar::Graph &graph, poplar::Tensor input,
                                           const poplar::Tensor &param, const poplar::ComputeSet &cs,
                                           const CastConfig &gfCastCfg,
                                           const poplar::DebugContext &debugContext = {});
  poplar::Tensor castNativeToGfloat(poplar::Graph &graph, poplar::Tensor input,
                                    poplar::program::Sequence &prog,
                                    const poplar::DebugContext &debugContext = {});
  static void castNativeToGfloatInPlace(poplar::Graph &graph, poplar::Tensor input,
                                        const poplar::Tensor &param, poplar::program::Sequence &prog,
                                        const CastConfig &gfCastCfg,
                                        const poplar::DebugContext &debugContext = {});
  void castNativeToGfloatInPlace(poplar::Graph &graph, poplar::Tensor input, poplar::program::Sequence &prog,
                                 const poplar::DebugContext &debugContext = {});
  static void castNativeToGfloatInPlace(poplar::Graph &graph, poplar::Tensor input,
                                        const poplar::Tensor &param, const poplar::ComputeSet &cs,
                                        const CastConfig &gfCastCfg,
                                        const poplar::DebugContext &debugContext = {});
  void castNativeToGfloatInPlace(poplar::Graph &graph, poplar::Tensor input, const poplar::ComputeSet &cs);

  /// A gfloat (stored natively) as the native type: a new tensor of the native storage type.
  static poplar::Tensor castGfloatToNative(poplar::Graph &graph, poplar::Tensor input,
                                           const poplar::Tensor &param, poplar::program::Sequence &prog,
                                           const CastConfig &gfCastCfg,
                                           const poplar::DebugContext &debugContext = {});
  poplar::Tensor castGfloatToNative(poplar::Graph &graph, poplar::Tensor input,
                                    poplar::program::Sequence &prog,
                                    const poplar::DebugContext &debugContext = {});
  static poplar::Tensor castGfloatToNative(poplar::Graph &graph, poplar::Tensor input,
                                           const poplar::Tensor &param, const poplar::ComputeSet &cs,
                                           const CastConfig &gfCastCfg,
                                           const poplar::DebugContext &debugContext = {});
  poplar::Tensor castGfloatToNative(poplar::Graph &graph, poplar::Tensor input, const poplar::ComputeSet &cs);

  poplar::Type getGFStorageType() const { return nativeToGFCastCfg.getStorageType(); }
  poplar::Type getCalculationType() const { return nativeToGFCastCfg.getCalculationType(); }
  poplar::Type getNativeStorageType() const { return gfToNativeCastCfg.getStorageType(); }
  FormatConfig getFormatConfig() const { return formatCfg; }
  CastConfig getNativeToGFConfig() const { return nativeToGFCastCfg; }
  CastConfig getGFToNativeConfig() const { return gfToNativeCastCfg; }
  bool getStoreAsNative() const { return nativeToGFCastCfg.getStoreAsNative(); }
  poplar::Tensor getCastOpParams() const { return *gfParams; }
  bool isCastOpParamSet() const { return castOpParamSet; }
  void setGfloatCastParameters(poplar::Tensor *gfParams_) { gfParams.reset(gfParams_); }
  bool isNanooModeEnabled() const { return nativeToGFCastCfg.isNanooModeEnabled(); }
  std::vector<unsigned> getSRBitMask() const { return nativeToGFCastCfg.getSRBitMask(); }
  RoundType getRoundMode() const { return nativeToGFCastCfg.getRoundMode(); }
  bool inPlaceOp(poplar::Type outType) const { return nativeToGFCastCfg.inPlaceOp(outType); }
  std::vector<unsigned> getRoundingParams() const { return nativeToGFCastCfg.getRoundingParams(); }

protected:
  CastConfig nativeToGFCastCfg;
  CastConfig gfToNativeCastCfg;
  FormatConfig formatCfg;
  std::unique_ptr<poplar::Tensor> gfParams;
  bool castOpParamSet;
};

} // namespace experimental
} // namespace popfloat

#endif
