// Copyright (c) Aspen contributors. PopLibs-compatible public API (popfloat, PopLibs 3.x).
#ifndef POPFLOAT_EXPERIMENTAL_GFLOATEXPRUTIL_HPP
#define POPFLOAT_EXPERIMENTAL_GFLOATEXPRUTIL_HPP

#include <popfloat/experimental/GfloatExpr.hpp>
#include <poplar/Type.hpp>
#include <poputil/VertexTemplates.hpp>

#include <string>

namespace popfloat {
namespace experimental {

/// The enumerator's name ("RN", "QUANTISED_FP32", "UNIFORM", "FP16", ...); throws
/// poputil::poplibs_error naming the function for a value outside the enumeration.
std::string roundTypeToString(RoundType rmode);
std::string formatTypeToString(FormatType fmt);
std::string srDensityTypeToString(SRDensityType dist);
std::string specTypeToString(SpecType specType);

/// FP32 -> FLOAT, BF16 -> BFLOAT (not in Aspen: poplibs_error), FP16 -> HALF, INT8 -> CHAR,
/// INT16 -> SHORT, INT32 -> INT; AUTO has no single type (poplibs_error).
poplar::Type specTypeToPoplarType(SpecType specType);

} // namespace experimental
} // namespace popfloat

namespace poputil {

template <> struct VertexTemplateToString<popfloat::experimental::RoundType> {
  static std::string to_string(const popfloat::experimental::RoundType &v) {
    return "popfloat::experimental::RoundType::" + popfloat::experimental::roundTypeToString(v);
  }
};
template <> struct VertexTemplateToString<popfloat::experimental::FormatType> {
  static std::string to_string(const popfloat::experimental::FormatType &v) {
    return "popfloat::experimental::FormatType::" + popfloat::experimental::formatTypeToString(v);
  }
};
template <> struct VertexTemplateToString<popfloat::experimental::SRDensityType> {
  static std::string to_string(const popfloat::experimental::SRDensityType &v) {
    return "popfloat::experimental::SRDensityType::" + popfloat::experimental::srDensityTypeToString(v);
  }
};
template <> struct VertexTemplateToString<popfloat::experimental::SpecType> {
  static std::string to_string(const popfloat::experimental::SpecType &v) {
    return "popfloat::experimental::SpecType::" + popfloat::experimental::specTypeToString(v);
  }
};

} // namespace poputil

#endif
