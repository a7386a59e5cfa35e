// Copyright (c) Aspen contributors.
#include "ir/GraphData.hpp"

#include "ir/TensorAlgebra.hpp"
#include "util/Assert.hpp"

namespace aspen::ir {

namespace {

/// The graphs views can name, by id: only the rare paths that need the graph
/// itself look here (see GraphId). Never destroyed: graphs may outlive it at exit.
struct GraphRegistry {
  std::mutex mutex;
  std::unordered_map<GraphId, std::weak_ptr<GraphData>> graphs;
};
GraphRegistry &registry() {
  static GraphRegistry *const r = new GraphRegistry;
  return *r;
}

std::atomic<std::uint64_t> nextGraphId{1};

} // namespace

GraphIdentity::GraphIdentity() {
  const std::uint64_t id = nextGraphId.fetch_add(1, std::memory_order_relaxed);
  // 2^32 - 1 graphs in one process (each takes microseconds to make): an id is never reused.
  ASPEN_ASSERT(id <= std::uint64_t(~GraphId(0)), "graph ids are exhausted");
  id_ = static_cast<GraphId>(id);
}

GraphIdentity::~GraphIdentity() {
  if (!published_.load(std::memory_order_acquire))
    return;
  GraphRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.graphs.erase(id_);
}

void GraphIdentity::publishSlow(const std::shared_ptr<GraphData> &graph) {
  ASPEN_ASSERT(&graph->identity == this, "a graph is published under another graph's id");
  GraphRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.graphs.emplace(id_, graph);
  published_.store(true, std::memory_order_release);
}

std::shared_ptr<GraphData> lockGraph(GraphId id) {
  if (id == 0)
    return nullptr;
  GraphRegistry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.graphs.find(id);
  return it == r.graphs.end() ? nullptr : it->second.lock();
}

std::string GraphData::describeVariable(VarId v) const {
  if (v >= variables.size())
    return "unknown variable " + std::to_string(v);
  const Variable &var = variables[v];
  const std::string name = var.name.empty() ? "<unnamed>" : var.name;
  return "'" + name + "' (" + (var.isConstant ? "constant " : "variable ") + std::to_string(v) + ", " +
         shapeString(var.shape) + " " + var.type.toString().str() + ")";
}

BuiltinVertexLoader &builtinVertexLoader() {
  static BuiltinVertexLoader loader = nullptr;
  return loader;
}

} // namespace aspen::ir
