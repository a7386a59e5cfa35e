// Copyright (c) Aspen contributors.
// The plain siglongjmp, not glibc's checked one (_FORTIFY_SOURCE makes it __longjmp_chk): a
// checked write jumps back from a worker stack to the thread's own, outside any signal
// stack, which the check would take for a jump into a frame not yet made.
#undef _FORTIFY_SOURCE
#include "VertexFaults.hpp"

#include "codelets/VertexLibrary.hpp"

#include "util/Log.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <thread>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

namespace aspen::rt {

namespace {

/// The signal the watchdog sends to a thread stuck in vertex code.
int stopSignal() {
  return SIGRTMIN + 7;
}

/// Every thread that has run vertex code, for the watchdog (guarded by its mutex).
struct Registry {
  std::mutex mutex;
  std::vector<VertexThread *> threads;
};
Registry &registry() {
  static Registry *r = new Registry; // never destroyed: threads may exit after static destructors
  return *r;
}

constexpr std::size_t kAltStackBytes = 64 * 1024;

/// Owns a thread's record and its alternate signal stack; unregisters at thread exit.
struct ThreadRecord {
  VertexThread thread;
  std::unique_ptr<char[]> altStack;
  ThreadRecord() {
    thread.self = static_cast<unsigned long>(::pthread_self());
    pthread_attr_t attr;
    if (::pthread_getattr_np(::pthread_self(), &attr) == 0) {
      void *low = nullptr;
      std::size_t size = 0;
      if (::pthread_attr_getstack(&attr, &low, &size) == 0) {
        thread.stackLow = reinterpret_cast<std::uintptr_t>(low);
        thread.stackHigh = thread.stackLow + size;
      }
      ::pthread_attr_destroy(&attr);
    }
    // A handler needs a stack of its own to report an overflow of the thread's
    // stack; a thread that has one (a sanitizer's) keeps it.
    stack_t old{};
    if (::sigaltstack(nullptr, &old) == 0 && (old.ss_flags & SS_DISABLE)) {
      altStack.reset(new char[kAltStackBytes]);
      stack_t ss{};
      ss.ss_sp = altStack.get();
      ss.ss_size = kAltStackBytes;
      if (::sigaltstack(&ss, nullptr) != 0)
        altStack.reset();
    }
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.threads.push_back(&thread);
    aspenVertexThread = &thread;
  }
  ~ThreadRecord() {
    if (thread.workerStackGuard)
      ::munmap(reinterpret_cast<void *>(thread.workerStackGuard),
               VertexThread::kWorkerStackGuard + thread.workerStackBytes);
    {
      Registry &r = registry();
      std::lock_guard<std::mutex> lock(r.mutex);
      r.threads.erase(std::remove(r.threads.begin(), r.threads.end(), &thread), r.threads.end());
      aspenVertexThread = nullptr;
    }
    if (altStack) {
      stack_t ss{};
      ss.ss_flags = SS_DISABLE;
      ::sigaltstack(&ss, nullptr);
    }
  }
};

// ---- where vertex code lies ------------------------------------------------------------

/// Executable segments of the objects vertex code came from: appended under
/// the mutex, read by the handler (entries before `gNumRanges` never change).
constexpr int kMaxRanges = 1024;
std::atomic<std::uintptr_t> gRangeBegin[kMaxRanges], gRangeEnd[kMaxRanges];
std::atomic<int> gNumRanges{0};
std::mutex gRangesMutex;

bool inVertexCode(std::uintptr_t pc) {
  const int n = gNumRanges.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (pc >= gRangeBegin[i].load(std::memory_order_relaxed) &&
        pc < gRangeEnd[i].load(std::memory_order_relaxed))
      return true;
  return false;
}

/// The program counter a signal interrupted, or 0 where unknown.
std::uintptr_t interruptedPc(void *context) {
  const auto *uc = static_cast<const ucontext_t *>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

/// After this many signals without catching the thread in vertex code (about
/// half a second), the watchdog's signal stops it wherever it is.
constexpr std::uint32_t kPatientKicks = 50;

constexpr int kFaultSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
constexpr int kNumHandled = 5; // the faults and the stop signal
struct sigaction gPrevious[kNumHandled];

int slotOf(int sig) {
  for (int i = 0; i < 4; ++i)
    if (kFaultSignals[i] == sig)
      return i;
  return 4;
}

/// Set while a chained handler runs: one that re-raises the signal after
/// putting back its own predecessor (Aspen's) must reach the default action,
/// not itself again.
volatile sig_atomic_t gChaining = 0;

/// Hands the signal to whoever handled it before Aspen.
void chain(int sig, siginfo_t *info, void *context) {
  const struct sigaction &prev = gPrevious[slotOf(sig)];
  const bool handler = (prev.sa_flags & SA_SIGINFO)
                           ? prev.sa_sigaction != nullptr
                           : prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN;
  if (handler && !gChaining) {
    gChaining = 1;
    if (prev.sa_flags & SA_SIGINFO)
      prev.sa_sigaction(sig, info, context);
    else
      prev.sa_handler(sig);
    gChaining = 0;
    return;
  }
  const bool fault = sig != stopSignal();
  if (prev.sa_handler == SIG_IGN && !fault)
    return;
  // The default action. A fault the kernel raised recurs when the handler
  // returns (the instruction runs again) and now kills the process as it would
  // have without Aspen; one sent by a process is sent again.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  if (info->si_code <= 0)
    ::raise(sig);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASPEN_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ASPEN_ASAN 1
#endif
#ifdef ASPEN_ASAN
extern "C" void __asan_handle_no_return();
#endif

[[noreturn]] void jumpTo(RecoveryPoint &point) {
#ifdef ASPEN_ASAN
  // The frames jumped over may have poisoned stack (also done by ASan's siglongjmp
  // interceptor; twice is harmless).
  __asan_handle_no_return();
#endif
  siglongjmp(point, 1);
}

void onSignal(int sig, siginfo_t *info, void *context) {
  VertexThread *vt = aspenVertexThread;
  const bool inVertex =
      vt && vt->recover && vt->vertex.load(std::memory_order_relaxed) != VertexThread::kNoVertex;
  if (sig == stopSignal()) {
    const bool fromWatchdog = info->si_code == SI_TKILL && info->si_pid == ::getpid();
    if (!fromWatchdog) {
      chain(sig, info, context);
      return;
    }
    const std::atomic<bool> *stop = vt ? vt->stop.load(std::memory_order_relaxed) : nullptr;
    if (inVertex && stop && stop->load(std::memory_order_relaxed) &&
        (interruptedPc(context) == 0 || inVertexCode(interruptedPc(context)) ||
         vt->kicks.load(std::memory_order_relaxed) > kPatientKicks)) {
      vt->fault = VertexFault{};
      vt->fault.timeout = true;
      jumpTo(*vt->recover);
    }
    return; // between vertices: the executor sees the request at the next tile
  }
  bool otherTile = false;
  if (sig == SIGSEGV && info->si_code == SEGV_ACCERR && vt && vt->writeCheck) {
    // aspen.checkTileWrites: a first write to a read-only tile.
    TileWriteCheck &c = *vt->writeCheck;
    const auto a = reinterpret_cast<std::uintptr_t>(info->si_addr);
    const auto first = reinterpret_cast<std::uintptr_t>(c.first);
    if (a >= first && a < first + c.numTiles * c.stride && (a - first) % c.stride < c.pages) {
      const auto tile = static_cast<std::uint32_t>((a - first) / c.stride);
      const std::uint32_t vertex = vt->vertex.load(std::memory_order_relaxed);
      // The executor's own writes (between vertices: exchange, codelet data) and
      // a vertex writing its own tile go ahead.
      if (vertex == VertexThread::kNoVertex || c.tileOf(vertex) == tile) {
        if (c.openTile(tile))
          return; // the write runs again, and now succeeds
      } else {
        otherTile = inVertex;
      }
    }
  }
  if (!inVertex) {
    chain(sig, info, context);
    return;
  }
  VertexFault f;
  f.otherTile = otherTile;
  f.signal = sig;
  f.code = info->si_code;
  f.address = info->si_addr;
  const auto a = reinterpret_cast<std::uintptr_t>(info->si_addr);
  // A fault just below the lowest address of the thread's stack (in its guard)
  // is the stack running over.
  f.workerStack = sig == SIGSEGV && vt->workerStackGuard && a >= vt->workerStackGuard &&
                  a < vt->workerStackGuard + VertexThread::kWorkerStackGuard;
  f.stackOverflow = f.workerStack || (sig == SIGSEGV && vt->stackLow && a < vt->stackLow + 4096 &&
                                      a + 256 * 1024 >= vt->stackLow);
  vt->fault = f;
  jumpTo(*vt->recover);
}

/// Checked writes (docs/tile-model.md): instrumented vertex code calls this before a write
/// to `address`, inside tile memory but outside the running tile. Stops the vertex as a fault
/// does; outside vertex code (no recovery point) the write goes ahead.
void onCheckedWrite(void *address) {
  VertexThread *vt = aspenVertexThread;
  if (!vt || !vt->recover || vt->vertex.load(std::memory_order_relaxed) == VertexThread::kNoVertex)
    return;
  VertexFault f;
  f.checkedWrite = true;
  f.otherTile = true;
  f.address = address;
  vt->fault = f;
  jumpTo(*vt->recover);
}

const char *codeName(int sig, int code) {
  if (code <= 0)
    return code == SI_TKILL || code == SI_USER ? "sent by raise() or kill()" : "sent by a process";
  switch (sig) {
  case SIGFPE:
    switch (code) {
    case FPE_INTDIV:
      return "integer divide by zero, or INT_MIN / -1";
    case FPE_INTOVF:
      return "integer overflow";
    case FPE_FLTDIV:
      return "floating-point divide by zero";
    case FPE_FLTOVF:
      return "floating-point overflow";
    case FPE_FLTUND:
      return "floating-point underflow";
    case FPE_FLTRES:
      return "floating-point inexact result";
    case FPE_FLTINV:
      return "floating-point invalid operation";
    default:
      return "arithmetic exception";
    }
  case SIGSEGV:
    return code == SEGV_MAPERR   ? "address not mapped"
           : code == SEGV_ACCERR ? "access not permitted"
                                 : "invalid access";
  case SIGBUS:
    return code == BUS_ADRALN   ? "misaligned address"
           : code == BUS_ADRERR ? "address with no backing memory"
                                : "bus error";
  case SIGILL:
    return code == ILL_ILLOPC   ? "illegal opcode"
           : code == ILL_PRVOPC ? "privileged opcode"
                                : "illegal instruction";
  default:
    return "";
  }
}

} // namespace

bool TileWriteCheck::openTile(unsigned tile) {
  if (open >= 0 && static_cast<unsigned>(open) != tile &&
      ::mprotect(first + std::uint64_t(open) * stride, pages, PROT_READ) != 0)
    return false;
  open = -1;
  if (::mprotect(first + std::uint64_t(tile) * stride, pages, PROT_READ | PROT_WRITE) != 0)
    return false;
  open = tile;
  return true;
}

std::uint32_t TileWriteCheck::tileOf(std::uint32_t vertex) const {
  // The last k with tileBegin[k] <= vertex.
  std::size_t low = 0, high = numStepTiles;
  while (high - low > 1) {
    const std::size_t mid = (low + high) / 2;
    if (tileBegin[mid] <= vertex)
      low = mid;
    else
      high = mid;
  }
  return tiles[low];
}

// ---- worker stacks ---------------------------------------------------------------------

#if defined(__x86_64__) && !defined(ASPEN_ASAN) && !defined(ASPEN_TSAN)
#define ASPEN_WORKER_STACKS 1
// aspenRunOnStack(top, fn, argument): calls fn(argument) with the stack pointer
// at `top` (16-byte aligned), then returns on the caller's stack. The frame
// pointer keeps the caller's stack, so that unwinding (an exception, a debugger)
// walks through it.
extern "C" void aspenRunOnStack(void *top, void (*fn)(void *), void *argument);
__asm__(".text\n"
        ".globl aspenRunOnStack\n"
        ".hidden aspenRunOnStack\n"
        ".type aspenRunOnStack,@function\n"
        "aspenRunOnStack:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  movq %rsp, %rbp\n"
        ".cfi_def_cfa_register %rbp\n"
        "  movq %rdi, %rsp\n"
        "  movq %rdx, %rdi\n"
        "  callq *%rsi\n"
        "  movq %rbp, %rsp\n"
        "  popq %rbp\n"
        ".cfi_def_cfa %rsp, 8\n"
        "  retq\n"
        ".cfi_endproc\n"
        ".size aspenRunOnStack, .-aspenRunOnStack\n");
#endif

bool workerStacksSupported() {
#ifdef ASPEN_WORKER_STACKS
  return true;
#else
  return false;
#endif
}

void runOnWorkerStack(VertexThread &thread, std::size_t bytes, void (*fn)(void *), void *argument) {
#ifdef ASPEN_WORKER_STACKS
  if (bytes != 0) {
    static const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); // once, not per step
    bytes = (bytes + page - 1) / page * page;
    if (thread.workerStackBytes != bytes) {
      if (thread.workerStackGuard)
        ::munmap(reinterpret_cast<void *>(thread.workerStackGuard),
                 VertexThread::kWorkerStackGuard + thread.workerStackBytes);
      thread.workerStackGuard = 0;
      thread.workerStackBytes = 0;
      void *p = ::mmap(nullptr, VertexThread::kWorkerStackGuard + bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
      if (p != MAP_FAILED && ::mprotect(p, VertexThread::kWorkerStackGuard, PROT_NONE) != 0) {
        ::munmap(p, VertexThread::kWorkerStackGuard + bytes);
        p = MAP_FAILED;
      }
      if (p == MAP_FAILED) {
        ASPEN_LOG(Warn, "Cannot map a worker stack of " << bytes << " bytes (" << std::strerror(errno)
                                                        << "): vertex code runs on its thread's stack");
        fn(argument);
        return;
      }
      thread.workerStackGuard = reinterpret_cast<std::uintptr_t>(p);
      thread.workerStackBytes = bytes;
    }
    aspenRunOnStack(
        reinterpret_cast<void *>(thread.workerStackGuard + VertexThread::kWorkerStackGuard + bytes), fn,
        argument);
    return;
  }
#endif
  (void)thread;
  (void)bytes;
  fn(argument);
}

// Initial-exec TLS: read with one instruction, without a call that might
// allocate (which a signal handler must not do).
__thread VertexThread *aspenVertexThread __attribute__((tls_model("initial-exec"))) = nullptr;

void registerVertexCode(const void *code) {
  const auto address = reinterpret_cast<std::uintptr_t>(code);
  if (!code || inVertexCode(address))
    return;
  std::lock_guard<std::mutex> lock(gRangesMutex);
  if (inVertexCode(address))
    return;
  struct Search {
    std::uintptr_t address;
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> segments;
  } search{address, {}};
  ::dl_iterate_phdr(
      [](dl_phdr_info *info, std::size_t, void *data) {
        auto &s = *static_cast<Search *>(data);
        std::vector<std::pair<std::uintptr_t, std::uintptr_t>> segments;
        bool holds = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
            continue;
          const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr, end = begin + ph.p_memsz;
          segments.emplace_back(begin, end);
          holds = holds || (s.address >= begin && s.address < end);
        }
        if (!holds)
          return 0;
        s.segments = std::move(segments);
        return 1;
      },
      &search);
  int n = gNumRanges.load(std::memory_order_relaxed);
  for (const auto &[begin, end] : search.segments) {
    if (n == kMaxRanges)
      break;
    gRangeBegin[n].store(begin, std::memory_order_relaxed);
    gRangeEnd[n].store(end, std::memory_order_relaxed);
    gNumRanges.store(++n, std::memory_order_release);
  }
}

VertexThread &VertexThread::make() {
  thread_local ThreadRecord record;
  return record.thread;
}

void installVertexFaultHandlers() {
  // Checked at every load, not once: a program (or a test framework) that
  // installs its own handlers after Aspen's gets Aspen's back on top at its
  // next load, chaining to its own.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  struct sigaction sa {};
  sa.sa_sigaction = onSignal;
  // SA_NODEFER: the signal stays unblocked in the handler, so a jump out of
  // it leaves the mask as it was and the recovery point need not save it
  // (ASPEN_SET_RECOVERY_POINT saves no mask: no system call per chunk).
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  ::sigemptyset(&sa.sa_mask);
  auto install = [&](int sig) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0)
      return;
    if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == onSignal)
      return;
    gPrevious[slotOf(sig)] = current;
    ::sigaction(sig, &sa, nullptr);
  };
  for (int sig : kFaultSignals)
    install(sig);
  install(stopSignal());
  codelets::setTileWriteFaultHandler(&onCheckedWrite);
}

std::string describeSignal(const VertexFault &fault) {
  if (fault.timeout)
    return "stopped by the run bound";
  if (fault.checkedWrite) {
    char address[64];
    std::snprintf(address, sizeof address, "a write to %p outside its tile", fault.address);
    return address;
  }
  const char *name = fault.signal == SIGSEGV  ? "SIGSEGV"
                     : fault.signal == SIGBUS ? "SIGBUS"
                     : fault.signal == SIGFPE ? "SIGFPE"
                     : fault.signal == SIGILL ? "SIGILL"
                                              : "signal";
  std::string s = name;
  if (fault.signal == SIGSEGV || fault.signal == SIGBUS) {
    char address[32];
    std::snprintf(address, sizeof address, " at %p", fault.address);
    s += address;
  }
  s += " (";
  s += codeName(fault.signal, fault.code);
  s += ")";
  return s;
}

// ---- the watchdog ---------------------------------------------------------------------

struct RunWatchdog::State {
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::thread thread;
};

RunWatchdog::RunWatchdog(double seconds, std::atomic<bool> &stop) : state_(new State) {
  installVertexFaultHandlers();
  State *s = state_;
  s->thread = std::thread([s, seconds, &stop] {
    std::unique_lock<std::mutex> lock(s->mutex);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    if (s->wake.wait_until(lock, deadline, [s] { return s->done; }))
      return;
    stop.store(true);
    // Signal the threads still running vertex code for this run, every 10 ms
    // until it is over; the first time after a grace of 10 ms, so that a
    // compute() that returns promptly ends normally and the run stops at the
    // next tile or step (the engine then stays usable).
    while (!s->wake.wait_for(lock, std::chrono::milliseconds(10), [s] { return s->done; })) {
      Registry &r = registry();
      std::lock_guard<std::mutex> threads(r.mutex);
      for (VertexThread *t : r.threads)
        if (t->stop.load(std::memory_order_relaxed) == &stop &&
            t->vertex.load(std::memory_order_relaxed) != VertexThread::kNoVertex) {
          t->kicks.fetch_add(1, std::memory_order_relaxed);
          ::pthread_kill(static_cast<pthread_t>(t->self), stopSignal());
        }
    }
  });
}

RunWatchdog::~RunWatchdog() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->done = true;
  }
  state_->wake.notify_all();
  state_->thread.join();
  delete state_;
}

} // namespace aspen::rt
