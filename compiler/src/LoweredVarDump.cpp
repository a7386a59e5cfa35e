// Copyright (c) Aspen contributors.
#include "LoweredVarDump.hpp"

#include "ir/GraphData.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace aspen::compiler {

void writeLoweredVarDump(const std::string &path, bool makeDirectory, const ir::GraphData &graph,
                         const ExchangePlan &plan, const LivenessResult &liveness,
                         const AllocationResult &allocation) {
  using json = nlohmann::json;
  const MemoryObjects &memory = plan.memory;
  json variables = json::array();
  for (std::size_t v = 0; v < graph.variables.size(); ++v) {
    const ir::Variable &var = graph.variables[v];
    json pieces = json::array();
    if (v + 1 < memory.firstPiece.size())
      for (std::uint32_t p = memory.firstPiece[v]; p < memory.firstPiece[v + 1]; ++p) {
        const MemObject &piece = memory.objects[p];
        pieces.push_back({{"tile", piece.tile},
                          {"address", p < allocation.address.size() ? json(allocation.address[p]) : json()},
                          {"size", piece.size},
                          {"offset", piece.ownerOffset}});
      }
    variables.push_back({{"id", v},
                         {"name", var.name},
                         {"type", var.type.toString().str()},
                         {"shape", var.shape},
                         {"constant", var.isConstant},
                         {"alwaysLive", v < liveness.alwaysLive.size() && liveness.alwaysLive[v] != 0},
                         {"pieces", std::move(pieces)}});
  }
  const json doc = {{"format", "aspen-lowered-vars"},
                    {"version", 1},
                    {"tiles", graph.target.numTiles()},
                    {"bytesPerTile", graph.target.bytesPerTile},
                    {"variables", std::move(variables)}};
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (makeDirectory && !parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
  }
  std::ofstream out(path, std::ios::trunc);
  out << doc.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  if (!out)
    throw poplar::poplar_error("debug.loweredVarDumpFile: cannot write '" + path + "'");
}

void writeSerializedGraph(const std::string &path, const poplar::Graph &graph,
                          poplar::ArrayRef<poplar::program::Program> programs) {
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty())
    std::filesystem::create_directories(parent, ec);
  std::ofstream out(path, std::ios::trunc);
  if (!out)
    throw poplar::poplar_error("autoReport.outputSerializedGraph: cannot write '" + path + "'");
  graph.serialize(out, programs, poplar::SerializationFormat::JSON);
}

} // namespace aspen::compiler
