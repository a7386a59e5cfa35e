// Copyright (c) Aspen contributors. PopLibs-compatible public API (popfloat, PopLibs 3.x).
#ifndef POPFLOAT_EXPERIMENTAL_GFLOATEXPR_HPP
#define POPFLOAT_EXPERIMENTAL_GFLOATEXPR_HPP

namespace popfloat {
namespace experimental {

/// Rounding modes of the gfloat casts.
enum class RoundType {
  INV, ///< not set
  RZ,  ///< towards zero
  RN,  ///< to nearest, ties to even
  RA,  ///< to nearest, ties away from zero
  RU,  ///< towards +infinity
  RD,  ///< towards -infinity
  SR,  ///< stochastic, with every random bit
  SX   ///< stochastic, with fewer random bits
};

/// Formats of generic floats (gfloats) and how they are stored.
enum class FormatType {
  INVALID_FORMAT,
  IEEE_FP16,
  QUANTISED_FP32, ///< a gfloat stored as a float
  QUANTISED_FP16, ///< a gfloat stored as a half
  MIN_NORM_ALIGN_GF8,
  ONE_FIVE_TWO_GF8,
  MAX_NORM_ALIGN_GF8,
  BFLOAT16,
  NO_DENORM_GF16,
  ENABLE_DENORM_GF16
};

/// Distributions of the noise of stochastic rounding.
enum class SRDensityType {
  INVALID,
  UNIFORM,
  NORMAL,
  TRUNCATED_NORMAL,
  BERNOULLI,
  LOGISTIC,
  TRUNCATED_LOGISTIC,
  LAPLACE,
  TRUNCATED_LAPLACE,
  LOGIT_NORMAL,
  TRUNCATED_LOGIT_NORMAL
};

/// The storage type of a cast's output.
enum class SpecType { FP32, BF16, FP16, INT8, INT16, INT32, AUTO };

} // namespace experimental
} // namespace popfloat

#endif
