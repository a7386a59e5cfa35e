// Copyright (c) Aspen contributors. Poplar-compatible codelet header.
// Layouts of vertex vector fields. On the simulated IPU every layout is held as
// a pointer plus a 32-bit count (see docs/internals.md, "Host layout of vertex
// fields"); the layout only decides whether a codelet may call size() and how
// large a field may be (Graph::getMaxFieldDim).
#ifndef POPLAR_FIELDTYPES_HPP
#define POPLAR_FIELDTYPES_HPP

namespace poplar {

/// How a `Vector` field stores its pointer and size on the IPU.
enum class VectorLayout : unsigned {
  NOT_A_VECTOR,
  SPAN,          ///< pointer and 32-bit size; has size()
  SHORT_SPAN,    ///< pointer and 11-bit size; has size()
  ONE_PTR,       ///< pointer only
  SCALED_PTR32,  ///< 16-bit pointer to 32-bit aligned data
  SCALED_PTR64,  ///< 16-bit pointer to 64-bit aligned data
  SCALED_PTR128, ///< 16-bit pointer to 128-bit aligned data
  COMPACT_PTR,   ///< the compiler's choice of pointer
};

/// How a `VectorList` field stores its list of regions on the IPU.
enum class VectorListLayout : unsigned {
  ONE_PTR,
  SCALED_PTR32,
  SCALED_PTR64,
  SCALED_PTR128,
  DELTAN,         ///< base + (offset, size) per region
  DELTANELEMENTS, ///< as DELTAN, offsets in elements
  COMPACT_DELTAN, ///< the compiler's choice of DELTAN form
};

} // namespace poplar

#endif
