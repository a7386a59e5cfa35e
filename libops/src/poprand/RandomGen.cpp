// Copyright (c) Aspen contributors.
// poprand: random tensors laid out like a reference tensor. One vertex per
// mapped interval of the result generates its elements from a counter-based
// generator keyed by the seed (vertices/poprand/Random.cpp), so each element
// depends only on the seed, the modifier, the operation and its index.
//
// With a null seed the numbers come from the graph's random state, an
// UNSIGNED_INT {4} variable {seed lo, seed hi, modifier, uses} on tile 0:
// setSeed writes it, and every operation using it counts one more use
// afterwards so that running the program again draws new numbers.
#include <poprand/RandomGen.hpp>
#include <poprand/codelets.hpp>

#include "common/OpDebugInfo.hpp"
#include "common/OpsCommon.hpp"
#include "popops/VertexCosts.hpp"

#include <poplar/Target.hpp>
#include <poputil/VertexTemplates.hpp>
#include <poputil/exceptions.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

using namespace poplar;
using aspen::ops::describe;

namespace poprand {
namespace {

// The values of the vertices' `distribution` field (vertices/poprand/Random.cpp).
enum Distribution : unsigned {
  UNIFORM = 0,
  NORMAL = 1,
  TRUNCATED_NORMAL = 2,
  BERNOULLI = 3,
  LOG_UNIFORM = 4
};

// The graph's random state before any setSeed (IPUModel tiles also start from a fixed seed).
constexpr unsigned kDefaultSeedLo = 0x2545F491u;
constexpr unsigned kDefaultSeedHi = 0x9E3779B9u;

/// Per graph: its random state variable and how many operations were built.
struct GraphRandom {
  std::weak_ptr<aspen::ir::GraphData> graph;
  Tensor state;
  unsigned operations = 0;
};

std::mutex registryMutex;
std::map<const void *, GraphRandom> registry;

/// The random state of `graph` (made on first use) and a number naming the
/// operation being built, different for every operation of the graph.
std::pair<Tensor, unsigned> graphRandom(Graph &graph) {
  const auto &impl = graph.getImplPtr();
  std::lock_guard<std::mutex> lock(registryMutex);
  for (auto it = registry.begin(); it != registry.end();)
    it = it->second.graph.expired() ? registry.erase(it) : std::next(it);
  auto it = registry.find(impl.get());
  if (it == registry.end()) {
    GraphRandom entry;
    entry.graph = impl;
    entry.state = graph.getTopLevelGraph().addVariable(UNSIGNED_INT, {4}, "poprand/randomState");
    graph.getTopLevelGraph().setTileMapping(entry.state, 0);
    graph.getTopLevelGraph().setInitialValue(entry.state,
                                             std::vector<unsigned>{kDefaultSeedLo, kDefaultSeedHi, 0u, 0u});
    it = registry.emplace(impl.get(), entry).first;
  }
  return {it->second.state, ++it->second.operations};
}

[[noreturn]] void fail(const std::string &op, const std::string &message) {
  throw poputil::poplibs_error(op + ": " + message);
}

/// The seed words the vertices read: the explicit seed, or the graph's state.
Tensor seedWords(const std::string &op, const Tensor *seed, const Tensor &state) {
  if (!seed)
    return state;
  aspen::ops::requireValid(*seed, op, "the seed");
  if (seed->numElements() != 2 || (seed->elementType() != UNSIGNED_INT && seed->elementType() != INT))
    fail(op, "the seed must be 2 unsigned int elements, got " + describe(*seed));
  return seed->flatten().reinterpret(UNSIGNED_INT);
}

void checkOutType(const std::string &op, const Type &type, bool allowInt) {
  if (type == FLOAT || type == HALF || (allowInt && type == INT))
    return;
  fail(op, "output type " + type.toString().str() + " is not supported (use float, half" +
               (allowInt ? std::string(" or int") : std::string()) + ")");
}

/// After an operation seeded by the graph's state: count one more use.
void advanceState(Graph &graph, const Tensor &state, program::Sequence &prog, const DebugContext &dc) {
  const ComputeSet cs = graph.addComputeSet({dc, "advanceRandomState"});
  VertexRef v = graph.addVertex(cs, "poprand::AdvanceState", {{"state", state}});
  graph.setTileMapping(v, 0);
  graph.setPerfEstimate(v, 10);
  prog.add(program::Execute(cs, dc));
}

// --- estimates, as PopLibs' poprand estimators price the same work (graphcore/poplibs,
// lib/poprand/poprandCycleEstimators.cpp; docs/cost-model.md "Library vertices"). All are
// MultiVertex machine cycles: 4 (Dropout 6) of supervisor, a per-worker set-up and a loop over
// the elements whose widths are as PopLibs' estimators compute them (the Uniform and Bernoulli
// estimators divide the data path's bits by 2 or 4, not by the type's bits). --------------------

std::uint64_t uniformCycles(const Target &target, const Type &type, std::uint64_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  if (type == INT) // a scale that is not 0: 6 cycles a pair, 2 an odd element
    return 4 + 22 * workers + 6 * (n / 2) + 2 * (n % 2);
  const bool isFloat = type == FLOAT;
  const std::uint64_t width = target.getDataPathWidth() / (isFloat ? 2 : 4);
  const bool rest = n % width != 0;
  return 4 + 4 * (n + width - 1) / width + (isFloat ? 22 * workers + 4 * rest : 24 * workers + 12 * rest);
}

std::uint64_t bernoulliCycles(const Target &target, const Type &type, std::uint64_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  const bool isHalf = type == HALF;
  const std::uint64_t width = target.getDataPathWidth() / (isHalf ? 4 : 2);
  const bool rest = n % width != 0;
  return 4 + (n + width - 1) / width + (isHalf ? 21 * workers + 9 * rest : 23 * workers + rest);
}

std::uint64_t normalCycles(const Target &target, const Type &type, std::uint64_t n) {
  const unsigned workers = target.getNumWorkerContexts();
  const bool isFloat = type == FLOAT;
  const std::uint64_t width = target.getVectorWidth(type);
  const bool rest = n % width != 0;
  return 4 + 4 * (n + width - 1) / width + (isFloat ? 22 * workers + 3 * rest : 24 * workers + 12 * rest);
}

// PopLibs draws up to `iterations` rounds, enough that an element is still outside
// [-alpha, alpha] after them with probability 1e-4.
std::uint64_t truncatedNormalCycles(const Target &target, const Type &type, std::uint64_t n, double alpha) {
  const unsigned workers = target.getNumWorkerContexts();
  const double outside = std::erfc(alpha / std::sqrt(2.0));
  const std::uint64_t iterations =
      outside > 0.0 && outside < 1.0 ? static_cast<std::uint64_t>(std::ceil(-4.0 / std::log10(outside))) : 1;
  const bool isFloat = type == FLOAT;
  const std::uint64_t width = target.getVectorWidth(type);
  const bool rest = n % width != 0;
  if (isFloat)
    return 4 + 26 * workers + (11 * iterations + 5) * (n + width - 1) / width + rest * (13 * iterations + 2);
  return 4 + 28 * workers + (12 * iterations + 5) * (n + width - 1) / width + rest * (12 * iterations + 10);
}

std::uint64_t dropoutCycles(const Target &target, const Type &type, std::uint64_t n) {
  const bool isFloat = type == FLOAT;
  const std::uint64_t width = target.getVectorWidth(type);
  return 6 + 24 * target.getNumWorkerContexts() + 2 * (n + width - 1) / width +
         (n % width != 0 ? (isFloat ? 1 : 9) : 0);
}

/// One RandomGen vertex of `n` elements. LOG_UNIFORM is PopLibs' float uniform, its fused
/// clamp(exp(x)) (two operators) and, for other output types, the cast.
std::uint64_t randomGenCycles(const Target &target, const Type &type, unsigned distribution, std::uint64_t n,
                              double alpha) {
  switch (distribution) {
  case NORMAL:
    return normalCycles(target, type, n);
  case TRUNCATED_NORMAL:
    return truncatedNormalCycles(target, type, n, alpha);
  case BERNOULLI:
    return bernoulliCycles(target, type, n);
  case LOG_UNIFORM:
    return uniformCycles(target, FLOAT, n) + popops::cost::fusedExpression(target, FLOAT, n, 2, 1, 0) +
           (type == FLOAT ? 0 : popops::cost::cast1D(target, FLOAT, type, n));
  default:
    return uniformCycles(target, type, n);
  }
}

/// Adds one vertex per mapped interval of `out` to `cs`; `fields` gives the
/// vertex's tensor fields for an interval [begin, end) of the flattened result.
template <class Fields>
void addPerInterval(Graph &graph, const ComputeSet &cs, const Tensor &out, const std::string &vertex,
                    const std::function<std::uint64_t(std::size_t)> &cycles, Fields fields,
                    const std::function<void(VertexRef, std::size_t)> &setState) {
  const auto mapping = graph.getTileMapping(out);
  for (unsigned tile = 0; tile < mapping.size(); ++tile) {
    for (const Interval &interval : mapping[tile]) {
      VertexRef v = graph.addVertex(cs, vertex, fields(interval.begin(), interval.end()));
      setState(v, interval.begin());
      graph.setTileMapping(v, tile);
      graph.setPerfEstimate(v, cycles(interval.size()));
    }
  }
}

Tensor generate(Graph &graph, const char *opBase, const Tensor *seed, uint32_t seedModifier,
                const Tensor &reference, const Type &outType, unsigned distribution, double p0, double p1,
                double p2, program::Sequence &prog, const DebugContext &dc) {
  const std::string op = aspen::ops::opNameWithContext(opBase, dc);
  aspen::ops::requireValid(reference, op, "the reference");
  const auto random = graphRandom(graph);
  const Tensor seedTensor = seedWords(op, seed, random.first);
  Tensor out = graph.clone(outType, reference, {dc, "random"});
  const Tensor flat = out.flatten();
  const ComputeSet cs = graph.addComputeSet({dc, opBase});
  // Operations seeded explicitly repeat their numbers for the same seed: only
  // the graph's state gets a per-operation salt.
  const unsigned salt = seed ? 0u : random.second;
  addPerInterval(
      graph, cs, out, poputil::templateVertex("poprand::RandomGen", outType),
      [&](std::size_t n) { return randomGenCycles(graph.getTarget(), outType, distribution, n, p2); },
      [&](std::size_t begin, std::size_t end) {
        return std::vector<Graph::ConnectionDesc>{{"out", flat.slice(begin, end)}, {"seed", seedTensor}};
      },
      [&](VertexRef v, std::size_t base) {
        graph.setInitialValue(v["baseIndexLo"], unsigned(base & 0xffffffffu));
        graph.setInitialValue(v["baseIndexHi"], unsigned(std::uint64_t(base) >> 32));
        graph.setInitialValue(v["seedModifier"], unsigned(seedModifier));
        graph.setInitialValue(v["salt"], salt);
        graph.setInitialValue(v["distribution"], distribution);
        graph.setInitialValue(v["param0"], float(p0));
        graph.setInitialValue(v["param1"], float(p1));
        graph.setInitialValue(v["param2"], float(p2));
      });
  prog.add(program::Execute(cs, dc));
  if (!seed)
    advanceState(graph, random.first, prog, dc);
  return out;
}

} // namespace

Tensor uniform(Graph &graph, const Tensor *seed, uint32_t seedModifier, const Tensor &reference,
               const Type &outType, double minVal, double maxVal, program::Sequence &prog,
               const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn,
                                  DI_ARGS(seed, seedModifier, reference, outType, minVal, maxVal));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::uniform", debugContext);
  checkOutType(op, outType, true);
  if (!(maxVal >= minVal))
    fail(op, "maxVal (" + std::to_string(maxVal) + ") must not be less than minVal (" +
                 std::to_string(minVal) + ")");
  return generate(graph, "poprand::uniform", seed, seedModifier, reference, outType, UNIFORM, minVal, maxVal,
                  0, prog, debugContext);
}

Tensor logUniform(Graph &graph, const Tensor *seed, uint32_t seedModifier, const Tensor &reference,
                  const Type &outType, double minVal, double maxVal, program::Sequence &prog, double base,
                  const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn,
                                  DI_ARGS(seed, seedModifier, reference, outType, minVal, maxVal, base));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::logUniform", debugContext);
  checkOutType(op, outType, true);
  if (!(minVal >= 1.0))
    fail(op, "minVal (" + std::to_string(minVal) + ") must be at least 1");
  if (!(maxVal > minVal))
    fail(op, "maxVal (" + std::to_string(maxVal) + ") must be greater than minVal (" +
                 std::to_string(minVal) + ")");
  if (!(base > 0.0) || base == 1.0)
    fail(op, "the base (" + std::to_string(base) + ") must be positive and not 1");
  // base^uniform(log_base(min), log_base(max)) has the same distribution for
  // every base: the vertex draws exp(uniform(ln(min), ln(max))).
  return generate(graph, "poprand::logUniform", seed, seedModifier, reference, outType, LOG_UNIFORM,
                  std::log(minVal), std::log(maxVal), 0, prog, debugContext);
}

Tensor bernoulli(Graph &graph, const Tensor *seed, uint32_t seedModifier, const Tensor &reference,
                 const Type &outType, double prob, program::Sequence &prog,
                 const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn, DI_ARGS(seed, seedModifier, reference, outType, prob));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::bernoulli", debugContext);
  checkOutType(op, outType, true);
  if (!(prob >= 0.0 && prob <= 1.0))
    fail(op, "prob (" + std::to_string(prob) + ") must lie in [0, 1]");
  return generate(graph, "poprand::bernoulli", seed, seedModifier, reference, outType, BERNOULLI, prob, 0, 0,
                  prog, debugContext);
}

Tensor normal(Graph &graph, const Tensor *seed, uint32_t seedModifier, const Tensor &reference,
              const Type &outType, double mean, double stdDev, program::Sequence &prog,
              const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn,
                                  DI_ARGS(seed, seedModifier, reference, outType, mean, stdDev));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::normal", debugContext);
  checkOutType(op, outType, false);
  if (!(stdDev >= 0.0))
    fail(op, "stdDev (" + std::to_string(stdDev) + ") must not be negative");
  return generate(graph, "poprand::normal", seed, seedModifier, reference, outType, NORMAL, mean, stdDev, 0,
                  prog, debugContext);
}

Tensor truncatedNormal(Graph &graph, const Tensor *seed, uint32_t seedModifier, const Tensor &reference,
                       const Type &outType, double mean, double stdDev, double alpha, program::Sequence &prog,
                       const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn,
                                  DI_ARGS(seed, seedModifier, reference, outType, mean, stdDev, alpha));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::truncatedNormal", debugContext);
  checkOutType(op, outType, false);
  if (!(stdDev >= 0.0))
    fail(op, "stdDev (" + std::to_string(stdDev) + ") must not be negative");
  if (!(alpha > 0.0))
    fail(op, "alpha (" + std::to_string(alpha) + ") must be positive");
  return generate(graph, "poprand::truncatedNormal", seed, seedModifier, reference, outType, TRUNCATED_NORMAL,
                  mean, stdDev, alpha, prog, debugContext);
}

Tensor dropout(Graph &graph, const Tensor *seed, const uint32_t seedModifier, const Tensor &input,
               const Tensor &reference, double keepProbability, double scale, bool outputClonesRef,
               program::Sequence &prog, const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(
      debugContextIn, DI_ARGS(seed, seedModifier, input, reference, keepProbability, scale, outputClonesRef));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::dropout", debugContext);
  aspen::ops::requireValid(input, op, "the input");
  aspen::ops::requireValid(reference, op, "the reference");
  if (input.elementType() != FLOAT && input.elementType() != HALF)
    fail(op, "input " + describe(input) + " must be float or half");
  if (input.shape() != reference.shape())
    fail(op,
         "input " + describe(input) + " and reference " + describe(reference) + " must have the same shape");
  if (!(keepProbability >= 0.0 && keepProbability <= 1.0))
    fail(op, "keepProbability (" + std::to_string(keepProbability) + ") must lie in [0, 1]");
  const auto random = graphRandom(graph);
  const Tensor seedTensor = seedWords(op, seed, random.first);
  Tensor out =
      graph.clone(input.elementType(), outputClonesRef ? reference : input, {debugContext, "dropout"});
  const Tensor flatOut = out.flatten(), flatIn = input.flatten();
  const ComputeSet cs = graph.addComputeSet({debugContext, "poprand::dropout"});
  const unsigned salt = seed ? 0u : random.second;
  addPerInterval(
      graph, cs, out, poputil::templateVertex("poprand::Dropout", input.elementType()),
      [&](std::size_t n) { return dropoutCycles(graph.getTarget(), input.elementType(), n); },
      [&](std::size_t begin, std::size_t end) {
        return std::vector<Graph::ConnectionDesc>{
            {"in", flatIn.slice(begin, end)}, {"out", flatOut.slice(begin, end)}, {"seed", seedTensor}};
      },
      [&](VertexRef v, std::size_t base) {
        graph.setInitialValue(v["baseIndexLo"], unsigned(base & 0xffffffffu));
        graph.setInitialValue(v["baseIndexHi"], unsigned(std::uint64_t(base) >> 32));
        graph.setInitialValue(v["seedModifier"], unsigned(seedModifier));
        graph.setInitialValue(v["salt"], salt);
        graph.setInitialValue(v["keepProbability"], float(keepProbability));
        graph.setInitialValue(v["scale"], float(scale));
      });
  prog.add(program::Execute(cs, debugContext));
  if (!seed)
    advanceState(graph, random.first, prog, debugContext);
  return out;
}

Tensor dropout(Graph &graph, const Tensor *seed, const uint32_t seedModifier, const Tensor &input,
               const Tensor &reference, double keepProbability, double scale, program::Sequence &prog,
               const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn,
                                  DI_ARGS(seed, seedModifier, input, reference, keepProbability, scale));
  const poplar::DebugContext debugContext(di);
  return dropout(graph, seed, seedModifier, input, reference, keepProbability, scale, true, prog,
                 debugContext);
}

void setSeed(Graph &graph, const Tensor &masterSeed, uint32_t seedModifier, program::Sequence &prog,
             const DebugContext &debugContextIn) {
  aspen::ops::PoprandDebugInfo di(debugContextIn, DI_ARGS(masterSeed, seedModifier));
  const poplar::DebugContext debugContext(di);
  const std::string op = aspen::ops::opNameWithContext("poprand::setSeed", debugContext);
  const Tensor state = graphRandom(graph).first;
  const Tensor seed = seedWords(op, &masterSeed, state);
  prog.add(program::Copy(seed, state.slice(0, 2), false, debugContext));
  Tensor rest = graph.addConstant<unsigned>(UNSIGNED_INT, {2}, std::vector<unsigned>{seedModifier, 0u},
                                            {debugContext, "seedModifier"});
  graph.setTileMapping(rest, 0);
  prog.add(program::Copy(rest, state.slice(2, 4), false, debugContext));
}

} // namespace poprand
