// Copyright (c) Aspen contributors.
// libpvti: host-side trace points, as Graphcore's libpvti has them.
//
//   #include <pvti/pvti.hpp>      // link with -lpvti
//   static pvti::TraceChannel channel = {"myApp"};
//   pvti::Tracepoint::begin(&channel, "load data");
//   ...
//   pvti::Tracepoint::end(&channel, "load data");
//   { pvti::Tracepoint scoped(&channel, "step"); ... }   // begin here, end at scope exit
//
// Nothing is recorded unless the environment variable PVTI_OPTIONS enables it:
//   PVTI_OPTIONS='{"enable":"true", "directory":"./reports"}'
// optionally with "channels": ["poplar", "myApp"] to record only those. Each
// process then writes one trace file `<directory>/<date>_<pid>.pvti` (default
// directory: the current one): JSON lines, docs/profiling.md describes them;
// aspen-vision shows the trace files it finds beside a report. Aspen itself
// records the channel "poplar" (compile passes, engine load, runs, stream
// transfers).
#ifndef PVTI_PVTI_HPP
#define PVTI_PVTI_HPP

#include <cstddef>
#include <string>
#include <utility>

namespace pvti {

/// A named stream of trace points (one row of the host timeline).
/// A trace channel: its name, a string that outlives it (`{"myApp"}`). Trivially destructible,
/// as Poplar's is: a library that exports a channel it defines (PopLibs' libraries each link
/// poplibs_support's tracePopops, ... and export them) shares one object with the others, and
/// each library's exit would otherwise destroy it again.
struct TraceChannel {
  const char *name;
};

/// Data attached to a trace point: a JSON text (an object, e.g. `{"bytes":128}`).
class Metadata {
public:
  Metadata() = default;
  explicit Metadata(std::string json) : json_(std::move(json)) {}
  const std::string &json() const { return json_; }
  bool empty() const { return json_.empty(); }

private:
  std::string json_;
};

/// Metadata holding the JSON text `json` (an object), as PopLibs' trace points attach it:
/// `pvti::Tracepoint tp(&channel, "conv", &md)` with `auto md =
/// pvti::createJsonMetadata("{\"name\":\"c\"}");`
inline Metadata createJsonMetadata(const std::string &json) {
  return Metadata(json);
}

/// Begins a trace point when made and ends it when destroyed; the static
/// functions mark a begin or an end alone (they must pair, per thread and
/// channel, as a stack).
class Tracepoint {
public:
  Tracepoint(TraceChannel *channel, const std::string &traceLabel, const Metadata *metadata = nullptr);
  Tracepoint(TraceChannel *channel, const char *traceLabel, const Metadata *metadata = nullptr);
  Tracepoint(TraceChannel *channel, const char *traceLabel, std::size_t length,
             const Metadata *metadata = nullptr);
  ~Tracepoint();
  Tracepoint(const Tracepoint &) = delete;
  Tracepoint &operator=(const Tracepoint &) = delete;

  static void begin(TraceChannel *channel, const std::string &traceLabel, const Metadata *metadata = nullptr);
  static void begin(TraceChannel *channel, const char *traceLabel, const Metadata *metadata = nullptr);
  static void end(TraceChannel *channel, const std::string &traceLabel, const Metadata *metadata = nullptr);
  static void end(TraceChannel *channel, const char *traceLabel, const Metadata *metadata = nullptr);
  /// An instant: a begin and an end at one time.
  static void event(TraceChannel *channel, const std::string &traceLabel, const Metadata *metadata = nullptr);

  /// Whether trace points are being recorded (PVTI_OPTIONS enables them).
  static bool enabled();
  /// Writes what was recorded so far to the trace file.
  static void flush();

private:
  TraceChannel *channel_;
  std::string label_;
};

} // namespace pvti

#endif // PVTI_PVTI_HPP
