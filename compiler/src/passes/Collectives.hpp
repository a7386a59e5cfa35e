// Copyright (c) Aspen contributors.
// What the passes need to know about Collective steps (docs/replication.md):
// their executable record and their cost (docs/cost-model.md).
#pragma once

#include "exe/ExecutableData.hpp"
#include "ir/ProgramNode.hpp"
#include "ir/TargetData.hpp"

#include <cstdint>

namespace aspen::compiler {

/// The executable record of a Collective node, without its transfers.
exe::CollectiveInfo collectiveInfo(const ir::ProgramNode &node);

/// Estimated IPU-Link cycles of a collective: the ring (or pipeline) between
/// the replicas of a group; `srcBytes` is one replica's input. Moving the bytes
/// between tiles and links is priced apart (as the src and dst transfers).
std::uint64_t collectiveLinkCycles(const ir::TargetData &target, const exe::CollectiveInfo &c,
                                   std::uint64_t srcBytes);

} // namespace aspen::compiler
