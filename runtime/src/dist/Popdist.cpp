// The popdist API (popdist/popdist_poplar.hpp): this instance's place in a distributed run.
#include "popdist/popdist_poplar.hpp"

#include "dist/MpiSupport.hpp"
#include "popdist/collectives.hpp"
#include "poplar/DeviceManager.hpp"
#include "util/DistEnvironment.hpp"

#include <string>

namespace popdist {

using aspen::dist::distEnvironment;

bool isPopdistEnvSet() {
  aspen::dist::startForLaunch();
  return distEnvironment().launchedByPoprun;
}
unsigned getNumInstances() {
  aspen::dist::startForLaunch();
  return distEnvironment().numInstances;
}
unsigned getInstanceIndex() {
  aspen::dist::startForLaunch();
  return distEnvironment().instanceIndex;
}
unsigned getLocalInstanceIndex() {
  aspen::dist::startForLaunch();
  return distEnvironment().localInstanceIndex;
}
unsigned getNumTotalReplicas() {
  aspen::dist::startForLaunch();
  return distEnvironment().numTotalReplicas;
}
unsigned getNumLocalReplicas() {
  aspen::dist::startForLaunch();
  return distEnvironment().numLocalReplicas;
}
unsigned getReplicaIndexOffset() {
  aspen::dist::startForLaunch();
  return distEnvironment().replicaIndexOffset;
}
unsigned getNumIpusPerReplica() {
  aspen::dist::startForLaunch();
  return distEnvironment().numIpusPerReplica;
}

bool checkNumIpusPerReplica(unsigned ipusPerReplica) {
  return ipusPerReplica == distEnvironment().numIpusPerReplica;
}

unsigned getDeviceId(unsigned ipusPerReplica) {
  const unsigned perReplica = ipusPerReplica != 0 ? ipusPerReplica : getNumIpusPerReplica();
  const unsigned numIpus = perReplica * getNumLocalReplicas();
  const auto devices =
      poplar::DeviceManager::createDeviceManager().getDevices(poplar::TargetType::IPU, numIpus);
  if (devices.empty()) {
    throw poplar::poplar_error("popdist::getDeviceId: the simulated system has no device of " +
                               std::to_string(numIpus) + " IPUs (" + std::to_string(getNumLocalReplicas()) +
                               " local replicas x " + std::to_string(perReplica) + " IPUs per replica)");
  }
  return devices.front().getId();
}

void run(poplar::Engine &engine, unsigned programId) {
  if (getNumInstances() > 1) {
    collectives::synchronize();
  }
  engine.run(programId);
}

} // namespace popdist
