#include "dist/DistEnvironment.hpp"

#include "poplar/exceptions.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

namespace aspen::dist {
namespace {

// A variable's value as an unsigned number, or nothing when it is unset or empty.
std::optional<unsigned> readUnsigned(const char *name) {
  const char *text = std::getenv(name);
  if (text == nullptr || *text == '\0') {
    return std::nullopt;
  }
  errno = 0;
  char *end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0 ||
      value > std::numeric_limits<unsigned>::max()) {
    throw poplar::poplar_error(std::string("popdist: environment variable ") + name + "='" + text +
                               "' is not a non-negative integer");
  }
  return static_cast<unsigned>(value);
}

// The first of the variables that is set (launchers name the same fact differently).
std::optional<unsigned> readFirst(std::initializer_list<const char *> names) {
  for (const char *name : names) {
    if (auto value = readUnsigned(name)) {
      return value;
    }
  }
  return std::nullopt;
}

[[noreturn]] void inconsistent(const std::string &what) {
  throw poplar::poplar_error("popdist: inconsistent distributed environment: " + what);
}

DistEnvironment readEnvironment() {
  DistEnvironment env;
  env.launchedByPoprun = readUnsigned("POPDIST_NUM_TOTAL_REPLICAS").has_value();
  env.numInstances = readFirst({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}).value_or(1);
  env.instanceIndex = readFirst({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}).value_or(0);
  env.localInstanceIndex =
      readFirst({"POPDIST_LOCAL_INSTANCE_INDEX", "OMPI_COMM_WORLD_LOCAL_RANK"}).value_or(0);
  env.numIpusPerReplica = readUnsigned("POPDIST_NUM_IPUS_PER_REPLICA").value_or(1);
  const auto total = readUnsigned("POPDIST_NUM_TOTAL_REPLICAS");
  const auto local = readUnsigned("POPDIST_NUM_LOCAL_REPLICAS");
  const auto offset = readUnsigned("POPDIST_REPLICA_INDEX_OFFSET");

  if (env.numInstances == 0) {
    inconsistent("the launcher reports 0 instances");
  }
  if (env.instanceIndex >= env.numInstances) {
    inconsistent("instance index " + std::to_string(env.instanceIndex) + " is not below the " +
                 std::to_string(env.numInstances) + " instances");
  }
  if (env.numIpusPerReplica == 0) {
    inconsistent("POPDIST_NUM_IPUS_PER_REPLICA is 0");
  }
  // Total and local replicas: either may be derived from the other when replicas are spread
  // evenly over the instances (what poprun does and plain `mpirun -x` usually intends).
  if (total && local) {
    env.numTotalReplicas = *total;
    env.numLocalReplicas = *local;
  } else if (total) {
    if (*total % env.numInstances != 0) {
      inconsistent("POPDIST_NUM_TOTAL_REPLICAS=" + std::to_string(*total) + " replicas do not divide over " +
                   std::to_string(env.numInstances) + " instances (set POPDIST_NUM_LOCAL_REPLICAS)");
    }
    env.numTotalReplicas = *total;
    env.numLocalReplicas = *total / env.numInstances;
  } else {
    // Only the local count, or neither (plain mpirun: one replica per instance).
    env.numLocalReplicas = local.value_or(1);
    env.numTotalReplicas = env.numLocalReplicas * env.numInstances;
  }
  if (env.numLocalReplicas == 0 || env.numTotalReplicas == 0) {
    inconsistent("an instance must own at least one replica (POPDIST_NUM_LOCAL_REPLICAS=" +
                 std::to_string(env.numLocalReplicas) +
                 ", POPDIST_NUM_TOTAL_REPLICAS=" + std::to_string(env.numTotalReplicas) + ")");
  }
  env.replicaIndexOffset = offset.value_or(env.instanceIndex * env.numLocalReplicas);
  if (static_cast<unsigned long long>(env.replicaIndexOffset) + env.numLocalReplicas > env.numTotalReplicas) {
    inconsistent(
        "POPDIST_REPLICA_INDEX_OFFSET=" + std::to_string(env.replicaIndexOffset) + " plus " +
        std::to_string(env.numLocalReplicas) +
        " local replicas exceeds POPDIST_NUM_TOTAL_REPLICAS=" + std::to_string(env.numTotalReplicas));
  }
  return env;
}

} // namespace

const DistEnvironment &distEnvironment() {
  static const DistEnvironment env = readEnvironment();
  return env;
}

} // namespace aspen::dist
