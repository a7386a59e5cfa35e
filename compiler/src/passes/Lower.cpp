// Copyright (c) Aspen contributors.
#include "passes/Lower.hpp"

#include "poplar/exceptions.hpp"
#include "util/Assert.hpp"

#include <unordered_set>

namespace aspen::compiler {
namespace {

using exe::StepKind;
using ir::ProgramKind;

class Lowerer {
public:
  Lowerer(const ir::GraphData &g, LoweredProgram &out) : g_(g), out_(out) {}

  void lowerProgram(const ir::ProgramNode *root) {
    out_.programEntry.push_back(here());
    lower(root);
    emit(StepKind::End, nullptr);
  }

  void lowerFunctions() {
    // Functions are laid out after every program, each once, in id order of first need.
    out_.functionEntry.assign(g_.functions.size(), ~0u);
    std::vector<bool> needed(g_.functions.size(), false);
    for (std::uint32_t f : calledFunctions_)
      needed[f] = true;
    // Bodies may call further functions: iterate until no new one appears.
    bool changed = true;
    while (changed) {
      changed = false;
      for (std::uint32_t f = 0; f < g_.functions.size(); ++f) {
        if (!needed[f] || out_.functionEntry[f] != ~0u)
          continue;
        out_.functionEntry[f] = here();
        functionStack_.push_back(f);
        lower(g_.functions[f].get());
        functionStack_.pop_back();
        Step &ret = emit(StepKind::Return, nullptr);
        ret.a = f;
        for (std::uint32_t c : calledFunctions_)
          if (!needed[c]) {
            needed[c] = true;
            changed = true;
          }
      }
    }
    for (std::uint32_t s : callSites_) {
      const std::uint32_t f = out_.steps[s].a;
      ASPEN_ASSERT(out_.functionEntry[f] != ~0u, "a called function has no body");
      out_.steps[s].target = out_.functionEntry[f];
    }
    checkCallCycles();
  }

private:
  using Step = exe::Step;

  std::uint32_t here() const { return static_cast<std::uint32_t>(out_.steps.size()); }

  Step &emit(StepKind kind, const ir::ProgramNode *node) {
    out_.steps.emplace_back();
    out_.stepNode.push_back(node);
    Step &s = out_.steps.back();
    s.kind = kind;
    if (node)
      s.message = node->debugName;
    return s;
  }

  void lower(const ir::ProgramNode *node) {
    if (!node)
      return;
    if (!active_.insert(node).second)
      throw poplar::graph_cycle_error("program '" + node->debugName +
                                      "' contains itself; a program tree must not be cyclic");
    lowerNode(node);
    active_.erase(node);
  }

  void lowerNode(const ir::ProgramNode *node) {
    switch (node->kind) {
    case ProgramKind::Sequence:
      for (const auto &c : node->children)
        lower(c.get());
      break;
    case ProgramKind::Execute: {
      Step &s = emit(StepKind::Execute, node);
      s.a = node->computeSet;
      if (s.message.empty() && node->computeSet < g_.computeSets.size())
        s.message = g_.computeSets[node->computeSet].name;
      break;
    }
    case ProgramKind::Copy:
      emit(StepKind::Copy, node);
      break;
    case ProgramKind::StreamToTensor:
      emit(StepKind::StreamToDevice, node).a = node->stream;
      break;
    case ProgramKind::TensorToStream:
      emit(StepKind::DeviceToStream, node).a = node->stream;
      break;
    case ProgramKind::RemoteToTensor:
    case ProgramKind::TensorToRemote: {
      // One step per row offset: step.b is the row index until Exchange plans it.
      const std::size_t rows = node->offset.valid() ? node->offset.numElements() : 1;
      const StepKind kind =
          node->kind == ProgramKind::RemoteToTensor ? StepKind::RemoteToDevice : StepKind::DeviceToRemote;
      for (std::size_t r = 0; r < rows; ++r) {
        Step &s = emit(kind, node);
        s.a = node->remoteBuffer;
        s.b = static_cast<std::uint32_t>(r);
      }
      break;
    }
    case ProgramKind::Repeat: {
      if (node->count == 0 || node->children.empty())
        break;
      const std::uint32_t counter = out_.numCounters++;
      Step &set = emit(StepKind::SetCounter, node);
      set.a = counter;
      set.value = node->count;
      const std::uint32_t test = here();
      emit(StepKind::LoopTest, node).a = counter;
      lower(node->children[0].get());
      emit(StepKind::Jump, nullptr).target = test;
      out_.steps[test].target = here();
      break;
    }
    case ProgramKind::RepeatForever: {
      const std::uint32_t top = here();
      if (!node->children.empty())
        lower(node->children[0].get());
      emit(StepKind::Jump, nullptr).target = top;
      break;
    }
    case ProgramKind::RepeatWhileTrue:
    case ProgramKind::RepeatWhileFalse: {
      const std::uint32_t top = here();
      if (!node->children.empty())
        lower(node->children[0].get());
      const std::uint32_t test = here();
      emit(node->kind == ProgramKind::RepeatWhileTrue ? StepKind::JumpIfZero : StepKind::JumpIfNonZero, node);
      if (node->children.size() > 1)
        lower(node->children[1].get());
      emit(StepKind::Jump, nullptr).target = top;
      out_.steps[test].target = here();
      break;
    }
    case ProgramKind::If: {
      const std::uint32_t test = here();
      emit(StepKind::JumpIfZero, node);
      if (!node->children.empty())
        lower(node->children[0].get());
      if (node->children.size() > 1 && node->children[1]) {
        const std::uint32_t skip = here();
        emit(StepKind::Jump, nullptr);
        out_.steps[test].target = here();
        lower(node->children[1].get());
        out_.steps[skip].target = here();
      } else {
        out_.steps[test].target = here();
      }
      break;
    }
    case ProgramKind::Switch: {
      const std::uint32_t table = static_cast<std::uint32_t>(out_.switchTables.size());
      out_.switchTables.emplace_back();
      emit(StepKind::SwitchJump, node).a = table;
      const std::size_t numCases = node->caseValues.size();
      std::vector<std::uint32_t> exits;
      std::vector<std::uint32_t> targets;
      for (std::size_t i = 0; i < numCases; ++i) {
        targets.push_back(here());
        if (i < node->children.size())
          lower(node->children[i].get());
        exits.push_back(here());
        emit(StepKind::Jump, nullptr);
      }
      std::uint32_t defaultTarget = here();
      if (node->hasDefault && node->children.size() > numCases)
        lower(node->children.back().get());
      for (std::uint32_t e : exits)
        out_.steps[e].target = here();
      exe::SwitchTable &t = out_.switchTables[table];
      t.values = node->caseValues;
      t.targets = std::move(targets);
      t.defaultTarget = defaultTarget;
      break;
    }
    case ProgramKind::Call: {
      const std::uint32_t s = here();
      emit(StepKind::Call, node).a = node->function;
      callSites_.push_back(s);
      calledFunctions_.insert(node->function);
      if (!functionStack_.empty())
        callEdges_.push_back({functionStack_.back(), node->function});
      break;
    }
    case ProgramKind::WriteUndef:
      emit(StepKind::WriteUndef, node);
      break;
    case ProgramKind::Sync:
      emit(StepKind::Sync, node).a = static_cast<std::uint32_t>(node->syncType);
      break;
    case ProgramKind::PrintTensor:
      emit(StepKind::Print, node);
      break;
    case ProgramKind::Abort: {
      Step &s = emit(StepKind::Abort, node);
      s.message = node->message;
      break;
    }
    case ProgramKind::AbortOnCondition: {
      Step &s = emit(StepKind::AbortIf, node);
      s.message = node->message;
      break;
    }
    case ProgramKind::Collective: // one step; Exchange plans its tensors (docs/replication.md)
      emit(StepKind::Collective, node);
      break;
    case ProgramKind::Block: {
      const std::uint32_t name = static_cast<std::uint32_t>(out_.blockNames.size());
      out_.blockNames.push_back(node->debugName);
      emit(StepKind::BlockBegin, node).a = name;
      if (!node->children.empty())
        lower(node->children[0].get());
      emit(StepKind::BlockEnd, nullptr).a = name;
      break;
    }
    }
  }

  /// A function that reaches itself through calls would overwrite its own
  /// loop counters and return addresses: reject it.
  void checkCallCycles() {
    const std::size_t n = g_.functions.size();
    std::vector<std::vector<std::uint32_t>> callees(n);
    for (auto [from, to] : callEdges_)
      callees[from].push_back(to);
    std::vector<std::uint8_t> state(n, 0); // 0 new, 1 on stack, 2 done
    for (std::uint32_t start = 0; start < n; ++start) {
      if (state[start])
        continue;
      std::vector<std::pair<std::uint32_t, std::size_t>> stack{{start, 0}};
      state[start] = 1;
      while (!stack.empty()) {
        auto &[f, next] = stack.back();
        if (next < callees[f].size()) {
          const std::uint32_t c = callees[f][next++];
          if (state[c] == 1)
            throw poplar::graph_cycle_error("function " + std::to_string(c) +
                                            " calls itself (directly or through other functions); "
                                            "recursion is not supported");
          if (state[c] == 0) {
            state[c] = 1;
            stack.push_back({c, 0});
          }
        } else {
          state[f] = 2;
          stack.pop_back();
        }
      }
    }
  }

  const ir::GraphData &g_;
  LoweredProgram &out_;
  std::unordered_set<const ir::ProgramNode *> active_;
  std::vector<std::uint32_t> callSites_;
  std::unordered_set<std::uint32_t> calledFunctions_;
  std::vector<std::uint32_t> functionStack_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> callEdges_;
};

} // namespace

LoweredProgram lowerPrograms(const ir::GraphData &graph,
                             const std::vector<const ir::ProgramNode *> &programs) {
  LoweredProgram out;
  Lowerer lowerer(graph, out);
  for (const ir::ProgramNode *p : programs)
    lowerer.lowerProgram(p);
  lowerer.lowerFunctions();
  return out;
}

} // namespace aspen::compiler
