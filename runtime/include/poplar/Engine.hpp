// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_ENGINE_HPP
#define POPLAR_ENGINE_HPP

#include <poplar/ArrayRef.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Device.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/ProfileValue.hpp>
#include <poplar/Program.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/StreamCallback.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/exceptions.hpp>
#include <pva/pva.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace aspen {
namespace rt {
class EngineImpl;
} // namespace rt
} // namespace aspen

namespace poplar {

/// Runs the programs of a compiled graph on a device.
///
/// ```
/// poplar::Engine engine(graph, {prog}, {{"autoReport.all", "true"}});
/// engine.load(device);
/// engine.writeTensor("x-write", xs.data(), xs.data() + xs.size());
/// engine.run(0);
/// engine.readTensor("x-read", ys.data(), ys.data() + ys.size());
/// ```
/// Options (also read from the JSON object in POPLAR_ENGINE_OPTIONS, which
/// wins): `debug.*`, `autoReport.*` (`autoReport.all` and
/// `autoReport.directory` write `profile.json`, see docs/profile-format.md),
/// `exchange.streamBufferOverlap`, `profiler.*`, `target.saveArchive`, and
/// Aspen's compiler options `aspen.*`. An unknown key throws `invalid_option`.
class Engine {
public:
  using ProgressFunc = poplar::ProgressFunc;

  /// Compiles `graph` with `programs` (program i is `run(i)`) and makes an engine.
  Engine(const Graph &graph, ArrayRef<program::Program> programs, const OptionFlags &options = {},
         ProgressFunc progressCallBack = ProgressFunc(), const DebugContext &debugContext = {});
  /// Compiles `graph` with the single program `program` (index 0).
  Engine(const Graph &graph, const program::Program &program, const OptionFlags &options = {},
         ProgressFunc progressCallBack = ProgressFunc(), const DebugContext &debugContext = {});
  Engine(Graph &&graph, ArrayRef<program::Program> programs, const OptionFlags &options = {},
         ProgressFunc progressCallBack = ProgressFunc(), const DebugContext &debugContext = {});
  Engine(Graph &&graph, const program::Program &program, const OptionFlags &options = {},
         ProgressFunc progressCallBack = ProgressFunc(), const DebugContext &debugContext = {});
  /// Makes an engine for an executable compiled earlier (see `compileGraph`).
  Engine(Executable &&executable, const OptionFlags &options = {});

  Engine(Engine &&other) noexcept;
  Engine &operator=(Engine &&other) noexcept;
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;
  /// Writes the profile report if autoReport asked for one.
  ~Engine();

  /// Puts the executable on `device`: tile memory, initial values, vertex code.
  /// Throws `poplar_error` when the device's target differs from the
  /// executable's, and `graph_memory_allocation_error` for an executable that
  /// was compiled with `debug.allowOutOfMemory` and does not fit.
  void load(const Device &device);
  /// Runs program `prog` to completion. Throws `application_runtime_error` for
  /// Abort/AbortOnCondition or a vertex whose compute() returned false, and
  /// `system_runtime_error` when another run of this engine is in progress
  /// (from another thread, or from a stream callback): one run at a time.
  void run(unsigned prog = 0, const std::string &debugName = "");
  /// `load(device)` then `run(0)`.
  void loadAndRun(const Device &device);

  /// Copies `[buf, bufEnd)` to the tensor of host write handle `handle`
  /// (`Graph::createHostWrite`); the size must be the tensor's size in bytes.
  void writeTensor(StringRef handle, const void *buf, const void *bufEnd);
  /// Legacy form without the end: the buffer must hold the tensor's bytes.
  void writeTensor(StringRef handle, const void *buf);
  template <class T> void writeTensor(StringRef handle, ArrayRef<T> buf) {
    writeTensor(handle, static_cast<const void *>(buf.data()),
                static_cast<const void *>(buf.data() + buf.size()));
  }
  template <class T> void writeTensor(StringRef handle, const std::vector<T> &buf) {
    writeTensor(handle, ArrayRef<T>(buf));
  }
  /// `writeTensor<float>(handle, {10.0f})`: a braced list is an exact match
  /// here, so the ArrayRef and vector forms do not make the call ambiguous.
  template <class T> void writeTensor(StringRef handle, std::initializer_list<T> buf) {
    writeTensor(handle, ArrayRef<T>(buf));
  }
  /// Copies the tensor of host read handle `handle` (`Graph::createHostRead`)
  /// into `[buf, bufEnd)`; the size must be the tensor's size in bytes.
  void readTensor(StringRef handle, void *buf, void *bufEnd);
  /// Legacy form without the end: the buffer must have room for the tensor's bytes.
  void readTensor(StringRef handle, void *buf);
  template <class T> void readTensor(StringRef handle, ArrayRef<T> buf) {
    T *p = const_cast<T *>(buf.data());
    readTensor(handle, static_cast<void *>(p), static_cast<void *>(p + buf.size()));
  }
  template <class T> void readTensor(StringRef handle, std::vector<T> &buf) {
    readTensor(handle, static_cast<void *>(buf.data()), static_cast<void *>(buf.data() + buf.size()));
  }
  /// fp8: writes the QUARTER tensor of `handle` and its metadata tensor (which
  /// then holds `metadata`). poplar_error when the handle's tensor has no metadata.
  void writeTensor(StringRef handle, const QuarterMetadata &metadata, const void *buf, const void *bufEnd);
  /// fp8: reads the QUARTER tensor of `handle` and the value of its metadata tensor.
  void readTensor(StringRef handle, QuarterMetadata &metadata, void *buf, void *bufEnd);

  /// Connects stream `handle` to a fixed buffer of the stream's size, used by
  /// every copy (of every replica of a replicated graph).
  void connectStream(StringRef handle, void *p);
  /// Connects replica `index`'s end of stream `handle` to a fixed buffer.
  void connectStream(StringRef handle, unsigned index, void *p);
  /// Connects replica `index`'s end of stream `handle` to a circular buffer.
  void connectStream(StringRef handle, unsigned index, void *begin, void *end);
  /// Connects stream `handle` to a circular buffer `[begin, end)` holding a
  /// whole number of transfers: successive copies use successive chunks and
  /// wrap; the position carries over between runs. With replication every
  /// replica reads (or writes) the buffer from its start, each at its own position.
  void connectStream(StringRef handle, void *begin, void *end);
  template <class T> void connectStream(StringRef handle, std::vector<T> &buf) {
    connectStream(handle, static_cast<void *>(buf.data()), static_cast<void *>(buf.data() + buf.size()));
  }
  template <class T> void connectStream(StringRef handle, ArrayRef<T> buf) {
    T *p = const_cast<T *>(buf.data());
    connectStream(handle, static_cast<void *>(p), static_cast<void *>(p + buf.size()));
  }
  void connectStream(const DataStream &stream, void *p) { connectStream(stream.handle(), p); }
  void connectStream(const DataStream &stream, void *begin, void *end) {
    connectStream(stream.handle(), begin, end);
  }

  /// Connects stream `handle` to a callback: a callable taking `void *`, or a
  /// `std::unique_ptr` to a `StreamCallback` (prefetch, fetch, complete). May be
  /// connected again between runs. With replication every replica calls it
  /// (one call at a time, in no fixed order between replicas).
  void connectStreamToCallback(StringRef handle, StreamCallbackHandle callback);
  /// The callback for replica `index`.
  void connectStreamToCallback(StringRef handle, unsigned index, StreamCallbackHandle callback);

  /// Copies row `repeatIndex` of remote buffer `handle` from `src` (the row's bytes).
  void copyToRemoteBuffer(const void *src, const std::string &handle, std::uint64_t repeatIndex,
                          unsigned replicationIndex = 0);
  /// Copies row `repeatIndex` of remote buffer `handle` to `dst`.
  void copyFromRemoteBuffer(const std::string &handle, void *dst, std::uint64_t repeatIndex,
                            unsigned replicationIndex = 0);

  /// Where PrintTensor programs and codelet printf write (stdout by default).
  void setPrintStream(std::ostream &stream);
  void setPrintTensorStream(std::ostream &stream) { setPrintStream(stream); }

  /// The simulated tile clock in Hz.
  double getTileClockFrequency() const;

  /// Prints the Target, Graph, Memory Usage and Execution sections. Options:
  /// `showExecutionSteps` ("true": every executed step with its cycles),
  /// `showVarStorage`.
  void printProfileSummary(std::ostream &out, const OptionFlags &options = {}) const;
  /// Poplar 1.x: the graph profile as a value ("target", "graph", "memory" with
  /// "byTile" "total"/"totalIncludingGaps" and "liveness", "computeSets",
  /// "vertexTypes"), read from the same report as profile.json.
  /// ```
  /// poplar::serializeToJSON(out, engine.getGraphProfile());
  /// ```
  POPLAR_DEPRECATED("use autoReport's profile.pop and libpva (pva::openReport)")
  ProfileValue getGraphProfile() const;
  /// Poplar 1.x: the execution profile as a value: "simulation" with "cycles"
  /// (all runs since the engine was made or reset) and "steps" (each executed
  /// step: "type" OnTileExecute/DoExchange/StreamCopy/GlobalExchange/Sync,
  /// "name", "cycles"), "runs" and "cycles" by category.
  POPLAR_DEPRECATED("use autoReport's profile.pop and libpva (pva::openReport)")
  ProfileValue getExecutionProfile() const;
  void enableExecutionProfiling();
  void disableExecutionProfiling();
  void resetExecutionProfile();

  /// The engine options in force (after merging POPLAR_ENGINE_OPTIONS).
  const OptionFlags &getEngineOptions() const;

  /// The profile report as libpva reads it (pva/pva.hpp): the graph part always,
  /// and when `reportExecution` the execution part (every run since the engine was
  /// made or its profile reset; empty before the first run). The same report
  /// autoReport writes, made now, whatever the autoReport options; the Report is a
  /// snapshot that later runs do not change. Defined in libpva: link `pva`.
  /// ```
  /// for (const pva::Tile &t : engine.getReport(false).compilation().tiles())
  ///   for (const pva::Vertex &v : t.memory().vertices())
  ///     std::cout << t.number() << ": " << v.count() << " x " << v.type().name() << "\n";
  /// ```
  pva::Report getReport(bool reportExecution = true) const;

  /// Internal: the implementation (throws poplar_error for a moved-from
  /// engine). Not part of Poplar's API.
  aspen::rt::EngineImpl &getImpl() const;

private:
  std::unique_ptr<aspen::rt::EngineImpl> impl_;
};

/// Writes `program` (a program of `graph`) to `out` as JSON: one object per
/// program, `"kind"` naming it (`"Copy"`, `"Execute"`, `"Sequence"`, ...) with its
/// tensors, compute set and children (docs/poplibs-from-source.md). Defined in
/// libpoplar's graph part; declared here, where PopLibs' tests reach it.
void dumpProgram(const Graph &graph, const program::Program &program, std::ostream &out);

} // namespace poplar

#endif
