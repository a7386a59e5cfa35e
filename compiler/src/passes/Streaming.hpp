// Copyright (c) Aspen contributors.
// Streaming Memory as a tier the compiler plans (docs/streaming-memory.md): the capacity check of
// remote buffers, and with aspen.streamingMemory=auto the choice of variables to keep in Streaming
// Memory and the load and store steps that stage them in and out of tile memory.
#pragma once

#include "passes/PassData.hpp"

#include <string>
#include <vector>

namespace aspen::compiler {

/// Throws graph_memory_allocation_error naming the largest remote buffers when the graph's
/// remote buffers (plus `offloadedBytes`) hold more than the target's Streaming Memory.
void checkStreamingMemoryCapacity(const ir::GraphData &graph, std::uint64_t offloadedBytes = 0);

/// Why a variable can or cannot move to Streaming Memory, from the program as lowering and
/// Exchange left it (before any offload).
struct OffloadCandidates {
  std::vector<std::uint8_t> eligible;  // per variable
  std::vector<std::string> reason;     // per variable: why not (empty when eligible)
  std::vector<std::uint32_t> priority; // eligible variables, best to offload first
};
OffloadCandidates findOffloadCandidates(const ir::GraphData &graph, const LoweredProgram &lowered,
                                        const ExchangePlan &plan, const LivenessResult &liveness,
                                        const std::vector<std::string> &pinned);

/// More variables to offload, for the tiles `allocation` finds over their memory: in priority
/// order, those with bytes on an over-full tile, until their bytes there cover its excess.
/// Returns none when no eligible variable is left that would help.
std::vector<std::uint32_t> chooseMoreOffloads(const ir::GraphData &graph, const ExchangePlan &plan,
                                              const OffloadCandidates &candidates,
                                              const AllocationResult &allocation,
                                              const std::vector<std::uint8_t> &chosen);

/// Rewrites the program so that `vars` live in Streaming Memory: one remote buffer each (in
/// first-read order), a load before the first step that uses each (one step earlier, overlapping
/// an Execute step, where the step before is one), a store after the last step when any step
/// writes it; their initial values and host-handle bytes move to Streaming Memory.
void applyOffload(const ir::GraphData &graph, LoweredProgram &lowered, ExchangePlan &plan,
                  const std::vector<std::uint32_t> &vars);

/// What to add to an out-of-memory message when offloading could not make the program fit:
/// what was offloaded, and why the largest resident variables were not.
std::string describeOffload(const ir::GraphData &graph, const ExchangePlan &plan,
                            const OffloadCandidates &candidates, const AllocationResult &allocation);

} // namespace aspen::compiler
