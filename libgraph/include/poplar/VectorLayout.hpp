// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_VECTORLAYOUT_HPP
#define POPLAR_VECTORLAYOUT_HPP

#include <ostream>
#include <string>

namespace poplar {
namespace layout {

/// How a vertex field's vector is laid out in tile memory (what a perf
/// estimator sees through `FieldData::getProfilerVectorLayout`).
enum class Vector { NotAVector, Span, ShortSpan, OnePtr, ScaledPtr32, ScaledPtr64, ScaledPtr128 };

/// How a vertex field's list of vectors (`VectorList`, `Vector<Input<Vector>>`) is laid out.
enum class VectorList { NotAVector, OnePtr, ScaledPtr32, ScaledPtr64, ScaledPtr128, DeltaN, DeltaNElements };

inline std::string to_string(const Vector v) {
  switch (v) {
  case Vector::NotAVector:
    return "NotAVector";
  case Vector::Span:
    return "Span";
  case Vector::ShortSpan:
    return "ShortSpan";
  case Vector::OnePtr:
    return "OnePtr";
  case Vector::ScaledPtr32:
    return "ScaledPtr32";
  case Vector::ScaledPtr64:
    return "ScaledPtr64";
  case Vector::ScaledPtr128:
    return "ScaledPtr128";
  }
  return "?";
}

inline std::string to_string(const VectorList v) {
  switch (v) {
  case VectorList::NotAVector:
    return "NotAVector";
  case VectorList::OnePtr:
    return "OnePtr";
  case VectorList::ScaledPtr32:
    return "ScaledPtr32";
  case VectorList::ScaledPtr64:
    return "ScaledPtr64";
  case VectorList::ScaledPtr128:
    return "ScaledPtr128";
  case VectorList::DeltaN:
    return "DeltaN";
  case VectorList::DeltaNElements:
    return "DeltaNElements";
  }
  return "?";
}

inline std::ostream &operator<<(std::ostream &os, const Vector v) {
  return os << to_string(v);
}
inline std::ostream &operator<<(std::ostream &os, const VectorList v) {
  return os << to_string(v);
}

} // namespace layout
} // namespace poplar

#endif
