// Copyright (c) Aspen contributors.
// libpvti: trace points written as JSON lines to a per-process .pvti file.
// When PVTI_OPTIONS does not enable tracing, every call returns after one
// load of a flag.
#include "pvti/pvti.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <unistd.h>

namespace pvti {

namespace {

using nlohmann::json;

class Tracer {
public:
  static Tracer &get() {
    static Tracer tracer; // first use reads PVTI_OPTIONS
    return tracer;
  }
  bool on() const { return enabled_; }

  void record(const TraceChannel *channel, const char *label, std::size_t length, char phase,
              const Metadata *metadata) {
    const std::string name = channel && channel->name ? std::string(channel->name) : std::string();
    if (!channels_.empty() && !channels_.count(name))
      return;
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::system_clock::now().time_since_epoch())
            .count();
    json line = {{"ph", std::string(1, phase)},
                 {"ch", name},
                 {"name", std::string(label, length)},
                 {"ts", us},
                 {"tid", threadIndex()}};
    if (metadata && !metadata->empty()) {
      json m = json::parse(metadata->json(), nullptr, false);
      line["meta"] = m.is_discarded() ? json(metadata->json()) : m;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (!out_)
      return;
    out_ << line.dump(-1, ' ', false, json::error_handler_t::replace) << '\n';
    // Keep the file current when no trace point is open, so a reader (the
    // analyser page written when an engine ends) sees whole trace points.
    open_ += phase == 'B' ? 1 : phase == 'E' && open_ > 0 ? -1 : 0;
    if (open_ == 0)
      out_.flush();
  }

  void flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (out_)
      out_.flush();
  }

private:
  Tracer() {
    const char *options = std::getenv("PVTI_OPTIONS");
    if (!options || !*options)
      return;
    const json o = json::parse(options, nullptr, false);
    if (o.is_discarded() || !o.is_object()) {
      std::cerr << "pvti: PVTI_OPTIONS is not a JSON object; tracing is off: " << options << '\n';
      return;
    }
    const auto enable = o.find("enable");
    const bool on = enable != o.end() && ((enable->is_string() && *enable == "true") ||
                                          (enable->is_boolean() && enable->get<bool>()));
    if (!on)
      return;
    std::string directory = ".";
    if (auto d = o.find("directory"); d != o.end() && d->is_string())
      directory = d->get<std::string>();
    if (auto c = o.find("channels"); c != o.end() && c->is_array())
      for (const json &name : *c)
        if (name.is_string())
          channels_.insert(name.get<std::string>());
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    // As libpvti names its files: the start time and the process id.
    char stamp[64];
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    std::strftime(stamp, sizeof stamp, "%a_%b_%d_%H-%M-%S_%Y_GMT", &utc);
    path_ =
        (std::filesystem::path(directory) / (std::string(stamp) + "_" + std::to_string(::getpid()) + ".pvti"))
            .string();
    out_.open(path_, std::ios::trunc);
    if (!out_) {
      std::cerr << "pvti: cannot write the trace file '" << path_ << "'; tracing is off\n";
      return;
    }
    out_ << json{{"format", "aspen-pvti"}, {"version", 1}, {"pid", ::getpid()}}.dump() << '\n';
    enabled_ = true;
  }
  ~Tracer() { flush(); }

  static unsigned threadIndex() {
    static std::atomic<unsigned> next{0};
    thread_local unsigned index = next++;
    return index;
  }

  bool enabled_ = false;
  std::set<std::string> channels_;
  std::string path_;
  std::ofstream out_;
  std::mutex mutex_;
  long open_ = 0;
};

inline void mark(TraceChannel *channel, const char *label, std::size_t length, char phase,
                 const Metadata *m) {
  Tracer &t = Tracer::get();
  if (t.on())
    t.record(channel, label, length, phase, m);
}

} // namespace

Tracepoint::Tracepoint(TraceChannel *channel, const std::string &traceLabel, const Metadata *metadata)
    : channel_(channel), label_(traceLabel) {
  mark(channel_, label_.data(), label_.size(), 'B', metadata);
}
Tracepoint::Tracepoint(TraceChannel *channel, const char *traceLabel, const Metadata *metadata)
    : Tracepoint(channel, std::string(traceLabel), metadata) {}
Tracepoint::Tracepoint(TraceChannel *channel, const char *traceLabel, std::size_t length,
                       const Metadata *metadata)
    : Tracepoint(channel, std::string(traceLabel, length), metadata) {}
Tracepoint::~Tracepoint() {
  mark(channel_, label_.data(), label_.size(), 'E', nullptr);
}

void Tracepoint::begin(TraceChannel *channel, const std::string &label, const Metadata *m) {
  mark(channel, label.data(), label.size(), 'B', m);
}
void Tracepoint::begin(TraceChannel *channel, const char *label, const Metadata *m) {
  if (Tracer::get().on()) // the label's length only when traces are recorded
    mark(channel, label, std::char_traits<char>::length(label), 'B', m);
}
void Tracepoint::end(TraceChannel *channel, const std::string &label, const Metadata *m) {
  mark(channel, label.data(), label.size(), 'E', m);
}
void Tracepoint::end(TraceChannel *channel, const char *label, const Metadata *m) {
  if (Tracer::get().on()) // the label's length only when traces are recorded
    mark(channel, label, std::char_traits<char>::length(label), 'E', m);
}
void Tracepoint::event(TraceChannel *channel, const std::string &label, const Metadata *m) {
  mark(channel, label.data(), label.size(), 'B', m);
  mark(channel, label.data(), label.size(), 'E', nullptr);
}
bool Tracepoint::enabled() {
  return Tracer::get().on();
}
void Tracepoint::flush() {
  Tracer::get().flush();
}

} // namespace pvti
