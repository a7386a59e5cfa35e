// Copyright (c) Aspen contributors.
#include "passes/Liveness.hpp"

#include "util/Assert.hpp"
#include "util/Log.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <bit>
#include <deque>

namespace aspen::compiler {
namespace {

using StepGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

bool endsBlock(exe::StepKind k) {
  using K = exe::StepKind;
  switch (k) {
  case K::Jump:
  case K::LoopTest:
  case K::JumpIfZero:
  case K::JumpIfNonZero:
  case K::SwitchJump:
  case K::Call:
  case K::Return:
  case K::End:
  case K::Abort:
  case K::AbortIf:
    return true;
  default:
    return false;
  }
}

/// The control-flow successors of every step as a Boost graph.
StepGraph buildStepGraph(const LoweredProgram &lp) {
  const std::size_t n = lp.steps.size();
  StepGraph graph(n);
  std::vector<std::vector<std::uint32_t>> callReturns(lp.functionEntry.size());
  for (std::size_t i = 0; i < n; ++i)
    if (lp.steps[i].kind == exe::StepKind::Call && i + 1 < n)
      callReturns[lp.steps[i].a].push_back(static_cast<std::uint32_t>(i + 1));
  using K = exe::StepKind;
  for (std::size_t i = 0; i < n; ++i) {
    const exe::Step &s = lp.steps[i];
    auto edge = [&](std::size_t to) {
      if (to < n)
        boost::add_edge(i, to, graph);
    };
    switch (s.kind) {
    case K::End:
    case K::Abort:
      break;
    case K::Jump:
    case K::Call:
      edge(s.target);
      break;
    case K::LoopTest:
    case K::JumpIfZero:
    case K::JumpIfNonZero:
      edge(s.target);
      edge(i + 1);
      break;
    case K::SwitchJump: {
      const exe::SwitchTable &t = lp.switchTables[s.a];
      for (std::uint32_t to : t.targets)
        edge(to);
      edge(t.defaultTarget);
      break;
    }
    case K::Return:
      for (std::uint32_t to : callReturns[s.a])
        edge(to);
      break;
    default:
      edge(i + 1);
      break;
    }
  }
  return graph;
}

using Bits = std::vector<std::uint64_t>;

} // namespace

LivenessResult analyseLiveness(const ir::GraphData &g, const LoweredProgram &lp, const ExchangePlan &plan) {
  const std::size_t numSteps = lp.steps.size();
  const std::size_t numVars = g.variables.size();
  LivenessResult res;
  res.alwaysLive.assign(numVars, 0);
  res.liveBegin.assign(numVars, ~0u);
  res.liveEnd.assign(numVars, 0);
  res.notAlwaysLiveBytes.assign(numSteps, 0);

  for (std::size_t v = 0; v < numVars; ++v)
    if (g.variables[v].isConstant)
      res.alwaysLive[v] = 1;
  for (const auto &kv : g.initialValues)
    if (kv.first < numVars)
      res.alwaysLive[kv.first] = 1;
  for (std::uint32_t v : plan.hostVisibleVars)
    res.alwaysLive[v] = 1;
  // An offloaded variable's value lives in Streaming Memory: on tiles it is live only from its
  // load to its last use or store (docs/streaming-memory.md).
  for (std::size_t v = 0; v < plan.offloaded.size() && v < numVars; ++v)
    if (plan.offloaded[v])
      res.alwaysLive[v] = 0;

  // Candidates: touched variables that are not always-live yet, densely numbered.
  std::vector<std::uint32_t> dense(numVars, ~0u);
  std::vector<std::uint32_t> candidates;
  for (const VarAccess &a : plan.stepAccesses) {
    if (!res.alwaysLive[a.var] && dense[a.var] == ~0u) {
      dense[a.var] = static_cast<std::uint32_t>(candidates.size());
      candidates.push_back(a.var);
    }
  }
  const std::size_t numCand = candidates.size();
  const std::size_t words = (numCand + 63) / 64;

  // Basic blocks over the step graph.
  const StepGraph graph = buildStepGraph(lp);
  std::vector<std::uint8_t> leader(numSteps + 1, 0);
  for (std::uint32_t e : lp.programEntry)
    leader[e] = 1;
  for (std::uint32_t e : lp.functionEntry)
    if (e != ~0u)
      leader[e] = 1;
  for (std::size_t i = 0; i < numSteps; ++i) {
    if (endsBlock(lp.steps[i].kind))
      leader[i + 1] = 1;
    for (auto [e, end] = boost::out_edges(i, graph); e != end; ++e) {
      const std::size_t to = boost::target(*e, graph);
      if (to != i + 1 || endsBlock(lp.steps[i].kind))
        leader[to] = 1;
    }
  }
  std::vector<std::uint32_t> blockStart;
  std::vector<std::uint32_t> blockOf(numSteps);
  for (std::size_t i = 0; i < numSteps; ++i) {
    if (leader[i] || i == 0)
      blockStart.push_back(static_cast<std::uint32_t>(i));
    blockOf[i] = static_cast<std::uint32_t>(blockStart.size() - 1);
  }
  const std::size_t numBlocks = blockStart.size();
  res.numBlocks = static_cast<std::uint32_t>(numBlocks);
  auto blockEnd = [&](std::size_t b) {
    return b + 1 < numBlocks ? blockStart[b + 1] : numSteps;
  }; // exclusive

  // The dataflow keeps two bitsets per block. Should that not fit in reason (tens of
  // thousands of blocks times millions of variables), every variable is kept
  // always-live instead: correct, only less memory-efficient.
  constexpr std::uint64_t kMaxBitsetWords = std::uint64_t(1) << 27; // 1 GiB per set
  if (static_cast<std::uint64_t>(numBlocks) * words > kMaxBitsetWords) {
    ASPEN_LOG(Warn, "liveness: " << numBlocks << " blocks x " << numCand
                                 << " variables is too large to analyse; keeping every variable live");
    for (std::uint32_t v : candidates)
      res.alwaysLive[v] = 1;
    for (std::size_t v = 0; v < numVars; ++v)
      if (res.alwaysLive[v]) {
        ++res.numAlwaysLive;
        res.liveBegin[v] = 0;
        res.liveEnd[v] = numSteps ? static_cast<std::uint32_t>(numSteps - 1) : 0;
      }
    return res;
  }

  // gen (read before killed) and kill (killed before read) per block, sparse.
  std::vector<std::vector<std::uint32_t>> gen(numBlocks), kill(numBlocks);
  {
    std::vector<std::uint8_t> state(numCand, 0); // 1 = in gen, 2 = in kill (this block)
    for (std::size_t b = 0; b < numBlocks; ++b) {
      for (std::size_t s = blockStart[b]; s < blockEnd(b); ++s) {
        for (std::uint32_t k = plan.stepAccessBegin[s]; k < plan.stepAccessBegin[s + 1]; ++k) {
          const VarAccess &a = plan.stepAccesses[k];
          const std::uint32_t d = dense[a.var];
          if (d == ~0u)
            continue;
          if ((a.flags & kRead) && state[d] == 0) {
            state[d] = 1;
            gen[b].push_back(d);
          }
          if ((a.flags & (kFullWrite | kUndef)) && state[d] == 0) {
            state[d] = 2;
            kill[b].push_back(d);
          }
        }
      }
      for (std::uint32_t d : gen[b])
        state[d] = 0;
      for (std::uint32_t d : kill[b])
        state[d] = 0;
    }
  }

  // Block successors from the step graph (edges out of each block's last step).
  std::vector<std::vector<std::uint32_t>> succ(numBlocks), pred(numBlocks);
  for (std::size_t b = 0; b < numBlocks; ++b) {
    const std::size_t last = blockEnd(b) - 1;
    for (auto [e, end] = boost::out_edges(last, graph); e != end; ++e) {
      const std::uint32_t to = blockOf[boost::target(*e, graph)];
      succ[b].push_back(to);
      pred[to].push_back(static_cast<std::uint32_t>(b));
    }
  }

  // Iterate liveIn(B) = gen(B) | (liveOut(B) & ~kill(B)), liveOut(B) = | liveIn(succ) to a fixed point.
  std::vector<Bits> liveIn(numBlocks, Bits(words, 0)), liveOut(numBlocks, Bits(words, 0));
  std::deque<std::uint32_t> work;
  std::vector<std::uint8_t> queued(numBlocks, 1);
  for (std::size_t b = numBlocks; b-- > 0;)
    work.push_back(static_cast<std::uint32_t>(b));
  Bits scratch(words);
  while (!work.empty()) {
    const std::uint32_t b = work.front();
    work.pop_front();
    queued[b] = 0;
    Bits &out = liveOut[b];
    for (std::uint32_t s : succ[b])
      for (std::size_t w = 0; w < words; ++w)
        out[w] |= liveIn[s][w];
    scratch = out;
    for (std::uint32_t d : kill[b])
      scratch[d / 64] &= ~(std::uint64_t(1) << (d % 64));
    for (std::uint32_t d : gen[b])
      scratch[d / 64] |= std::uint64_t(1) << (d % 64);
    if (scratch != liveIn[b]) {
      liveIn[b].swap(scratch);
      for (std::uint32_t p : pred[b])
        if (!queued[p]) {
          queued[p] = 1;
          work.push_back(p);
        }
    }
  }

  // Live at a program's entry: the value crosses runs of programs, so it is always-live.
  for (std::uint32_t e : lp.programEntry) {
    if (e >= numSteps)
      continue;
    const Bits &in = liveIn[blockOf[e]];
    for (std::size_t w = 0; w < words; ++w)
      for (std::uint64_t bits = in[w]; bits; bits &= bits - 1)
        res.alwaysLive[candidates[w * 64 + std::countr_zero(bits)]] = 1;
  }

  // Hulls: every step that touches the variable, plus block borders where it is live.
  auto extend = [&](std::uint32_t var, std::uint32_t step) {
    res.liveBegin[var] = std::min(res.liveBegin[var], step);
    res.liveEnd[var] = std::max(res.liveEnd[var], step);
  };
  for (std::size_t s = 0; s < numSteps; ++s)
    for (std::uint32_t k = plan.stepAccessBegin[s]; k < plan.stepAccessBegin[s + 1]; ++k) {
      const VarAccess &a = plan.stepAccesses[k];
      if (a.flags & (kRead | kWrite))
        extend(a.var, static_cast<std::uint32_t>(s));
    }
  for (std::size_t b = 0; b < numBlocks; ++b) {
    for (std::size_t w = 0; w < words; ++w) {
      for (std::uint64_t bits = liveIn[b][w]; bits; bits &= bits - 1)
        extend(candidates[w * 64 + std::countr_zero(bits)], blockStart[b]);
      for (std::uint64_t bits = liveOut[b][w]; bits; bits &= bits - 1)
        extend(candidates[w * 64 + std::countr_zero(bits)], static_cast<std::uint32_t>(blockEnd(b) - 1));
    }
  }

  // Bytes of not-always-live variables live at each step (a sweep over hulls).
  std::vector<std::int64_t> delta(numSteps + 1, 0);
  for (std::size_t v = 0; v < numVars; ++v) {
    if (res.alwaysLive[v]) {
      ++res.numAlwaysLive;
      res.liveBegin[v] = 0;
      res.liveEnd[v] = numSteps ? static_cast<std::uint32_t>(numSteps - 1) : 0;
      continue;
    }
    if (res.liveBegin[v] > res.liveEnd[v])
      continue;
    ++res.numNotAlwaysLive;
    const std::int64_t bytes =
        static_cast<std::int64_t>(g.variables[v].numElements * g.variables[v].type.size());
    delta[res.liveBegin[v]] += bytes;
    delta[res.liveEnd[v] + 1] -= bytes;
  }
  std::int64_t live = 0;
  for (std::size_t s = 0; s < numSteps; ++s) {
    live += delta[s];
    res.notAlwaysLiveBytes[s] = static_cast<std::uint64_t>(live);
  }
  return res;
}

} // namespace aspen::compiler
