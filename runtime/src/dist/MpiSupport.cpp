// Open MPI underneath popdist: started once, errors as codes, non-blocking calls polled against a
// deadline (dist/MpiSupport.hpp).
#include "dist/MpiSupport.hpp"

#include "popdist/popdist_poplar.hpp"
#include "poplar/exceptions.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace aspen::dist {
namespace {

bool weInitialisedMpi = false;

void finaliseAtExit() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) {
    MPI_Finalize();
  }
}

} // namespace

std::mutex &mpiMutex() {
  static std::mutex mutex;
  return mutex;
}

[[noreturn]] void fail(const char *collective, const std::string &what) {
  throw poplar::runtime_error(std::string(collective) + " on instance " +
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
