// Copyright (c) Aspen contributors.
// What a poplar::Engine holds: the executable, its options, the host side of
// streams and remote buffers (which exist before load), and once loaded the
// tile memory and the executor.
#pragma once

#include "EngineOptions.hpp"
#include "ExecutionProfile.hpp"
#include "Executor.hpp"
#include "HostStreams.hpp"
#include "Loader.hpp"
#include "Replicas.hpp"
#include "TileMemory.hpp"
#include "poplar/Executable.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace aspen::rt {

class EngineImpl {
public:
  EngineImpl(poplar::Executable executable, EngineOptions options);
  ~EngineImpl();

  void load(const ir::TargetData &deviceTarget);
  void run(unsigned program);
  /// A buffer of the tensor's size is written to every replica (read from
  /// replica 0); one of replicationFactor times that size holds each replica's
  /// copy in turn (docs/replication.md).
  void writeTensor(const std::string &handle, const void *begin, const void *end, bool checkSize);
  void readTensor(const std::string &handle, void *begin, void *end, bool checkSize);
  unsigned streamIndex(const std::string &handle, const char *operation) const;
  /// " (or N bytes: one copy for each of the R replicas)" when replicated.
  std::string replicatedSizes(std::uint64_t bytes) const;
  void checkReplica(unsigned index, const char *operation) const;
  unsigned remoteBufferIndex(const std::string &handle, std::uint64_t repeatIndex,
                             const char *operation) const;
  void writeAutoReport();

  const exe::ExecutableData &exe() const { return executable_.getImpl(); }

  poplar::Executable executable_;
  EngineOptions options_;
  ExecutionProfile profile_;
  PrintSink printSink_;
  std::uint64_t printSinkEpoch_ = 0; // setPrintSink's number for this engine's last call (Loader.hpp)
  unsigned replicationFactor_ = 1;
  std::map<std::string, unsigned> readHandles_, writeHandles_;

  bool validated_ = false;
  bool codeLoaded_ = false;
  std::vector<VertexCode> vertexCode_;
  std::vector<CodeletImage> codeletData_; // libraries' per-tile data (TileData.hpp)
  VertexLibraries libraries_;
  std::vector<std::unique_ptr<Replica>> replicas_; // streams and remote buffers exist before load
  std::unique_ptr<CollectiveTransport> transport_;
  std::mutex printMutex_;
  bool loaded_ = false;
  Executor *executor_ = nullptr;     // replica 0's
  std::atomic<bool> running_{false}; // one run at a time
  std::atomic<bool> stopRun_{false}; // set by the aspen.maxRunSeconds watchdog
};

} // namespace aspen::rt
