// Copyright (c) Aspen contributors.
// An LLVM 16 pass plugin (new pass manager; clang++-16 -fpass-plugin=) that
// makes codelet code count the cycles it executes (docs/cost-model.md,
// "Cycles from the code"). Every function with a body gets a local counter: each
// basic block adds its cost (CostTable.hpp) when it runs, and each return adds
// the counter to the running thread's counter, which Aspen's runtime owns and the
// executor reads around every compute() call:
//
//   ret:  if (aspen_codelet_cycle_offset) *(u64 __seg_fs *)aspen_codelet_cycle_offset += counter
//
// The pass runs where the vectoriser starts (after inlining and the scalar
// optimisations): the count is of the code's own operations, before x86
// vectorisation or unrolling, so it does not depend on the host's vector width.
// The counter lives in a register (promoted to SSA), so the vectoriser still
// vectorises the loops it counts (the counter is an add reduction). Simple loops add
// their whole count before they run instead (planHoisting), so that the 64-bit sum
// does not halve the vector width of loops over 32-bit data.
#include "CostTable.hpp"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/ModRef.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

#include <cstdlib>

using namespace llvm;
using namespace aspen::cyclecount;

namespace {

constexpr const char *kOffsetVariable = "aspen_codelet_cycle_offset";
constexpr const char *kCountedAttribute = "aspen-counted";
// The tile's cycle counter (<ipu_tile_builtins.h>): before a call to it the function adds
// what it has counted so far to the thread's counter, so that the reading includes it.
constexpr const char *kScountFunction = "aspen_codelet_scount";
// The builtins reading it (<ipu_tile_builtins.h>, not inlined): readings as well.
constexpr const char *kScountLow = "aspen_ipu_get_scount_l", *kScountHigh = "aspen_ipu_get_scount_h";

unsigned elementsOf(Type *t) {
  if (auto *v = dyn_cast<FixedVectorType>(t))
    return v->getNumElements();
  return 1;
}

/// Instructions a value of type `t` takes on the 64-bit data path.
unsigned dataPathOps(Type *t, const DataLayout &dl) {
  if (!t->isSized())
    return kInstruction;
  const uint64_t bits = dl.getTypeSizeInBits(t).getFixedValue();
  return bits <= kDataPathBits ? kInstruction : unsigned((bits + kDataPathBits - 1) / kDataPathBits);
}

/// The math-function entry for a called function's name (expf, exp, llvm.exp.f32, ...).
const MathCost *mathCostOf(StringRef name) {
  if (name.consume_front("llvm.")) {
    name = name.take_until([](char c) { return c == '.'; });
  } else if (name.size() > 1 && (name.back() == 'f' || name.back() == 'l') &&
             !findMathCost(name.data(), name.size())) {
    name = name.drop_back();
  }
  return findMathCost(name.data(), name.size());
}

unsigned floatElementCost(Type *scalar, unsigned f32, unsigned f16) {
  if (scalar->isDoubleTy() || scalar->isX86_FP80Ty() || scalar->isFP128Ty())
    return std::max(f32, kF64Arith);
  if (scalar->isHalfTy() || scalar->isBFloatTy())
    return f16;
  return f32;
}

/// Thread cycles of one instruction; `dynamicBytes` is set for memory
/// intrinsics whose length is only known when they run.
unsigned costOf(const Instruction &inst, const DataLayout &dl, Value *&dynamicBytes) {
  dynamicBytes = nullptr;
  switch (inst.getOpcode()) {
  case Instruction::PHI:
  case Instruction::BitCast:
  case Instruction::PtrToInt:
  case Instruction::IntToPtr:
  case Instruction::AddrSpaceCast:
  case Instruction::Freeze:
  case Instruction::Unreachable:
  case Instruction::Alloca:
  case Instruction::Ret: // the call's cost includes the return
    return 0;
  case Instruction::Br:
    return cast<BranchInst>(inst).isConditional() ? kCondBranch : 0;
  case Instruction::Switch:
    return kSwitch;
  case Instruction::GetElementPtr: {
    // The IPU's loads and stores add a base, a delta and a scaled offset register (ld32 $a,
    // $mBase, $mDelta, $mOff) or post-increment (ld32step): one variable index of an address
    // only loads and stores use is free; each further one, and an address used otherwise, costs.
    const auto &gep = cast<GetElementPtrInst>(inst);
    unsigned variable = 0;
    for (const Use &index : gep.indices())
      variable += isa<Constant>(index.get()) ? 0 : 1;
    if (variable == 0)
      return 0;
    bool addressOnly = true;
    for (const User *user : gep.users()) {
      if (const auto *load = dyn_cast<LoadInst>(user))
        addressOnly = addressOnly && load->getPointerOperand() == &gep;
      else if (const auto *store = dyn_cast<StoreInst>(user))
        addressOnly = addressOnly && store->getPointerOperand() == &gep && store->getValueOperand() != &gep;
      else
        addressOnly = false;
    }
    return kAddress * (variable - (addressOnly ? 1 : 0));
  }
  case Instruction::Load:
    return dataPathOps(inst.getType(), dl);
  case Instruction::Store:
    return dataPathOps(inst.getOperand(0)->getType(), dl);
  case Instruction::FDiv:
  case Instruction::FRem: {
    Type *t = inst.getType();
    Type *scalar = t->getScalarType();
    const bool div = inst.getOpcode() == Instruction::FDiv;
    unsigned each = div ? floatElementCost(scalar, kF32Divide, kF16Divide)
                        : floatElementCost(scalar, kF32Remainder, kF16Remainder);
    if (div && scalar->isDoubleTy())
      each = kF64Divide;
    return each * elementsOf(t);
  }
  case Instruction::UDiv:
  case Instruction::SDiv:
  case Instruction::URem:
  case Instruction::SRem: {
    if (auto *c = dyn_cast<ConstantInt>(inst.getOperand(1)))
      return c->getValue().isPowerOf2() ? kInstruction : kDivByConstant;
    const bool wide = inst.getType()->getScalarSizeInBits() > 32;
    unsigned each = 0;
    switch (inst.getOpcode()) {
    case Instruction::UDiv:
      each = wide ? kUDiv64 : kUDiv32;
      break;
    case Instruction::SDiv:
      each = wide ? kSDiv64 : kSDiv32;
      break;
    case Instruction::URem:
      each = wide ? kURem64 : kURem32;
      break;
    default:
      each = wide ? kSRem64 : kSRem32;
      break;
    }
    return each * elementsOf(inst.getType());
  }
  case Instruction::Call:
  case Instruction::Invoke:
  case Instruction::CallBr: {
    const auto &call = cast<CallBase>(inst);
    if (const auto *intrinsic = dyn_cast<IntrinsicInst>(&inst)) {
      switch (intrinsic->getIntrinsicID()) {
      case Intrinsic::dbg_declare:
      case Intrinsic::dbg_value:
      case Intrinsic::dbg_label:
      case Intrinsic::lifetime_start:
      case Intrinsic::lifetime_end:
      case Intrinsic::assume:
      case Intrinsic::experimental_noalias_scope_decl:
      case Intrinsic::invariant_start:
      case Intrinsic::invariant_end:
      case Intrinsic::var_annotation:
      case Intrinsic::ptr_annotation:
      case Intrinsic::annotation:
      case Intrinsic::sideeffect:
      case Intrinsic::pseudoprobe:
      case Intrinsic::expect:
      case Intrinsic::prefetch:
        return 0;
      case Intrinsic::memcpy:
      case Intrinsic::memmove:
      case Intrinsic::memset:
      case Intrinsic::memcpy_inline:
      case Intrinsic::memset_inline: {
        // One 64-bit load and store (paced) per 8 bytes, and a call.
        Value *length = call.getArgOperand(2);
        if (auto *c = dyn_cast<ConstantInt>(length))
          return unsigned(std::min<uint64_t>((c->getZExtValue() + 7) / 8, 1u << 30)) + kCall;
        dynamicBytes = length;
        return kCall;
      }
      default:
        break;
      }
    }
    const Function *callee = call.getCalledFunction();
    if (callee) {
      const StringRef name = callee->getName();
      if (const BuiltinCost *builtin = findBuiltinCost(name.data(), name.size()))
        return builtin->cycles;
      if (const MathCost *m = mathCostOf(callee->getName())) {
        Type *t = call.getType()->isVoidTy() ? callee->getFunctionType()->getParamType(0) : call.getType();
        if (t->isFPOrFPVectorTy()) {
          const unsigned each = floatElementCost(t->getScalarType(), m->f32, m->f16);
          // Cheap ones run at the data path's width (f32v2, f16v4); others per element.
          if (m->f32 <= 1)
            return dataPathOps(t, dl);
          return each * elementsOf(t) + (callee->isIntrinsic() ? 0 : kCall);
        }
      }
      if (callee->isIntrinsic())
        return dataPathOps(call.getType()->isVoidTy() ? Type::getInt64Ty(inst.getContext()) : call.getType(),
                           dl);
    }
    return kCall;
  }
  default:
    break;
  }
  Type *t = inst.getType();
  if (t->isVoidTy() || !t->isSized())
    return kInstruction;
  // Widening or narrowing between 32 and 64 bits: the host's 64-bit indices and pointers,
  // which the IPU (32-bit) does not have.
  if ((isa<ZExtInst>(inst) || isa<SExtInst>(inst) || isa<TruncInst>(inst)) && t->isIntegerTy() &&
      inst.getOperand(0)->getType()->isIntegerTy() && t->getIntegerBitWidth() >= 32 &&
      inst.getOperand(0)->getType()->getIntegerBitWidth() >= 32)
    return 0;
  Type *scalar = t->getScalarType();
  if (scalar->isDoubleTy() && (inst.isBinaryOp() || isa<FCmpInst>(inst)))
    return kF64Arith * elementsOf(t);
  // Integer vectors: the IPU's integer unit is scalar (assumption); float vectors
  // use the 64-bit SIMD path.
  if (t->isVectorTy() && scalar->isIntegerTy() && !isa<CmpInst>(inst) && !isa<CastInst>(inst) &&
      !isa<ShuffleVectorInst>(inst) && !isa<ExtractElementInst>(inst) && !isa<InsertElementInst>(inst))
    return kInstruction * elementsOf(t);
  return dataPathOps(t, dl);
}

/// Whether `user`, a user of a counted loop's induction variable (or of a value derived from it),
/// only addresses memory: a GEP's index, or a cast or an add/sub/mul/shl with a loop-invariant
/// operand whose own users only address memory. Such arithmetic is strength-reduced into the
/// post-increment of the loads' and stores' delta registers (ld32step, st32step), so it is
/// free; `derived` collects it.
bool onlyAddresses(const Instruction *user, const Value *of, const Loop &loop,
                   SmallVectorImpl<const Instruction *> &derived, unsigned depth) {
  if (const auto *gep = dyn_cast<GetElementPtrInst>(user))
    return gep->getPointerOperand() != of; // an index: the GEP prices itself
  if (depth == 0)
    return false;
  bool reduces = isa<ZExtInst>(user) || isa<SExtInst>(user) || isa<TruncInst>(user);
  if (const auto *op = dyn_cast<BinaryOperator>(user)) {
    const unsigned code = op->getOpcode();
    const Value *other = op->getOperand(0) == of ? op->getOperand(1) : op->getOperand(0);
    reduces = (code == Instruction::Add || code == Instruction::Sub || code == Instruction::Mul ||
               code == Instruction::Shl) &&
              loop.isLoopInvariant(other);
  }
  if (!reduces)
    return false;
  for (const User *next : user->users())
    if (!isa<Instruction>(next) || !onlyAddresses(cast<Instruction>(next), user, loop, derived, depth - 1))
      return false;
  derived.push_back(user);
  return true;
}

/// The instructions of counted loops that the IPU's loop control and addressing make free. A
/// loop whose latch ends in a conditional branch on `icmp(iv + step, invariant)` (or on `iv`),
/// with `iv` a header phi stepped by a constant, runs on the IPU as `brnzdec` (decrement a
/// counter register and branch while it is not zero: one instruction, the branch's cost) when
/// `iv` is used only to count and to address memory: its increment, the compare and the address
/// arithmetic derived from it cost nothing.
void foldLoopControl(const LoopInfo &loops, DenseSet<const Instruction *> &folded) {
  for (const Loop *loop : loops.getLoopsInPreorder()) {
    BasicBlock *latch = loop->getLoopLatch();
    if (!latch)
      continue;
    const auto *branch = dyn_cast<BranchInst>(latch->getTerminator());
    if (!branch || !branch->isConditional())
      continue;
    const auto *compare = dyn_cast<ICmpInst>(branch->getCondition());
    if (!compare || !compare->hasOneUse() || compare->getParent() != latch)
      continue;
    const Value *lhs = compare->getOperand(0), *rhs = compare->getOperand(1);
    const Value *counted = loop->isLoopInvariant(rhs) ? lhs : loop->isLoopInvariant(lhs) ? rhs : nullptr;
    if (!counted)
      continue;
    const PHINode *iv = dyn_cast<PHINode>(counted);
    const BinaryOperator *step = dyn_cast<BinaryOperator>(counted);
    if (step)
      iv = dyn_cast<PHINode>(step->getOperand(0));
    if (!iv || iv->getParent() != loop->getHeader() || iv->getBasicBlockIndex(latch) < 0)
      continue;
    if (!step)
      step = dyn_cast<BinaryOperator>(iv->getIncomingValueForBlock(latch));
    if (!step || iv->getIncomingValueForBlock(latch) != step || step->getOperand(0) != iv ||
        !isa<ConstantInt>(step->getOperand(1)) ||
        (step->getOpcode() != Instruction::Add && step->getOpcode() != Instruction::Sub))
      continue;
    SmallVector<const Instruction *, 8> derived;
    bool free = true;
    for (const User *user : iv->users())
      free = free && (user == step || user == compare ||
                      onlyAddresses(cast<Instruction>(user), iv, *loop, derived, 4));
    for (const User *user : step->users())
      free = free && (user == iv || user == compare ||
                      onlyAddresses(cast<Instruction>(user), step, *loop, derived, 4));
    if (!free)
      continue;
    folded.insert(compare);
    folded.insert(step);
    folded.insert(derived.begin(), derived.end());
  }
}

/// The own cost of a block: its instructions' costs, less the folded ones; false when a memory
/// intrinsic's length is only known at run time.
bool constantBlockCost(const BasicBlock &bb, const DataLayout &dl,
                       const DenseSet<const Instruction *> &folded, uint64_t &cost) {
  cost = 0;
  for (const Instruction &inst : bb) {
    Value *bytes = nullptr;
    const unsigned own = costOf(inst, dl, bytes);
    if (bytes)
      return false;
    cost += folded.count(&inst) ? 0 : own;
  }
  return true;
}

/// A counted loop whose count is added once, before it runs (issue 28): its blocks add nothing
/// themselves; its preheader adds (backedge-taken count + 1) x cost of one iteration.
struct HoistedLoop {
  Loop *loop;
  const SCEV *backedges; // exact backedge-taken count
  uint64_t perIteration; // the sum of its blocks' own costs
};

/// The loops whose count can be added once before they run with the same total, modulo 2^64, as
/// each block adding its own cost when it runs (the counter is a 64-bit sum: the product wraps as
/// the running sum does). Such a loop is innermost, in simplified form (a preheader, one latch),
/// leaves only from its latch, and every block of it dominates the latch: each block runs once an
/// iteration, and the header runs (backedge-taken count + 1) times, which scalar evolution
/// computes exactly; nothing in it reads the counter (aspen_codelet_scount and its builtins),
/// every call returns and does not throw (so an entered loop completes), and no memory
/// intrinsic's length is only known at run time. Any other loop keeps a running sum.
///
/// Why: the running sum is a 64-bit add reduction in the loop, and the vectoriser (which runs
/// after this pass) sizes its vectors by the widest type in the loop, so a loop over 32-bit
/// data ran at half the host's vector width (4 floats, not 8) because of the counter alone.
std::vector<HoistedLoop> planHoisting(Function &f, const LoopInfo &loops, ScalarEvolution &se,
                                      const DominatorTree &dt, const DataLayout &dl,
                                      const DenseSet<const Instruction *> &folded) {
  std::vector<HoistedLoop> plan;
  for (Loop *loop : loops.getLoopsInPreorder()) {
    if (!loop->isInnermost() || !loop->getLoopPreheader())
      continue;
    BasicBlock *latch = loop->getLoopLatch();
    if (!latch || loop->getExitingBlock() != latch)
      continue;
    bool simple = true;
    uint64_t perIteration = 0;
    for (BasicBlock *bb : loop->blocks()) {
      uint64_t cost = 0;
      simple = simple && dt.dominates(bb, latch) && constantBlockCost(*bb, dl, folded, cost);
      perIteration += cost;
      for (const Instruction &inst : *bb) {
        if (isa<InvokeInst>(inst) || isa<CallBrInst>(inst)) {
          simple = false;
        } else if (const auto *call = dyn_cast<CallInst>(&inst)) {
          const Function *callee = call->getCalledFunction();
          if (!call->doesNotThrow() || !call->willReturn() ||
              (callee && (callee->getName() == kScountFunction || callee->getName() == kScountLow ||
                          callee->getName() == kScountHigh)))
            simple = false;
        }
      }
      if (!simple)
        break;
    }
    if (!simple)
      continue;
    const SCEV *backedges = se.getBackedgeTakenCount(loop);
    if (isa<SCEVCouldNotCompute>(backedges) || !backedges->getType()->isIntegerTy())
      continue;
    SCEVExpander probe(se, dl, "aspen.trips");
    if (!probe.isSafeToExpandAt(backedges, loop->getLoopPreheader()->getTerminator()))
      continue;
    plan.push_back({loop, backedges, perIteration});
  }
  return plan;
}

/// Adds each hoisted loop's whole count in its preheader (after the preheader's own cost was
/// added: the code inserted here is not counted).
void emitHoisted(const std::vector<HoistedLoop> &plan, ScalarEvolution &se, const DataLayout &dl,
                 AllocaInst *counter) {
  Type *i64 = counter->getAllocatedType();
  SCEVExpander expander(se, dl, "aspen.trips");
  for (const HoistedLoop &h : plan) {
    if (h.perIteration == 0)
      continue;
    Instruction *at = h.loop->getLoopPreheader()->getTerminator();
    Value *backedges = expander.expandCodeFor(h.backedges, h.backedges->getType(), at);
    IRBuilder<> b(at);
    Value *trips = b.CreateAdd(b.CreateZExtOrTrunc(backedges, i64), ConstantInt::get(i64, 1));
    Value *total = b.CreateMul(trips, ConstantInt::get(i64, h.perIteration));
    b.CreateStore(b.CreateAdd(b.CreateLoad(i64, counter), total), counter);
  }
}

/// Whether a block belongs to a hoisted loop (its cost is in the loop's preheader's addition).
bool inHoistedLoop(const std::vector<HoistedLoop> &plan, const LoopInfo &loops, const BasicBlock &bb) {
  const Loop *loop = loops.getLoopFor(&bb);
  for (const HoistedLoop &h : plan)
    if (h.loop == loop)
      return true;
  return false;
}

/// ASPEN_CYCLECOUNT_VERIFY_HOIST=1 in clang's environment (tests and checks only; the codelet
/// cache does not key on it, so use it with a fresh ASPEN_CACHE_DIR): a function with hoisted
/// loops also counts every block as it runs and traps at an exit where the two counts differ.
bool verifyHoisting() {
  const char *v = std::getenv("ASPEN_CYCLECOUNT_VERIFY_HOIST");
  return v && *v && std::string(v) != "0";
}

/// At each exit marker pair (freeze of the counter, freeze of the check counter, both promoted):
/// traps when they differ.
void emitHoistChecks(Module &m, const std::vector<Instruction *> &exits,
                     const std::vector<Instruction *> &checks) {
  Function *trap = Intrinsic::getDeclaration(&m, Intrinsic::trap);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    IRBuilder<> b(exits[i]);
    Value *differs = b.CreateICmpNE(exits[i]->getOperand(0), checks[i]->getOperand(0));
    Instruction *then = SplitBlockAndInsertIfThen(differs, exits[i], true);
    IRBuilder<>(then).CreateCall(trap);
    checks[i]->eraseFromParent();
  }
}

/// Adds `count` to the running thread's counter, inline before a return:
///   off = aspen_codelet_cycle_offset;  if (off) *(u64 __seg_fs *)off += count;
/// The counter is an initial-exec thread-local of Aspen's runtime, at the same offset from
/// every thread's thread pointer (%fs on x86-64), which the runtime gives the library when it
/// loads it (0 until then: nothing is added).
void addToCounter(IRBuilder<> &b, Module &m, Value *count) {
  LLVMContext &ctx = m.getContext();
  Type *i64 = Type::getInt64Ty(ctx);
  auto *offsetVar = cast<GlobalVariable>(m.getOrInsertGlobal(kOffsetVariable, i64));
  offsetVar->setVisibility(GlobalValue::HiddenVisibility);
  Instruction *at = &*b.GetInsertPoint();
  Value *offset = b.CreateLoad(i64, offsetVar);
  Instruction *then = SplitBlockAndInsertIfThen(b.CreateIsNotNull(offset), at, false);
  IRBuilder<> t(then);
  Value *p = t.CreateIntToPtr(offset, PointerType::get(ctx, 257)); // x86-64: %fs-relative
  t.CreateStore(t.CreateAdd(t.CreateLoad(i64, p), count), p);
}

struct CycleCountPass : PassInfoMixin<CycleCountPass> {
  /// Whether counted loops may add their count once before they run (planHoisting): not at -O0,
  /// which vectorises nothing.
  bool hoist = true;
  explicit CycleCountPass(bool hoist = true) : hoist(hoist) {}

  PreservedAnalyses run(Function &f, FunctionAnalysisManager &am) {
    if (f.isDeclaration() || f.hasFnAttribute(kCountedAttribute))
      return PreservedAnalyses::all();
    // A builtin's host body (the runtime's call) is not the IPU's work: its callers price it.
    if (findBuiltinCost(f.getName().data(), f.getName().size()))
      return PreservedAnalyses::all();
    f.addFnAttr(kCountedAttribute);
    DenseSet<const Instruction *> folded;
    foldLoopControl(am.getResult<LoopAnalysis>(f), folded);
    // It now writes the runtime's counter: whatever was inferred about its memory no longer holds.
    f.setMemoryEffects(MemoryEffects::unknown());
    Module &m = *f.getParent();
    const DataLayout &dl = m.getDataLayout();
    LLVMContext &ctx = f.getContext();
    Type *i64 = Type::getInt64Ty(ctx);

    // The counter: an alloca promoted to SSA below.
    BasicBlock &entry = f.getEntryBlock();
    IRBuilder<> b(&entry, entry.getFirstInsertionPt());
    AllocaInst *counter = b.CreateAlloca(i64, nullptr, "aspen.cycles");
    b.CreateStore(ConstantInt::get(i64, 0), counter);
    // Loops counted once before they run; with ASPEN_CYCLECOUNT_VERIFY_HOIST, `counter` counts
    // every block as it runs and `hoisted` counts the new way, and exits compare them.
    const LoopInfo &loops = am.getResult<LoopAnalysis>(f);
    std::vector<HoistedLoop> plan;
    if (hoist && !f.hasOptNone())
      plan = planHoisting(f, loops, am.getResult<ScalarEvolutionAnalysis>(f),
                          am.getResult<DominatorTreeAnalysis>(f), dl, folded);
    AllocaInst *hoisted = plan.empty() ? nullptr : counter;
    if (!plan.empty() && verifyHoisting()) {
      hoisted = b.CreateAlloca(i64, nullptr, "aspen.cycles.hoisted");
      b.CreateStore(ConstantInt::get(i64, 0), hoisted);
    }

    std::vector<ReturnInst *> returns;
    std::vector<ResumeInst *> resumes;
    std::vector<CallInst *> readings; // calls to kScountFunction and its builtins
    for (BasicBlock &bb : f) {
      uint64_t cost = 0;
      std::vector<Value *> dynamic;
      for (Instruction &inst : bb) {
        if (&inst == counter || &inst == hoisted ||
            (inst.getParent() == &entry && isa<StoreInst>(inst) &&
             (cast<StoreInst>(inst).getPointerOperand() == counter ||
              cast<StoreInst>(inst).getPointerOperand() == hoisted)))
          continue;
        Value *bytes = nullptr;
        const unsigned own = costOf(inst, dl, bytes);
        cost += folded.count(&inst) ? 0 : own;
        if (bytes)
          dynamic.push_back(bytes);
        if (auto *call = dyn_cast<CallInst>(&inst)) {
          if (const Function *callee = call->getCalledFunction();
              callee && (callee->getName() == kScountFunction || callee->getName() == kScountLow ||
                         callee->getName() == kScountHigh))
            readings.push_back(call);
        }
        if (auto *r = dyn_cast<ReturnInst>(&inst))
          returns.push_back(r);
        else if (auto *r = dyn_cast<ResumeInst>(&inst))
          resumes.push_back(r);
      }
      if (cost == 0 && dynamic.empty())
        continue;
      // Into `counter` unless its loop adds its count before it runs (or verifying: always),
      // and, when verifying, into `hoisted` unless its loop adds its count before it runs.
      const bool inHoisted = hoisted && inHoistedLoop(plan, loops, bb);
      const bool verifying = hoisted && hoisted != counter;
      for (AllocaInst *into : {counter, verifying ? hoisted : nullptr}) {
        if (!into || (inHoisted && into == hoisted))
          continue;
        IRBuilder<> add(bb.getTerminator());
        Value *sum = add.CreateAdd(add.CreateLoad(i64, into), ConstantInt::get(i64, cost));
        for (Value *bytes : dynamic) // (bytes + 7) / 8 paced 64-bit moves
          sum = add.CreateAdd(
              sum, add.CreateLShr(add.CreateAdd(add.CreateZExtOrTrunc(bytes, i64), ConstantInt::get(i64, 7)),
                                  ConstantInt::get(i64, 3)));
        add.CreateStore(sum, into);
      }
    }
    if (hoisted)
      emitHoisted(plan, am.getResult<ScalarEvolutionAnalysis>(f), dl, hoisted);
    // The counter into a register first (only instructions were added so far, so the
    // dominator tree still holds): a placeholder call at each exit takes its final value;
    // then each placeholder becomes the addition to the thread's counter (new blocks).
    std::vector<Instruction *> exits;  // freeze(load counter): kept apart from the code's own
    std::vector<Instruction *> checks; // freeze(load hoisted), when verifying
    auto markExit = [&](Instruction *at) {
      IRBuilder<> fb(at);
      exits.push_back(cast<Instruction>(fb.CreateFreeze(fb.CreateLoad(i64, counter))));
      if (hoisted && hoisted != counter)
        checks.push_back(cast<Instruction>(fb.CreateFreeze(fb.CreateLoad(i64, hoisted))));
    };
    for (ReturnInst *r : returns)
      markExit(r);
    for (ResumeInst *r : resumes)
      markExit(r);
    // A reading of the counter: what the function counted before this block is added first,
    // and the function's count starts again from zero (this block's cost is added at its end).
    for (CallInst *call : readings) {
      markExit(call);
      IRBuilder<>(call).CreateStore(ConstantInt::get(i64, 0), counter);
      if (hoisted && hoisted != counter)
        IRBuilder<>(call).CreateStore(ConstantInt::get(i64, 0), hoisted);
    }
    DominatorTree &dt = am.getResult<DominatorTreeAnalysis>(f);
    AssumptionCache &ac = am.getResult<AssumptionAnalysis>(f);
    if (hoisted && hoisted != counter)
      PromoteMemToReg({counter, hoisted}, dt, &ac);
    else
      PromoteMemToReg({counter}, dt, &ac);
    emitHoistChecks(m, exits, checks);
    for (Instruction *exit : exits) {
      IRBuilder<> eb(exit);
      addToCounter(eb, m, exit->getOperand(0));
      exit->eraseFromParent();
    }
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; } // at -O0 too (functions marked optnone)
};

} // namespace

namespace aspen::cyclecount {
void registerWriteCheck(PassBuilder &pb); // WriteCheckPass.cpp
} // namespace aspen::cyclecount

extern "C" __attribute__((visibility("default"))) LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo
llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "AspenCycleCount", "1", [](PassBuilder &pb) {
            pb.registerVectorizerStartEPCallback(
                [](FunctionPassManager &fpm, OptimizationLevel) { fpm.addPass(CycleCountPass()); });
            // -O0 runs no vectoriser: count at the end of its pipeline instead.
            pb.registerOptimizerLastEPCallback([](ModulePassManager &mpm, OptimizationLevel level) {
              if (level == OptimizationLevel::O0)
                mpm.addPass(createModuleToFunctionPassAdaptor(CycleCountPass(false)));
            });
            // Checked writes into tile memory, after the count (its checks are not counted).
            registerWriteCheck(pb);
          }};
}
