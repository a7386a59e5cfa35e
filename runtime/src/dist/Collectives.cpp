// Host collectives between instances (popdist/collectives.hpp) over Open MPI (dist/MpiSupport.hpp:
// started on first use, every call non-blocking and polled against a deadline).
#include "popdist/collectives.hpp"

#include "dist/MpiSupport.hpp"
#include "popdist/popdist_poplar.hpp"
#include "poplar/exceptions.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace popdist::collectives {
namespace {

using aspen::dist::agree;
using aspen::dist::CallDescriptor;
using aspen::dist::CallKind;
using aspen::dist::check;
using aspen::dist::ensureMpi;
using aspen::dist::fail;
using aspen::dist::mpiMutex;
using aspen::dist::wait;

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
template <typename T> constexpr std::uint32_t typeIndex() {
  if constexpr (std::is_same_v<T, float>)
    return 0;
  else if constexpr (std::is_same_v<T, double>)
    return 1;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return 2;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return 3;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return 4;
  else
    return 5;
}

template <typename T> void allReduceImpl(T *data, std::size_t count, ReduceOp op) {
  static constexpr const char *name = "popdist::collectives::allReduce";
  std::lock_guard<std::mutex> lock(mpiMutex());
  ensureMpi(name);
  agree(name, CallDescriptor{CallKind::AllReduce, typeIndex<T>(), static_cast<std::uint32_t>(op), 0, count});
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
  std::lock_guard<std::mutex> lock(mpiMutex());
  ensureMpi("popdist::collectives::synchronize");
  agree("popdist::collectives::synchronize", CallDescriptor{CallKind::Synchronize});
  MPI_Request request;
  check(MPI_Ibarrier(MPI_COMM_WORLD, &request), "popdist::collectives::synchronize");
  wait(request, "popdist::collectives::synchronize");
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
  static constexpr const char *name = "popdist::collectives::broadcast";
  std::lock_guard<std::mutex> lock(mpiMutex());
  ensureMpi(name);
  if (rootInstance >= popdist::getNumInstances()) {
    fail(name, "root instance " + std::to_string(rootInstance) + " is not below the " +
                   std::to_string(popdist::getNumInstances()) + " instances");
  }
  agree(name, CallDescriptor{CallKind::Broadcast, 0, 0, rootInstance, bytes});
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
  static constexpr const char *name = "popdist::collectives::allGather";
  std::lock_guard<std::mutex> lock(mpiMutex());
  ensureMpi(name);
  if (bytes * popdist::getNumInstances() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    fail(name, std::to_string(bytes) + " bytes per instance is more than one call moves (2 GiB in all)");
  }
  agree(name, CallDescriptor{CallKind::AllGather, 0, 0, 0, bytes});
  MPI_Request request;
  check(MPI_Iallgather(data, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE,
                       MPI_COMM_WORLD, &request),
        name);
  wait(request, name);
}

} // namespace popdist::collectives
