// Copyright (c) Aspen contributors.
// popops::topK over the innermost dimension: each group of consecutive rows that
// starts on one tile is handled by one popops::TopK vertex there (values and
// UNSIGNED_INT indices); topKKeyValue gathers the values with popops::PermuteRows.
#include "popops/TopK.hpp"
#include <sstream>

#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "poputil/TileMapping.hpp"

#include <cmath>
#include <ostream>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::TopKParams &p) {
  return aspen::ops::streamedProfileValue(p);
}
} // namespace poputil

namespace popops {

std::ostream &operator<<(std::ostream &os, const TopKParams &p) {
  return os << "{k=" << p.k << ", largest=" << (p.largest ? "true" : "false") << ", sortOrder=" << p.sortOrder
            << ", stableSort=" << (p.stableSort ? "true" : "false") << "}";
}

namespace {

void checkTopK(const poplar::Tensor &t, const TopKParams &params, const std::string &op) {
  if (!t.valid() || t.rank() == 0)
    throw poputil::poplibs_error(op + ": the input must have rank >= 1, got " + aspen::ops::describe(t));
  const std::size_t n = t.dim(t.rank() - 1);
  if (params.k == 0 || params.k > n)
    throw poputil::poplibs_error(op + ": k = " + std::to_string(params.k) +
                                 " must be between 1 and the innermost dimension of " +
                                 aspen::ops::describe(t));
}

unsigned orderCode(const TopKParams &p) {
  return p.sortOrder == SortOrder::ASCENDING ? 1 : p.sortOrder == SortOrder::DESCENDING ? 2 : 0;
}

struct TopKResult {
  poplar::Tensor values, indices; // [rows, k]
  std::vector<aspen::ops::TileRows> groups;
};

TopKResult topKRows(poplar::Graph &graph, poplar::program::Sequence &prog, const poplar::Tensor &t,
                    const TopKParams &params, const poplar::DebugContext &dc, const std::string &op) {
  checkTopK(t, params, op);
  const std::size_t n = t.dim(t.rank() - 1);
  const std::size_t rows = t.numElements() / n;
  const unsigned k = params.k;
  const poplar::Tensor in = t.reshape({rows, n});
  const std::string vt = poputil::templateVertex("popops::TopK", t.elementType());
  aspen::ops::requireVertex(graph, vt, op, "tensors of type " + t.elementType().toString().str());
  TopKResult r;
  r.values = graph.addVariable(t.elementType(), {rows, k}, {dc, "topK/values"});
  r.indices = graph.addVariable(poplar::UNSIGNED_INT, {rows, k}, {dc, "topK/indices"});
  r.groups = aspen::ops::rowsByTile(graph, in);
  if (rows == 0)
    return r;
  poplar::ComputeSet cs = graph.addComputeSet({dc, "topK"});
  // One worker vertex per run of consecutive rows on a tile.
  for (const auto &g : r.groups)
    for (const auto &run : g.rows) {
      const std::size_t b = run.begin(), e = run.end();
      graph.setTileMapping(r.values.slice(b, e), g.tile);
      graph.setTileMapping(r.indices.slice(b, e), g.tile);
      poplar::VertexRef v = graph.addVertex(cs, vt);
      graph.connect(v["in"], in.slice(b, e).flatten());
      graph.connect(v["out"], r.values.slice(b, e).flatten());
      graph.connect(v["indices"], r.indices.slice(b, e).flatten());
      graph.setInitialValue(v["rowLen"], static_cast<unsigned>(n));
      graph.setInitialValue(v["k"], k);
      graph.setInitialValue(v["largest"], params.largest);
      graph.setInitialValue(v["order"], orderCode(params));
      graph.setTileMapping(v, g.tile);
      graph.setPerfEstimate(v, cost::topKRows(e - b, n, k, orderCode(params) != 0));
    }
  prog.add(poplar::program::Execute(cs, {dc, "topK"}));
  return r;
}

std::vector<std::size_t> resultShape(const poplar::Tensor &t, unsigned k) {
  auto shape = t.shape();
  shape.back() = k;
  return shape;
}

} // namespace

poplar::Tensor createTopKInput(poplar::Graph &graph, const poplar::Type &type,
                               const std::vector<std::size_t> &shape, const TopKParams &params,
                               const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(type, shape, params));
  const poplar::DebugContext debugContext(di);
  (void)params;
  poplar::Tensor t = graph.addVariable(type, shape, {debugContext, "topKInput"});
  // Whole rows per tile: the grain is the innermost dimension.
  const unsigned grain = shape.empty() ? 1u : static_cast<unsigned>(std::max<std::size_t>(1, shape.back()));
  poputil::mapTensorLinearly(graph, t, 0, grain);
  return t;
}

poplar::Tensor topK(poplar::Graph &graph, poplar::program::Sequence &prog, const poplar::Tensor &t,
                    const TopKParams &params, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, params));
  const poplar::DebugContext debugContext(di);
  const TopKResult r = topKRows(graph, prog, t, params, debugContext, "popops::topK");
  return r.values.reshape(resultShape(t, params.k));
}

std::pair<poplar::Tensor, poplar::Tensor>
topKWithPermutation(poplar::Graph &graph, poplar::program::Sequence &prog, const poplar::Tensor &t,
                    const TopKParams &params, const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(t, params));
  const poplar::DebugContext debugContext(di);
  const TopKResult r = topKRows(graph, prog, t, params, debugContext, "popops::topKWithPermutation");
  const auto shape = resultShape(t, params.k);
  return {r.values.reshape(shape), r.indices.reshape(shape)};
}

std::pair<poplar::Tensor, poplar::Tensor> topKKeyValue(poplar::Graph &graph, poplar::program::Sequence &prog,
                                                       const poplar::Tensor &keys,
                                                       const poplar::Tensor &values, const TopKParams &params,
                                                       const poplar::DebugContext &debugContextIn) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(keys, values, params));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::topKKeyValue";
  if (!values.valid() || keys.shape() != values.shape())
    throw poputil::poplibs_error(op + ": keys " + aspen::ops::describe(keys) + " and values " +
                                 aspen::ops::describe(values) + " must have the same shape");
  const std::string vt = poputil::templateVertex("popops::PermuteRows", values.elementType());
  aspen::ops::requireVertex(graph, vt, op, "values of type " + values.elementType().toString().str());
  const TopKResult r = topKRows(graph, prog, keys, params, debugContext, op);
  const std::size_t n = keys.dim(keys.rank() - 1);
  const std::size_t rows = keys.numElements() / n;
  const unsigned k = params.k;
  const poplar::Tensor in = values.reshape({rows, n});
  poplar::Tensor outValues =
      graph.addVariable(values.elementType(), {rows, k}, {debugContext, "topK/permuted"});
  if (rows) {
    poplar::ComputeSet cs = graph.addComputeSet({debugContext, "topK/permute"});
    for (const auto &g : r.groups)
      for (const auto &run : g.rows) {
        const std::size_t b = run.begin(), e = run.end();
        graph.setTileMapping(outValues.slice(b, e), g.tile);
        poplar::VertexRef v = graph.addVertex(cs, vt);
        graph.connect(v["in"], in.slice(b, e).flatten());
        graph.connect(v["indices"], r.indices.slice(b, e).flatten());
        graph.connect(v["out"], outValues.slice(b, e).flatten());
        graph.setInitialValue(v["rowLen"], static_cast<unsigned>(n));
        graph.setInitialValue(v["k"], k);
        graph.setTileMapping(v, g.tile);
        graph.setPerfEstimate(v, aspen::ops::workerVertexCycles((e - b) * k, 3.0, 30));
      }
    prog.add(poplar::program::Execute(cs, {debugContext, "topK/permute"}));
  }
  const auto shape = resultShape(keys, k);
  return {r.values.reshape(shape), outValues.reshape(shape)};
}

} // namespace popops
