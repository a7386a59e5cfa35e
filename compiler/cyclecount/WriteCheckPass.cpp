// Copyright (c) Aspen contributors.
// Checked writes (docs/tile-model.md, "Writes into other tiles: checked writes"): a second
// pass of the codelet plugin that stops a vertex writing into another tile's memory before
// the write happens. Every store, atomic read-modify-write, compare-exchange and
// llvm.memcpy / memmove / memset whose destination is not provably the function's own
// stack slot or a global of the library is preceded by a range check against the running
// thread's record in Aspen's runtime (an initial-exec thread-local, `TileWriteRange` in
// VertexLibrary.hpp, at the offset the runtime gives the library when it loads it):
//
//   entry:  off = aspen_codelet_write_range_offset
//           own, ownBytes, arena, arenaBytes = off ? %fs:[off .. off + 32) : 0
//   store:  if ((a - own) >= ownBytes && (a - arena) < arenaBytes)   // unsigned; not taken
//             aspen.write.check(a)    // cold, internal: checks again and calls
//                                     // aspen_codelet_tile_write_fault(a), which jumps
//                                     // to the fault's recovery point
//
// `own` covers the running tile's pages and the guard regions on either side (a write
// there is the tile's own, or faults on the guard as before); `arena` is all of the
// engine's tile memory. Outside a vertex `arenaBytes` is 0 and nothing is stopped.
//
// A store in a loop whose address is affine in the loop with a computable maximum trip
// count is checked in the preheader instead: its first and last addresses (every address
// between lies between them) both in `own`, or the whole range below or above the arena
// (host memory); if not, a loop-invariant flag makes every iteration take the exact slow
// check; else each iteration tests the flag.
//
// Stores through one base pointer at constant offsets within one basic block are checked
// once, at the first of them: if that address lies in the running tile's pages, every
// other within kGroupSpan bytes of it lies in the tile or in a guard region (which
// faults); if it lies outside the arena, they lie outside it or in its outer guards. The
// later stores run only after the first has (same block), so a skipped check never lets a
// write through that the first would not have stopped.
//
// Runs last in the optimisation pipeline (after the vectoriser: a vector store is checked
// once; and after the cycle count, so the checks are not counted as the code's cycles).
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/ModRef.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/Transforms/Utils/ScalarEvolutionExpander.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

using namespace llvm;

namespace {

constexpr const char *kOffsetVariable = "aspen_codelet_write_range_offset";
constexpr const char *kFaultFunction = "aspen_codelet_tile_write_fault";
/// Defined in every module the check ran over (even one with nothing to check): the codelet
/// compiler looks for it in the objects to decide whether the library says it checks writes.
constexpr const char *kCheckedMarker = "aspen_codelet_write_checked";
constexpr const char *kCheckedAttribute = "aspen-write-checked";
/// Stores at constant offsets from a checked store's address within this many bytes (less
/// the widest store) share its check: the runtime's guard regions are 64 KiB.
constexpr int64_t kGroupSpan = 60 * 1024;

/// Whether a write through `p` can only reach the function's stack or the library's own
/// data (never tile memory): an alloca or a global behind constant or variable offsets.
bool provablyNotTileMemory(const Value *p) {
  const Value *object = getUnderlyingObject(p, 12);
  return isa<AllocaInst>(object) || isa<GlobalVariable>(object);
}

/// What one instrumented write needs: its address and, for a memory intrinsic, its length.
struct Write {
  Instruction *at;
  Value *address;
  Value *length = nullptr; // memset / memcpy / memmove: bytes
};

/// The module's out-of-line check (internal, cold): reads the thread's range itself and
/// calls the fault function for an address in the arena outside the running tile.
///   void aspen.write.check(ptr a) {
///     off = aspen_codelet_write_range_offset; if (!off) return;
///     if ((a - %fs:[off]) >= %fs:[off+8] && (a - %fs:[off+16]) < %fs:[off+24]) fault(a);
///   }
Function *slowCheck(Module &m) {
  constexpr const char *kName = "aspen.write.check";
  if (Function *f = m.getFunction(kName))
    return f;
  LLVMContext &ctx = m.getContext();
  Type *i64 = Type::getInt64Ty(ctx);
  PointerType *ptr = PointerType::get(ctx, 0);
  Function *f = Function::Create(FunctionType::get(Type::getVoidTy(ctx), {ptr}, false),
                                 GlobalValue::InternalLinkage, kName, m);
  // preserve_most: the caller keeps its values in any general-purpose register across the
  // call, so a function with a check in its loop needs no callee-saved registers saved in
  // its prologue for it (which cost every call of a small vertex a few nanoseconds).
  f->setCallingConv(CallingConv::PreserveMost);
  f->addFnAttr(Attribute::Cold);
  f->addFnAttr(Attribute::NoInline);
  f->addFnAttr(kCheckedAttribute);
  f->addFnAttr("aspen-counted");
  FunctionCallee fault = m.getOrInsertFunction(kFaultFunction, Type::getVoidTy(ctx), ptr);
  if (auto *fn = dyn_cast<Function>(fault.getCallee())) {
    fn->setVisibility(GlobalValue::HiddenVisibility);
    fn->addFnAttr(Attribute::Cold);
    fn->addFnAttr(Attribute::NoInline);
  }
  auto *offsetVar = cast<GlobalVariable>(m.getOrInsertGlobal(kOffsetVariable, i64));
  offsetVar->setVisibility(GlobalValue::HiddenVisibility);
  BasicBlock *entry = BasicBlock::Create(ctx, "entry", f);
  BasicBlock *read = BasicBlock::Create(ctx, "read", f);
  BasicBlock *inArena = BasicBlock::Create(ctx, "arena", f);
  BasicBlock *stop = BasicBlock::Create(ctx, "stop", f);
  BasicBlock *done = BasicBlock::Create(ctx, "done", f);
  IRBuilder<> b(entry);
  Value *offset = b.CreateLoad(i64, offsetVar);
  b.CreateCondBr(b.CreateIsNotNull(offset), read, done);
  b.SetInsertPoint(read);
  PointerType *tls = PointerType::get(ctx, 257); // x86-64: %fs-relative
  auto field = [&](unsigned i) {
    return b.CreateLoad(i64, b.CreateIntToPtr(b.CreateAdd(offset, ConstantInt::get(i64, 8 * i)), tls));
  };
  Value *a = b.CreatePtrToInt(f->getArg(0), i64);
  b.CreateCondBr(b.CreateICmpUGE(b.CreateSub(a, field(0)), field(1)), inArena, done);
  b.SetInsertPoint(inArena);
  b.CreateCondBr(b.CreateICmpULT(b.CreateSub(a, field(2)), field(3)), stop, done);
  b.SetInsertPoint(stop);
  b.CreateCall(fault, {f->getArg(0)});
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return f;
}

/// A store in a loop whose address is affine in the loop ({start,+,step}) with a computable
/// (maximum) number of iterations: its addresses are checked once, in the loop's preheader.
struct Hoisted {
  const Loop *loop;
  const SCEV *first, *last; // addresses at the first and the last iteration
};

/// Marks the module as compiled with the write check (kCheckedMarker).
struct WriteCheckMarker : PassInfoMixin<WriteCheckMarker> {
  PreservedAnalyses run(Module &m, ModuleAnalysisManager &) {
    if (m.getNamedGlobal(kCheckedMarker))
      return PreservedAnalyses::all();
    Type *i8 = Type::getInt8Ty(m.getContext());
    auto *marker =
        new GlobalVariable(m, i8, true, GlobalValue::WeakODRLinkage, ConstantInt::get(i8, 1), kCheckedMarker);
    marker->setVisibility(GlobalValue::HiddenVisibility);
    appendToCompilerUsed(m, {marker});
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

struct WriteCheckPass : PassInfoMixin<WriteCheckPass> {
  PreservedAnalyses run(Function &f, FunctionAnalysisManager &am) {
    if (f.isDeclaration() || f.hasFnAttribute(kCheckedAttribute) || f.hasFnAttribute(Attribute::Naked) ||
        f.getName() == kFaultFunction)
      return PreservedAnalyses::all();
    f.addFnAttr(kCheckedAttribute);
    Module &m = *f.getParent();
    const DataLayout &dl = m.getDataLayout();
    LoopInfo &loops = am.getResult<LoopAnalysis>(f);
    ScalarEvolution &se = am.getResult<ScalarEvolutionAnalysis>(f);

    std::vector<Write> writes;
    std::vector<std::optional<Hoisted>> hoisted;
    for (BasicBlock &bb : f) {
      // Base pointer -> the constant offset of the store in this block that checks it.
      std::map<const Value *, int64_t> checked;
      const Loop *loop = loops.getLoopFor(&bb);
      for (Instruction &inst : bb) {
        Value *address = nullptr, *length = nullptr;
        uint64_t bytes = 0;
        if (auto *s = dyn_cast<StoreInst>(&inst)) {
          address = s->getPointerOperand();
          bytes = dl.getTypeStoreSize(s->getValueOperand()->getType()).getKnownMinValue();
        } else if (auto *r = dyn_cast<AtomicRMWInst>(&inst)) {
          address = r->getPointerOperand();
          bytes = dl.getTypeStoreSize(r->getValOperand()->getType()).getKnownMinValue();
        } else if (auto *x = dyn_cast<AtomicCmpXchgInst>(&inst)) {
          address = x->getPointerOperand();
          bytes = dl.getTypeStoreSize(x->getNewValOperand()->getType()).getKnownMinValue();
        } else if (auto *mi = dyn_cast<AnyMemIntrinsic>(&inst)) {
          address = mi->getRawDest();
          length = mi->getLength();
        } else {
          continue;
        }
        if (address->getType()->getPointerAddressSpace() != 0 || provablyNotTileMemory(address))
          continue;
        if (!length) {
          APInt offset(dl.getIndexTypeSizeInBits(address->getType()), 0);
          const Value *base = address->stripAndAccumulateConstantOffsets(dl, offset, true);
          if (offset.getSignificantBits() <= 48 && bytes < 4096) {
            const int64_t at = offset.getSExtValue();
            auto it = checked.find(base);
            if (it != checked.end() && at - it->second + int64_t(bytes) <= kGroupSpan &&
                it->second - at <= kGroupSpan)
              continue;
            checked[base] = at;
          }
        }
        // In a loop: affine in it, with a computable maximum trip count?
        std::optional<Hoisted> h;
        if (!length && loop && loop->getLoopPreheader() && bytes < 4096) {
          const auto *rec = dyn_cast<SCEVAddRecExpr>(se.getSCEV(address));
          const SCEV *count = se.getSymbolicMaxBackedgeTakenCount(loop);
          if (rec && rec->getLoop() == loop && rec->isAffine() && !isa<SCEVCouldNotCompute>(count)) {
            const SCEV *last = rec->evaluateAtIteration(count, se);
            SCEVExpander probe(se, dl, "aspen.wr");
            Instruction *at = loop->getLoopPreheader()->getTerminator();
            if (probe.isSafeToExpandAt(rec->getStart(), at) && probe.isSafeToExpandAt(last, at))
              h = Hoisted{loop, rec->getStart(), last};
          }
        }
        writes.push_back({&inst, address, length});
        hoisted.push_back(h);
      }
    }
    if (writes.empty())
      return PreservedAnalyses::all();

    LLVMContext &ctx = f.getContext();
    Type *i64 = Type::getInt64Ty(ctx);
    PointerType *ptr = PointerType::get(ctx, 0);
    Function *check = slowCheck(m);

    // The running tile's range, read once at entry (after the entry block's allocas, which
    // must stay in the entry block).
    BasicBlock &entry = f.getEntryBlock();
    BasicBlock::iterator split = entry.getFirstInsertionPt();
    while (isa<AllocaInst>(&*split))
      ++split;
    IRBuilder<> b(&entry, split);
    auto *offsetVar = cast<GlobalVariable>(m.getOrInsertGlobal(kOffsetVariable, i64));
    offsetVar->setVisibility(GlobalValue::HiddenVisibility);
    Value *offset = b.CreateLoad(i64, offsetVar, "aspen.wr.offset");
    PointerType *tls = PointerType::get(ctx, 257); // x86-64: %fs-relative
    Value *range[4];                               // own, ownBytes, arena, arenaBytes
    {
      // off ? %fs:[off .. off + 32) : 0  (all 0: every address goes to the slow check, which
      // finds no range and returns)
      Instruction *then = SplitBlockAndInsertIfThen(b.CreateIsNotNull(offset), &*b.GetInsertPoint(), false,
                                                    MDBuilder(ctx).createBranchWeights(1000, 1));
      BasicBlock *loadBlock = then->getParent();
      BasicBlock *rest = loadBlock->getSingleSuccessor();
      IRBuilder<> lb(then);
      Value *fields[4];
      for (unsigned i = 0; i < 4; ++i)
        fields[i] =
            lb.CreateLoad(i64, lb.CreateIntToPtr(lb.CreateAdd(offset, ConstantInt::get(i64, 8 * i)), tls));
      IRBuilder<> pb(&*rest->begin());
      for (unsigned i = 0; i < 4; ++i) {
        PHINode *phi = pb.CreatePHI(i64, 2, "aspen.wr");
        phi->addIncoming(fields[i], loadBlock);
        phi->addIncoming(ConstantInt::get(i64, 0), &entry);
        range[i] = phi;
      }
    }
    Value *own = range[0], *ownBytes = range[1], *arena = range[2], *arenaBytes = range[3];
    MDNode *unlikely = MDBuilder(ctx).createBranchWeights(1, 1000);
    // Outside the running tile's range (own pages and guards): the slow check decides.
    auto outside = [&](IRBuilder<> &cb, Value *address) {
      return cb.CreateICmpUGE(cb.CreateSub(cb.CreatePtrToInt(address, i64), own), ownBytes);
    };
    // Outside it and inside the arena: the slow check (which stops the write). Both
    // comparisons inline, so that a write to host memory (a thread's scratch buffer)
    // costs no call.
    auto checkAt = [&](Instruction *before, Value *address) {
      IRBuilder<> cb(before);
      Instruction *second = SplitBlockAndInsertIfThen(outside(cb, address), before, false, unlikely);
      IRBuilder<> sb(second);
      Value *inArena = sb.CreateICmpULT(sb.CreateSub(sb.CreatePtrToInt(address, i64), arena), arenaBytes);
      Instruction *slow = SplitBlockAndInsertIfThen(inArena, second, false, unlikely);
      IRBuilder<>(slow).CreateCall(check, {address})->setCallingConv(CallingConv::PreserveMost);
    };

    // Hoisted checks: one flag per loop, set in its preheader when the first or the last
    // address of one of its affine stores lies outside the running tile's range; the stores
    // then take the slow check at every iteration (exact), else none.
    std::map<const Loop *, Value *> loopFlag;
    for (std::size_t i = 0; i < writes.size(); ++i) {
      if (!hoisted[i])
        continue;
      const Hoisted &h = *hoisted[i];
      Instruction *at = h.loop->getLoopPreheader()->getTerminator();
      SCEVExpander expander(se, dl, "aspen.wr");
      Value *first = expander.expandCodeFor(h.first, ptr, at);
      Value *last = expander.expandCodeFor(h.last, ptr, at);
      IRBuilder<> pb(at);
      // Fine when both ends lie in the running tile's range, or the whole range lies below
      // or above the arena (host memory: a thread's scratch buffer, the heap).
      Value *a0 = pb.CreatePtrToInt(first, i64), *a1 = pb.CreatePtrToInt(last, i64);
      Value *lo = pb.CreateSelect(pb.CreateICmpULT(a0, a1), a0, a1);
      Value *hi = pb.CreateSelect(pb.CreateICmpULT(a0, a1), a1, a0);
      Value *inOwn = pb.CreateAnd(pb.CreateNot(outside(pb, first)), pb.CreateNot(outside(pb, last)));
      Value *below = pb.CreateICmpULT(hi, arena);
      Value *above =
          pb.CreateAnd(pb.CreateICmpUGE(lo, arena), pb.CreateICmpUGE(pb.CreateSub(lo, arena), arenaBytes));
      Value *bad = pb.CreateNot(pb.CreateOr(inOwn, pb.CreateOr(below, above)));
      Value *&flag = loopFlag[h.loop];
      flag = flag ? pb.CreateOr(flag, bad) : bad;
    }
    for (std::size_t i = 0; i < writes.size(); ++i) {
      const Write &w = writes[i];
      if (hoisted[i]) {
        IRBuilder<> cb(w.at);
        Instruction *slow = SplitBlockAndInsertIfThen(loopFlag[hoisted[i]->loop], w.at, false, unlikely);
        IRBuilder<>(slow).CreateCall(check, {w.address})->setCallingConv(CallingConv::PreserveMost);
      } else if (w.length) {
        // The first and the last byte, when there are any bytes.
        IRBuilder<> lb2(w.at);
        Value *n = lb2.CreateZExtOrTrunc(w.length, i64);
        Instruction *body = SplitBlockAndInsertIfThen(lb2.CreateIsNotNull(n), w.at, false);
        checkAt(body, w.address);
        IRBuilder<> eb(body);
        Value *last =
            eb.CreateGEP(Type::getInt8Ty(ctx), w.address, eb.CreateSub(n, ConstantInt::get(i64, 1)));
        checkAt(body, last);
      } else {
        checkAt(w.at, w.address);
      }
    }
    // It now calls the runtime's fault function and reads its thread-local.
    f.setMemoryEffects(MemoryEffects::unknown());
    return PreservedAnalyses::none();
  }
  static bool isRequired() { return true; }
};

} // namespace

namespace aspen::cyclecount {

/// Adds the write check to `pb`'s pipelines, unless ASPEN_WRITE_CHECK=0 (the codelet
/// compiler puts the setting in the codelet cache's key).
void registerWriteCheck(PassBuilder &pb) {
  const char *setting = std::getenv("ASPEN_WRITE_CHECK");
  if (setting && std::strcmp(setting, "0") == 0)
    return;
  pb.registerOptimizerLastEPCallback([](ModulePassManager &mpm, OptimizationLevel) {
    mpm.addPass(WriteCheckMarker());
    mpm.addPass(createModuleToFunctionPassAdaptor(WriteCheckPass()));
  });
}

} // namespace aspen::cyclecount
