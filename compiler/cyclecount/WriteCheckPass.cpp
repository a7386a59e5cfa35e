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
//   store:  if ((a - own) >= ownBytes && (a - arena) < arenaBytes)
//             aspen_codelet_tile_write_fault(a)   // cold; jumps to the fault's recovery point
//
// `own` covers the running tile's pages and the guard regions on either side (a write
// there is the tile's own, or faults on the guard as before); `arena` is all of the
// engine's tile memory. Outside a vertex `arenaBytes` is 0 and nothing is stopped.
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

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

using namespace llvm;

namespace {

constexpr const char *kOffsetVariable = "aspen_codelet_write_range_offset";
constexpr const char *kFaultFunction = "aspen_codelet_tile_write_fault";
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

struct WriteCheckPass : PassInfoMixin<WriteCheckPass> {
  PreservedAnalyses run(Function &f, FunctionAnalysisManager &) {
    if (f.isDeclaration() || f.hasFnAttribute(kCheckedAttribute) || f.hasFnAttribute(Attribute::Naked) ||
        f.getName() == kFaultFunction)
      return PreservedAnalyses::all();
    f.addFnAttr(kCheckedAttribute);
    Module &m = *f.getParent();
    const DataLayout &dl = m.getDataLayout();

    std::vector<Write> writes;
    for (BasicBlock &bb : f) {
      // Base pointer -> the constant offset of the store in this block that checks it.
      std::map<const Value *, int64_t> checked;
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
        writes.push_back({&inst, address, length});
      }
    }
    if (writes.empty())
      return PreservedAnalyses::all();

    LLVMContext &ctx = f.getContext();
    Type *i64 = Type::getInt64Ty(ctx);
    PointerType *ptr = PointerType::get(ctx, 0);

    // The running thread's range, read once at entry (after the entry block's allocas, which
    // must stay in the entry block).
    BasicBlock &entry = f.getEntryBlock();
    BasicBlock::iterator split = entry.getFirstInsertionPt();
    while (isa<AllocaInst>(&*split))
      ++split;
    IRBuilder<> b(&entry, split);
    auto *offsetVar = cast<GlobalVariable>(m.getOrInsertGlobal(kOffsetVariable, i64));
    offsetVar->setVisibility(GlobalValue::HiddenVisibility);
    Value *offset = b.CreateLoad(i64, offsetVar, "aspen.wr.offset");
    Instruction *then = SplitBlockAndInsertIfThen(b.CreateIsNotNull(offset), &*b.GetInsertPoint(), false,
                                                  MDBuilder(ctx).createBranchWeights(1000, 1));
    BasicBlock *loadBlock = then->getParent();
    BasicBlock *rest = loadBlock->getSingleSuccessor();
    IRBuilder<> lb(then);
    PointerType *tls = PointerType::get(ctx, 257); // x86-64: %fs-relative
    Value *fields[4];
    for (unsigned i = 0; i < 4; ++i) {
      Value *p = lb.CreateIntToPtr(lb.CreateAdd(offset, ConstantInt::get(i64, 8 * i)), tls);
      fields[i] = lb.CreateLoad(i64, p);
    }
    IRBuilder<> pb(&*rest->begin());
    Value *range[4];
    for (unsigned i = 0; i < 4; ++i) {
      PHINode *phi = pb.CreatePHI(i64, 2, "aspen.wr");
      phi->addIncoming(fields[i], loadBlock);
      phi->addIncoming(ConstantInt::get(i64, 0), &entry);
      range[i] = phi;
    }
    Value *own = range[0], *ownBytes = range[1], *arena = range[2], *arenaBytes = range[3];

    FunctionCallee fault = m.getOrInsertFunction(kFaultFunction, Type::getVoidTy(ctx), ptr);
    if (auto *fn = dyn_cast<Function>(fault.getCallee())) {
      fn->setVisibility(GlobalValue::HiddenVisibility);
      fn->addFnAttr(Attribute::Cold);
      fn->addFnAttr(Attribute::NoInline);
    }
    MDNode *unlikely = MDBuilder(ctx).createBranchWeights(1, 1000);
    // if ((a - own) >= ownBytes && (a - arena) < arenaBytes) fault(a)
    auto check = [&](Instruction *before, Value *address) {
      IRBuilder<> cb(before);
      Value *a = cb.CreatePtrToInt(address, i64);
      Value *outside = cb.CreateICmpUGE(cb.CreateSub(a, own), ownBytes);
      Instruction *second = SplitBlockAndInsertIfThen(outside, before, false, unlikely);
      IRBuilder<> sb(second);
      Value *inArena = sb.CreateICmpULT(sb.CreateSub(a, arena), arenaBytes);
      Instruction *third = SplitBlockAndInsertIfThen(inArena, second, false, unlikely);
      IRBuilder<> fb(third);
      fb.CreateCall(fault, {fb.CreateIntToPtr(a, ptr)});
    };
    for (const Write &w : writes) {
      if (w.length) {
        // The first and the last byte, when there are any bytes.
        IRBuilder<> lb2(w.at);
        Value *n = lb2.CreateZExtOrTrunc(w.length, i64);
        Instruction *body = SplitBlockAndInsertIfThen(lb2.CreateIsNotNull(n), w.at, false);
        check(body, w.address);
        IRBuilder<> eb(body);
        Value *last =
            eb.CreateGEP(Type::getInt8Ty(ctx), w.address, eb.CreateSub(n, ConstantInt::get(i64, 1)));
        check(body, last);
      } else {
        check(w.at, w.address);
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
    mpm.addPass(createModuleToFunctionPassAdaptor(WriteCheckPass()));
  });
}

} // namespace aspen::cyclecount
