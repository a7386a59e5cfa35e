// Copyright (c) Aspen contributors.
// poplar::Engine: compiles (when given a graph), loads and runs an executable.
#include "poplar/Engine.hpp"

#include "EngineImpl.hpp"
#include "HostQuarterMetadata.hpp"
#include "ProfileReport.hpp"
#include "ReportFile.hpp"
#include "ir/ProgramNode.hpp"
#include "ir/QuarterMetadata.hpp"
#include "poplar/Device.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"
#include "util/OnlyPoplarErrors.hpp"
#include "util/Trace.hpp"

#include <oneapi/tbb/parallel_invoke.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>

namespace aspen::rt {

namespace {

std::string describeTarget(const ir::TargetData &t) {
  return poplar::toString(t.type) + " " + t.arch + " (" + std::to_string(t.numIPUs) + " IPU" +
         (t.numIPUs == 1 ? "" : "s") + " x " + std::to_string(t.tilesPerIPU) + " tiles, " +
         std::to_string(t.bytesPerTile) + " bytes per tile, " + std::to_string(t.numWorkerContexts) +
         " workers)";
}

bool targetsMatch(const ir::TargetData &exe, const ir::TargetData &device) {
  if (exe.type != device.type || exe.numIPUs != device.numIPUs || exe.tilesPerIPU != device.tilesPerIPU)
    return false;
  // A CPU target has no memory limit: the compiler sizes its tile to the program.
  if (exe.type == poplar::TargetType::CPU)
    return true;
  return exe.arch == device.arch && exe.bytesPerTile == device.bytesPerTile &&
         exe.numWorkerContexts == device.numWorkerContexts;
}

} // namespace

EngineImpl::EngineImpl(poplar::Executable executable, EngineOptions options)
    : executable_(std::move(executable)), options_(std::move(options)) {
  const exe::ExecutableData &x = exe();
  // Options are checked first: a user error must throw before any replica, its memory or a
  // collective transport (which may wait for peer instances) exists.
  if (options_.blocksTile >= x.target.tilesPerIPU)
    throw poplar::invalid_option(
        "Engine option 'profiler.blocks.tile' is " + std::to_string(options_.blocksTile) +
        ", but an IPU of the target has tiles 0 to " + std::to_string(x.target.tilesPerIPU - 1));
  for (std::size_t h = 0; h < x.hostHandles.size(); ++h)
    (x.hostHandles[h].isWrite ? writeHandles_ : readHandles_).emplace(x.hostHandles[h].name, unsigned(h));
  replicationFactor_ = std::max<unsigned>(1, x.replicationFactor);
  for (unsigned r = 0; r < replicationFactor_; ++r)
    replicas_.push_back(std::make_unique<Replica>(x, r));
  const bool acrossReplicas = std::any_of(x.collectives.begin(), x.collectives.end(), [](const auto &c) {
    return !ir::isWithinReplica(static_cast<ir::CollectiveKind>(c.kind));
  });
  transport_ = makeCollectiveTransport(replicationFactor_, acrossReplicas);
  for (const exe::CollectiveInfo &c : x.collectives)
    if (!ir::isWithinReplica(static_cast<ir::CollectiveKind>(c.kind)) &&
        (c.groupSize == 0 || transport_->globalReplicas() % c.groupSize != 0))
      throw poplar::graph_object_load_error(
          "Cannot run the executable here: collective '" + c.name + "' has groups of " +
          std::to_string(c.groupSize) + " replicas, which do not divide the " +
          std::to_string(transport_->globalReplicas()) + " replicas of this launch (" + transport_->name() +
          " transport)");
  profile_.hostComputeTimes = options_.profileHostComputeTime;
  profile_.reset(x.programEntry.size(), x.steps.size(), x.vertexTypes.size());
  profile_.blocks = {options_.blocksFilter, options_.programsFilter, options_.blocksTile,
                     options_.instrumentExternalExchange};
  printSink_.stream = &std::cout;
  if (options_.autoReportGraph || options_.autoReportExecution)
    writeAutoReport();
}

EngineImpl::~EngineImpl() {
  setPrintSink(libraries_, nullptr);
  if (options_.autoReportGraph || options_.autoReportExecution) {
    try {
      writeAutoReport();
    } catch (const std::exception &e) {
      ASPEN_LOG(Warn, "Could not write the profile report: " << e.what());
    }
  }
}

void EngineImpl::writeAutoReport() {
  writeProfile(options_.autoReportDirectory, exe(), profile_, options_.autoReportGraph,
               options_.autoReportExecution, options_.autoReportHtml, options_.autoReportDebugInfo);
}

void EngineImpl::load(const ir::TargetData &deviceTarget) {
  if (running_)
    throw poplar::system_runtime_error("Engine::load called while the engine is running a program");
  const exe::ExecutableData &x = exe();
  // The executable is one replica's; the device holds every replica's IPUs.
  ir::TargetData needed = x.target;
  needed.numIPUs = x.target.numIPUs * replicationFactor_;
  if (!targetsMatch(needed, deviceTarget)) {
    std::string replicas;
    if (replicationFactor_ > 1)
      replicas = " (" + std::to_string(replicationFactor_) + " replicas of " +
                 std::to_string(x.target.numIPUs) + " IPU" + (x.target.numIPUs == 1 ? "" : "s") + ")";
    throw poplar::system_runtime_error("Cannot load the executable: it was compiled for " +
                                       describeTarget(needed) + replicas + " but the device is " +
                                       describeTarget(deviceTarget));
  }
  if (x.outOfMemory)
    throw poplar::graph_memory_allocation_error(
        "Cannot load an executable that does not fit in tile memory (it was compiled with "
        "debug.allowOutOfMemory): " +
        (x.outOfMemoryMessage.empty() ? std::string("Out of memory") : x.outOfMemoryMessage));
  if (!validated_) {
    validateExecutable(x);
    validated_ = true;
  }
  loaded_ = false;
  executor_ = nullptr;
  std::uint32_t pageOffset = ~0u; // where fresh tile memory starts in its page, found once
  for (auto &rep : replicas_) {
    Replica &r = *rep;
    r.executor.reset();
    if (!r.memory) {
      if (pageOffset == ~0u)
        pageOffset = imagePageOffset(x);
      r.memory = std::make_unique<TileMemory>(x.target.numTiles(), x.target.bytesPerTile, pageOffset);
    }
    ExecutionProfile *profile = r.index == 0 ? &profile_ : &r.ownProfile;
    if (r.index != 0)
      r.ownProfile.reset(x.programEntry.size(), x.steps.size(), x.vertexTypes.size());
    // Finding the vertex code (the first load of a process opens its libraries)
    // and the executor's plans (which need tile memory's addresses, not its
    // contents) are done while the image is written, which waits on page faults.
    tbb::parallel_invoke(
        [&] {
          loadMemoryImage(x, *r.memory, options_.poisonUninitialisedMemory);
          writeReplicationIndex(x, transport_->firstLocalReplica() + r.index, *r.memory);
        },
        [&] {
          if (!codeLoaded_) {
            vertexCode_ = loadVertexCode(x, libraries_);
            printSinkEpoch_ = 0; // the libraries may have changed: set every sink at the next run
            std::vector<std::uint32_t> typeImage;
            codeletData_ = resolveCodeletData(x, libraries_, typeImage);
            for (std::size_t t = 0; t < vertexCode_.size(); ++t)
              vertexCode_[t].dataImage = typeImage[t];
            codeLoaded_ = true;
          }
          r.executor =
              std::make_unique<Executor>(x, *r.memory, vertexCode_,
                                         HostContext{&r.streams, &r.remoteBuffers, printSink_.stream, profile,
                                                     replicationFactor_ > 1 ? &printMutex_ : nullptr,
                                                     &codeletData_, options_.exchangeInPlace});
          r.executor->setRunBounds(options_.maxRunCycles, options_.maxRunSeconds > 0 ? &stopRun_ : nullptr,
                                   options_.maxRunSeconds);
          r.executor->setCheckTileWrites(options_.checkTileWrites);
          r.executor->setWorkerStack(workerStacksSupported() ? options_.hostStackBytes() : 0,
                                     options_.stackOptionsText());
        });
    // Fields that read edge data in place point at it (docs/exchange.md).
    r.executor->bindInPlace();
    // Each tile's copy of its codelets' data starts as loading the library left it.
    writeCodeletData(x, codeletData_, *r.memory);
    // Offloaded variables start with their initial values in Streaming Memory.
    for (const exe::StreamingVariable &v : x.streamingLayout)
      if (!v.initial.empty())
        std::memcpy(r.remoteBuffers.row(v.remoteBuffer, 0), v.initial.data(), v.initial.size());
  }
  executor_ = replicas_[0]->executor.get();
  loaded_ = true;
}

void EngineImpl::run(unsigned program) {
  if (!loaded_)
    throw poplar::system_runtime_error(
        "Engine::run called before Engine::load: load the engine onto a device "
        "first");
  const exe::ExecutableData &x = exe();
  if (program >= x.programEntry.size())
    throw poplar::index_error("Program index " + std::to_string(program) +
                              " is out of range: the engine has " + std::to_string(x.programEntry.size()) +
                              " program" + (x.programEntry.size() == 1 ? "" : "s"));
  // The executor's state (tile memory, streams, counters) belongs to one run.
  if (running_.exchange(true, std::memory_order_acquire))
    throw poplar::system_runtime_error("Engine::run(" + std::to_string(program) +
                                       ") called while the engine is running a program: an Engine runs one "
                                       "program at a time");
  struct Finish {
    std::atomic<bool> &running;
    ~Finish() { running.store(false, std::memory_order_release); } // a plain store, not a locked one
  } finish{running_};
  // After a vertex fault the engine must be loaded again (docs/tile-model.md).
  for (auto &r : replicas_)
    if (r->executor->faulted())
      throw poplar::application_runtime_error(
          "Engine::run(" + std::to_string(program) +
          "): the engine must be loaded again (Engine::load) after its last "
          "run stopped: " +
          r->executor->faultMessage());
  setPrintSink(libraries_, &printSink_, &printSinkEpoch_);
  for (auto &r : replicas_)
    r->executor->setPrintStream(printSink_.stream);
  std::optional<RunWatchdog> watchdog;
  if (options_.maxRunSeconds > 0) {
    stopRun_ = false;
    watchdog.emplace(options_.maxRunSeconds, stopRun_);
  }
  runReplicas(x, replicas_, program, *transport_);
}

void EngineImpl::writeTensor(const std::string &handle, const void *begin, const void *end, bool checkSize) {
  auto it = writeHandles_.find(handle);
  if (it == writeHandles_.end())
    throw poplar::poplar_error("writeTensor: there is no host write handle '" + handle + "'" +
                               (readHandles_.count(handle) ? " ('" + handle + "' is a read handle)" : "") +
                               "; create one with Graph::createHostWrite");
  if (!loaded_)
    throw poplar::system_runtime_error("writeTensor('" + handle + "') called before Engine::load");
  const exe::HostTransfer &transfer = exe().hostTransfers[exe().hostHandles[it->second].transfer];
  bool perReplica = false;
  if (checkSize) {
    const auto bytes =
        static_cast<std::uint64_t>(static_cast<const char *>(end) - static_cast<const char *>(begin));
    perReplica = replicationFactor_ > 1 && end >= begin && bytes == transfer.bytes * replicationFactor_;
    if (end < begin || (bytes != transfer.bytes && !perReplica))
      throw poplar::poplar_error("writeTensor('" + handle + "'): the buffer holds " +
                                 std::to_string(end < begin ? 0 : bytes) + " bytes but the tensor has " +
                                 std::to_string(transfer.bytes) + " bytes" + replicatedSizes(transfer.bytes));
  }
  if (!begin && transfer.bytes)
    throw poplar::poplar_error("writeTensor('" + handle + "'): null buffer");
  const auto &streamingRuns = exe().hostHandles[it->second].streamingRuns;
  for (auto &r : replicas_) {
    const auto *from =
        static_cast<const std::uint8_t *>(begin) + (perReplica ? r->index * transfer.bytes : 0);
    scatterToDevice(transfer, from, *r->memory);
    // Bytes of offloaded variables: their home is Streaming Memory (docs/streaming-memory.md).
    for (const exe::StreamingRun &run : streamingRuns)
      std::memcpy(r->remoteBuffers.row(exe().streamingLayout[run.layout].remoteBuffer, 0) + run.offset,
                  from + run.hostOffset, run.bytes);
  }
}

void EngineImpl::readTensor(const std::string &handle, void *begin, void *end, bool checkSize) {
  auto it = readHandles_.find(handle);
  if (it == readHandles_.end())
    throw poplar::poplar_error("readTensor: there is no host read handle '" + handle + "'" +
                               (writeHandles_.count(handle) ? " ('" + handle + "' is a write handle)" : "") +
                               "; create one with Graph::createHostRead");
  if (!loaded_)
    throw poplar::system_runtime_error("readTensor('" + handle + "') called before Engine::load");
  const exe::HostTransfer &transfer = exe().hostTransfers[exe().hostHandles[it->second].transfer];
  bool perReplica = false;
  if (checkSize) {
    const auto bytes = static_cast<std::uint64_t>(static_cast<char *>(end) - static_cast<char *>(begin));
    perReplica = replicationFactor_ > 1 && end >= begin && bytes == transfer.bytes * replicationFactor_;
    if (end < begin || (bytes != transfer.bytes && !perReplica))
      throw poplar::poplar_error("readTensor('" + handle + "'): the buffer holds " +
                                 std::to_string(end < begin ? 0 : bytes) + " bytes but the tensor has " +
                                 std::to_string(transfer.bytes) + " bytes" + replicatedSizes(transfer.bytes));
  }
  if (!begin && transfer.bytes)
    throw poplar::poplar_error("readTensor('" + handle + "'): null buffer");
  for (auto &r : replicas_) {
    if (!perReplica && r->index > 0)
      break;
    auto *to = static_cast<std::uint8_t *>(begin) + r->index * transfer.bytes;
    gatherFromDevice(transfer, to, *r->memory);
    for (const exe::StreamingRun &run : exe().hostHandles[it->second].streamingRuns)
      std::memcpy(to + run.hostOffset,
                  r->remoteBuffers.row(exe().streamingLayout[run.layout].remoteBuffer, 0) + run.offset,
                  run.bytes);
  }
}

std::string EngineImpl::replicatedSizes(std::uint64_t bytes) const {
  if (replicationFactor_ == 1)
    return "";
  return " (or " + std::to_string(bytes * replicationFactor_) + " bytes: one copy for each of the " +
         std::to_string(replicationFactor_) + " replicas)";
}

unsigned EngineImpl::streamIndex(const std::string &handle, const char *operation) const {
  const int s = replicas_[0]->streams.find(handle);
  if (s < 0)
    throw poplar::stream_connection_error(std::string(operation) + ": there is no stream '" + handle +
                                          "' in this executable");
  return static_cast<unsigned>(s);
}

void EngineImpl::checkReplica(unsigned index, const char *operation) const {
  if (index >= replicationFactor_)
    throw poplar::index_error(std::string(operation) + ": replica index " + std::to_string(index) +
                              " is out of range (replication factor " + std::to_string(replicationFactor_) +
                              ")");
}

unsigned EngineImpl::remoteBufferIndex(const std::string &handle, std::uint64_t repeatIndex,
                                       const char *operation) const {
  const RemoteBuffers &buffers = replicas_[0]->remoteBuffers;
  const int b = buffers.find(handle);
  if (b < 0)
    throw poplar::poplar_error(std::string(operation) + ": there is no remote buffer '" + handle + "'");
  const std::uint64_t repeats = std::max<std::uint64_t>(1, buffers.info(unsigned(b)).repeats);
  if (repeatIndex >= repeats)
    throw poplar::index_error(std::string(operation) + ": row " + std::to_string(repeatIndex) +
                              " of remote buffer '" + handle + "' is out of range (it has " +
                              std::to_string(repeats) + " rows)");
  return static_cast<unsigned>(b);
}

} // namespace aspen::rt

namespace poplar {

using aspen::rt::EngineImpl;
using aspen::rt::parseEngineOptions;

namespace {
/// The engine's state; an Engine that was moved from has none.
EngineImpl &live(const std::unique_ptr<EngineImpl> &impl) {
  if (!impl)
    throw poplar_error("This Engine was moved from: use the Engine it was moved to");
  return *impl;
}
} // namespace

Engine::Engine(const Graph &graph, ArrayRef<program::Program> programs, const OptionFlags &options,
               ProgressFunc progressCallBack, const DebugContext &debugContext) {
  aspen::onlyPoplarErrors("Engine", [&] {
    auto parsed = parseEngineOptions(options);
    Executable exe = [&] {
      pvti::Tracepoint trace(aspen::traceChannel(), "Engine: compile");
      return compileGraph(graph, programs, parsed.all, std::move(progressCallBack), debugContext);
    }();
    impl_ = std::make_unique<EngineImpl>(std::move(exe), std::move(parsed));
  });
}

Engine::Engine(const Graph &graph, const program::Program &program, const OptionFlags &options,
               ProgressFunc progressCallBack, const DebugContext &debugContext)
    : Engine(graph, ArrayRef<program::Program>(&program, 1), options, std::move(progressCallBack),
             debugContext) {}

Engine::Engine(Graph &&graph, ArrayRef<program::Program> programs, const OptionFlags &options,
               ProgressFunc progressCallBack, const DebugContext &debugContext) {
  aspen::onlyPoplarErrors("Engine", [&] {
    auto parsed = parseEngineOptions(options);
    Executable exe = [&] {
      pvti::Tracepoint trace(aspen::traceChannel(), "Engine: compile");
      return compileGraph(std::move(graph), programs, parsed.all, std::move(progressCallBack), debugContext);
    }();
    impl_ = std::make_unique<EngineImpl>(std::move(exe), std::move(parsed));
  });
}

Engine::Engine(Graph &&graph, const program::Program &program, const OptionFlags &options,
               ProgressFunc progressCallBack, const DebugContext &debugContext)
    : Engine(std::move(graph), ArrayRef<program::Program>(&program, 1), options, std::move(progressCallBack),
             debugContext) {}

Engine::Engine(Executable &&executable, const OptionFlags &options) {
  if (!executable.hasImpl())
    throw poplar_error(
        "Engine: the Executable was moved from or default-constructed (an Executable holds a compiled "
        "graph once: it can make one Engine)");
  // Before anything sizes host buffers from it (a no-op unless it was built by hand).
  aspen::rt::validateExecutable(executable.getImpl());
  aspen::onlyPoplarErrors("Engine", [&] {
    impl_ = std::make_unique<EngineImpl>(std::move(executable), parseEngineOptions(options));
  });
}

Engine::Engine(Engine &&other) noexcept = default;
Engine &Engine::operator=(Engine &&other) noexcept = default;
Engine::~Engine() = default;

void Engine::load(const Device &device) {
  pvti::Tracepoint trace(aspen::traceChannel(), "Engine::load");
  live(impl_).load(device.getTarget().getImpl());
}

void Engine::run(unsigned prog, const std::string &debugName) {
  std::optional<pvti::Tracepoint> trace; // its label only when traces are recorded
  if (pvti::Tracepoint::enabled())
    trace.emplace(aspen::traceChannel(),
                  "Engine::run(" + std::to_string(prog) + (debugName.empty() ? "" : ", " + debugName) + ")");
  live(impl_).run(prog);
}

void Engine::loadAndRun(const Device &device) {
  load(device);
  run(0);
}

void Engine::writeTensor(StringRef handle, const void *buf, const void *bufEnd) {
  live(impl_).writeTensor(handle.str(), buf, bufEnd, true);
}
void Engine::writeTensor(StringRef handle, const void *buf) {
  live(impl_).writeTensor(handle.str(), buf, nullptr, false);
}
void Engine::readTensor(StringRef handle, void *buf, void *bufEnd) {
  live(impl_).readTensor(handle.str(), buf, bufEnd, true);
  aspen::rt::forgetHostMetadata(buf, bufEnd); // the buffer holds other elements now
}
void Engine::readTensor(StringRef handle, void *buf) {
  live(impl_).readTensor(handle.str(), buf, nullptr, false);
  aspen::rt::forgetHostMetadata(buf, static_cast<char *>(buf) + 1);
}

void Engine::writeTensor(StringRef handle, const QuarterMetadata &metadata, const void *buf,
                         const void *bufEnd) {
  EngineImpl &impl = live(impl_);
  const std::string mdHandle = aspen::ir::metadataHandleName(handle.str());
  if (!impl.writeHandles_.count(mdHandle))
    throw poplar_error("writeTensor('" + handle.str() + "', metadata): the tensor of handle '" +
                       handle.str() + "' has no metadata (only quarter tensors do)");
  impl.writeTensor(handle.str(), buf, bufEnd, true);
  const std::uint8_t binary = metadata.getBinary();
  impl.writeTensor(mdHandle, &binary, &binary + 1, true);
  // The buffer holds quarter elements with this metadata (poplar_test::copy reads it back).
  aspen::rt::noteHostMetadata(buf, bufEnd, binary);
}

void Engine::readTensor(StringRef handle, QuarterMetadata &metadata, void *buf, void *bufEnd) {
  EngineImpl &impl = live(impl_);
  const std::string mdHandle = aspen::ir::metadataHandleName(handle.str());
  if (!impl.readHandles_.count(mdHandle))
    throw poplar_error("readTensor('" + handle.str() + "', metadata): the tensor of handle '" + handle.str() +
                       "' has no metadata (only quarter tensors do)");
  impl.readTensor(handle.str(), buf, bufEnd, true);
  std::uint8_t binary = 0;
  impl.readTensor(mdHandle, &binary, &binary + 1, true);
  try {
    metadata = QuarterMetadata(binary);
  } catch (const poplar_error &e) {
    throw poplar_error("readTensor('" + handle.str() + "', metadata): the metadata tensor holds " + e.what());
  }
  // poplar_test::copy(target, QUARTER, QuarterMetadata &, buf, ...) decodes the buffer with it.
  aspen::rt::noteHostMetadata(buf, bufEnd, binary);
}

void Engine::connectStream(StringRef handle, void *p) {
  EngineImpl &impl = live(impl_);
  const unsigned s = impl.streamIndex(handle.str(), "connectStream");
  if (!p)
    throw stream_connection_error("connectStream: null buffer for stream '" + handle.str() + "'");
  for (auto &r : impl.replicas_)
    r->streams.connectFixed(s, p);
}

void Engine::connectStream(StringRef handle, void *begin, void *end) {
  EngineImpl &impl = live(impl_);
  const unsigned s = impl.streamIndex(handle.str(), "connectStream");
  for (auto &r : impl.replicas_)
    r->streams.connectCircular(s, begin, end);
}

void Engine::connectStream(StringRef handle, unsigned index, void *p) {
  EngineImpl &impl = live(impl_);
  const unsigned s = impl.streamIndex(handle.str(), "connectStream");
  impl.checkReplica(index, "connectStream");
  if (!p)
    throw stream_connection_error("connectStream: null buffer for stream '" + handle.str() + "'");
  impl.replicas_[index]->streams.connectFixed(s, p);
}

void Engine::connectStream(StringRef handle, unsigned index, void *begin, void *end) {
  EngineImpl &impl = live(impl_);
  const unsigned s = impl.streamIndex(handle.str(), "connectStream");
  impl.checkReplica(index, "connectStream");
  impl.replicas_[index]->streams.connectCircular(s, begin, end);
}

void Engine::connectStreamToCallback(StringRef handle, StreamCallbackHandle callback) {
  EngineImpl &impl = live(impl_);
  const unsigned s = impl.streamIndex(handle.str(), "connectStreamToCallback");
  if (impl.replicas_.size() == 1) {
    impl.replicas_[0]->streams.connectCallback(s, callback.release());
    return;
  }
  // Every replica calls the one callback, one call at a time.
  std::shared_ptr<StreamCallback> shared(callback.release().release());
  auto mutex = std::make_shared<std::mutex>();
  for (auto &r : impl.replicas_)
    r->streams.connectCallback(s, std::make_unique<aspen::rt::SharedStreamCallback>(shared, mutex));
}

void Engine::connectStreamToCallback(StringRef handle, unsigned index, StreamCallbackHandle callback) {
  EngineImpl &impl = live(impl_);
  const unsigned s = impl.streamIndex(handle.str(), "connectStreamToCallback");
  impl.checkReplica(index, "connectStreamToCallback");
  impl.replicas_[index]->streams.connectCallback(s, callback.release());
}

void Engine::copyToRemoteBuffer(const void *src, const std::string &handle, std::uint64_t repeatIndex,
                                unsigned replicationIndex) {
  EngineImpl &impl = live(impl_);
  const unsigned b = impl.remoteBufferIndex(handle, repeatIndex, "copyToRemoteBuffer");
  impl.checkReplica(replicationIndex, "copyToRemoteBuffer");
  if (!src)
    throw poplar_error("copyToRemoteBuffer('" + handle + "'): null source buffer");
  auto &buffers = impl.replicas_[replicationIndex]->remoteBuffers;
  std::memcpy(buffers.row(b, repeatIndex), src, buffers.rowBytes(b));
}

void Engine::copyFromRemoteBuffer(const std::string &handle, void *dst, std::uint64_t repeatIndex,
                                  unsigned replicationIndex) {
  EngineImpl &impl = live(impl_);
  const unsigned b = impl.remoteBufferIndex(handle, repeatIndex, "copyFromRemoteBuffer");
  impl.checkReplica(replicationIndex, "copyFromRemoteBuffer");
  if (!dst)
    throw poplar_error("copyFromRemoteBuffer('" + handle + "'): null destination buffer");
  auto &buffers = impl.replicas_[replicationIndex]->remoteBuffers;
  std::memcpy(dst, buffers.row(b, repeatIndex), buffers.rowBytes(b));
}

void Engine::setPrintStream(std::ostream &stream) {
  EngineImpl &impl = live(impl_);
  std::lock_guard<std::mutex> lock(impl.printSink_.mutex);
  impl.printSink_.stream = &stream;
}

double Engine::getTileClockFrequency() const {
  return live(impl_).exe().target.tileClockFrequency;
}

void Engine::printProfileSummary(std::ostream &out, const OptionFlags &options) const {
  const EngineImpl &impl = live(impl_);
  aspen::rt::printProfileSummary(out, impl.exe(), impl.profile_, aspen::rt::parseSummaryOptions(options));
}

aspen::rt::EngineImpl &Engine::getImpl() const {
  return live(impl_);
}

ProfileValue Engine::getGraphProfile() const {
  const EngineImpl &impl = live(impl_);
  return aspen::rt::legacyGraphProfile(aspen::rt::profileJson(impl.exe(), impl.profile_, true, false));
}

ProfileValue Engine::getExecutionProfile() const {
  const EngineImpl &impl = live(impl_);
  return aspen::rt::legacyExecutionProfile(aspen::rt::profileJson(impl.exe(), impl.profile_, true, true));
}

} // namespace poplar

nlohmann::json aspen::profile::engineReport(const poplar::Engine &engine, bool includeExecution) {
  const aspen::rt::EngineImpl &impl = engine.getImpl(); // throws for a moved-from engine
  return aspen::rt::profileJson(impl.exe(), impl.profile_, true, includeExecution);
}

namespace poplar {

void Engine::enableExecutionProfiling() {
  live(impl_).profile_.enabled = true;
}
void Engine::disableExecutionProfiling() {
  live(impl_).profile_.enabled = false;
}
void Engine::resetExecutionProfile() {
  EngineImpl &impl = live(impl_);
  const auto &x = impl.exe();
  impl.profile_.reset(x.programEntry.size(), x.steps.size(), x.vertexTypes.size());
}

const OptionFlags &Engine::getEngineOptions() const {
  return live(impl_).options_.all;
}

} // namespace poplar
