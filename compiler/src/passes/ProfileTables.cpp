// Copyright (c) Aspen contributors.
#include "passes/ProfileTables.hpp"

#include "ir/DebugRecord.hpp"

#include <algorithm>
#include <map>

namespace aspen::compiler {

using nlohmann::json;

void addProfileTables(json &profile, const ir::GraphData &g, const LoweredProgram &lp,
                      const ExchangePlan &plan, const LivenessResult &live, const exe::ExecutableData &x) {
  // Variables: bytes per tile from their tile pieces (piece index == object index).
  json vars = json::array();
  const std::size_t numVars = g.variables.size();
  for (std::size_t v = 0; v < numVars; ++v) {
    const ir::Variable &var = g.variables[v];
    std::map<std::uint32_t, std::uint64_t> perTile;
    if (v + 1 < plan.memory.firstPiece.size())
      for (std::uint32_t p = plan.memory.firstPiece[v]; p < plan.memory.firstPiece[v + 1]; ++p)
        perTile[plan.memory.objects[p].tile] += plan.memory.objects[p].size;
    std::vector<std::uint64_t> tiles;
    tiles.reserve(2 * perTile.size());
    std::uint64_t bytes = 0;
    for (const auto &[tile, b] : perTile) {
      tiles.push_back(tile);
      tiles.push_back(b);
      bytes += b;
    }
    const bool always = v < live.alwaysLive.size() && live.alwaysLive[v];
    const bool touched = v < live.liveBegin.size() && live.liveBegin[v] <= live.liveEnd[v];
    json j = {{"name", var.name},           {"type", std::string(var.type.toString())},
              {"shape", var.shape},         {"bytes", bytes},
              {"constant", var.isConstant}, {"alwaysLive", always},
              {"tiles", std::move(tiles)}};
    if (!always && touched) {
      j["liveFrom"] = live.liveBegin[v];
      j["liveTo"] = live.liveEnd[v];
    }
    if (var.debugId != 0)
      j["debugId"] = var.debugId;
    // Where the variable's value lives between uses (docs/streaming-memory.md).
    j["tier"] = v < plan.offloaded.size() && plan.offloaded[v] ? "streamingMemory" : "tile";
    vars.push_back(std::move(j));
  }
  profile["variables"] = std::move(vars);

  // Vertex types: [tile, instances, tile, instances, ...] over every executed compute set.
  std::vector<std::map<std::uint32_t, std::uint64_t>> typeTiles(x.vertexTypes.size());
  for (const exe::ComputeStep &cs : x.computeSteps)
    for (std::size_t k = 0; k < cs.tiles.size(); ++k)
      for (std::uint32_t i = cs.tileBegin[k]; i < cs.tileBegin[k + 1]; ++i)
        if (cs.vertices[i].type < typeTiles.size())
          ++typeTiles[cs.vertices[i].type][cs.tiles[k]];
  json &types = profile["vertexTypes"];
  for (std::size_t t = 0; t < typeTiles.size() && t < types.size(); ++t) {
    std::vector<std::uint64_t> flat;
    flat.reserve(2 * typeTiles[t].size());
    for (const auto &[tile, n] : typeTiles[t]) {
      flat.push_back(tile);
      flat.push_back(n);
    }
    types[t]["tiles"] = std::move(flat);
  }

  // Programs: the entry step of each; blocks named as the user named them.
  json programs = json::array();
  for (std::uint32_t entry : lp.programEntry)
    programs.push_back({{"entry", entry}});
  profile["programs"] = std::move(programs);
  json &steps = profile["steps"];
  for (std::size_t s = 0; s < lp.steps.size() && s < steps.size(); ++s) {
    const exe::Step &step = lp.steps[s];
    if (step.kind == exe::StepKind::BlockBegin && step.a < lp.blockNames.size())
      steps[s]["name"] = lp.blockNames[step.a];
    if (step.kind == exe::StepKind::LoopTest || step.kind == exe::StepKind::Jump ||
        step.kind == exe::StepKind::JumpIfZero || step.kind == exe::StepKind::JumpIfNonZero ||
        step.kind == exe::StepKind::Call)
      steps[s]["target"] = step.target;
    if (s < x.steps.size() && x.steps[s].kind == exe::StepKind::Execute)
      steps[s]["computeSet"] = x.steps[s].a;
    if (s < lp.stepNode.size() && lp.stepNode[s] && lp.stepNode[s]->debugId != 0)
      steps[s]["debugId"] = lp.stepNode[s]->debugId;
  }

  // Debug information: what each element was made under, and the DebugInfo
  // tree of those ids (docs/profile-format.md, "Debug information").
  std::vector<std::shared_ptr<const ir::DebugRecord>> records;
  records.reserve(g.debugRecords.size());
  for (const auto &kv : g.debugRecords)
    records.push_back(kv.second);
  for (const ir::ProgramNode *node : lp.stepNode)
    if (node && node->debugInfo)
      records.push_back(node->debugInfo);
  json &css = profile["computeSets"];
  for (std::size_t c = 0; c < plan.computeSets.size() && c < css.size(); ++c) {
    const std::uint32_t graphCs = plan.computeSets[c].computeSet;
    if (graphCs < g.computeSets.size() && g.computeSets[graphCs].debugId != 0)
      css[c]["debugId"] = g.computeSets[graphCs].debugId;
  }
  profile["debugContexts"] = ir::debugContextsJson(records);
}

} // namespace aspen::compiler
