// Where this instance stands in a distributed run, read once from the environment that poprun
// (or mpirun with POPDIST_* variables) gives it. Shared by the popdist API and the collectives.
#pragma once

namespace aspen::dist {

struct DistEnvironment {
  bool launchedByPoprun = false; // POPDIST_NUM_TOTAL_REPLICAS is set
  unsigned numInstances = 1;
  unsigned instanceIndex = 0;
  unsigned localInstanceIndex = 0;
  unsigned numTotalReplicas = 1;
  unsigned numLocalReplicas = 1;
  unsigned replicaIndexOffset = 0;
  unsigned numIpusPerReplica = 1;
};

/// The environment of this process, validated on first use; throws poplar::poplar_error naming
/// the variable that is malformed or inconsistent with the others.
const DistEnvironment &distEnvironment();

} // namespace aspen::dist
