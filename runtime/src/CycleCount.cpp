// Copyright (c) Aspen contributors.
// poplar::cycleCount and cycleStamp. The simulated cycle counter reaches the
// device through host-to-device streams with reserved handles
// ("__aspen_cycles/<role>/<id>", see Executor.hpp): the executor fills them
// with the counter instead of host data and charges them no cycles, so no new
// program kind is needed.
#include "poplar/CycleCount.hpp"

#include "Executor.hpp"
#include "ir/ProgramNode.hpp"

#include <atomic>
#include <string>

namespace poplar {

namespace {

std::string reservedHandle(const char *role, std::uint64_t id) {
  return std::string(aspen::rt::cycleStreamPrefix) + role + "/" + std::to_string(id);
}

std::uint64_t nextId() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1);
}

Tensor counterTensor(Graph &graph, unsigned tile, const DebugContext &debugContext, const char *suffix) {
  Tensor t = graph.addVariable(UNSIGNED_INT, {2}, {debugContext, suffix});
  graph.setTileMapping(t, tile);
  return t;
}

} // namespace

Tensor cycleCount(Graph &graph, program::Sequence &prog, unsigned tile, SyncType syncType,
                  const DebugContext &debugContext) {
  Tensor count = counterTensor(graph, tile, debugContext, "cycleCount");
  const std::uint64_t id = nextId();
  DataStream begin = graph.addHostToDeviceFIFO(reservedHandle("begin", id), UNSIGNED_INT, 2);
  DataStream end = graph.addHostToDeviceFIFO(reservedHandle("end", id), UNSIGNED_INT, 2);

  // The old body moves into an inner sequence so that every copy of `prog`
  // (they share one node) sees the wrapped program.
  program::Sequence inner;
  inner.getImpl()->children = prog.getImpl()->children;
  auto &children = prog.getImpl()->children;
  children.clear();
  for (const program::Program &p :
       {program::Program(program::Sync(syncType, {debugContext, "cycleCount/sync"})),
        program::Program(program::Copy(begin, count, false, {debugContext, "cycleCount/begin"})),
        program::Program(inner), program::Program(program::Sync(syncType, {debugContext, "cycleCount/sync"})),
        program::Program(program::Copy(end, count, false, {debugContext, "cycleCount/end"}))})
    children.push_back(p.getImpl());
  return count;
}

Tensor cycleCount(Graph &graph, program::Sequence &prog, unsigned tile, const DebugContext &debugContext) {
  return cycleCount(graph, prog, tile, SyncType::INTERNAL, debugContext);
}

std::vector<Tensor> cycleStamp(Graph &graph, program::Sequence &prog, const std::vector<unsigned> &tiles,
                               SyncType syncType, const DebugContext &debugContext) {
  std::vector<Tensor> stamps;
  prog.add(program::Sync(syncType, {debugContext, "cycleStamp/sync"}));
  for (unsigned tile : tiles) {
    Tensor stamp = counterTensor(graph, tile, debugContext, "cycleStamp");
    DataStream s = graph.addHostToDeviceFIFO(reservedHandle("stamp", nextId()), UNSIGNED_INT, 2);
    prog.add(program::Copy(s, stamp, false, {debugContext, "cycleStamp"}));
    stamps.push_back(stamp);
  }
  return stamps;
}

Tensor cycleStamp(Graph &graph, program::Sequence &prog, unsigned tile, SyncType syncType,
                  const DebugContext &debugContext) {
  return cycleStamp(graph, prog, std::vector<unsigned>{tile}, syncType, debugContext).front();
}

Tensor cycleStamp(Graph &graph, program::Sequence &prog, unsigned tile, const DebugContext &debugContext) {
  return cycleStamp(graph, prog, tile, SyncType::INTERNAL, debugContext);
}

} // namespace poplar
