// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_CSRFUNCTIONS_HPP
#define POPLAR_CSRFUNCTIONS_HPP

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace poplar {

/// Floating-point exception and rounding behaviour of the tiles: trap on
/// invalid operations (`inv`), division by zero (`div0`) and overflow (`oflo`),
/// enable stochastic rounding (`esr`), and produce NaN on half overflow (`nanoo`).
struct FloatingPointBehaviour {
  bool inv = true;
  bool div0 = true;
  bool oflo = true;
  bool esr = true;
  bool nanoo = true;
  FloatingPointBehaviour(bool inv, bool div0, bool oflo, bool esr, bool nanoo)
      : inv(inv), div0(div0), oflo(oflo), esr(esr), nanoo(nanoo) {}
  FloatingPointBehaviour() = default;
  /// Every flag inverted.
  FloatingPointBehaviour operator!() const {
    return FloatingPointBehaviour(!inv, !div0, !oflo, !esr, !nanoo);
  }
};

/// Sets the floating-point behaviour of every tile at this point of `prog`.
/// The simulated IPU computes with host floating point and neither traps nor
/// rounds stochastically, so Aspen records nothing (the program is unchanged).
void setFloatingPointBehaviour(Graph &graph, program::Sequence &prog, const FloatingPointBehaviour &behaviour,
                               const DebugContext &debugContext = {});

/// Records the floating-point behaviour in force at this point of `prog` in a
/// new scalar UNSIGNED_INT tensor (returned), then clears the flags set in
/// `clear` and sets those set in `set`. Pass the tensor to
/// `setFloatingPointBehaviour(graph, prog, behaviour)` to restore it. Aspen's
/// tiles always behave as the default (every flag on), which the tensor holds.
Tensor getAndModifyFloatingPointBehaviour(Graph &graph, program::Sequence &prog,
                                          const FloatingPointBehaviour &clear,
                                          const FloatingPointBehaviour &set,
                                          const DebugContext &debugContext = {});

/// Restores a behaviour saved by `getAndModifyFloatingPointBehaviour`; throws
/// `poplar_error` naming a tensor that is not a scalar UNSIGNED_INT.
void setFloatingPointBehaviour(Graph &graph, program::Sequence &prog, const Tensor &behaviour,
                               const DebugContext &debugContext = {});

/// Enables or disables stochastic rounding at this point of `prog`; a no-op in
/// Aspen (see setFloatingPointBehaviour).
void setStochasticRounding(Graph &graph, program::Sequence &prog, bool enable,
                           const DebugContext &debugContext = {});

} // namespace poplar

#endif
