// Copyright (c) Aspen contributors.
// The Collective program node libgcl records (see ir/Collective.hpp).
#include "ir/Collective.hpp"
#include "ir/DebugRecord.hpp"

#include <memory>

namespace aspen::ir {

namespace {
/// Program's node constructor is protected: a derived handle reaches it.
struct CollectiveProgram : poplar::program::Program {
  explicit CollectiveProgram(std::shared_ptr<ProgramNode> node) : Program(std::move(node)) {}
};
} // namespace

poplar::program::Program makeCollectiveProgram(const CollectiveSpec &spec, const poplar::Tensor &src,
                                               const poplar::Tensor &dst,
                                               const poplar::DebugContext &debugContext) {
  auto node = std::make_shared<ProgramNode>();
  node->kind = ProgramKind::Collective;
  node->debugName = debugContext.getPathName();
  node->debugId = debugContext.getId();
  node->debugInfo = findDebugRecord(node->debugId);
  node->src = src;
  node->dst = dst;
  node->collective = spec;
  return CollectiveProgram(std::move(node));
}

} // namespace aspen::ir
