// Copyright (c) Aspen contributors. PopDist-compatible public API.
#ifndef POPDIST_POPDIST_POPLAR_HPP
#define POPDIST_POPDIST_POPLAR_HPP

#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

#include <cstddef>
#include <string>

/// PopDist: where this instance of a distributed program stands. `poprun` (or
/// `mpirun` with the POPDIST_* variables below) starts several instances of one
/// host program; each owns `getNumLocalReplicas()` consecutive replicas,
/// starting at `getReplicaIndexOffset()`, of `getNumTotalReplicas()` in all.
///
/// The values come from the environment that poprun sets for each instance:
///   POPDIST_NUM_TOTAL_REPLICAS, POPDIST_NUM_LOCAL_REPLICAS,
///   POPDIST_NUM_IPUS_PER_REPLICA, POPDIST_REPLICA_INDEX_OFFSET,
///   POPDIST_LOCAL_INSTANCE_INDEX, POPDIST_UNIFORM_REPLICAS_PER_INSTANCE,
/// and the instance count and index from the MPI launcher (OMPI_COMM_WORLD_*).
/// Without replica variables each instance owns one replica; without a launcher a
/// program is one instance with one replica. Inconsistent values
/// (an offset beyond the total, replicas that do not divide evenly) throw
/// poplar::poplar_error naming the variable.
///
///   poplar::Device device = poplar::DeviceManager::createDeviceManager()
///       .getDevice(popdist::getDeviceId());
///   poplar::Graph graph(device.getTarget(),
///       poplar::replication_factor(popdist::getNumLocalReplicas()));
namespace popdist {

/// True when the program was started by poprun (POPDIST_NUM_TOTAL_REPLICAS set).
bool isPopdistEnvSet();
/// Number of instances (processes) of the program.
unsigned getNumInstances();
/// This instance's index in [0, getNumInstances()).
unsigned getInstanceIndex();
/// Index of this instance among the instances on its host.
unsigned getLocalInstanceIndex();
/// Replicas over all instances.
unsigned getNumTotalReplicas();
/// Replicas this instance owns.
unsigned getNumLocalReplicas();
/// Global index of this instance's first replica.
unsigned getReplicaIndexOffset();
/// IPUs each replica spans (default 1).
unsigned getNumIpusPerReplica();
/// True when `ipusPerReplica` matches POPDIST_NUM_IPUS_PER_REPLICA (or the
/// variable is not set).
bool checkNumIpusPerReplica(unsigned ipusPerReplica);
/// The DeviceManager id of a device with this instance's local replicas times
/// `ipusPerReplica` IPUs (0: getNumIpusPerReplica()). Throws poplar_error when
/// the simulated system has no device of that size.
unsigned getDeviceId(unsigned ipusPerReplica = 0);

/// Runs `programId` on `engine` in step with the other instances: every
/// instance enters the run together, so programs whose collectives span
/// instances start at the same point.
void run(poplar::Engine &engine, unsigned programId = 0);

} // namespace popdist

#endif
