// Where this instance stands in a distributed run, read once from the environment that poprun
// (or mpirun with POPDIST_* variables) gives it (docs/distributed.md). Read by the popdist API,
// by libgcl (a collective's groups span every instance's replicas) and by the engine (which
// chooses the collective transport). Reading the environment needs no MPI.
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

/// The replicas a collective of a graph with `localReplicationFactor` replicas spans: every
/// instance's replicas when this process is one of several instances, else the graph's own.
/// Throws poplar::poplar_error when the graph's replication factor is not the number of replicas
/// popdist gives this instance (`what` names the caller in the message).
unsigned globalReplicationFactor(unsigned localReplicationFactor, const char *what);

} // namespace aspen::dist
