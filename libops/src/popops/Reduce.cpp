// Copyright (c) Aspen contributors.
// popops::reduce. The input is viewed as a matrix: [O, R] with the reduced elements
// of each output in a row ("inner"; also used, through a dimShuffle, when reduced and
// kept dimensions interleave) or [R, O] when the reduced dimensions are the outer ones
// ("outer", reduced column-wise). Stage 1 runs on the tiles that hold the input: rows
// (or column blocks) held whole by one tile are reduced straight into the output;
// pieces of rows split across tiles become float partials (int for int inputs), which
// stage 2 reduces on the output's tile. Scale and update are applied afterwards by
// element-wise vertices. Vertices: popops::ReduceInner / popops::ReduceOuter.
#include "popops/Reduce.hpp"

#include "ElementWiseInternal.hpp"
#include "Internal.hpp"
#include "VertexCosts.hpp"
#include "common/OpDebugInfo.hpp"
#include "popops/Cast.hpp"
#include "popops/Expr.hpp"
#include "popops/Fill.hpp"
#include "poputil/OptionParsing.hpp"
#include "poputil/TileMapping.hpp"
#include "poputil/Util.hpp"

#include "ir/TargetData.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace poputil {
template <> poplar::ProfileValue toProfileValue(const popops::ReduceParams &p) {
  poplar::ProfileValue::Map m{{"op", poplar::ProfileValue(popops::toString(p.op))},
                              {"update", poplar::ProfileValue(p.update)},
                              {"useScale", poplar::ProfileValue(p.useScale)}};
  if (p.useScale)
    m.emplace("scale", toProfileValue(p.scale));
  return m;
}
template <> poplar::ProfileValue toProfileValue(const popops::SingleReduceOp &r) {
  poplar::ProfileValue::Map m{{"in", toProfileValue(r.in)},
                              {"dims", toProfileValue(r.dims)},
                              {"params", toProfileValue(r.params)},
                              {"debugName", poplar::ProfileValue(r.debugName)}};
  if (r.useOutType)
    m.emplace("outType", toProfileValue(r.outType));
  return m;
}
} // namespace poputil

namespace popops {

namespace {

using aspen::ops::describe;
using aspen::ops::shapeString;
using poputil::templateVertex;

const char *kOpName = "popops::reduce";

bool isFloatType(const poplar::Type &t) {
  return t == poplar::FLOAT || t == poplar::HALF;
}
bool isIntType(const poplar::Type &t) {
  return t == poplar::INT || t == poplar::UNSIGNED_INT;
}

// The type partial results are kept in between stages.
poplar::Type accumulatorType(Operation op, const poplar::Type &in) {
  if (op == Operation::MIN || op == Operation::MAX || op == Operation::LOGICAL_AND ||
      op == Operation::LOGICAL_OR)
    return in;
  return isFloatType(in) ? poplar::FLOAT : in;
}

// The operation that combines partial results.
Operation combineOp(Operation op) {
  return op == Operation::SQUARE_ADD ? Operation::ADD : op;
}

void parseReduceOptions(const poplar::OptionFlags &options) {
  poplar::Type interTile, inVertex;
  const std::map<std::string, poplar::Type> types{{"float", poplar::FLOAT}, {"half", poplar::HALF}};
  const poplibs::OptionSpec spec{
      {"accumType.interTile", poplibs::OptionHandler::createWithEnum(interTile, types)},
      {"accumType.inVertex", poplibs::OptionHandler::createWithEnum(inVertex, types)},
  };
  aspen::ops::parseOptions(spec, options, kOpName);
}

void validate(const poplar::Tensor &in, const poplar::Type &outType, const std::vector<std::size_t> &dims,
              const ReduceParams &params, const std::string &name) {
  if (!in.valid())
    throw poputil::poplibs_error(name + ": the input tensor is not valid");
  std::set<std::size_t> seen;
  for (std::size_t d : dims) {
    if (d >= in.rank())
      throw poputil::poplibs_error(name + ": reduction dimension " + std::to_string(d) +
                                   " is out of range for " + describe(in) + " (rank " +
                                   std::to_string(in.rank()) + ")");
    if (!seen.insert(d).second)
      throw poputil::poplibs_error(name + ": reduction dimension " + std::to_string(d) + " is listed twice");
  }
  const poplar::Type it = in.elementType();
  const Operation op = params.op;
  bool ok = false;
  switch (op) {
  case Operation::ADD:
  case Operation::SQUARE_ADD:
  case Operation::MUL:
    ok = (isFloatType(it) && isFloatType(outType)) || (isIntType(it) && outType == it);
    break;
  case Operation::MIN:
  case Operation::MAX:
    ok = (isFloatType(it) || isIntType(it)) && outType == it;
    break;
  case Operation::LOGICAL_AND:
  case Operation::LOGICAL_OR:
    ok = it == poplar::BOOL && outType == poplar::BOOL;
    break;
  case Operation::LOG_ADD:
    ok = isFloatType(it) && isFloatType(outType);
    break;
  }
  if (!ok)
    throw poputil::poplibs_error(name + ": operation " + aspen::ops::toString(op) +
                                 " does not support input " + describe(in) + " with output type " +
                                 outType.toString().str());
  if ((params.update || params.useScale) && op != Operation::ADD && op != Operation::SQUARE_ADD &&
      op != Operation::LOG_ADD)
    throw poputil::poplibs_error(
        name + ": scale and update are only supported with ADD, SQUARE_ADD and LOG_ADD (got " +
        aspen::ops::toString(op) + ")");
  if (params.useScale) {
    if (!params.scale.valid() || params.scale.numElements() != 1)
      throw poputil::poplibs_error(name + ": the scale must be a single-element tensor");
    if (!isFloatType(params.scale.elementType()) && params.scale.elementType() != outType)
      throw poputil::poplibs_error(name + ": the scale " + describe(params.scale) + " must be float or half");
  }
}

// The intervals of `t`'s flattened index space on each tile (unmapped elements on tile 0).
std::vector<std::pair<unsigned, poplar::Interval>> intervalsByTile(const poplar::Graph &graph,
                                                                   const poplar::Tensor &t) {
  std::vector<std::pair<unsigned, poplar::Interval>> out;
  for (const auto &w : aspen::ops::splitByTile(graph, t, std::numeric_limits<unsigned>::max()))
    for (const auto &r : w.regions)
      out.push_back({w.tile, r});
  return out;
}

class ReduceBuilder {
public:
  ReduceBuilder(poplar::Graph &graph, Operation op, const poplar::Type &inType, const poplar::Type &outType,
                std::vector<poplar::ComputeSet> &css, const poplar::DebugContext &dc)
      : graph_(graph), op_(op), inType_(inType), accType_(accumulatorType(op, inType)), outType_(outType),
        css_(css), dc_(dc) {}

  // Plans and builds the reduction of in2 ([O,R] if inner, else [R,O]) into res (O elements).
  // `res` may be unmapped: then it is mapped where its elements are computed.
  /// Returns the number of stages (compute sets from css[0]) it used.
  unsigned build(const poplar::Tensor &in2, bool inner, const poplar::Tensor &res) {
    resFlat_ = res.flatten();
    bool complete = true;
    graph_.getTileMapping(res, &complete);
    resMapped_ = complete;
    if (resMapped_)
      resLookup_.reset(new aspen::ops::TileLookup(graph_, resFlat_));
    if (inner)
      buildInner(in2);
    else
      buildOuter(in2);
    if (!resMapped_) {
      poputil::mergeAdjacentRegions(resMapping_);
      graph_.setTileMapping(res, resMapping_);
    }
    return stagesUsed_;
  }

private:
  poplar::ComputeSet stage(unsigned i) {
    stagesUsed_ = std::max(stagesUsed_, i + 1);
    while (css_.size() <= i)
      css_.push_back(graph_.addComputeSet({dc_, "reduce/stage" + std::to_string(css_.size())}));
    return css_[i];
  }

  void noteResult(std::size_t begin, std::size_t end, unsigned tile) {
    if (resMapped_)
      return;
    if (resMapping_.size() <= tile)
      resMapping_.resize(graph_.getTarget().getNumTiles());
    resMapping_[tile].push_back(poplar::Interval(begin, end));
  }
  unsigned resultTile(std::size_t index, unsigned natural) const {
    return resMapped_ ? resLookup_->tileOf(index) : natural;
  }

  void addVertex(unsigned stageIndex, bool innerVertex, Operation op, const poplar::Type &tin,
                 const poplar::Type &tout, const poplar::Tensor &in, const poplar::Tensor &out,
                 unsigned param, unsigned tile) {
    const std::string vt =
        templateVertex(innerVertex ? "popops::ReduceInner" : "popops::ReduceOuter", op, tin, tout);
    aspen::ops::requireVertex(graph_, vt, kOpName,
                              aspen::ops::toString(op) + " from " + tin.toString().str() + " to " +
                                  tout.toString().str());
    poplar::VertexRef v = graph_.addVertex(stage(stageIndex), vt);
    graph_.connect(v["in"], in);
    graph_.connect(v["out"], out);
    graph_.setInitialValue(v[innerVertex ? "rowLen" : "stride"], param);
    graph_.setTileMapping(v, tile);
    const std::size_t outputs = out.numElements();
    const std::uint64_t cycles =
        innerVertex
            ? cost::reduceInner(graph_.getTarget(), op, tin, tout, outputs, param)
            : cost::reduceOuter(graph_.getTarget(), op, tin, tout, outputs,
                                outputs == 0 ? 0 : (in.numElements() - outputs) / std::max(param, 1u) + 1,
                                param);
    graph_.setPerfEstimate(v, cycles, in.numElements());
  }

  // --- [O, R]: rows reduced -------------------------------------------------------------------
  struct Chunks { // `count` consecutive chunks of `len` elements from `inBegin`, into partials
    unsigned tile;
    std::size_t inBegin, len, count, partial, row;
  };

  void buildInner(const poplar::Tensor &in2) {
    const std::size_t O = in2.dim(0), R = in2.dim(1);
    const poplar::Tensor flat = in2.flatten();
    const unsigned workers = graph_.getTarget().getNumWorkerContexts();
    std::vector<Chunks> chunks;
    std::size_t numPartials = 0;
    std::map<std::size_t, std::vector<std::pair<std::size_t, std::size_t>>>
        partialsOfRow; // row -> [begin,end)
    auto addPartialPiece = [&](unsigned tile, std::size_t begin, std::size_t end, std::size_t row) {
      // Long pieces are cut in chunks so that the tile's workers share them.
      const std::size_t len = end - begin;
      const std::size_t pieces = std::min<std::size_t>(workers, std::max<std::size_t>(1, len / 256));
      const std::size_t chunk = (len + pieces - 1) / pieces;
      const std::size_t whole = len / chunk;
      chunks.push_back({tile, begin, chunk, whole, numPartials, row});
      partialsOfRow[row].push_back({numPartials, numPartials + whole});
      numPartials += whole;
      if (whole * chunk < len) {
        chunks.push_back({tile, begin + whole * chunk, len - whole * chunk, 1, numPartials, row});
        partialsOfRow[row].push_back({numPartials, numPartials + 1});
        ++numPartials;
      }
    };
    for (const auto &[tile, interval] : intervalsByTile(graph_, in2)) {
      std::size_t s = interval.begin();
      const std::size_t e = interval.end();
      if (s % R) { // head: the end of a row that started elsewhere
        const std::size_t row = s / R;
        const std::size_t rowEnd = std::min(e, (row + 1) * R);
        addPartialPiece(tile, s, rowEnd, row);
        s = rowEnd;
      }
      const std::size_t fullRows = (e - s) / R;
      if (fullRows) { // whole rows: straight into the result
        const std::size_t r0 = s / R;
        addVertex(0, true, op_, inType_, outType_, flat.slice(s, s + fullRows * R),
                  resFlat_.slice(r0, r0 + fullRows), static_cast<unsigned>(R), tile);
        noteResult(r0, r0 + fullRows, tile);
        s += fullRows * R;
      }
      if (s < e) // tail: the start of a row that ends elsewhere
        addPartialPiece(tile, s, e, s / R);
    }
    (void)O;
    if (chunks.empty())
      return;
    // Stage 1 into partials, each mapped to the tile that computes it.
    poplar::Tensor partials = graph_.addVariable(accType_, {numPartials}, {dc_, "reduce/partials"});
    std::vector<std::vector<poplar::Interval>> pmap(graph_.getTarget().getNumTiles());
    for (const auto &c : chunks)
      pmap[c.tile].push_back(poplar::Interval(c.partial, c.partial + c.count));
    poputil::mergeAdjacentRegions(pmap);
    graph_.setTileMapping(partials, pmap);
    for (const auto &c : chunks)
      addVertex(0, true, op_, inType_, accType_, flat.slice(c.inBegin, c.inBegin + c.len * c.count),
                partials.slice(c.partial, c.partial + c.count), static_cast<unsigned>(c.len), c.tile);
    // Stage 2 on: each split row's partials, grouped by the tile that holds them, reduced on the
    // result's tile, through intermediate stages when the row has many source tiles.
    for (const auto &[row, ranges] : partialsOfRow) {
      std::vector<Source> sources;
      for (const auto &r : ranges) {
        const unsigned t = chunkTile(chunks, r.first);
        const poplar::Tensor piece = partials.slice(r.first, r.second);
        if (!sources.empty() && sources.back().tile == t)
          sources.back().partials = poplar::concat(sources.back().partials, piece);
        else
          sources.push_back({t, piece});
      }
      const unsigned tile = resultTile(row, sources.front().tile);
      reduceSources(std::move(sources), 1, true, resFlat_.slice(row, row + 1), tile);
      noteResult(row, row + 1, tile);
    }
  }

  // --- stages after the first: partials gathered from their tiles -------------------------------
  struct Source { // partials on one tile: rows of `width` (the outputs) stacked
    unsigned tile;
    poplar::Tensor partials;
  };

  // The number of levels (compute sets) to reduce `numSources` tiles' partials in, each level's
  // receiving tiles gathering from about numSources^(1/levels) tiles. A receiving tile pays
  // exchangeSourceCycles for each tile it receives from (docs/cost-model.md, "Exchange"), so a
  // level costs fanIn * (P + its bytes) plus its vertex, and each level adds a superstep's sync
  // and exchange set-up (S + X) and a vertex's fixed cost; the cheapest count is chosen.
  unsigned levelsFor(std::size_t numSources, std::size_t firstRows, std::size_t width, bool inner) const {
    const poplar::Target &target = graph_.getTarget();
    const aspen::ir::TargetData &d = target.getImpl();
    const std::uint64_t superstep = d.syncCycles + d.minIPUSyncDelay + d.exchangeOverheadCycles;
    const std::uint64_t bytes = target.getTypeSize(accType_) * width;
    const std::uint64_t rate = std::max(1u, d.exchangeBytesPerCycle);
    auto levelCost = [&](std::size_t fanIn, std::size_t rowsPerSource) {
      const std::size_t rows = fanIn * rowsPerSource;
      const std::uint64_t vertex =
          inner ? cost::reduceInner(target, combineOp(op_), accType_, accType_, 1, rows)
                : cost::reduceOuter(target, combineOp(op_), accType_, accType_, width, rows,
                                    static_cast<unsigned>(width));
      return superstep +
             std::uint64_t(fanIn) * (d.exchangeSourceCycles + (rowsPerSource * bytes + rate - 1) / rate) +
             vertex;
    };
    unsigned best = 1;
    std::uint64_t bestCost = std::numeric_limits<std::uint64_t>::max();
    for (unsigned levels = 1; levels <= kMaxLevels; ++levels) {
      const std::size_t fanIn = fanInFor(numSources, levels);
      std::uint64_t c = 0;
      std::size_t left = numSources;
      for (unsigned l = 0; l < levels; ++l) {
        c += levelCost(std::min(fanIn, left), l == 0 ? firstRows : 1);
        left = (left + fanIn - 1) / fanIn;
      }
      if (c < bestCost) {
        bestCost = c;
        best = levels;
      }
      if (fanIn <= 2)
        break;
    }
    return best;
  }

  static std::size_t fanInFor(std::size_t numSources, unsigned levels) {
    auto f = static_cast<std::size_t>(std::ceil(std::pow(double(numSources), 1.0 / levels) - 1e-9));
    while (levels > 1 && [&] { // pow's rounding: levels of fan-in f must reach numSources
      std::size_t reach = 1;
      for (unsigned l = 0; l < levels; ++l)
        reach *= f;
      return reach < numSources;
    }())
      ++f;
    return std::max<std::size_t>(2, f);
  }

  // Reduces the sources' partials (each [rows, width] flattened) into `out` (width elements) on
  // `outTile`, from stage 1: a row's partials (inner, width 1) or a column range's (outer). An intermediate
  // level groups consecutive sources and reduces each group on one of its sources' tiles into one row of
  // partials there.
  void reduceSources(std::vector<Source> sources, std::size_t width, bool inner, const poplar::Tensor &out,
                     unsigned outTile) {
    const Operation op2 = combineOp(op_);
    { // one source a tile: a tile's pieces travel together
      std::vector<Source> merged;
      std::map<unsigned, std::size_t> at;
      for (auto &s : sources) {
        const auto [it, added] = at.emplace(s.tile, merged.size());
        if (added)
          merged.push_back(std::move(s));
        else
          merged[it->second].partials = poplar::concat(merged[it->second].partials, s.partials);
      }
      sources = std::move(merged);
    }
    std::size_t firstRows = 0;
    for (const auto &s : sources)
      firstRows = std::max(firstRows, s.partials.numElements() / width);
    const unsigned levels = levelsFor(sources.size(), firstRows, width, inner);
    const std::size_t fanIn = fanInFor(sources.size(), levels);
    unsigned stageIndex = 1;
    for (unsigned l = 1; l < levels && sources.size() > 1; ++l, ++stageIndex) {
      std::vector<Source> next;
      for (std::size_t g = 0; g < sources.size(); g += fanIn) {
        const std::size_t end = std::min(sources.size(), g + fanIn);
        if (end - g == 1) { // a group of one: nothing to reduce, it goes on to the next level as is
          next.push_back(sources[g]);
          continue;
        }
        std::vector<poplar::Tensor> parts;
        for (std::size_t i = g; i < end; ++i)
          parts.push_back(sources[i].partials);
        // The group's reducing tile turns with each reduction, so that reductions whose
        // sources start on the same tile do not all land there.
        const unsigned tile = sources[g + (turn_++ % (end - g))].tile;
        poplar::Tensor p = graph_.addVariable(accType_, {width}, {dc_, "reduce/partials"});
        graph_.setTileMapping(p, tile);
        const poplar::Tensor in = poplar::concat(parts);
        addVertex(stageIndex, inner, op2, accType_, accType_, in, p,
                  static_cast<unsigned>(inner ? in.numElements() : width), tile);
        next.push_back({tile, p});
      }
      sources = std::move(next);
    }
    std::vector<poplar::Tensor> parts;
    for (const auto &s : sources)
      parts.push_back(s.partials);
    const poplar::Tensor in = poplar::concat(parts);
    addVertex(stageIndex, inner, op2, accType_, outType_, in, out,
              static_cast<unsigned>(inner ? in.numElements() : width), outTile);
  }

  static constexpr unsigned kMaxLevels = 4;

  static unsigned chunkTile(const std::vector<Chunks> &chunks, std::size_t partial) {
    for (const auto &c : chunks)
      if (partial >= c.partial && partial < c.partial + c.count)
        return c.tile;
    return 0;
  }

  // --- [R, O]: columns reduced ---------------------------------------------------------------
  struct OuterPiece {
    unsigned tile;
    std::size_t inBegin, numRows, colBegin, colEnd, partial;
  };

  void buildOuter(const poplar::Tensor &in2) {
    const std::size_t R = in2.dim(0), O = in2.dim(1);
    const poplar::Tensor flat = in2.flatten();
    std::vector<OuterPiece> pieces;
    std::size_t numPartials = 0;
    auto addPiece = [&](unsigned tile, std::size_t row, std::size_t numRows, std::size_t c0, std::size_t c1) {
      const std::size_t inBegin = row * O + c0;
      if (numRows == R) { // every row of these columns is here: final
        addVertex(0, false, op_, inType_, outType_,
                  flat.slice(inBegin, inBegin + (numRows - 1) * O + (c1 - c0)), resFlat_.slice(c0, c1),
                  static_cast<unsigned>(O), tile);
        noteResult(c0, c1, tile);
        return;
      }
      pieces.push_back({tile, inBegin, numRows, c0, c1, numPartials});
      numPartials += c1 - c0;
    };
    for (const auto &[tile, interval] : intervalsByTile(graph_, in2)) {
      std::size_t s = interval.begin();
      const std::size_t e = interval.end();
      if (s / O == (e - 1) / O) { // within one row
        addPiece(tile, s / O, 1, s % O, (e - 1) % O + 1);
        continue;
      }
      if (s % O) { // head row
        addPiece(tile, s / O, 1, s % O, O);
        s = (s / O + 1) * O;
      }
      const std::size_t fullRows = (e - s) / O;
      if (fullRows) {
        addPiece(tile, s / O, fullRows, 0, O);
        s += fullRows * O;
      }
      if (s < e)
        addPiece(tile, s / O, 1, 0, e - s);
    }
    if (pieces.empty())
      return;
    poplar::Tensor partials = graph_.addVariable(accType_, {numPartials}, {dc_, "reduce/partials"});
    std::vector<std::vector<poplar::Interval>> pmap(graph_.getTarget().getNumTiles());
    for (const auto &p : pieces)
      pmap[p.tile].push_back(poplar::Interval(p.partial, p.partial + (p.colEnd - p.colBegin)));
    poputil::mergeAdjacentRegions(pmap);
    graph_.setTileMapping(partials, pmap);
    for (const auto &p : pieces)
      addVertex(0, false, op_, inType_, accType_,
                flat.slice(p.inBegin, p.inBegin + (p.numRows - 1) * O + (p.colEnd - p.colBegin)),
                partials.slice(p.partial, p.partial + (p.colEnd - p.colBegin)), static_cast<unsigned>(O),
                p.tile);
    // Stage 2: split the columns at every piece boundary; each elementary column range
    // stacks the covering pieces' partials (k x width) and reduces them column-wise.
    std::set<std::size_t> cuts;
    for (const auto &p : pieces) {
      cuts.insert(p.colBegin);
      cuts.insert(p.colEnd);
    }
    std::vector<std::size_t> bounds(cuts.begin(), cuts.end());
    std::vector<const OuterPiece *> byBegin;
    for (const auto &p : pieces)
      byBegin.push_back(&p);
    std::sort(byBegin.begin(), byBegin.end(),
              [](const OuterPiece *a, const OuterPiece *b) { return a->colBegin < b->colBegin; });
    std::vector<const OuterPiece *> active;
    std::size_t next = 0;
    for (std::size_t b = 0; b + 1 < bounds.size(); ++b) {
      const std::size_t u = bounds[b], v = bounds[b + 1];
      while (next < byBegin.size() && byBegin[next]->colBegin <= u)
        active.push_back(byBegin[next++]);
      active.erase(
          std::remove_if(active.begin(), active.end(), [&](const OuterPiece *p) { return p->colEnd <= u; }),
          active.end());
      if (active.empty())
        continue;
      std::vector<Source> sources;
      for (const OuterPiece *p : active)
        sources.push_back(
            {p->tile, partials.slice(p->partial + (u - p->colBegin), p->partial + (v - p->colBegin))});
      // Spread the column ranges over the tiles in proportion to their place (the
      // tile of the first piece would put every column of a tensor whose rows
      // each span a few tiles on the tiles of row 0).
      const unsigned spreadTile = static_cast<unsigned>(u * graph_.getTarget().getNumTiles() / O);
      const unsigned tile = resultTile(u, spreadTile);
      reduceSources(std::move(sources), v - u, false, resFlat_.slice(u, v), tile);
      noteResult(u, v, tile);
    }
  }

  poplar::Graph &graph_;
  Operation op_;
  poplar::Type inType_, accType_, outType_;
  std::vector<poplar::ComputeSet> &css_;
  poplar::DebugContext dc_;
  poplar::Tensor resFlat_;
  bool resMapped_ = false;
  std::unique_ptr<aspen::ops::TileLookup> resLookup_;
  unsigned stagesUsed_ = 0;
  unsigned turn_ = 0;
  std::vector<std::vector<poplar::Interval>> resMapping_;
};

// Applies scale and update: out = update ? out (+) scale*res : scale*res. The scale's
// conversion goes in the first compute set, the arithmetic in css[stageIndex].
void applyScaleAndUpdate(poplar::Graph &graph, const ReduceParams &params, const poplar::Tensor &res,
                         const poplar::Tensor &out, std::vector<poplar::ComputeSet> &css, unsigned stageIndex,
                         const poplar::DebugContext &dc) {
  using namespace expr;
  auto stage = [&](unsigned i) {
    while (css.size() <= i)
      css.push_back(graph.addComputeSet({dc, "reduce/stage" + std::to_string(css.size())}));
    return css[i];
  };
  std::vector<poplar::Tensor> ts{out, res};
  const poplar::Type t = out.elementType();
  if (params.useScale) {
    poplar::Tensor scale = params.scale.flatten()[0];
    if (scale.elementType() != t) {
      poplar::Tensor converted = graph.addVariable(t, {}, {dc, "reduce/scale"});
      graph.setTileMapping(converted, 0);
      cast(graph, scale, converted, stage(0));
      scale = converted;
    }
    ts.push_back(scale);
  }
  std::unique_ptr<Expr> value;
  if (params.op == Operation::LOG_ADD)
    value = params.useScale ? Add(_2, Log(_3)).clone() : _2.clone();
  else
    value = params.useScale ? Mul(_2, _3).clone() : _2.clone();
  std::unique_ptr<Expr> e;
  if (!params.update)
    e = std::move(value);
  else if (params.op == Operation::LOG_ADD)
    e = Add(Max(_1, *value), Log1p(Exp(Neg(Abs(Sub(_1, *value)))))).clone();
  else
    e = Add(_1, *value).clone();
  aspen::ops::mapIntoComputeSet(graph, *e, ts, out, true, stage(stageIndex), kOpName);
}

// The identity of `op` in `type` (the result of reducing nothing).
double identityOf(Operation op, const poplar::Type &type) {
  const bool isInt = type == poplar::INT || type == poplar::UNSIGNED_INT;
  switch (op) {
  case Operation::MUL:
  case Operation::LOGICAL_AND:
    return 1;
  case Operation::MIN:
    return isInt ? (type == poplar::INT ? double(std::numeric_limits<int>::max())
                                        : double(std::numeric_limits<unsigned>::max()))
                 : std::numeric_limits<double>::infinity();
  case Operation::MAX:
    return isInt ? (type == poplar::INT ? double(std::numeric_limits<int>::lowest()) : 0.0)
                 : -std::numeric_limits<double>::infinity();
  case Operation::LOG_ADD:
    return -std::numeric_limits<double>::infinity();
  default:
    return 0;
  }
}

void reduceImpl(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &out,
                const std::vector<std::size_t> &dims, const ReduceParams &params,
                std::vector<poplar::ComputeSet> &css, const poplar::DebugContext &dc,
                const poplar::OptionFlags &options) {
  parseReduceOptions(options);
  validate(in, out.elementType(), dims, params, kOpName);
  std::vector<std::size_t> keptShape;
  std::vector<unsigned> kept, reduced;
  const std::set<std::size_t> dimSet(dims.begin(), dims.end());
  for (unsigned d = 0; d < in.rank(); ++d) {
    if (dimSet.count(d)) {
      reduced.push_back(d);
    } else {
      kept.push_back(d);
      keptShape.push_back(in.dim(d));
    }
  }
  if (out.shape() != keptShape && !(out.numElements() == 1 && keptShape.empty()))
    throw poputil::poplibs_error(std::string(kOpName) + ": output " + describe(out) +
                                 " does not have the shape " + shapeString(keptShape) + " of " +
                                 describe(in) + " reduced over " + shapeString(dims));
  if (!out.isParallelWriteable())
    throw poputil::poplibs_error(std::string(kOpName) + ": output " + describe(out) +
                                 " cannot be written (it contains constants or aliased elements)");
  std::size_t O = 1, R = 1;
  for (unsigned d : kept)
    O *= in.dim(d);
  for (unsigned d : reduced)
    R *= in.dim(d);
  if (O == 0)
    return;

  const bool scaledOrUpdated = params.useScale || params.update;
  poplar::Tensor res = out;
  if (scaledOrUpdated) {
    aspen::ops::mapIfUnmapped(graph, out);
    res = graph.clone(out, {dc, "reduce/result"});
  }
  unsigned stagesUsed = 1;
  if (R == 0) {
    aspen::ops::mapIfUnmapped(graph, res);
    if (css.empty())
      css.push_back(graph.addComputeSet({dc, "reduce/stage0"}));
    fill(graph, res, graph.getTileMapping(res), css[0], identityOf(params.op, res.elementType()));
  } else {
    // Inner when the reduced dimensions are the innermost (or none), outer when they are
    // the outermost; otherwise shuffle the reduced dimensions inside.
    const bool reducedInnermost = reduced.empty() || reduced.front() == in.rank() - reduced.size();
    const bool reducedOutermost = !reduced.empty() && reduced.back() == reduced.size() - 1;
    ReduceBuilder builder(graph, params.op, in.elementType(), res.elementType(), css, dc);
    if (reducedInnermost)
      stagesUsed = builder.build(in.reshape({O, R}), true, res);
    else if (reducedOutermost)
      stagesUsed = builder.build(in.reshape({R, O}), false, res);
    else {
      std::vector<unsigned> perm = kept;
      perm.insert(perm.end(), reduced.begin(), reduced.end());
      stagesUsed = builder.build(in.dimShuffle(perm).reshape({O, R}), true, res);
    }
  }
  if (scaledOrUpdated)
    applyScaleAndUpdate(graph, params, res, out, css, std::max(1u, stagesUsed), dc);
}

poplar::Tensor createOutput(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Type &outType,
                            const std::vector<std::size_t> &dims, const poplar::DebugContext &dc) {
  std::vector<std::size_t> shape;
  for (unsigned d = 0; d < in.rank(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end())
      shape.push_back(in.dim(d));
  return graph.addVariable(outType, shape, {dc, "reduce/out"});
}

void executeAll(poplar::program::Sequence &prog, const std::vector<poplar::ComputeSet> &css,
                const poplar::DebugContext &dc) {
  for (const auto &cs : css)
    prog.add(poplar::program::Execute(cs, {dc, "reduce"}));
}

} // namespace

poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Type &outType,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                      const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(in, outType, dims, params, options));
  const poplar::DebugContext debugContext(di);
  std::vector<poplar::ComputeSet> css;
  poplar::Tensor out = reduce(graph, in, outType, dims, params, css, debugContext, options);
  executeAll(prog, css, debugContext);
  return out;
}

poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const std::vector<std::size_t> &dims,
                      ReduceParams params, poplar::program::Sequence &prog,
                      const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(in, dims, params, options));
  const poplar::DebugContext debugContext(di);
  if (!in.valid())
    throw poputil::poplibs_error(std::string(kOpName) + ": the input tensor is not valid");
  return reduce(graph, in, in.elementType(), dims, params, prog, debugContext, options);
}

void reduceWithOutput(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &out,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      poplar::program::Sequence &prog, const poplar::DebugContext &debugContextIn,
                      const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(in, out, dims, params, options));
  const poplar::DebugContext debugContext(di);
  std::vector<poplar::ComputeSet> css;
  reduceWithOutput(graph, in, out, dims, params, css, debugContext, options);
  executeAll(prog, css, debugContext);
}

poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Type &outType,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      std::vector<poplar::ComputeSet> &css, const poplar::DebugContext &debugContextIn,
                      const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(in, outType, dims, params, css, options));
  const poplar::DebugContext debugContext(di);
  if (!in.valid())
    throw poputil::poplibs_error(std::string(kOpName) + ": the input tensor is not valid");
  validate(in, outType, dims, params, kOpName);
  if (params.update)
    throw poputil::poplibs_error(std::string(kOpName) +
                                 ": update needs an existing output; use reduceWithOutput");
  poplar::Tensor out = createOutput(graph, in, outType, dims, debugContext);
  reduceImpl(graph, in, out, dims, params, css, debugContext, options);
  return out;
}

poplar::Tensor reduce(poplar::Graph &graph, const poplar::Tensor &in, const std::vector<std::size_t> &dims,
                      ReduceParams params, std::vector<poplar::ComputeSet> &css,
                      const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(in, dims, params, css, options));
  const poplar::DebugContext debugContext(di);
  if (!in.valid())
    throw poputil::poplibs_error(std::string(kOpName) + ": the input tensor is not valid");
  return reduce(graph, in, in.elementType(), dims, params, css, debugContext, options);
}

void reduceWithOutput(poplar::Graph &graph, const poplar::Tensor &in, const poplar::Tensor &out,
                      const std::vector<std::size_t> &dims, ReduceParams params,
                      std::vector<poplar::ComputeSet> &css, const poplar::DebugContext &debugContextIn,
                      const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(in, out, dims, params, css, options));
  const poplar::DebugContext debugContext(di);
  if (!out.valid())
    throw poputil::poplibs_error(std::string(kOpName) + ": the output tensor is not valid");
  reduceImpl(graph, in, out, dims, params, css, debugContext, options);
}

} // namespace popops

namespace popops {

void reduceMany(poplar::Graph &graph, const std::vector<SingleReduceOp> &reductions,
                std::vector<poplar::Tensor> &outputs, poplar::program::Sequence &prog,
                const poplar::DebugContext &debugContextIn, const poplar::OptionFlags &options) {
  aspen::ops::PopopsDebugInfo di(debugContextIn, DI_ARGS(reductions, outputs, options));
  const poplar::DebugContext debugContext(di);
  const std::string op = "popops::reduceMany";
  const bool create = outputs.empty();
  if (!create && outputs.size() != reductions.size())
    throw poputil::poplibs_error(op + ": " + std::to_string(outputs.size()) + " outputs were given for " +
                                 std::to_string(reductions.size()) + " reductions");
  for (std::size_t i = 0; i < reductions.size(); ++i) {
    const SingleReduceOp &r = reductions[i];
    const std::string name = r.debugName.empty() ? "reduction" + std::to_string(i) : r.debugName;
    if (create && r.params.update)
      throw poputil::poplibs_error(op + ": reduction " + std::to_string(i) + " ('" + name +
                                   "') updates its output, so the outputs must be given");
    aspen::ops::requireValid(r.in, op, "the input of reduction " + std::to_string(i));
    if (create) {
      const poplar::Type outType = r.useOutType ? r.outType : r.in.elementType();
      outputs.push_back(reduce(graph, r.in, outType, r.dims, r.params, prog, {debugContext, name}, options));
    } else {
      reduceWithOutput(graph, r.in, outputs[i], r.dims, r.params, prog, {debugContext, name}, options);
    }
  }
}

} // namespace popops
