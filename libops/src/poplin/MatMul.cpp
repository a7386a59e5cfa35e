// Copyright (c) Aspen contributors.
// poplin::matMul and friends: validate the operands, plan the split over tiles
// (MatMulPlan.cpp), then build one compute set of block products and, when the
// inner dimension is split (or the result accumulates into C), one compute set
// that adds up the partial sums.
#include <poplin/MatMul.hpp>

#include "MatMulInternal.hpp"
#include "MatMulPlan.hpp"
#include "Preplan.hpp"
#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"

#include <poplar/exceptions.hpp>
#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>

#include <map>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using aspen::ops::describe;
using aspen::ops::shapeString;
using poplin::planning::MatMulOptions;
using poplin::planning::MatMulPlan;
using poplin::planning::MatMulProblem;

namespace poplin {

/// The plans of a PlanningCache, by problem and options.
class PlanningCacheImpl {
public:
  std::mutex mutex;
  std::map<std::string, MatMulPlan> plans;
};

PlanningCache::PlanningCache() : impl(new PlanningCacheImpl) {}
PlanningCache::~PlanningCache() = default;
std::size_t PlanningCache::size() const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  return impl->plans.size();
}

namespace {

[[noreturn]] void fail(const std::string &op, const std::string &message) {
  throw poputil::poplibs_error(op + ": " + message);
}

void checkFloatType(const std::string &op, const char *what, const Type &type) {
  if (type != FLOAT && type != HALF)
    fail(op, std::string(what) + " has element type " + type.toString().str() +
                 "; only float and half are supported");
}

/// Checks that A {G,m,k} and B {G,k,n} (rank 2 without G) can be multiplied
/// and returns the problem; `grouped` selects rank 3.
MatMulProblem checkOperands(const std::string &op, const Tensor &A, const Tensor &B, const Type &outputType,
                            bool grouped) {
  aspen::ops::requireValid(A, op, "A");
  aspen::ops::requireValid(B, op, "B");
  const unsigned rank = grouped ? 3 : 2;
  if (A.rank() != rank)
    fail(op, "A must have rank " + std::to_string(rank) + " but has shape " + describe(A));
  if (B.rank() != rank)
    fail(op, "B must have rank " + std::to_string(rank) + " but has shape " + describe(B));
  checkFloatType(op, "A", A.elementType());
  checkFloatType(op, "B", B.elementType());
  if (A.elementType() != B.elementType())
    fail(op, "A " + describe(A) + " and B " + describe(B) + " must have the same element type");
  checkFloatType(op, "the output type", outputType);
  const unsigned base = grouped ? 1 : 0;
  if (grouped && A.dim(0) != B.dim(0))
    fail(op, "group dimensions disagree: A " + describe(A) + " and B " + describe(B));
  if (A.dim(base + 1) != B.dim(base))
    fail(op, "inner dimensions disagree: A " + describe(A) + " * B " + describe(B) + " (A's dimension " +
                 std::to_string(base + 1) + " must equal B's dimension " + std::to_string(base) + ")");
  MatMulProblem p;
  p.groups = grouped ? A.dim(0) : 1;
  p.m = A.dim(base);
  p.k = A.dim(base + 1);
  p.n = B.dim(base + 1);
  p.inputType = A.elementType();
  p.outputType = outputType;
  if (p.k == 0 && p.m * p.n * p.groups != 0)
    fail(op, "the inner dimension of A " + describe(A) + " * B " + describe(B) + " is 0");
  return p;
}

MatMulProblem problemFromShapes(const std::string &op, const Type &inputType, const Type &outputType,
                                const std::vector<std::size_t> &aShape,
                                const std::vector<std::size_t> &bShape, bool grouped) {
  const std::size_t rank = grouped ? 3 : 2;
  if (aShape.size() != rank || bShape.size() != rank)
    fail(op, "shapes must have rank " + std::to_string(rank) + ", got A " + shapeString(aShape) + " and B " +
                 shapeString(bShape));
  checkFloatType(op, "the input type", inputType);
  checkFloatType(op, "the output type", outputType);
  const std::size_t base = grouped ? 1 : 0;
  if (grouped && aShape[0] != bShape[0])
    fail(op, "group dimensions disagree: A " + shapeString(aShape) + " and B " + shapeString(bShape));
  if (aShape[base + 1] != bShape[base])
    fail(op, "inner dimensions disagree: A " + shapeString(aShape) + " * B " + shapeString(bShape));
  MatMulProblem p;
  p.groups = grouped ? aShape[0] : 1;
  p.m = aShape[base];
  p.k = aShape[base + 1];
  p.n = bShape[base + 1];
  p.inputType = inputType;
  p.outputType = outputType;
  return p;
}

std::string cacheKey(const Target &target, const MatMulProblem &p, const MatMulOptions &o) {
  std::ostringstream key;
  key << target.getNumTiles() << ':' << target.getBytesPerTile() << ':' << target.getTargetArchString() << ':'
      << p.groups << ',' << p.m << ',' << p.k << ',' << p.n << ':' << p.inputType << ',' << p.outputType
      << ',' << p.partialsType << ':' << p.accumulate << ':' << o.availableMemoryProportion << ':'
      << o.constraints.text;
  return key.str();
}

MatMulPlan getPlan(const Target &target, MatMulProblem &p, const MatMulOptions &options,
                   PlanningCache *cache) {
  p.partialsType = options.partialsType;
  if (!cache)
    return planning::planMatMul(target, p, options);
  const std::string key = cacheKey(target, p, options);
  {
    std::lock_guard<std::mutex> lock(cache->impl->mutex);
    auto it = cache->impl->plans.find(key);
    if (it != cache->impl->plans.end())
      return it->second;
  }
  MatMulPlan plan = planning::planMatMul(target, p, options);
  std::lock_guard<std::mutex> lock(cache->impl->mutex);
  cache->impl->plans.emplace(key, plan);
  return plan;
}

MatMulPlan getPlan(const Graph &graph, MatMulProblem &p, const MatMulOptions &options, PlanningCache *cache) {
  return getPlan(graph.getTarget(), p, options, cache);
}

/// Half-open ranges of one block along one dimension.
struct Range {
  std::size_t begin, end;
  bool empty() const { return begin >= end; }
  std::size_t size() const { return empty() ? 0 : end - begin; }
};
Range blockRange(std::size_t index, std::size_t block, std::size_t size) {
  const std::size_t b = std::min(index * block, size);
  return {b, std::min(b + block, size)};
}
/// Piece `piece` of `pieces` of [0, size).
Range pieceRange(std::size_t piece, std::size_t pieces, std::size_t size) {
  return {size * piece / pieces, size * (piece + 1) / pieces};
}

/// Calls f(g, gi, i, j, rows, cols) for every (group, row block, column block) that is not empty.
template <class F> void forEachOutputBlock(const MatMulProblem &p, const MatMulPlan &plan, F f) {
  for (unsigned gi = 0; gi < plan.groupSplit; ++gi) {
    const Range groups = blockRange(gi, plan.groupBlock, p.groups);
    for (std::size_t g = groups.begin; g < groups.end; ++g)
      for (unsigned i = 0; i < plan.rowSplit; ++i) {
        const Range rows = blockRange(i, plan.rowBlock, p.m);
        if (rows.empty())
          continue;
        for (unsigned j = 0; j < plan.colSplit; ++j) {
          const Range cols = blockRange(j, plan.colBlock, p.n);
          if (!cols.empty())
            f(g, gi, i, j, rows, cols);
        }
      }
  }
}

/// A {G, R, C} tensor stored block by block: block (g, bi, bj) — rows
/// blockRange(bi, rowBlock, R), columns blockRange(bj, colBlock, C) — is one
/// contiguous run of a 1-D variable, so that the exchange moving a block to
/// (or from) its vertex copies whole runs. `view` shows it as {G, R, C}.
struct BlockedTensor {
  Tensor flat, view;
  unsigned rowSplit = 1, colSplit = 1;
  std::vector<std::size_t> offsets; // start of each block in (g, bi, bj) order, then the total

  std::size_t index(std::size_t g, unsigned bi, unsigned bj) const {
    return (g * rowSplit + bi) * colSplit + bj;
  }
  /// Block (g, bi, bj) as a flat run.
  Tensor block(std::size_t g, unsigned bi, unsigned bj) const {
    const std::size_t i = index(g, bi, bj);
    return flat.slice(offsets[i], offsets[i + 1]);
  }
  /// Elements `piece` of block (g, bi, bj), as an interval of `flat`.
  Interval piece(std::size_t g, unsigned bi, unsigned bj, Range part) const {
    const std::size_t start = offsets[index(g, bi, bj)];
    return Interval(start + part.begin, start + part.end);
  }
};

BlockedTensor createBlocked(Graph &graph, const Type &type, std::size_t groups, std::size_t R, std::size_t C,
                            std::size_t rowBlock, unsigned rowSplit, std::size_t colBlock, unsigned colSplit,
                            const DebugContext &dc) {
  BlockedTensor t;
  t.rowSplit = rowSplit;
  t.colSplit = colSplit;
  std::size_t total = 0;
  for (std::size_t g = 0; g < groups; ++g)
    for (unsigned bi = 0; bi < rowSplit; ++bi)
      for (unsigned bj = 0; bj < colSplit; ++bj) {
        t.offsets.push_back(total);
        total += blockRange(bi, rowBlock, R).size() * blockRange(bj, colBlock, C).size();
      }
  t.offsets.push_back(total);
  t.flat = graph.addVariable(type, {total}, dc);
  if (total == 0) {
    t.view = t.flat.reshape({groups, R, C});
    return t;
  }
  std::vector<Tensor> matrices;
  for (std::size_t g = 0; g < groups; ++g) {
    std::vector<Tensor> bands;
    for (unsigned bi = 0; bi < rowSplit; ++bi) {
      const Range rows = blockRange(bi, rowBlock, R);
      std::vector<Tensor> blocks;
      for (unsigned bj = 0; bj < colSplit; ++bj) {
        const Range cols = blockRange(bj, colBlock, C);
        if (!rows.empty() && !cols.empty())
          blocks.push_back(t.block(g, bi, bj).reshape({rows.size(), cols.size()}));
      }
      if (!blocks.empty())
        bands.push_back(concat(blocks, 1));
    }
    matrices.push_back(concat(bands, 0).expand({0}));
  }
  t.view = concat(matrices, 0);
  return t;
}

/// A new {G, m, n} result of `type` laid out and mapped where the plan
/// produces it: whole blocks on their tile, or, when partial sums are reduced,
/// each block's elements shared out over the depthSplit tiles that reduce them.
Tensor createOutput(Graph &graph, const Type &type, const MatMulProblem &p, const MatMulPlan &plan,
                    const DebugContext &dc) {
  if (plan.serialRows * plan.serialCols > 1) { // each pass's block laid out and mapped as it is produced
    std::vector<Tensor> rows;
    for (unsigned r = 0; r < plan.serialRows; ++r) {
      std::vector<Tensor> cols;
      for (unsigned c = 0; c < plan.serialCols; ++c) {
        const MatMulProblem pass = planning::passProblem(p, plan, r, c);
        if (pass.m != 0 && pass.n != 0)
          cols.push_back(createOutput(graph, type, pass, planning::passPlan(p, plan, r, c), dc));
      }
      if (!cols.empty())
        rows.push_back(concat(cols, 2));
    }
    return concat(rows, 1);
  }
  const BlockedTensor out = createBlocked(graph, type, p.groups, p.m, p.n, plan.rowBlock, plan.rowSplit,
                                          plan.colBlock, plan.colSplit, dc);
  TileToTensorMapping mapping(graph.getTarget().getNumTiles());
  forEachOutputBlock(
      p, plan, [&](std::size_t g, unsigned gi, unsigned i, unsigned j, Range rows, Range cols) {
        const unsigned pieces = plan.reduces(p) ? plan.depthSplit : 1;
        for (unsigned d = 0; d < pieces; ++d) {
          const Interval part = out.piece(g, i, j, pieceRange(d, pieces, rows.size() * cols.size()));
          if (part.size() != 0)
            mapping[plan.tileOf(gi, i, j, d)].push_back(part);
        }
      });
  graph.setTileMapping(out.flat, mapping);
  return out.view;
}

Tensor createInputOperand(Graph &graph, bool lhs, const Type &type, const MatMulProblem &p,
                          const MatMulPlan &plan, const DebugContext &dc);

/// Builds the multiplication of A3 {G,m,k} by B3 {G,k,n} into out3 {G,m,n};
/// with `accScale` (one element) the product scaled by it is added to out3. `plan` has no
/// serial passes over rows or columns. With `stageB`, B3 is a view copied, one inner pass's
/// rows at a time, into a tensor laid out for the pass before its products read it.
void buildPass(Graph &graph, const Tensor &A3, const Tensor &B3, const Tensor &out3, const Tensor *accScale,
               const MatMulProblem &p, const MatMulPlan &plan, bool stageB, program::Sequence &prog,
               const DebugContext &dc);

void buildMatMul(Graph &graph, const Tensor &A3, const Tensor &B3In, const Tensor &out3,
                 const Tensor *accScale, MatMulProblem p, program::Sequence &prog, const DebugContext &dc,
                 const OptionFlags &optionFlags, PlanningCache *cache, bool stageB = false) {
  const MatMulOptions options = planning::parseMatMulOptions(optionFlags, "poplin::matMul");
  p.accumulate = accScale != nullptr;
  if (p.groups * p.m * p.n == 0)
    return;
  const MatMulPlan plan = getPlan(graph, p, options, cache);
  Tensor B3 = B3In;
  if (stageB && plan.serialRows > 1) { // every row pass reads all of B: one copy before them
    B3 = createInputOperand(graph, false, p.inputType, p, plan, {dc, "rhs"});
    prog.add(program::Copy(B3In, B3, false, {dc, "stageRhs"}));
    stageB = false;
  }
  // Serial passes over rows and columns run one after another, each over its rows of A, its
  // columns of B and its block of the result.
  for (unsigned r = 0; r < plan.serialRows; ++r) {
    const planning::SerialRange rows = planning::serialRange(p.m, plan.serialRows, r);
    for (unsigned c = 0; c < plan.serialCols; ++c) {
      const planning::SerialRange cols = planning::serialRange(p.n, plan.serialCols, c);
      if (rows.count == 0 || cols.count == 0)
        continue;
      const std::size_t rowEnd = rows.first + rows.count, colEnd = cols.first + cols.count;
      buildPass(graph, A3.slice(rows.first, rowEnd, 1), B3.slice(cols.first, colEnd, 2),
                out3.slice({0, rows.first, cols.first}, {p.groups, rowEnd, colEnd}), accScale,
                planning::passProblem(p, plan, r, c), planning::passPlan(p, plan, r, c), stageB, prog, dc);
    }
  }
}

/// The block products (one superstep per inner serial pass) and the reduction of their partial
/// sums: `plan` has no serial passes over rows or columns.
void buildPass(Graph &graph, const Tensor &A3, const Tensor &B3, const Tensor &out3, const Tensor *accScale,
               const MatMulProblem &p, const MatMulPlan &plan, bool stageB, program::Sequence &prog,
               const DebugContext &dc) {
  const Target &target = graph.getTarget();
  const bool reduces = plan.reduces(p);
  const Type blockOutType = reduces ? p.partialsType : p.outputType;

  // Partial sums: block (g, i, j) of inner split d is block (g * depthSplit + d, i, j),
  // on the tile that computes it; kept across the inner serial passes.
  BlockedTensor partials;
  if (reduces) {
    partials = createBlocked(graph, p.partialsType, p.groups * plan.depthSplit, p.m, p.n, plan.rowBlock,
                             plan.rowSplit, plan.colBlock, plan.colSplit, {dc, "partials"});
    TileToTensorMapping mapping(target.getNumTiles());
    forEachOutputBlock(p, plan,
                       [&](std::size_t g, unsigned gi, unsigned i, unsigned j, Range rows, Range cols) {
                         for (unsigned d = 0; d < plan.depthSplit; ++d)
                           mapping[plan.tileOf(gi, i, j, d)].push_back(
                               partials.piece(g * plan.depthSplit + d, i, j, {0, rows.size() * cols.size()}));
                       });
    graph.setTileMapping(partials.flat, mapping);
  }

  // Inner split d's blocks are written by the first inner pass where its block is not empty and
  // added to by the later ones. Partials whose block is empty in every pass hold zeros and are
  // never written; they are left out of the sums.
  std::vector<bool> written(plan.depthSplit, false);
  const std::string blockVertex = poputil::templateVertex("poplin::MatMulBlock", p.inputType, blockOutType);
  const std::string blockAccVertex =
      poputil::templateVertex("poplin::MatMulBlockAcc", p.inputType, blockOutType);
  for (unsigned s = 0; s < plan.serialInner; ++s) {
    const planning::SerialRange inner = planning::serialRange(p.k, plan.serialInner, s);
    if (inner.count == 0)
      continue;
    const std::size_t depthBlock = planning::innerPassPlan(p, plan, s).depthBlock;
    const std::string pass = plan.serialInner > 1 ? "[" + std::to_string(s) + "]" : "";
    Tensor b3 = B3.slice(inner.first, inner.first + inner.count, 1);
    if (stageB) { // this pass's rows of the view, laid out for its products
      const Tensor staged =
          createInputOperand(graph, false, p.inputType, planning::innerPassProblem(p, plan, s),
                             planning::innerPassPlan(p, plan, s), {dc, "rhs" + pass});
      prog.add(program::Copy(b3, staged, false, {dc, "stageRhs" + pass}));
      b3 = staged;
    }
    const Tensor a3 = A3.slice(inner.first, inner.first + inner.count, 2);
    std::vector<bool> writes(plan.depthSplit, false);
    const ComputeSet productCs = graph.addComputeSet({dc, "matMul/product" + pass});
    forEachOutputBlock(
        p, plan, [&](std::size_t g, unsigned gi, unsigned i, unsigned j, Range rows, Range cols) {
          for (unsigned d = 0; d < plan.depthSplit; ++d) {
            const Range depth = blockRange(d, depthBlock, inner.count);
            const unsigned tile = plan.tileOf(gi, i, j, d);
            if (depth.empty()) // more inner splits than this pass's inner elements: nothing to add
              continue;
            writes[d] = true;
            const Tensor c = reduces ? partials.block(g * plan.depthSplit + d, i, j)
                                     : out3[g].slice({rows.begin, cols.begin}, {rows.end, cols.end});
            const Tensor a = a3[g].slice({rows.begin, depth.begin}, {rows.end, depth.end});
            const Tensor b = b3[g].slice({depth.begin, cols.begin}, {depth.end, cols.end});
            VertexRef v = graph.addVertex(productCs, written[d] ? blockAccVertex : blockVertex,
                                          {{"a", a}, {"b", b}, {"c", c}});
            graph.setInitialValue(v["rows"], unsigned(rows.size()));
            graph.setInitialValue(v["depth"], unsigned(depth.size()));
            graph.setInitialValue(v["cols"], unsigned(cols.size()));
            graph.setTileMapping(v, tile);
            graph.setPerfEstimate(v,
                                  planning::estimateBlockCycles(target, p.inputType, p.partialsType,
                                                                rows.size(), depth.size(), cols.size()),
                                  2ull * rows.size() * depth.size() * cols.size());
          }
        });
    prog.add(program::Execute(productCs, {dc, "matMul/product" + pass}));
    for (unsigned d = 0; d < plan.depthSplit; ++d)
      written[d] = written[d] || writes[d];
  }
  if (!reduces)
    return;

  std::vector<unsigned> usedDepths;
  for (unsigned d = 0; d < plan.depthSplit; ++d)
    if (written[d])
      usedDepths.push_back(d);

  const ComputeSet reduceCs = graph.addComputeSet({dc, "matMul/reduce"});
  const std::string reduceVertex =
      accScale ? poputil::templateVertex("poplin::MatMulReduceAcc", p.partialsType, p.outputType,
                                         accScale->elementType())
               : poputil::templateVertex("poplin::MatMulReduce", p.partialsType, p.outputType);
  forEachOutputBlock(
      p, plan, [&](std::size_t g, unsigned gi, unsigned i, unsigned j, Range rows, Range cols) {
        const Tensor outBlock = out3[g].slice({rows.begin, cols.begin}, {rows.end, cols.end}).flatten();
        for (unsigned d = 0; d < plan.depthSplit; ++d) {
          const Range part = pieceRange(d, plan.depthSplit, outBlock.numElements());
          if (part.empty())
            continue;
          std::vector<Tensor> pieces;
          for (unsigned used : usedDepths)
            pieces.push_back(partials.block(g * plan.depthSplit + used, i, j).slice(part.begin, part.end));
          std::vector<Graph::ConnectionDesc> fields{{"partials", concat(pieces)},
                                                    {"out", outBlock.slice(part.begin, part.end)}};
          if (accScale)
            fields.push_back({"scale", accScale->reshape({})});
          VertexRef v = graph.addVertex(reduceCs, reduceVertex, fields);
          graph.setInitialValue(v["numPartials"], unsigned(pieces.size()));
          graph.setTileMapping(v, plan.tileOf(gi, i, j, d));
          graph.setPerfEstimate(
              v, planning::estimateReduceCycles(target, p.partialsType, part.size(), pieces.size()),
              std::uint64_t(part.size()) * pieces.size());
        }
      });
  prog.add(program::Execute(reduceCs, {dc, "matMul/reduce"}));
}

Tensor as3d(const Tensor &t) {
  return t.expand({0});
}

Tensor matMulImpl(Graph &graph, const char *opBase, const Tensor &A, const Tensor &B, program::Sequence &prog,
                  const Type &outputType, const DebugContext &dc, const OptionFlags &options,
                  PlanningCache *cache, bool grouped, bool stageB = false) {
  const std::string op = aspen::ops::opNameWithContext(opBase, dc);
  MatMulProblem p = checkOperands(op, A, B, outputType, grouped);
  const MatMulOptions parsed = planning::parseMatMulOptions(options, op);
  const Tensor A3 = grouped ? A : as3d(A);
  const Tensor B3 = grouped ? B : as3d(B);
  Tensor out3;
  if (p.groups * p.m * p.n != 0) {
    MatMulProblem planned = p;
    out3 = createOutput(graph, outputType, planned, getPlan(graph, planned, parsed, cache), {dc, "output"});
  } else {
    out3 = graph.addVariable(outputType, {p.groups, p.m, p.n}, {dc, "output"});
  }
  buildMatMul(graph, A3, B3, out3, nullptr, p, prog, dc, options, cache, stageB);
  return grouped ? out3 : out3[0];
}

void withOutputImpl(Graph &graph, const char *opBase, const Tensor &A, const Tensor &B, const Tensor &out,
                    program::Sequence &prog, const DebugContext &dc, const OptionFlags &options,
                    PlanningCache *cache, bool grouped) {
  const std::string op = aspen::ops::opNameWithContext(opBase, dc);
  aspen::ops::requireValid(out, op, "the output");
  MatMulProblem p = checkOperands(op, A, B, out.elementType(), grouped);
  const std::vector<std::size_t> expected =
      grouped ? std::vector<std::size_t>{p.groups, p.m, p.n} : std::vector<std::size_t>{p.m, p.n};
  if (out.shape() != expected)
    fail(op, "the output " + describe(out) + " must have shape " + shapeString(expected) + " for A " +
                 describe(A) + " * B " + describe(B));
  if (!out.isParallelWriteable())
    fail(op, "the output " + describe(out) + " cannot be written (it holds constants or aliased elements)");
  buildMatMul(graph, grouped ? A : as3d(A), grouped ? B : as3d(B), grouped ? out : as3d(out), nullptr, p,
              prog, dc, options, cache);
}

void accImpl(Graph &graph, const char *opBase, const Tensor &C, const Tensor &scale, const Tensor &A,
             const Tensor &B, program::Sequence &prog, const DebugContext &dc, const OptionFlags &options,
             PlanningCache *cache, bool grouped) {
  const std::string op = aspen::ops::opNameWithContext(opBase, dc);
  aspen::ops::requireValid(C, op, "C");
  aspen::ops::requireValid(scale, op, "the scale k");
  MatMulProblem p = checkOperands(op, A, B, C.elementType(), grouped);
  const std::vector<std::size_t> expected =
      grouped ? std::vector<std::size_t>{p.groups, p.m, p.n} : std::vector<std::size_t>{p.m, p.n};
  if (C.shape() != expected)
    fail(op, "C " + describe(C) + " must have shape " + shapeString(expected) + " for A " + describe(A) +
                 " * B " + describe(B));
  if (scale.numElements() != 1)
    fail(op, "the scale k must have one element, got " + describe(scale));
  checkFloatType(op, "the scale k", scale.elementType());
  if (!C.isParallelWriteable())
    fail(op, "C " + describe(C) + " cannot be written (it holds constants or aliased elements)");
  buildMatMul(graph, grouped ? A : as3d(A), grouped ? B : as3d(B), grouped ? C : as3d(C), &scale, p, prog, dc,
              options, cache);
}

Tensor scaleConstant(Graph &graph, float k, const DebugContext &dc) {
  Tensor t = graph.addConstant(FLOAT, {}, k, {dc, "k"});
  graph.setTileMapping(t, 0);
  return t;
}

/// A new LHS ({G, m, k}) or RHS ({G, k, n}) operand mapped where the plan uses it. Block
/// (g, i, d) of A is used by the colSplit tiles (g, i, *, d): it is shared out between them (and
/// likewise block (g, d, j) of B among (g, *, j, d)). With serial passes, A is used the same way
/// by every pass and B's columns are laid out pass by pass.
Tensor createInputOperand(Graph &graph, bool lhs, const Type &type, const MatMulProblem &p,
                          const MatMulPlan &plan, const DebugContext &dc) {
  if (plan.serialRows * plan.serialCols > 1) {
    // A's rows (B's columns) pass by pass, as each pass uses them; the other operand as the
    // first pass uses it (every pass reads all of it).
    const unsigned passes = lhs ? plan.serialRows : plan.serialCols;
    std::vector<Tensor> parts;
    for (unsigned x = 0; x < passes; ++x) {
      const unsigned r = lhs ? x : 0, c = lhs ? 0 : x;
      const MatMulProblem pass = planning::passProblem(p, plan, r, c);
      if (pass.m != 0 && pass.n != 0)
        parts.push_back(createInputOperand(graph, lhs, type, pass, planning::passPlan(p, plan, r, c), dc));
    }
    return concat(parts, lhs ? 1 : 2);
  }
  if (plan.serialInner > 1) { // the inner dimension pass by pass
    std::vector<Tensor> parts;
    for (unsigned s = 0; s < plan.serialInner; ++s)
      if (planning::serialRange(p.k, plan.serialInner, s).count != 0)
        parts.push_back(createInputOperand(graph, lhs, type, planning::innerPassProblem(p, plan, s),
                                           planning::innerPassPlan(p, plan, s), dc));
    return concat(parts, lhs ? 2 : 1);
  }
  const BlockedTensor blocked = lhs ? createBlocked(graph, type, p.groups, p.m, p.k, plan.rowBlock,
                                                    plan.rowSplit, plan.depthBlock, plan.depthSplit, dc)
                                    : createBlocked(graph, type, p.groups, p.k, p.n, plan.depthBlock,
                                                    plan.depthSplit, plan.colBlock, plan.colSplit, dc);
  TileToTensorMapping mapping(graph.getTarget().getNumTiles());
  const unsigned outer = lhs ? plan.rowSplit : plan.colSplit;
  const unsigned users = lhs ? plan.colSplit : plan.rowSplit;
  for (std::size_t g = 0; g < p.groups; ++g) {
    const unsigned gi = unsigned(g / plan.groupBlock);
    for (unsigned o = 0; o < outer; ++o)
      for (unsigned d = 0; d < plan.depthSplit; ++d) {
        const std::size_t elements = blocked.block(g, lhs ? o : d, lhs ? d : o).numElements();
        for (unsigned u = 0; u < users; ++u) {
          const Interval part = blocked.piece(g, lhs ? o : d, lhs ? d : o, pieceRange(u, users, elements));
          if (part.size() != 0)
            mapping[lhs ? plan.tileOf(gi, o, u, d) : plan.tileOf(gi, u, o, d)].push_back(part);
        }
      }
  }
  graph.setTileMapping(blocked.flat, mapping);
  return blocked.view;
}

enum class Operand { LHS, RHS, Output };

/// A new tensor for one operand of the planned multiplication, mapped where
/// the plan uses it.
Tensor createOperand(Graph &graph, const char *opBase, Operand which, const Type &inputType,
                     const Type &outputType, const std::vector<std::size_t> &aShape,
                     const std::vector<std::size_t> &bShape, const DebugContext &dc,
                     const OptionFlags &options, PlanningCache *cache, bool grouped) {
  const std::string op = aspen::ops::opNameWithContext(opBase, dc);
  MatMulProblem p = problemFromShapes(op, inputType, outputType, aShape, bShape, grouped);
  const MatMulOptions parsed = planning::parseMatMulOptions(options, op);
  const Type type = which == Operand::Output ? outputType : inputType;
  const std::vector<std::size_t> shape3 = which == Operand::LHS ? std::vector<std::size_t>{p.groups, p.m, p.k}
                                          : which == Operand::RHS
                                              ? std::vector<std::size_t>{p.groups, p.k, p.n}
                                              : std::vector<std::size_t>{p.groups, p.m, p.n};
  Tensor t3;
  if (p.groups * p.m * p.n * p.k == 0) { // nothing to plan: any mapping will do
    t3 = graph.addVariable(type, shape3, dc);
    if (t3.numElements() != 0)
      graph.setTileMapping(t3, 0);
  } else if (which == Operand::Output) {
    t3 = createOutput(graph, type, p, getPlan(graph, p, parsed, cache), dc);
  } else {
    t3 = createInputOperand(graph, which == Operand::LHS, type, p, getPlan(graph, p, parsed, cache), dc);
  }
  return grouped ? t3 : t3[0];
}

} // namespace

// --- pre-planning (Preplan.hpp) -------------------------------------------------

namespace preplanning {

PlanRequest matMulRequest(const Target *target, const MatMulParams &params, const OptionFlags &options,
                          const std::string &op) {
  PlanRequest r;
  r.target = target;
  r.problem = problemFromShapes(op, params.inputType, params.outputType, params.aShape, params.bShape, true);
  const MatMulProblem &p = r.problem;
  if (p.k == 0 && p.groups * p.m * p.n != 0)
    fail(op, "the inner dimension of A " + shapeString(params.aShape) + " * B " + shapeString(params.bShape) +
                 " is 0");
  r.options = planning::parseMatMulOptions(options, op);
  return r;
}

void record(const PlanRequest &request, PlanningCache &cache) {
  MatMulProblem p = request.problem;
  if (p.groups * p.m * p.n * p.k == 0)
    return;
  (void)getPlan(*request.target, p, request.options, &cache);
}

} // namespace preplanning

// --- public API ---------------------------------------------------------------

Tensor matMul(Graph &graph, const Tensor &A, const Tensor &B, program::Sequence &prog, const Type &outputType,
              const DebugContext &debugContextIn, const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(A, B, outputType, options));
  const poplar::DebugContext debugContext(di);
  return matMulImpl(graph, "poplin::matMul", A, B, prog, outputType, debugContext, options, cache, false);
}

Tensor matMul(Graph &graph, const Tensor &A, const Tensor &B, program::Sequence &prog,
              const DebugContext &debugContextIn, const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(A, B, options));
  const poplar::DebugContext debugContext(di);
  // The output type is A's; an invalid A is reported by matMulImpl.
  return matMulImpl(graph, "poplin::matMul", A, B, prog, A.valid() ? A.elementType() : FLOAT, debugContext,
                    options, cache, false);
}

void matMulWithOutput(Graph &graph, const Tensor &A, const Tensor &B, Tensor &out, program::Sequence &prog,
                      const DebugContext &debugContextIn, const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(A, B, out, options));
  const poplar::DebugContext debugContext(di);
  withOutputImpl(graph, "poplin::matMulWithOutput", A, B, out, prog, debugContext, options, cache, false);
}

Tensor matMulGrouped(Graph &graph, const Tensor &A, const Tensor &B, program::Sequence &prog,
                     const Type &outputType, const DebugContext &debugContextIn, const OptionFlags &options,
                     PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(A, B, outputType, options));
  const poplar::DebugContext debugContext(di);
  return matMulImpl(graph, "poplin::matMulGrouped", A, B, prog, outputType, debugContext, options, cache,
                    true);
}

void matMulGroupedWithOutput(Graph &graph, const Tensor &A, const Tensor &B, Tensor &out,
                             program::Sequence &prog, const DebugContext &debugContextIn,
                             const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(A, B, out, options));
  const poplar::DebugContext debugContext(di);
  withOutputImpl(graph, "poplin::matMulGroupedWithOutput", A, B, out, prog, debugContext, options, cache,
                 true);
}

void matMulAcc(Graph &graph, const Tensor &C, float k, const Tensor &A, const Tensor &B,
               program::Sequence &prog, const DebugContext &debugContextIn, const OptionFlags &options,
               PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(C, k, A, B, options));
  const poplar::DebugContext debugContext(di);
  accImpl(graph, "poplin::matMulAcc", C, scaleConstant(graph, k, debugContext), A, B, prog, debugContext,
          options, cache, false);
}

void matMulAcc(Graph &graph, const Tensor &C, const Tensor &k, const Tensor &A, const Tensor &B,
               program::Sequence &prog, const DebugContext &debugContextIn, const OptionFlags &options,
               PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(C, k, A, B, options));
  const poplar::DebugContext debugContext(di);
  accImpl(graph, "poplin::matMulAcc", C, k, A, B, prog, debugContext, options, cache, false);
}

void matMulGroupedAcc(Graph &graph, const Tensor &C, float k, const Tensor &A, const Tensor &B,
                      program::Sequence &prog, const DebugContext &debugContextIn, const OptionFlags &options,
                      PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(C, k, A, B, options));
  const poplar::DebugContext debugContext(di);
  accImpl(graph, "poplin::matMulGroupedAcc", C, scaleConstant(graph, k, debugContext), A, B, prog,
          debugContext, options, cache, true);
}

void matMulGroupedAcc(Graph &graph, const Tensor &C, const Tensor &k, const Tensor &A, const Tensor &B,
                      program::Sequence &prog, const DebugContext &debugContextIn, const OptionFlags &options,
                      PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(C, k, A, B, options));
  const poplar::DebugContext debugContext(di);
  accImpl(graph, "poplin::matMulGroupedAcc", C, k, A, B, prog, debugContext, options, cache, true);
}

void matMulReportPlan(std::ostream &out, const Graph &graph, const Type &inputType, const Type &outputType,
                      const std::vector<std::size_t> &aShape, const std::vector<std::size_t> &bShape,
                      const OptionFlags &options, PlanningCache *cache) {
  MatMulProblem p =
      problemFromShapes("poplin::matMulReportPlan", inputType, outputType, aShape, bShape, false);
  const MatMulOptions parsed = planning::parseMatMulOptions(options, "poplin::matMulReportPlan");
  const MatMulPlan plan = getPlan(graph, p, parsed, cache);
  planning::describePlan(out, graph.getTarget(), p, parsed, plan);
}

void matMulGroupedReportPlan(std::ostream &out, const Graph &graph, const Type &inputType,
                             const Type &outputType, const std::vector<std::size_t> &aShape,
                             const std::vector<std::size_t> &bShape, const OptionFlags &options,
                             PlanningCache *cache) {
  MatMulProblem p =
      problemFromShapes("poplin::matMulGroupedReportPlan", inputType, outputType, aShape, bShape, true);
  const MatMulOptions parsed = planning::parseMatMulOptions(options, "poplin::matMulGroupedReportPlan");
  const MatMulPlan plan = getPlan(graph, p, parsed, cache);
  planning::describePlan(out, graph.getTarget(), p, parsed, plan);
}

Tensor createMatMulInputLHS(Graph &graph, const Type &inputType, const Type &outputType,
                            const std::vector<std::size_t> &aShape, const std::vector<std::size_t> &bShape,
                            const DebugContext &debugContextIn, const OptionFlags &options,
                            PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(inputType, outputType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createOperand(graph, "poplin::createMatMulInputLHS", Operand::LHS, inputType, outputType, aShape,
                       bShape, debugContext, options, cache, false);
}

Tensor createMatMulInputLHS(Graph &graph, const Type &dataType, const std::vector<std::size_t> &aShape,
                            const std::vector<std::size_t> &bShape, const DebugContext &debugContextIn,
                            const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(dataType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createMatMulInputLHS(graph, dataType, dataType, aShape, bShape, debugContext, options, cache);
}

Tensor createMatMulInputRHS(Graph &graph, const Type &inputType, const Type &outputType,
                            const std::vector<std::size_t> &aShape, const std::vector<std::size_t> &bShape,
                            const DebugContext &debugContextIn, const OptionFlags &options,
                            PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(inputType, outputType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createOperand(graph, "poplin::createMatMulInputRHS", Operand::RHS, inputType, outputType, aShape,
                       bShape, debugContext, options, cache, false);
}

Tensor createMatMulInputRHS(Graph &graph, const Type &dataType, const std::vector<std::size_t> &aShape,
                            const std::vector<std::size_t> &bShape, const DebugContext &debugContextIn,
                            const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(dataType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createMatMulInputRHS(graph, dataType, dataType, aShape, bShape, debugContext, options, cache);
}

Tensor createMatMulOutput(Graph &graph, const Type &inputType, const Type &outputType,
                          const std::vector<std::size_t> &aShape, const std::vector<std::size_t> &bShape,
                          const DebugContext &debugContextIn, const OptionFlags &options,
                          PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(inputType, outputType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createOperand(graph, "poplin::createMatMulOutput", Operand::Output, inputType, outputType, aShape,
                       bShape, debugContext, options, cache, false);
}

Tensor createMatMulOutput(Graph &graph, const Type &dataType, const std::vector<std::size_t> &aShape,
                          const std::vector<std::size_t> &bShape, const DebugContext &debugContextIn,
                          const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(dataType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createMatMulOutput(graph, dataType, dataType, aShape, bShape, debugContext, options, cache);
}

Tensor createMatMulGroupedInputLHS(Graph &graph, const Type &inputType, const Type &outputType,
                                   const std::vector<std::size_t> &aShape,
                                   const std::vector<std::size_t> &bShape, const DebugContext &debugContextIn,
                                   const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(inputType, outputType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createOperand(graph, "poplin::createMatMulGroupedInputLHS", Operand::LHS, inputType, outputType,
                       aShape, bShape, debugContext, options, cache, true);
}

Tensor createMatMulGroupedInputRHS(Graph &graph, const Type &inputType, const Type &outputType,
                                   const std::vector<std::size_t> &aShape,
                                   const std::vector<std::size_t> &bShape, const DebugContext &debugContextIn,
                                   const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(inputType, outputType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createOperand(graph, "poplin::createMatMulGroupedInputRHS", Operand::RHS, inputType, outputType,
                       aShape, bShape, debugContext, options, cache, true);
}

Tensor createMatMulGroupedOutput(Graph &graph, const Type &inputType, const Type &outputType,
                                 const std::vector<std::size_t> &aShape,
                                 const std::vector<std::size_t> &bShape, const DebugContext &debugContextIn,
                                 const OptionFlags &options, PlanningCache *cache) {
  aspen::ops::PoplinDebugInfo di(debugContextIn, DI_ARGS(inputType, outputType, aShape, bShape, options));
  const poplar::DebugContext debugContext(di);
  return createOperand(graph, "poplin::createMatMulGroupedOutput", Operand::Output, inputType, outputType,
                       aShape, bShape, debugContext, options, cache, true);
}

Tensor internal::matMulGroupedStagedRhs(Graph &graph, const Tensor &A, const Tensor &B,
                                        program::Sequence &prog, const Type &outputType,
                                        const DebugContext &dc, const OptionFlags &options,
                                        PlanningCache *cache) {
  return matMulImpl(graph, "poplin::matMulGrouped", A, B, prog, outputType, dc, options, cache, true, true);
}

planning::ProductSplits internal::matMulGroupedStagedRhsSplits(const Graph &graph, const Tensor &A,
                                                               const Tensor &B, const Type &outputType,
                                                               const OptionFlags &options,
                                                               PlanningCache *cache) {
  // As matMulImpl and buildMatMul plan it: the operands' problem, not accumulating.
  MatMulProblem p = checkOperands("poplin::matMulGrouped", A, B, outputType, true);
  const MatMulOptions parsed = planning::parseMatMulOptions(options, "poplin::matMul");
  if (p.groups * p.m * p.k * p.n == 0)
    return {};
  const MatMulPlan plan = getPlan(graph, p, parsed, cache);
  return {plan.groupSplit, plan.rowSplit,   plan.colSplit,   plan.depthSplit,
          plan.serialRows, plan.serialCols, plan.serialInner};
}

Tensor transposeGroupedMatrix(const Tensor &A) {
  if (A.rank() != 3)
    throw poputil::poplibs_error("poplin::transposeGroupedMatrix: expected a rank-3 tensor, got shape " +
                                 shapeString(A.shape()));
  return A.dimShuffle({0, 2, 1});
}

void matmulValidateOptions(const OptionFlags &options) {
  planning::parseMatMulOptions(options, "poplin::matmulValidateOptions");
}

} // namespace poplin
