// Open MPI as popdist uses it, shared by the host collectives (Collectives.cpp) and the replicas'
// collective transport (MpiTransport.cpp).
//
// MPI is started on first use (MPI_Init_thread, MPI_THREAD_SERIALIZED) unless the program started
// it, and finished at exit when popdist started it. Errors come back as codes (MPI_ERRORS_RETURN)
// and become poplar::runtime_error naming the operation and the instance. Every operation is a
// non-blocking MPI call polled against ASPEN_DIST_TIMEOUT (default 600 s), so a peer that never
// arrives is an error, not a hang; a peer that dies is seen by mpirun, which ends the job.
#pragma once

#include <mpi.h>

#include <mutex>
#include <string>

namespace aspen::dist {

/// Held around every MPI call (MPI is initialised for serialized use from any thread).
std::mutex &mpiMutex();
/// Starts MPI if nobody has; call with mpiMutex() held. `what` names the caller in errors.
void ensureMpi(const char *what);
/// Throws poplar::runtime_error naming `what`, this instance and the MPI error of `code`.
void check(int code, const char *what);
/// Polls `request` until it completes; throws on an MPI error or when the deadline passes.
void wait(MPI_Request &request, const char *what);
[[noreturn]] void fail(const char *what, const std::string &message);

} // namespace aspen::dist
