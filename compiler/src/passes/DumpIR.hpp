// Copyright (c) Aspen contributors.
// Text dumps of what each pass produced, for debugging the compiler
// (compile option `aspen.dumpIR=<dir>`, docs/compiler.md).
#pragma once

#include "passes/PassData.hpp"

#include <ostream>
#include <string>

namespace aspen::compiler {

/// Writes one text file per pass into a directory: `<dir>/<k>-<pass>.txt`
/// for pass k (1-based, as Compiler.cpp runs them). Disabled (every call a
/// no-op) when the directory is empty. Throws `invalid_option` naming the
/// option and the path when the directory cannot be made or a file written.
class IRDumper {
public:
  explicit IRDumper(std::string dir);
  bool enabled() const { return !dir_.empty(); }

  void graph(const ir::GraphData &g);                              // after validate
  void lowered(const LoweredProgram &lp);                          // after lower
  void exchange(const ir::GraphData &g, const ExchangePlan &plan); // after exchange
  void liveness(const ir::GraphData &g, const LivenessResult &live);
  void allocation(const ExchangePlan &plan, const AllocationResult &alloc);
  void cycles(const ExchangePlan &plan, const CycleEstimates &est);
  void executable(const exe::ExecutableData &x); // after emit

private:
  template <class F> void write(int pass, const char *name, F &&body);
  std::string dir_;
};

} // namespace aspen::compiler
