// Copyright (c) Aspen contributors.
// Vertex code runs in the host process, on TBB's threads. A fault in it (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, also a write into a tile memory guard) must stop the
// run with a named error, not the process: process-wide handlers, installed
// once, jump back to a recovery point that the executor sets per chunk of tiles
// on the thread running them, and chain to the handler they replaced when the
// faulting thread is not running vertex code (a sanitizer's, or the default).
// The same recovery point serves the run bound's watchdog (aspen.maxRunSeconds),
// which signals threads stuck in compute(). docs/tile-model.md.
#pragma once

#include <atomic>
#include <csetjmp>
#include <cstdint>
#include <string>

namespace aspen::rt {

/// Where a fault in vertex code resumes: a sigjmp_buf, set by `sigsetjmp(point, 0)` (no
/// signal mask saved, so no system call: the handlers run with SA_NODEFER, and a jump
/// out of one leaves the mask as it was) and jumped to by `siglongjmp`, in every build.
/// The C library's jump restores the callee-saved registers as they were when the point
/// was set, which sanitizers understand (ThreadSanitizer repairs its shadow call stack
/// only for the C library's jumps). As C requires, a non-volatile local of the frame
/// setting the point that changes after `sigsetjmp` has no defined value after the jump:
/// the one caller (Executor.cpp, the chunk loop) changes none; a new one must make such
/// locals `volatile`. `__builtin_setjmp`, used before in Release builds, saves three
/// words and relies on the compiler to keep nothing live in registers across it; under
/// AddressSanitizer clang did (a fault's jump back found the recovering frame's spilled
/// closure pointer overwritten), a latent risk in any clang or GCC build. Measured
/// against it (session 26, docs/cost-model.md): superstep and small program +1.4 % on
/// average over three alternating pairs, dispatch within noise.
#if defined(__SANITIZE_THREAD__)
#define ASPEN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ASPEN_TSAN 1
#endif
#endif
using RecoveryPoint = sigjmp_buf;
#define ASPEN_SET_RECOVERY_POINT(point) sigsetjmp(point, 0)

/// What stopped vertex code on a thread.
struct VertexFault {
  int signal = 0; // 0: nothing
  int code = 0;   // siginfo's si_code
  const void *address = nullptr;
  bool timeout = false;       // stopped by the watchdog, not a fault
  bool stackOverflow = false; // the fault address lies at the end of the thread's stack
  bool otherTile = false;     // a write into another tile's memory, stopped by TileWriteCheck
  bool workerStack = false;   // (with stackOverflow) the worker stack ran over, not the thread's
  bool checkedWrite = false;  // a write into another tile, stopped by the code's write check
};

/// aspen.checkTileWrites: while a compute step runs under it (on one thread),
/// every tile's memory is read-only except the one tile whose vertices run.
/// The first write to a tile faults; the handler makes that tile writable (and
/// the one before it read-only again) when the writer is a vertex of that tile
/// or the executor itself, and stops the vertex otherwise: the write into
/// another tile never happens. docs/tile-model.md.
struct TileWriteCheck {
  std::uint8_t *first = nullptr; // tile 0's first page
  std::uint64_t stride = 0;      // bytes from one tile's first page to the next's
  std::uint64_t pages = 0;       // bytes of a tile's pages (the stride less its guard)
  unsigned numTiles = 0;
  // The compute step: vertex i runs on tiles[k] for tileBegin[k] <= i < tileBegin[k + 1].
  const std::uint32_t *tileBegin = nullptr;
  const std::uint32_t *tiles = nullptr;
  std::size_t numStepTiles = 0;
  long open = -1; // the tile now writable, or -1

  /// Makes `tile` the writable one (async-signal-safe); false if the host refuses.
  bool openTile(unsigned tile);
  /// The tile running vertex `vertex` of the step (async-signal-safe).
  std::uint32_t tileOf(std::uint32_t vertex) const;
};

struct BuiltinStep;

/// One host thread's state while it runs vertex code. Reached through
/// `VertexThread::current()`; the signal handlers read it.
struct VertexThread;
/// The calling thread's record, once made.
extern __thread VertexThread *aspenVertexThread __attribute__((tls_model("initial-exec")));

struct VertexThread {
  static constexpr std::uint32_t kNoVertex = ~0u;

  /// This thread's record (made on first use: registers the thread with the
  /// watchdog and gives it an alternate signal stack, so that a stack overflow
  /// can be caught).
  static VertexThread &current() {
    VertexThread *t = aspenVertexThread;
    return t ? *t : make();
  }
  static VertexThread &make();

  /// The recovery point of the chunk this thread runs, or null.
  RecoveryPoint *recover = nullptr;
  /// The vertex running (index in its compute step) or kNoVertex: a fault in
  /// vertex code is caught only while this is set. One store per vertex.
  std::atomic<std::uint32_t> vertex{kNoVertex};
  /// The run's stop request (aspen.maxRunSeconds), while this thread runs its tiles.
  std::atomic<const std::atomic<bool> *> stop{nullptr};
  /// How many times the watchdog has signalled this thread for the current stop.
  std::atomic<std::uint32_t> kicks{0};
  /// Set by the handler before it jumps to `recover`.
  VertexFault fault;
  /// Undoes per-tile setup around the running tile's vertices (state swapped
  /// in, a lock taken) when a fault abandons the tile: whoever does such setup
  /// sets this (and clears it when undone); the recovery point calls it once.
  void (*abandon)(void *) = nullptr;
  void *abandonArgument = nullptr;
  /// Set while this thread runs a compute step under aspen.checkTileWrites.
  TileWriteCheck *writeCheck = nullptr;
  /// What the IPU builtins read (TileBuiltins.hpp): the running step (set per tile, null
  /// outside vertex code), the index of the running tile in it, and the running compute()
  /// call's workerId and the thread's cycle counter when it began (set per call).
  const BuiltinStep *builtins = nullptr;
  std::uint32_t builtinTile = 0;
  std::uint32_t builtinWorker = 0;
  std::uint64_t builtinCounterStart = 0;
  std::uint64_t builtinBefore = 0; // the tile's time before the running vertex (counted steps)

  // The thread, and its stack (for telling an overflow).
  unsigned long self = 0; // pthread_t
  std::uintptr_t stackLow = 0, stackHigh = 0;
  /// The stack vertex code runs on (runOnWorkerStack): `workerStackBytes`
  /// usable bytes above an inaccessible guard of kWorkerStackGuard bytes at
  /// `workerStackGuard`; 0 / null until first used.
  std::uintptr_t workerStackGuard = 0;
  std::size_t workerStackBytes = 0;
  static constexpr std::size_t kWorkerStackGuard = 64 * 1024;

  /// Starts a chunk: faults now jump to `point`; `stopRequest` may be null.
  void enter(RecoveryPoint *point, const std::atomic<bool> *stopRequest) {
    recover = point;
    if (stopRequest)
      kicks.store(0, std::memory_order_relaxed);
    stop.store(stopRequest, std::memory_order_relaxed);
  }
  /// After a jump to the recovery point: runs and clears `abandon`.
  void abandonTile() {
    if (void (*undo)(void *) = abandon) {
      abandon = nullptr;
      undo(abandonArgument);
    }
  }
  /// Ends a chunk (also after a jump to its recovery point).
  void leave() {
    vertex.store(kNoVertex, std::memory_order_relaxed);
    stop.store(nullptr, std::memory_order_relaxed);
    recover = nullptr;
    builtins = nullptr;
  }
};

/// Whether vertex code runs on a worker stack of its own: x86-64 builds
/// without AddressSanitizer or ThreadSanitizer (which track the stacks they know).
bool workerStacksSupported();

/// Runs `fn(argument)` on the calling thread's worker stack of `bytes` usable
/// bytes (made, or remade at a new size, on first use), or on the thread's own
/// stack when `bytes` is 0 or worker stacks are not supported. A fault below the
/// stack's end is reported as its overflow. A jump out of `fn` (to a recovery
/// point set before the call) leaves the worker stack as a return would.
void runOnWorkerStack(VertexThread &thread, std::size_t bytes, void (*fn)(void *), void *argument);

/// Puts the handlers in place unless they are (the executor calls this at every
/// load): a handler someone installed since is kept as the one to chain to.
void installVertexFaultHandlers();

/// Records the executable segments of the shared object holding `code` (a
/// vertex type's entry point), once per object: the watchdog stops a thread
/// inside compute() only while it executes there, not inside a C library call
/// that may hold a lock (unless that lasts, below).
void registerVertexCode(const void *code);

/// "SIGFPE (integer divide by zero or overflow)", "SIGSEGV at 0x10 (address not mapped)", ...
std::string describeSignal(const VertexFault &fault);

/// While alive, a watchdog that sets `stop` after `seconds` of host time, then
/// signals every thread running vertex code under that request until the
/// watchdog is destroyed, so that a compute() that never returns is stopped.
class RunWatchdog {
public:
  RunWatchdog(double seconds, std::atomic<bool> &stop);
  ~RunWatchdog();
  RunWatchdog(const RunWatchdog &) = delete;
  RunWatchdog &operator=(const RunWatchdog &) = delete;

private:
  struct State;
  State *state_;
};

} // namespace aspen::rt
