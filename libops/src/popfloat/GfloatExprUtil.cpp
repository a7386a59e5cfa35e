// Copyright (c) Aspen contributors.
#include <popfloat/experimental/GfloatExprUtil.hpp>

#include <poputil/exceptions.hpp>

namespace popfloat {
namespace experimental {

namespace {

template <typename E, std::size_t N>
std::string nameOf(E value, const char *const (&names)[N], const char *function) {
  const auto i = static_cast<std::size_t>(value);
  if (i >= N)
    throw poputil::poplibs_error(std::string("popfloat::experimental::") + function + ": value " +
                                 std::to_string(i) + " is not an enumerator");
  return names[i];
}

} // namespace

std::string roundTypeToString(RoundType rmode) {
  static const char *const names[] = {"INV", "RZ", "RN", "RA", "RU", "RD", "SR", "SX"};
  return nameOf(rmode, names, "roundTypeToString");
}

std::string formatTypeToString(FormatType fmt) {
  static const char *const names[] = {
      "INVALID_FORMAT",   "IEEE_FP16",          "QUANTISED_FP32", "QUANTISED_FP16", "MIN_NORM_ALIGN_GF8",
      "ONE_FIVE_TWO_GF8", "MAX_NORM_ALIGN_GF8", "BFLOAT16",       "NO_DENORM_GF16", "ENABLE_DENORM_GF16"};
  return nameOf(fmt, names, "formatTypeToString");
}

std::string srDensityTypeToString(SRDensityType dist) {
  static const char *const names[] = {"INVALID",
                                      "UNIFORM",
                                      "NORMAL",
                                      "TRUNCATED_NORMAL",
                                      "BERNOULLI",
                                      "LOGISTIC",
                                      "TRUNCATED_LOGISTIC",
                                      "LAPLACE",
                                      "TRUNCATED_LAPLACE",
                                      "LOGIT_NORMAL",
                                      "TRUNCATED_LOGIT_NORMAL"};
  return nameOf(dist, names, "srDensityTypeToString");
}

std::string specTypeToString(SpecType specType) {
  static const char *const names[] = {"FP32", "BF16", "FP16", "INT8", "INT16", "INT32", "AUTO"};
  return nameOf(specType, names, "specTypeToString");
}

poplar::Type specTypeToPoplarType(SpecType specType) {
  switch (specType) {
  case SpecType::FP32:
    return poplar::FLOAT;
  case SpecType::FP16:
    return poplar::HALF;
  case SpecType::INT8:
    return poplar::CHAR;
  case SpecType::INT16:
    return poplar::SHORT;
  case SpecType::INT32:
    return poplar::INT;
  case SpecType::BF16:
  case SpecType::AUTO:
    break;
  }
  throw poputil::poplibs_error("popfloat::experimental::specTypeToPoplarType: SpecType " +
                               specTypeToString(specType) +
                               " has no Aspen element type (BF16 has none; AUTO is chosen by a cast)");
}

} // namespace experimental
} // namespace popfloat
