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

#include <cstdint>
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

/// Starts MPI at popdist's first call when the launch has several instances (every popdist
/// function calls it), so that an instance that ends early has started MPI and says goodbye
/// (see agree) instead of leaving the others in MPI_Init_thread.
void startForLaunch();

/// What one instance calls; every instance must call the same, in the same order.
/// ReplicaCollective is a GCL collective between replicas on several instances (MpiTransport).
enum class CallKind : std::uint32_t { Exit, Synchronize, AllReduce, Broadcast, AllGather, ReplicaCollective };
struct CallDescriptor {
  CallKind kind = CallKind::Exit;
  std::uint32_t type = 0;  // allReduce: float, double, int32, uint32, int64, uint64; replicas: Type::Id
  std::uint32_t op = 0;    // allReduce: ReduceOp; replicas: kind | op << 8 | group << 16
  std::uint32_t root = 0;  // broadcast; replicas: the root's position in its group
  std::uint64_t count = 0; // allReduce: elements; broadcast, allGather, replicas: bytes (per replica)
  std::uint64_t sequence = 0;
  std::uint32_t groupSize = 0; // replicas: replicas per group
  std::uint32_t unused = 0;
};

/// Before each host collective, each collective between replicas on several instances (and at the end of the
/// program, from an atexit handler): every instance shows the others what it calls (an all-gather on a copy
/// of MPI_COMM_WORLD, under the deadline). A difference in kind, type, size, operation, root or order — or a
/// peer whose program ended — throws on every instance a poplar::runtime_error naming this call and each
/// other instance's. Call with mpiMutex() held, after ensureMpi.
void agree(const char *what, CallDescriptor mine);

} // namespace aspen::dist
