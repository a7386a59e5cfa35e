// Host collectives between instances (popdist/collectives.hpp) over Open MPI.
//
// MPI is started on first use (MPI_Init_thread) unless the program started it, and finished at
// exit when popdist started it. Every collective is a non-blocking MPI call polled against a
// deadline, so a peer that never arrives becomes a named error instead of a hang; a peer that
// dies is seen by mpirun, which ends the job.
#include "popdist/collectives.hpp"

#include "popdist/popdist_poplar.hpp"
#include "poplar/exceptions.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace popdist::collectives {
namespace {

std::mutex mpiMutex; // MPI is initialised MPI_THREAD_SERIALIZED: one call at a time
bool weInitialisedMpi = false;

void finaliseAtExit() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) {
    MPI_Finalize();
  }
}

[[noreturn]] void fail(const char *collective, const std::string &what) {
  throw poplar::runtime_error(std::string("popdist::collectives::") + collective + " on instance " +
                              std::to_string(popdist::getInstanceIndex()) + " of " +
                              std::to_string(popdist::getNumInstances()) + ": " + what);
}

void check(int code, const char *collective) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    fail(collective, std::string("MPI error: ") + std::string(text, static_cast<std::size_t>(length)));
  }
}

// Starts MPI once. Called with mpiMutex held.
void ensureMpi(const char *collective) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) {
    return;
  }
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), collective);
  // Errors come back as codes (turned into poplar errors), not an abort inside MPI.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  weInitialisedMpi = true;
  std::atexit(finaliseAtExit);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (static_cast<unsigned>(size) != popdist::getNumInstances()) {
    fail(collective, "MPI reports " + std::to_string(size) + " processes but the environment " +
                         std::to_string(popdist::getNumInstances()) + " instances");
  }
}

std::chrono::seconds timeout() {
  if (const char *text = std::getenv("ASPEN_DIST_TIMEOUT")) {
    const long seconds = std::strtol(text, nullptr, 10);
    if (seconds > 0) {
      return std::chrono::seconds(seconds);
    }
  }
  return std::chrono::seconds(600);
}

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

template <typename T> T combine(T a, T b, ReduceOp op) {
  switch (op) {
  case ReduceOp::SUM:
    return a + b;
  case ReduceOp::PROD:
    return a * b;
  case ReduceOp::MIN:
    return std::min(a, b);
  case ReduceOp::MAX:
    return std::max(a, b);
  }
  return a;
}

// out[i] = op(a[i], b[i]); out may be a.
template <typename T> void combineInto(T *out, const T *a, const T *b, std::size_t n, ReduceOp op) {
  switch (op) {
  case ReduceOp::SUM:
    for (std::size_t i = 0; i < n; ++i)
      out[i] = a[i] + b[i];
    break;
  default:
    for (std::size_t i = 0; i < n; ++i)
      out[i] = combine(a[i], b[i], op);
    break;
  }
}

// Deterministic all-reduce: instance r reduces chunk r of every instance's data in instance
// order (0, 1, 2, ...), then the reduced chunks are gathered everywhere. The same bits on every
// instance whatever MPI's algorithms, and the bandwidth of a ring all-reduce. Windows keep every
// MPI count within int.
template <typename T> void allReduceImpl(T *data, std::size_t count, ReduceOp op) {
  static constexpr const char *name = "allReduce";
  std::lock_guard<std::mutex> lock(mpiMutex);
  ensureMpi(name);
  const std::size_t instances = popdist::getNumInstances();
  const std::size_t rank = popdist::getInstanceIndex();
  if (instances == 1 || count == 0) {
    return;
  }
  const std::size_t maxWindow = (std::size_t{1} << 28) / sizeof(T) / instances * instances;
  std::vector<T> gathered;
  for (std::size_t begin = 0; begin < count; begin += maxWindow) {
    const std::size_t n = std::min(maxWindow, count - begin);
    T *window = data + begin;
    // Chunk r: [starts[r], starts[r] + sizes[r]) of the window, in elements.
    std::vector<int> sizes(instances), starts(instances);
    for (std::size_t r = 0; r < instances; ++r) {
      const std::size_t lo = n * r / instances, hi = n * (r + 1) / instances;
      starts[r] = static_cast<int>(lo * sizeof(T));
      sizes[r] = static_cast<int>((hi - lo) * sizeof(T));
    }
    const int mine = sizes[rank];
    gathered.resize(instances * (mine / sizeof(T)));
    std::vector<int> recvSizes(instances, mine), recvStarts(instances);
    for (std::size_t r = 0; r < instances; ++r) {
      recvStarts[r] = static_cast<int>(r * static_cast<std::size_t>(mine));
    }
    MPI_Request request;
    check(MPI_Ialltoallv(window, sizes.data(), starts.data(), MPI_BYTE, gathered.data(), recvSizes.data(),
                         recvStarts.data(), MPI_BYTE, MPI_COMM_WORLD, &request),
          name);
    wait(request, name);
    // Fold chunk `rank` of instances 0, 1, 2, ... straight into its place in the window, then
    // gather every instance's folded chunk in place.
    const std::size_t chunk = mine / sizeof(T);
    T *folded = window + starts[rank] / sizeof(T);
    combineInto(folded, gathered.data(), gathered.data() + chunk, chunk, op);
    for (std::size_t r = 2; r < instances; ++r) {
      combineInto(folded, folded, gathered.data() + r * chunk, chunk, op);
    }
    check(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, window, sizes.data(), starts.data(), MPI_BYTE,
                          MPI_COMM_WORLD, &request),
          name);
    wait(request, name);
  }
}

} // namespace

void synchronize() {
  std::lock_guard<std::mutex> lock(mpiMutex);
  ensureMpi("synchronize");
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "synchronize");
  wait(request, "synchronize");
}

void allReduce(float *data, std::size_t count, ReduceOp op) {
  allReduceImpl(data, count, op);
}
void allReduce(double *data, std::size_t count, ReduceOp op) {
  allReduceImpl(data, count, op);
}
void allReduce(std::int32_t *data, std::size_t count, ReduceOp op) {
  allReduceImpl(data, count, op);
}
void allReduce(std::uint32_t *data, std::size_t count, ReduceOp op) {
  allReduceImpl(data, count, op);
}
void allReduce(std::int64_t *data, std::size_t count, ReduceOp op) {
  allReduceImpl(data, count, op);
}
void allReduce(std::uint64_t *data, std::size_t count, ReduceOp op) {
  allReduceImpl(data, count, op);
}

void broadcast(void *data, std::size_t bytes, unsigned rootInstance) {
  static constexpr const char *name = "broadcast";
  std::lock_guard<std::mutex> lock(mpiMutex);
  ensureMpi(name);
  if (rootInstance >= popdist::getNumInstances()) {
    fail(name, "root instance " + std::to_string(rootInstance) + " is not below the " +
                   std::to_string(popdist::getNumInstances()) + " instances");
  }
  auto *bytesPtr = static_cast<unsigned char *>(data);
  constexpr std::size_t window = std::size_t{1} << 30;
  for (std::size_t begin = 0; begin < bytes; begin += window) {
    const int n = static_cast<int>(std::min(window, bytes - begin));
    MPI_Request request;
    check(MPI_Ibcast(bytesPtr + begin, n, MPI_BYTE, static_cast<int>(rootInstance), MPI_COMM_WORLD, &request),
          name);
    wait(request, name);
  }
}

void allGather(const void *data, std::size_t bytes, void *out) {
  static constexpr const char *name = "allGather";
  std::lock_guard<std::mutex> lock(mpiMutex);
  ensureMpi(name);
  if (bytes * popdist::getNumInstances() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    fail(name, std::to_string(bytes) + " bytes per instance is more than one call moves (2 GiB in all)");
  }
  MPI_Request request;
  check(MPI_Iallgather(data, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE,
                       MPI_COMM_WORLD, &request),
        name);
  wait(request, name);
}

} // namespace popdist::collectives
