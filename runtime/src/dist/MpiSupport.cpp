// Open MPI underneath popdist: started once, errors as codes, non-blocking calls polled against a
// deadline (dist/MpiSupport.hpp).
#include "dist/MpiSupport.hpp"

#include "popdist/popdist_poplar.hpp"
#include "poplar/Type.hpp"
#include "poplar/exceptions.hpp"

#include "util/DistEnvironment.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace aspen::dist {
namespace {

bool weInitialisedMpi = false;
/// A peer left (or called another collective at its exit): do not wait for it at ours.
bool peerGone = false;
/// The communicator of the agreements (a copy of MPI_COMM_WORLD: an agreement never
/// interleaves with the data of a collective).
MPI_Comm agreementComm = MPI_COMM_NULL;
std::uint64_t sequence = 0;

unsigned instances() {
  return distEnvironment().numInstances;
}
unsigned rank() {
  return distEnvironment().instanceIndex;
}

std::chrono::seconds timeout();

void finaliseAtExit() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (finalised)
    return;
  // Leaving is a collective call too: an instance still waiting in a collective learns that
  // this one is gone (and fails at once) instead of waiting for the deadline.
  bool failed = false;
  if (weInitialisedMpi && instances() > 1 && !peerGone) {
    try {
      std::lock_guard<std::mutex> lock(mpiMutex());
      agree("popdist (the end of the program)", CallDescriptor{CallKind::Exit});
    } catch (const std::exception &e) {
      std::fprintf(stderr, "%s\n", e.what());
      failed = true;
    }
  }
  if (failed) // another instance waits in a collective: end with an error; mpirun ends the job
    std::_Exit(1);
  MPI_Finalize();
}

// A GCL collective between replicas, as gcl spells it.
std::string describeReplicaCollective(const CallDescriptor &c) {
  static const char *const kKinds[] = {"allReduceCrossReplica",      "reduceScatterCrossReplica",
                                       "allGatherCrossReplica",      "allToAllCrossReplica",
                                       "broadcastCrossReplica",      "allReduceWithinReplica",
                                       "reduceScatterWithinReplica", "allGatherWithinReplica"};
  static const char *const kOps[] = {"ADD",         "MEAN",       "MUL",        "MIN",  "MAX",
                                     "LOGICAL_AND", "LOGICAL_OR", "SQUARE_ADD", "LOCAL"};
  static const char *const kGroups[] = {"ALL", "CONSECUTIVE", "ORTHOGONAL"};
  const unsigned kind = c.op & 0xff, op = (c.op >> 8) & 0xff, group = (c.op >> 16) & 0xff;
  std::string text = std::string(kind < 8 ? kKinds[kind] : "a collective between replicas") + "(";
  try {
    text += poplar::Type(static_cast<poplar::Type::Id>(c.type)).toString();
  } catch (const std::exception &) {
    text += "type " + std::to_string(c.type);
  }
  text += ", " + std::to_string(c.count) + " bytes per replica, ";
  if (kind == 0 || kind == 1 || kind == 5 || kind == 6)
    text += std::string(op < 9 ? kOps[op] : "?") + ", ";
  if (kind == 4)
    text += "root " + std::to_string(c.root) + ", ";
  text += std::string(group < 3 ? kGroups[group] : "?") + " groups of " + std::to_string(c.groupSize) + ")";
  return text;
}

std::string describe(const CallDescriptor &c) {
  static const char *const kTypes[] = {"float", "double", "int32", "uint32", "int64", "uint64"};
  static const char *const kOps[] = {"SUM", "PROD", "MIN", "MAX"};
  switch (c.kind) {
  case CallKind::Exit:
    return "nothing more (the program ended)";
  case CallKind::Synchronize:
    return "synchronize()";
  case CallKind::AllReduce:
    return std::string("allReduce(") + (c.type < 6 ? kTypes[c.type] : "?") + ", " + std::to_string(c.count) +
           " elements, " + (c.op < 4 ? kOps[c.op] : "?") + ")";
  case CallKind::Broadcast:
    return "broadcast(" + std::to_string(c.count) + " bytes, root " + std::to_string(c.root) + ")";
  case CallKind::AllGather:
    return "allGather(" + std::to_string(c.count) + " bytes)";
  case CallKind::ReplicaCollective:
    return describeReplicaCollective(c);
  }
  return "an unknown call";
}

} // namespace

std::mutex &mpiMutex() {
  static std::mutex mutex;
  return mutex;
}

[[noreturn]] void fail(const char *collective, const std::string &what) {
  throw poplar::runtime_error(std::string(collective) + " on instance " + std::to_string(rank()) + " of " +
                              std::to_string(instances()) + ": " + what);
}

void check(int code, const char *collective) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    fail(collective, std::string("MPI error: ") + std::string(text, static_cast<std::size_t>(length)));
  }
}

// Starts MPI once. Called with mpiMutex held. MPI_Init_thread cannot be polled: a watchdog ends
// the process when it has not returned by the deadline (a peer that never starts MPI, e.g. one
// that ended before its first popdist call), so no instance waits for ever.
void ensureMpi(const char *collective) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) {
    return;
  }
  int provided = 0;
  {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    const auto limit = timeout();
    std::thread watchdog([&] {
      std::unique_lock<std::mutex> lock(m);
      if (!cv.wait_for(lock, limit, [&] { return done; })) {
        std::fprintf(stderr,
                     "%s on instance %u of %u: MPI did not start within %lld s (ASPEN_DIST_TIMEOUT): another "
                     "instance ended or never started popdist\n",
                     collective, rank(), instances(), static_cast<long long>(limit.count()));
        std::_Exit(1);
      }
    });
    const int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    {
      std::lock_guard<std::mutex> lock(m);
      done = true;
    }
    cv.notify_one();
    watchdog.join();
    check(code, collective);
  }
  // Errors come back as codes (turned into poplar errors), not an abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  weInitialisedMpi = true;
  std::atexit(finaliseAtExit);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (static_cast<unsigned>(size) != instances()) {
    fail(collective, "MPI reports " + std::to_string(size) + " processes but the environment " +
                         std::to_string(instances()) + " instances");
  }
  check(MPI_Comm_dup(MPI_COMM_WORLD, &agreementComm), collective);
  MPI_Comm_set_errhandler(agreementComm, MPI_ERRORS_RETURN);
}

void startForLaunch() {
  if (instances() <= 1)
    return;
  int initialised = 0;
  MPI_Initialized(&initialised); // callable any time, from any thread, without the lock
  if (initialised)
    return;
  std::lock_guard<std::mutex> lock(mpiMutex());
  ensureMpi("popdist");
}

void agree(const char *collective, CallDescriptor mine) {
  if (instances() <= 1)
    return;
  if (agreementComm == MPI_COMM_NULL) // the program started MPI itself before popdist
    check(MPI_Comm_dup(MPI_COMM_WORLD, &agreementComm), collective);
  mine.sequence = ++sequence;
  std::vector<CallDescriptor> all(instances());
  MPI_Request request;
  check(MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, agreementComm,
                       &request),
        collective);
  wait(request, collective);
  std::string differences;
  for (unsigned r = 0; r < all.size(); ++r) {
    const CallDescriptor &c = all[r];
    if (c.kind == mine.kind && c.type == mine.type && c.op == mine.op && c.root == mine.root &&
        c.count == mine.count && c.groupSize == mine.groupSize && c.sequence == mine.sequence)
      continue;
    if (c.kind == CallKind::Exit)
      peerGone = true;
    differences +=
        std::string(differences.empty() ? "" : "; ") + "instance " + std::to_string(r) + " called " +
        describe(c) +
        (c.sequence != mine.sequence ? " as its call " + std::to_string(c.sequence) : std::string());
  }
  if (!differences.empty())
    fail(collective, "the instances do not call the same collective: this instance called " + describe(mine) +
                         " (its call " + std::to_string(mine.sequence) + "), " + differences);
}

namespace {

std::chrono::seconds timeout() {
  if (const char *text = std::getenv("ASPEN_DIST_TIMEOUT")) {
    const long seconds = std::strtol(text, nullptr, 10);
    if (seconds > 0) {
      return std::chrono::seconds(seconds);
    }
  }
  return std::chrono::seconds(600);
}

} // namespace

// Polls a started request until it completes or the deadline passes. MPI moves a non-blocking
// collective forward only inside MPI calls, so poll without sleeping (yielding the core to the
// other instances on an oversubscribed machine); only after a second of waiting back off, since
// then a peer is late rather than the transfer in progress.
void wait(MPI_Request &request, const char *collective) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout();
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), collective);
    if (done) {
      return;
    }
    if ((polls & 1023) != 0) {
      std::this_thread::yield();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      fail(collective, "timed out after " + std::to_string(timeout().count()) +
                           " s waiting for the other instances (ASPEN_DIST_TIMEOUT)");
    }
    if (now - start > std::chrono::seconds(1)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

} // namespace aspen::dist
