// Copyright (c) Aspen contributors.
#include "passes/DumpIR.hpp"

#include "poplar/exceptions.hpp"

#include <filesystem>
#include <fstream>

namespace aspen::compiler {
namespace {

constexpr const char *kOption = "aspen.dumpIR";

std::ostream &operator<<(std::ostream &os, Loc l) {
  if (!l.valid())
    return os << "-";
  return os << "obj" << l.object << "+" << l.offset;
}

void step(std::ostream &os, std::size_t i, const exe::Step &s) {
  os << i << ": " << exe::stepKindName(s.kind) << " a=" << s.a << " b=" << s.b;
  switch (s.kind) {
  case exe::StepKind::Jump:
  case exe::StepKind::JumpIfZero:
  case exe::StepKind::JumpIfNonZero:
  case exe::StepKind::LoopTest:
  case exe::StepKind::Call:
    os << " -> " << s.target;
    break;
  case exe::StepKind::SetCounter:
    os << " value=" << s.value;
    break;
  default:
    break;
  }
  if (!s.message.empty())
    os << " '" << s.message << "'";
  os << "\n";
}

void runs(std::ostream &os, const char *what, const std::vector<SymCopyRun> &rs) {
  os << "  " << what << ": " << rs.size() << " runs\n";
  for (const SymCopyRun &r : rs)
    os << "    " << r.src << " -> " << r.dst << " " << r.bytes << " B\n";
}

} // namespace

IRDumper::IRDumper(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty())
    return;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec)
    throw poplar::invalid_option(std::string("Option '") + kOption + "': cannot create directory '" + dir_ +
                                 "': " + ec.message());
}

template <class F> void IRDumper::write(int pass, const char *name, F &&body) {
  if (dir_.empty())
    return;
  const std::string path = dir_ + "/" + std::to_string(pass) + "-" + name + ".txt";
  std::ofstream os(path);
  if (os)
    body(os);
  if (!os)
    throw poplar::invalid_option(std::string("Option '") + kOption + "': cannot write '" + path + "'");
}

void IRDumper::graph(const ir::GraphData &g) {
  write(1, "validate", [&](std::ostream &os) {
    os << "# graph: " << g.variables.size() << " variables, " << g.vertices.size() << " vertices, "
       << g.computeSets.size() << " compute sets, " << g.target.numTiles() << " tiles\n";
    for (std::size_t v = 0; v < g.variables.size(); ++v) {
      const ir::Variable &var = g.variables[v];
      os << "var " << v << " '" << var.name << "' " << var.type.toString() << " x" << var.numElements
         << (var.isConstant ? " constant" : "") << " mapping:";
      for (const ir::TileInterval &ti : var.mapping)
        os << " [" << ti.begin << "," << ti.end << ")@" << ti.tile;
      os << "\n";
    }
    for (std::size_t c = 0; c < g.computeSets.size(); ++c)
      os << "computeSet " << c << " '" << g.computeSets[c].name << "': " << g.computeSets[c].vertices.size()
         << " vertices\n";
  });
}

void IRDumper::lowered(const LoweredProgram &lp) {
  write(2, "lower", [&](std::ostream &os) {
    os << "# steps (Execute: a = graph compute set)\n";
    for (std::size_t p = 0; p < lp.programEntry.size(); ++p)
      os << "program " << p << " at " << lp.programEntry[p] << "\n";
    for (std::size_t i = 0; i < lp.steps.size(); ++i)
      step(os, i, lp.steps[i]);
  });
}

void IRDumper::exchange(const ir::GraphData &g, const ExchangePlan &plan) {
  write(3, "exchange", [&](std::ostream &os) {
    os << "# steps (Execute: a = planned compute set; Copy: a = copy; streams: b = transfer)\n";
    for (std::size_t i = 0; i < plan.steps.size(); ++i)
      step(os, i, plan.steps[i]);
    os << "# memory objects (pieces 0.." << plan.memory.numPieces() << ")\n";
    for (std::size_t o = 0; o < plan.memory.objects.size(); ++o) {
      const MemObject &m = plan.memory.objects[o];
      os << "obj" << o << " " << categoryName(m.category) << " tile " << m.tile << " " << m.size
         << " B align " << m.align << " owner " << m.owner;
      if (m.computeSet != kNoObject)
        os << " computeSet " << m.computeSet;
      os << "\n";
    }
    for (std::size_t c = 0; c < plan.computeSets.size(); ++c) {
      const PlannedComputeSet &pcs = plan.computeSets[c];
      os << "computeSet " << c << " '" << g.computeSets[pcs.computeSet].name << "' steps "
         << plan.computeSetSteps[c].first << ".." << plan.computeSetSteps[c].second << ", "
         << pcs.vertices.size() << " vertices" << (pcs.fuseExchangeIn ? ", fused exchange-in" : "") << "\n";
      for (const PlannedVertex &v : pcs.vertices)
        os << "  vertex " << v.vertex << " tile " << v.tile << " obj" << v.object << "\n";
      runs(os, "exchangeIn", pcs.exchangeIn);
      runs(os, "exchangeOut", pcs.exchangeOut);
    }
    for (std::size_t k = 0; k < plan.copies.size(); ++k) {
      os << "copy " << k << "\n";
      runs(os, "runs", plan.copies[k].runs);
    }
    os << "# relocations\n";
    for (const SymRelocation &r : plan.relocations)
      os << r.where << " <- " << r.target << "\n";
  });
}

void IRDumper::liveness(const ir::GraphData &g, const LivenessResult &live) {
  write(4, "liveness", [&](std::ostream &os) {
    os << "# " << live.numAlwaysLive << " always-live, " << live.numNotAlwaysLive << " not, "
       << live.numBlocks << " blocks\n";
    for (std::size_t v = 0; v < g.variables.size(); ++v) {
      os << "var " << v << " '" << g.variables[v].name << "': ";
      if (live.alwaysLive[v])
        os << "always-live\n";
      else if (live.liveBegin[v] > live.liveEnd[v])
        os << "never live\n";
      else
        os << "steps " << live.liveBegin[v] << ".." << live.liveEnd[v] << "\n";
    }
  });
}

void IRDumper::allocation(const ExchangePlan &plan, const AllocationResult &alloc) {
  write(5, "allocate", [&](std::ostream &os) {
    for (std::size_t t = 0; t < alloc.tiles.size(); ++t)
      if (alloc.tiles[t].peakBytes)
        os << "tile " << t << " peak " << alloc.tiles[t].peakBytes << " always-live "
           << alloc.tiles[t].alwaysLiveBytes << "\n";
    for (std::size_t o = 0; o < plan.memory.objects.size(); ++o)
      os << "obj" << o << " tile " << plan.memory.objects[o].tile << " @" << alloc.address[o] << " "
         << plan.memory.objects[o].size << " B\n";
    if (alloc.outOfMemory)
      os << alloc.outOfMemoryMessage << "\n";
  });
}

void IRDumper::cycles(const ExchangePlan &plan, const CycleEstimates &est) {
  write(6, "estimateCycles", [&](std::ostream &os) {
    for (std::size_t c = 0; c < plan.computeSets.size(); ++c)
      os << "computeSet " << c << ": exchangeIn " << est.exchangeInCycles[c] << " compute "
         << est.computeCycles[c] << " exchangeOut " << est.exchangeOutCycles[c] << "\n";
    for (std::size_t s = 0; s < est.stepCycles.size(); ++s)
      os << "step " << s << ": " << est.stepCycles[s] << "\n";
  });
}

void IRDumper::executable(const exe::ExecutableData &x) {
  write(7, "emit", [&](std::ostream &os) {
    for (std::size_t i = 0; i < x.steps.size(); ++i)
      step(os, i, x.steps[i]);
    for (std::size_t c = 0; c < x.computeSteps.size(); ++c) {
      const exe::ComputeStep &cs = x.computeSteps[c];
      os << "computeStep " << c << " '" << cs.name << "': " << cs.vertices.size() << " vertices on "
         << cs.tiles.size() << " tiles, exchangeIn " << cs.exchangeIn.totalBytes << " B / "
         << cs.exchangeIn.cycles << " cycles, exchangeOut " << cs.exchangeOut.totalBytes << " B / "
         << cs.exchangeOut.cycles << " cycles, compute " << cs.computeCycles << " cycles\n";
    }
    os << x.blobs.size() << " memory blobs, " << x.relocations.size() << " relocations, " << x.copies.size()
       << " copies, " << x.hostTransfers.size() << " host transfers\n";
  });
}

} // namespace aspen::compiler
