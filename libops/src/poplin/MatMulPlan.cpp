// Copyright (c) Aspen contributors.
#include "MatMulPlan.hpp"

#include "common/OpsCommon.hpp"
#include "ir/TargetData.hpp"

#include <poplar/exceptions.hpp>
#include <poputil/OptionParsing.hpp>

#include <algorithm>
#include <limits>
#include <ostream>
#include <vector>

namespace poplin::planning {
namespace {

/// Cycles of the sync and fixed exchange overhead of one superstep
/// (docs/cost-model.md: syncCycles + exchangeOverheadCycles).
constexpr std::uint64_t kSuperstepCycles = 50;
/// Fixed cycles of a MatMulBlock vertex: the supervisor's start, worker launch and the AMP
/// pipeline's fill and drain. Calibrated on hardware: an [N,16]x[16,16] half product with half
/// partials on one Bow tile takes 338 + 4N cycles for N = 16..2,048 (graphcore-research/
/// tessellate-ipu, notebook "IPU Peak Flops"; docs/fidelity.md), of which one weight load (below)
/// is 32.
constexpr std::uint64_t kBlockVertexOverhead = 306;
/// Bytes a cycle the AMP's weight registers load (ld128: reference/ipu_hardware.md section 3).
constexpr std::uint64_t kAmpWeightLoadBytesPerCycle = 16;
/// Fixed thread cycles of each worker of a reduce vertex.
constexpr std::uint64_t kReduceWorkerOverhead = 20;
/// Bytes the compiler keeps on every tile before any variable: the worker and supervisor stacks
/// (docs/profile-format.md, `perTileOverheadBytes`).
constexpr std::uint64_t kTileOverheadBytes = 3168;
/// Bytes of one vertex's state (instance, field pointers and sizes) on its tile: the largest of
/// MatMulBlock(Acc) and MatMulReduce(Acc) in the compiled memory report is 104.
constexpr std::uint64_t kVertexStateBytes = 104;
/// Alignment of an object in tile memory.
constexpr std::uint64_t kObjectAlign = 8;

std::uint64_t alignUp(std::uint64_t x) {
  return (x + kObjectAlign - 1) / kObjectAlign * kObjectAlign;
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

/// The numbers of pieces a dimension of `size` can be split into without
/// empty pieces, up to `maxSplit` (each giving a different block size).
std::vector<unsigned> candidateSplits(std::size_t size, unsigned maxSplit) {
  std::vector<unsigned> splits;
  const std::size_t limit = std::min<std::size_t>(std::max<std::size_t>(size, 1), maxSplit);
  for (std::size_t s = 1; s <= limit; ++s) {
    const std::size_t block = ceilDiv(std::max<std::size_t>(size, 1), s);
    const unsigned pieces = unsigned(ceilDiv(std::max<std::size_t>(size, 1), block));
    if (splits.empty() || splits.back() != pieces)
      splits.push_back(pieces);
  }
  return splits;
}

/// Output columns the AMP computes together: a partly used group costs a whole one.
unsigned ampColumnGrain(const poplar::Type &inputType) {
  return inputType == poplar::HALF ? 16 : 8;
}
/// Inner (depth) elements of one AMP weight block: 64 bits of input per conv unit and cycle, four
/// cycles a row (16 halves or 8 floats).
unsigned ampDepthGrain(const poplar::Type &inputType) {
  return inputType == poplar::HALF ? 16 : 8;
}

MatMulCost evaluate(const poplar::Target &target, const MatMulProblem &p, const MatMulOptions &options,
                    const MatMulPlan &plan) {
  MatMulCost cost;
  const std::uint64_t inSize = p.inputType.size();
  const std::uint64_t partialsSize = p.partialsType.size();
  const std::uint64_t outSize = p.outputType.size();
  const std::uint64_t gb = plan.groupBlock, bm = plan.rowBlock, bn = plan.colBlock, bk = plan.depthBlock;
  const bool reduces = plan.reduces(p);
  const std::uint64_t exchangeRate = std::max(1u, target.getExchangeBytesPerCycle());
  // A receiving tile pays this for each tile it receives from in an exchange (it listens to one
  // sender at a time: docs/cost-model.md, "Exchange" and "Planners and the per-source term").
  const std::uint64_t perSource = target.getImpl().exchangeSourceCycles;

  // Superstep 1 (once per inner serial pass): receive the A and B blocks, multiply (adding
  // into the partial sums of the earlier inner passes).
  const std::uint64_t passes = std::max(1u, plan.serialInner);
  const std::uint64_t inputBytes = gb * (bm * bk + bk * bn) * inSize;
  cost.computeCycles = passes * gb * estimateBlockCycles(target, p.inputType, p.partialsType, bm, bk, bn);
  // createInputOperand shares a block of A out between the colSplit tiles that read it and one
  // of B between the rowSplit tiles: a tile receives the rest of each from the others.
  const std::uint64_t inputSources = (plan.colSplit - 1) + (plan.rowSplit - 1);
  cost.exchangeCycles = passes * (ceilDiv(inputBytes, exchangeRate) + perSource * inputSources);
  std::uint64_t total = passes * kSuperstepCycles + cost.computeCycles + cost.exchangeCycles;

  // Superstep 2: each of the depthSplit tiles of a block adds up its share of
  // the block's partial sums, received from the others.
  const std::uint64_t blockPartialBytes = gb * bm * bn * partialsSize;
  std::uint64_t reduceTemp = 0;
  if (reduces) {
    const std::uint64_t share = ceilDiv(gb * bm * bn, plan.depthSplit);
    const std::uint64_t received = (plan.depthSplit - 1) * share * partialsSize;
    cost.reduceCycles = kSuperstepCycles + ceilDiv(received, exchangeRate) +
                        perSource * (plan.depthSplit - 1) +
                        estimateReduceCycles(target, p.partialsType, share, plan.depthSplit);
    total += cost.reduceCycles;
    reduceTemp = blockPartialBytes + plan.depthSplit * share * partialsSize;
  }
  cost.totalCycles = total;

  // Temporaries: the operand copies and partial sums (live in superstep 1),
  // then the partials and the received shares (superstep 2).
  const std::uint64_t stage1Temp = inputBytes + (reduces ? blockPartialBytes : 0);
  cost.tempBytesPerTile = std::max(stage1Temp, reduceTemp);
  const std::uint64_t outputBytes =
      (reduces ? ceilDiv(gb * bm * bn, plan.depthSplit) : gb * bm * bn) * outSize;
  cost.totalBytesPerTile = cost.tempBytesPerTile + outputBytes;
  // The tile's shares of A and B as createInputOperand lays them out: a block of A is shared out
  // between the colSplit tiles that read it, one of B between the rowSplit tiles (every inner pass
  // its own blocks); a block held whole by the one tile that reads it is read in place, so it
  // needs no edge buffer.
  const std::uint64_t innerPerTile = bk * passes;
  cost.aBytesPerTile = alignUp(ceilDiv(gb * bm * innerPerTile, plan.colSplit) * inSize);
  cost.bBytesPerTile = alignUp(ceilDiv(gb * innerPerTile * bn, plan.rowSplit) * inSize);
  cost.outBytesPerTile = alignUp(outputBytes);
  cost.vertexBytesPerTile = (passes + (reduces ? 1 : 0)) * kVertexStateBytes;
  const std::uint64_t inPlace =
      (plan.colSplit == 1 ? gb * bm * bk * inSize : 0) + (plan.rowSplit == 1 ? gb * bk * bn * inSize : 0);
  const std::uint64_t livePeak = std::max(stage1Temp - inPlace, reduceTemp);
  cost.peakBytesPerTile = kTileOverheadBytes + cost.aBytesPerTile + cost.bBytesPerTile +
                          cost.outBytesPerTile + cost.vertexBytesPerTile + livePeak;
  const double budget = options.availableMemoryProportion * double(target.getBytesPerTile());
  cost.fitsTempBudget =
      double(cost.tempBytesPerTile) <= budget && cost.totalBytesPerTile <= target.getBytesPerTile();
  return cost;
}

/// True when `a` is a better plan than `b`.
bool better(const MatMulPlan &a, const MatMulPlan &b) {
  if (a.cost.fitsTempBudget != b.cost.fitsTempBudget)
    return a.cost.fitsTempBudget;
  if (!a.cost.fitsTempBudget) // nothing fits: least memory first
    return a.cost.totalBytesPerTile < b.cost.totalBytesPerTile ||
           (a.cost.totalBytesPerTile == b.cost.totalBytesPerTile && a.cost.totalCycles < b.cost.totalCycles);
  if (a.cost.totalCycles != b.cost.totalCycles)
    return a.cost.totalCycles < b.cost.totalCycles;
  return a.tilesUsed() < b.tilesUsed();
}

} // namespace

MatMulOptions parseMatMulOptions(const poplar::OptionFlags &options, const std::string &op) {
  MatMulOptions parsed;
  bool ignoredBool = false;
  std::string constraints;
  const poplibs::OptionSpec spec{
      {"availableMemoryProportion",
       poplibs::OptionHandler::createWithDouble(parsed.availableMemoryProportion)},
      {"partialsType",
       poplibs::OptionHandler::createWithEnum(parsed.partialsType,
                                              std::map<std::string, poplar::Type>{{"half", poplar::HALF},
                                                                                  {"float", poplar::FLOAT},
                                                                                  {"HALF", poplar::HALF},
                                                                                  {"FLOAT", poplar::FLOAT}})},
      {"fullyConnectedPass",
       poplibs::OptionHandler::createWithEnum(
           parsed.fullyConnectedPass, std::map<std::string, std::string>{{"NONE", "NONE"},
                                                                         {"INFERENCE_FWD", "INFERENCE_FWD"},
                                                                         {"TRAINING_FWD", "TRAINING_FWD"},
                                                                         {"TRAINING_BWD", "TRAINING_BWD"},
                                                                         {"TRAINING_WU", "TRAINING_WU"}})},
      {"inputRHSIsPreArranged", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"use128BitConvUnitLoad", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableMultiStageReduce", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"enableFastReduce", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"remapOutputTensor", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"gatherOutput", poplibs::OptionHandler::createWithBool(ignoredBool)},
      {"planConstraints", poplibs::OptionHandler::createWithString(constraints)},
  };
  aspen::ops::parseOptions(spec, options, op);
  parsed.constraints = matMulConstraints(parsePlanConstraints(constraints, op), constraints, op);
  if (!(parsed.availableMemoryProportion >= 0.0 && parsed.availableMemoryProportion <= 1.0))
    throw poplar::invalid_option(op + ": option 'availableMemoryProportion' must lie in [0, 1], got " +
                                 options.at("availableMemoryProportion").str());
  return parsed;
}

unsigned ampMacsPerCycle(const poplar::Target &target, const poplar::Type &inputType,
                         const poplar::Type &partialsType) {
  if (inputType == poplar::HALF) {
    const unsigned units = partialsType == poplar::HALF ? target.getFp16InFp16OutConvUnitsPerTile()
                                                        : target.getFp16InFp32OutConvUnitsPerTile();
    return std::max(1u, units) * 4; // 4 halves per 64-bit load
  }
  return std::max(1u, target.getFp32InFp32OutConvUnitsPerTile()) * 2; // 2 floats per 64-bit load
}

std::uint64_t estimateBlockCycles(const poplar::Target &target, const poplar::Type &inputType,
                                  const poplar::Type &partialsType, std::size_t rows, std::size_t depth,
                                  std::size_t cols) {
  // The AMP holds one weight block (depthGrain x colGrain) at a time and streams every row of the
  // input through it; results leave through the pipeline as rows go in, so there is no separate
  // write-back. A partly used block costs a whole one.
  const std::uint64_t depthGrain = ampDepthGrain(inputType), colGrain = ampColumnGrain(inputType);
  const std::uint64_t passes = ceilDiv(std::max<std::size_t>(depth, 1), depthGrain) *
                               ceilDiv(std::max<std::size_t>(cols, 1), colGrain);
  const std::uint64_t weightLoad =
      ceilDiv(depthGrain * colGrain * inputType.size(), kAmpWeightLoadBytesPerCycle);
  const std::uint64_t cyclesPerRow =
      ceilDiv(depthGrain * colGrain, ampMacsPerCycle(target, inputType, partialsType));
  return kBlockVertexOverhead + passes * (weightLoad + std::uint64_t(rows) * cyclesPerRow);
}

std::uint64_t estimateReduceCycles(const poplar::Target &target, const poplar::Type &partialsType,
                                   std::size_t elements, std::size_t numPartials) {
  const unsigned workers = std::max(1u, target.getNumWorkerContexts());
  const std::uint64_t perWorker = ceilDiv(elements, workers);
  const std::uint64_t vector = std::max(1u, target.getVectorWidth(partialsType));
  return workers * (kReduceWorkerOverhead + ceilDiv(perWorker * numPartials, vector));
}

SerialRange serialRange(std::size_t size, unsigned passes, unsigned index) {
  const std::size_t n = std::max(1u, passes);
  const std::size_t first = size * index / n, end = size * (index + 1) / n;
  return {first, end - first};
}

MatMulProblem passProblem(const MatMulProblem &p, const MatMulPlan &plan, unsigned r, unsigned c) {
  MatMulProblem pass = p;
  pass.m = serialRange(p.m, plan.serialRows, r).count;
  pass.n = serialRange(p.n, plan.serialCols, c).count;
  return pass;
}

MatMulPlan passPlan(const MatMulProblem &p, const MatMulPlan &plan, unsigned r, unsigned c) {
  MatMulPlan pass = plan;
  pass.serialRows = pass.serialCols = 1;
  pass.rowBlock =
      ceilDiv(std::max<std::size_t>(serialRange(p.m, plan.serialRows, r).count, 1), plan.rowSplit);
  pass.colBlock =
      ceilDiv(std::max<std::size_t>(serialRange(p.n, plan.serialCols, c).count, 1), plan.colSplit);
  return pass;
}

MatMulProblem innerPassProblem(const MatMulProblem &p, const MatMulPlan &plan, unsigned s) {
  MatMulProblem pass = p;
  pass.k = serialRange(p.k, plan.serialInner, s).count;
  return pass;
}

MatMulPlan innerPassPlan(const MatMulProblem &p, const MatMulPlan &plan, unsigned s) {
  MatMulPlan pass = plan;
  pass.serialInner = 1;
  pass.depthBlock =
      ceilDiv(std::max<std::size_t>(serialRange(p.k, plan.serialInner, s).count, 1), plan.depthSplit);
  return pass;
}

namespace {

/// The splits to try along a dimension of `size`: the constrained one, or every distinct one.
std::vector<unsigned> splitsOf(const SplitConstraint &c, std::size_t size, unsigned maxSplit) {
  if (c.set())
    return {c.value};
  return candidateSplits(size, std::max(1u, maxSplit));
}

[[noreturn]] void unmet(const MatMulConstraints &c, const std::string &key, const std::string &what) {
  throw poplar::invalid_option((c.op.empty() ? "poplin::matMul" : c.op) + ": option 'planConstraints': '" +
                               key + "': " + what);
}

/// Throws when a constrained split cannot be met on `target` for `p`.
void checkConstraints(const poplar::Target &target, const MatMulProblem &p, const MatMulConstraints &c) {
  const struct {
    const SplitConstraint &split;
    std::size_t size;
    const char *what;
    bool serial;
  } dims[] = {{c.groupSplit, p.groups, "the groups", false},
              {c.rowSplit, p.m, "the rows of the result", false},
              {c.colSplit, p.n, "the columns of the result", false},
              {c.depthSplit, p.k, "the inner dimension", false},
              {c.serialRows, p.m, "the rows of the result", true},
              {c.serialCols, p.n, "the columns of the result", true},
              {c.serialInner, p.k, "the inner dimension", true}};
  std::uint64_t tiles = 1;
  std::string keys;
  for (const auto &d : dims) {
    if (!d.split.set())
      continue;
    if (d.split.value == 0)
      unmet(c, d.split.key, "a split of 0 cannot be met (splits are at least 1)");
    if (d.split.value > std::max<std::size_t>(d.size, 1))
      unmet(c, d.split.key,
            "a split of " + std::to_string(d.split.value) + " cannot be met: " + d.what + " has " +
                std::to_string(d.size) + (d.size == 1 ? " element" : " elements"));
    if (!d.serial) {
      tiles *= d.split.value;
      keys += (keys.empty() ? "" : ", ") + d.split.key;
    }
  }
  // One kind of serial split at a time, as PopLibs plans them.
  std::vector<const SplitConstraint *> serial;
  for (const SplitConstraint *s : {&c.serialRows, &c.serialCols, &c.serialInner})
    if (s->set() && s->value > 1)
      serial.push_back(s);
  if (serial.size() > 1)
    unmet(c, serial[0]->key + ", " + serial[1]->key,
          "serial splits of " + std::to_string(serial[0]->value) + " and " +
              std::to_string(serial[1]->value) +
              " cannot both be met: a plan splits serially over one dimension at a time (as PopLibs')");
  const struct {
    const SplitConstraint &parallel, &serial;
    std::size_t size;
    const char *what;
  } pairs[] = {{c.rowSplit, c.serialRows, p.m, "rows"},
               {c.colSplit, c.serialCols, p.n, "columns"},
               {c.depthSplit, c.serialInner, p.k, "inner elements"}};
  for (const auto &pr : pairs)
    if (pr.serial.set() && pr.parallel.set() && pr.serial.value != 0 &&
        pr.parallel.value > ceilDiv(pr.size, pr.serial.value))
      unmet(c, pr.parallel.key + ", " + pr.serial.key,
            "a parallel split of " + std::to_string(pr.parallel.value) + " cannot be met in " +
                std::to_string(pr.serial.value) + " serial passes over " + std::to_string(pr.size) + " " +
                pr.what);
  if (tiles > std::max(1u, target.getNumTiles()))
    unmet(c, keys,
          "the parallel splits asked for use " + std::to_string(tiles) + " tiles; the target has " +
              std::to_string(target.getNumTiles()));
}

/// The cheapest plan of one pass over rows and columns, with `innerPasses` serial passes over the
/// inner dimension (or, when none fits, the one needing least memory).
MatMulPlan planOnePass(const poplar::Target &target, const MatMulProblem &p, const MatMulOptions &options,
                       unsigned innerPasses) {
  const unsigned numTiles = std::max(1u, target.getNumTiles());
  const MatMulConstraints &c = options.constraints;
  const std::size_t passK = ceilDiv(p.k, innerPasses); // the widest inner pass
  MatMulPlan best;
  bool haveBest = false;
  for (unsigned pg : splitsOf(c.groupSplit, p.groups, numTiles)) {
    for (unsigned pm : splitsOf(c.rowSplit, p.m, numTiles / pg)) {
      for (unsigned pn : splitsOf(c.colSplit, p.n, numTiles / (pg * pm))) {
        for (unsigned pk : splitsOf(c.depthSplit, passK, numTiles / (pg * pm * pn))) {
          if (std::uint64_t(pg) * pm * pn * pk > numTiles)
            continue;
          MatMulPlan plan;
          plan.groupSplit = pg;
          plan.rowSplit = pm;
          plan.colSplit = pn;
          plan.depthSplit = pk;
          plan.serialInner = innerPasses;
          plan.groupBlock = ceilDiv(p.groups, pg);
          plan.rowBlock = ceilDiv(p.m, pm);
          plan.colBlock = ceilDiv(p.n, pn);
          plan.depthBlock = ceilDiv(passK, pk);
          plan.cost = evaluate(target, p, options, plan);
          if (!haveBest || better(plan, best)) {
            best = plan;
            haveBest = true;
          }
        }
      }
    }
  }
  return best;
}

/// The plan of `rows` x `cols` serial passes over the result's rows and columns, each planned as
/// the widest, each with `inner` serial passes over the inner dimension.
MatMulPlan serialPlan(const poplar::Target &target, const MatMulProblem &p, const MatMulOptions &options,
                      unsigned rows, unsigned cols, unsigned inner) {
  MatMulProblem widest = p;
  widest.m = ceilDiv(p.m, rows);
  widest.n = ceilDiv(p.n, cols);
  MatMulPlan plan = planOnePass(target, widest, options, inner);
  plan.serialRows = rows;
  plan.serialCols = cols;
  const std::uint64_t s = std::uint64_t(rows) * cols;
  if (s == 1)
    return plan;
  const MatMulCost pass = plan.cost;
  const std::uint64_t passOutputBytes = pass.totalBytesPerTile - pass.tempBytesPerTile;
  plan.cost.computeCycles = s * pass.computeCycles;
  plan.cost.exchangeCycles = s * pass.exchangeCycles;
  plan.cost.reduceCycles = s * pass.reduceCycles;
  plan.cost.totalCycles = s * pass.totalCycles;
  plan.cost.totalBytesPerTile = pass.tempBytesPerTile + s * passOutputBytes;
  // Every pass leaves its result and its vertices' state; A is read whole by every column pass
  // and laid out pass by pass for row passes (B the converse).
  plan.cost.peakBytesPerTile = pass.peakBytesPerTile +
                               (s - 1) * (pass.outBytesPerTile + pass.vertexBytesPerTile) +
                               (rows - 1) * pass.aBytesPerTile + (cols - 1) * pass.bBytesPerTile;
  const double budget = options.availableMemoryProportion * double(target.getBytesPerTile());
  plan.cost.fitsTempBudget =
      double(plan.cost.tempBytesPerTile) <= budget && plan.cost.totalBytesPerTile <= target.getBytesPerTile();
  return plan;
}

/// The most serial passes tried before giving up on fitting (each repeats an operand's exchange
/// or a superstep).
constexpr unsigned kMaxSerialSplit = 64;

} // namespace

MatMulPlan planMatMul(const poplar::Target &target, const MatMulProblem &p, const MatMulOptions &options) {
  const MatMulConstraints &c = options.constraints;
  if (c.any())
    checkConstraints(target, p, c);
  // The serial passes asked for (1 where not asked for) are taken as given, within the budget
  // or not; when they do not fit and one kind is asked for as more than 1, that is the plan.
  const unsigned given[3] = {c.serialRows.set() ? c.serialRows.value : 1u,
                             c.serialCols.set() ? c.serialCols.value : 1u,
                             c.serialInner.set() ? c.serialInner.value : 1u};
  MatMulPlan best = serialPlan(target, p, options, given[0], given[1], given[2]);
  if (best.cost.fitsTempBudget || given[0] * given[1] * given[2] > 1)
    return best;
  // Too large for one superstep: of each kind of serial pass the constraints leave free, the
  // fewest passes that fit; then the cheapest of those. Every
  // row or column pass holds its operand copies and partials only while it runs, but the result of all passes
  // stays; inner passes hold their operand copies, and the partial sums stay across them.
  const SplitConstraint *kinds[3] = {&c.serialRows, &c.serialCols, &c.serialInner};
  const SplitConstraint *parallel[3] = {&c.rowSplit, &c.colSplit, &c.depthSplit};
  const std::size_t sizes[3] = {p.m, p.n, p.k};
  MatMulPlan fitting;
  bool haveFitting = false;
  for (unsigned kind = 0; kind < 3; ++kind) {
    // Passes over the inner dimension compete on cost with the others: their partial sums stay
    // live across every pass, which the temporaries count, and the compiler's allocator places
    // them below the passes' edge buffers (docs/ops-nn.md "Serial passes": fp32 2048^3 on ipu1
    // in 5 inner passes needed 289,544 bytes on its fullest tile before, 197,680 now; the
    // estimate, poplin_matmul_memory).
    if (kinds[kind]->set())
      continue;
    std::size_t lastWidth = sizes[kind];
    for (unsigned s = 2; s <= std::min<std::size_t>(sizes[kind], kMaxSerialSplit); ++s) {
      const std::size_t width = ceilDiv(sizes[kind], s);
      if (width == lastWidth)
        continue; // the same passes as fewer of them
      lastWidth = width;
      if (parallel[kind]->set() && parallel[kind]->value > width)
        break; // narrower passes cannot take the constrained parallel split
      const MatMulPlan plan =
          serialPlan(target, p, options, kind == 0 ? s : 1, kind == 1 ? s : 1, kind == 2 ? s : 1);
      if (plan.cost.fitsTempBudget) {
        if (!haveFitting || better(plan, fitting)) {
          fitting = plan;
          haveFitting = true;
        }
        break;
      }
      if (plan.cost.totalBytesPerTile < best.cost.totalBytesPerTile)
        best = plan;
    }
  }
  return haveFitting ? fitting : best;
}

void describePlan(std::ostream &os, const poplar::Target &target, const MatMulProblem &p,
                  const MatMulOptions &options, const MatMulPlan &plan) {
  os << "poplin::matMul plan: " << p.groups << " x {" << p.m << "," << p.k << "} * {" << p.k << "," << p.n
     << "}, " << p.inputType << " -> " << p.outputType << " (partials " << p.partialsType << ")"
     << (p.accumulate ? ", accumulating" : "") << "\n"
     << "  split: groups " << plan.groupSplit << " (block " << plan.groupBlock << "), rows " << plan.rowSplit
     << " (block " << plan.rowBlock << "), columns " << plan.colSplit << " (block " << plan.colBlock
     << "), inner " << plan.depthSplit << " (block " << plan.depthBlock << ")"
     << (plan.serialRows > 1 ? ", in " + std::to_string(plan.serialRows) + " serial passes over rows" : "")
     << (plan.serialCols > 1 ? ", in " + std::to_string(plan.serialCols) + " serial passes over columns" : "")
     << (plan.serialInner > 1 ? ", in " + std::to_string(plan.serialInner) +
                                    " serial passes over the inner dimension (partial sums kept across them)"
                              : "")
     << "\n"
     << "  tiles used: " << plan.tilesUsed() << " of " << target.getNumTiles() << "\n"
     << "  estimated cycles: compute " << plan.cost.computeCycles << ", exchange " << plan.cost.exchangeCycles
     << ", reduction " << plan.cost.reduceCycles << ", total " << plan.cost.totalCycles << "\n"
     << "  memory per tile: temporaries " << plan.cost.tempBytesPerTile << " bytes (budget "
     << std::uint64_t(options.availableMemoryProportion * double(target.getBytesPerTile())) << "), total "
     << plan.cost.totalBytesPerTile << " bytes" << (plan.cost.fitsTempBudget ? "" : " (over budget)") << "\n"
     << "  estimated peak " << plan.cost.peakBytesPerTile << " bytes on the fullest tile (of "
     << target.getBytesPerTile() << "), with A and B laid out by createMatMulInputLHS/RHS\n";
  const MatMulConstraints &c = options.constraints;
  if (c.any()) {
    os << "  planConstraints honoured:";
    for (const SplitConstraint *s : {&c.groupSplit, &c.rowSplit, &c.colSplit, &c.depthSplit, &c.serialRows,
                                     &c.serialCols, &c.serialInner})
      if (s->set())
        os << " " << s->key << " = " << s->value << ";";
    os << "\n";
  }
  if (!c.ignored.empty()) {
    os << "  planConstraints ignored (not chosen by Aspen's planner):";
    for (const std::string &key : c.ignored)
      os << " " << key;
    os << "\n";
  }
}

} // namespace poplin::planning
