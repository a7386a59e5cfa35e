// Copyright (c) Aspen contributors.
#include "EngineOptions.hpp"

#include "poplar/exceptions.hpp"

#include <cstdlib>
#include <initializer_list>
#include <map>

namespace aspen::rt {

namespace {

enum class ValueKind { Bool, Text, Unsigned, Choice };

struct OptionSpec {
  ValueKind kind;
  std::initializer_list<const char *> choices = {};
};

// Engine options of Poplar's Engine / compileGraph that Aspen accepts. Most
// only matter on hardware and are accepted so that programs run unchanged.
const std::map<std::string, OptionSpec> &knownOptions() {
  static const std::map<std::string, OptionSpec> options = {
      {"debug.retainDebugInformation", {ValueKind::Bool}},
      {"debug.instrument", {ValueKind::Bool}},
      {"debug.instrumentCompute", {ValueKind::Bool}},
      {"debug.instrumentControlFlow", {ValueKind::Bool}},
      {"debug.instrumentExternalExchange", {ValueKind::Bool}},
      {"debug.computeInstrumentationLevel", {ValueKind::Choice, {"tile", "vertex", "device", "ipu"}}},
      {"debug.allowOutOfMemory", {ValueKind::Bool}},
      {"debug.outputAllSymbols", {ValueKind::Bool}},
      {"debug.verify", {ValueKind::Bool}},
      {"debug.floatPointOpException", {ValueKind::Bool}},
      {"debug.nanOverflowException", {ValueKind::Bool}},
      {"debug.supervisorStackSizeInBytes", {ValueKind::Unsigned}},
      {"debug.workerStackSizeInBytes", {ValueKind::Unsigned}},
      {"autoReport.all", {ValueKind::Bool}},
      {"autoReport.directory", {ValueKind::Text}},
      {"autoReport.outputGraphProfile", {ValueKind::Bool}},
      {"autoReport.outputExecutionProfile", {ValueKind::Bool}},
      {"autoReport.outputHtml", {ValueKind::Bool}}, // Aspen: report.html, the analyser page
      {"autoReport.outputLoweredVars", {ValueKind::Bool}},
      {"autoReport.outputArchive", {ValueKind::Bool}},
      {"autoReport.outputDebugInfo", {ValueKind::Bool}},
      {"autoReport.outputSerializedGraph", {ValueKind::Bool}},
      {"autoReport.streamAtEachRun", {ValueKind::Bool}},
      {"autoReport.executionProfileProgramRunCount", {ValueKind::Unsigned}},
      {"exchange.streamBufferOverlap", {ValueKind::Choice, {"none", "hostRearrangeOnly", "any"}}},
      {"exchange.enablePrefetch", {ValueKind::Bool}},
      {"target.saveArchive", {ValueKind::Text}},
      {"target.deterministicWorkers", {ValueKind::Choice, {"true", "false", "portable"}}},
      {"target.hostSyncTimeout", {ValueKind::Unsigned}},
      // Aspen's own (Poplar has no such key): fill the tile memory the program uses with
      // all-ones bytes at load, so that tensors read before any write are not silently 0.
      {"aspen.poisonUninitialisedMemory", {ValueKind::Bool}},
  };
  return options;
}

// Families whose every key is accepted: the profiler's settings, Poplar's
// compiler optimisation and stream-callback settings (no effect on the
// simulator), and Aspen's own compiler options (read by compileGraph).
const char *const acceptedPrefixes[] = {"profiler.", "opt.", "streamCallbacks.", "aspen."};

bool parseBool(const std::string &key, const std::string &value) {
  if (value == "true")
    return true;
  if (value == "false")
    return false;
  throw poplar::invalid_option("Engine option '" + key + "' must be \"true\" or \"false\", not \"" + value +
                               "\"");
}

void check(const std::string &key, const std::string &value) {
  auto it = knownOptions().find(key);
  if (it == knownOptions().end()) {
    for (const char *prefix : acceptedPrefixes)
      if (key.rfind(prefix, 0) == 0)
        return;
    throw poplar::invalid_option("Unrecognised engine option '" + key + "'");
  }
  const OptionSpec &spec = it->second;
  switch (spec.kind) {
  case ValueKind::Bool:
    parseBool(key, value);
    return;
  case ValueKind::Text:
    return;
  case ValueKind::Unsigned:
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
      throw poplar::invalid_option("Engine option '" + key + "' must be an unsigned integer, not \"" + value +
                                   "\"");
    return;
  case ValueKind::Choice: {
    std::string allowed;
    for (const char *choice : spec.choices) {
      if (value == choice)
        return;
      allowed += allowed.empty() ? "" : ", ";
      allowed += choice;
    }
    throw poplar::invalid_option("Engine option '" + key + "' must be one of " + allowed + ", not \"" +
                                 value + "\"");
  }
  }
}

bool flag(const poplar::OptionFlags &o, const char *key, bool otherwise) {
  return o.contains(key) ? o.at(key) == poplar::StringRef("true") : otherwise;
}

} // namespace

EngineOptions parseEngineOptions(const poplar::OptionFlags &options) {
  EngineOptions result;
  result.all = options;
  if (const char *env = std::getenv("POPLAR_ENGINE_OPTIONS"); env && *env) {
    poplar::OptionFlags fromEnvironment;
    poplar::readJSON(poplar::StringRef(env), fromEnvironment);
    for (const auto &[key, value] : fromEnvironment)
      result.all.set(key, value);
  }
  for (const auto &[key, value] : result.all)
    check(key, value);

  const poplar::OptionFlags &o = result.all;
  const bool all = flag(o, "autoReport.all", false);
  result.autoReportGraph = flag(o, "autoReport.outputGraphProfile", all);
  result.autoReportExecution = flag(o, "autoReport.outputExecutionProfile", all);
  result.autoReportHtml =
      (result.autoReportGraph || result.autoReportExecution) && flag(o, "autoReport.outputHtml", true);
  if (o.contains("autoReport.directory"))
    result.autoReportDirectory = o.at("autoReport.directory").str();
  result.allowOutOfMemory = flag(o, "debug.allowOutOfMemory", false);
  result.instrument = flag(o, "debug.instrument", false);
  result.poisonUninitialisedMemory = flag(o, "aspen.poisonUninitialisedMemory", false);
  return result;
}

SummaryOptions parseSummaryOptions(const poplar::OptionFlags &options) {
  SummaryOptions result;
  for (const auto &[key, value] : options) {
    if (key == "showExecutionSteps")
      result.showExecutionSteps = parseBool(key, value);
    else if (key == "showVarStorage")
      result.showVarStorage = parseBool(key, value);
    else if (key == "showOptimizations" || key == "showPerIpuMemoryUsage" || key == "showVirtualGraphs")
      parseBool(key, value);
    else
      throw poplar::invalid_option("Unrecognised profile summary option '" + key + "'");
  }
  return result;
}

} // namespace aspen::rt
