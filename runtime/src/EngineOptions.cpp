// Copyright (c) Aspen contributors.
#include "EngineOptions.hpp"

#include "CompileOptions.hpp"
#include "OptionTable.hpp"

#include "poplar/exceptions.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <regex>
#include <stdexcept>

namespace aspen::rt {

namespace {

bool parseBool(const std::string &key, const std::string &value) {
  if (value == "true")
    return true;
  if (value == "false")
    return false;
  throw poplar::invalid_option("Option '" + key + "' must be \"true\" or \"false\", not \"" + value + "\"");
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
  // Every key is checked against the one option table (compiler/src/OptionTable.cpp).
  for (const auto &[key, value] : result.all)
    aspen::compiler::checkOption(key, value);

  const poplar::OptionFlags &o = result.all;
  const bool all = flag(o, "autoReport.all", false);
  result.autoReportGraph = flag(o, "autoReport.outputGraphProfile", all);
  result.autoReportExecution = flag(o, "autoReport.outputExecutionProfile", all);
  result.autoReportHtml =
      (result.autoReportGraph || result.autoReportExecution) && flag(o, "autoReport.outputHtml", true);
  result.autoReportDebugInfo =
      (result.autoReportGraph || result.autoReportExecution) && flag(o, "autoReport.outputDebugInfo", all);
  if (o.contains("autoReport.directory"))
    result.autoReportDirectory = o.at("autoReport.directory").str();
  result.allowOutOfMemory = flag(o, "debug.allowOutOfMemory", false);
  result.instrument = flag(o, "debug.instrument", false);
  result.poisonUninitialisedMemory = flag(o, "aspen.poisonUninitialisedMemory", false);
  result.checkTileWrites = flag(o, "aspen.checkTileWrites", false);
  result.exchangeInPlace = flag(o, "aspen.exchangeInPlace", true);
  result.profileHostComputeTime = flag(o, "aspen.profileHostComputeTime", false);
  auto stackBytes = [&](const char *key, std::uint64_t &out) {
    if (o.contains(key))
      out = aspen::compiler::parseStackBytes(key, o.at(key).str());
  };
  stackBytes("target.workerStackSizeInBytes", result.workerStackBytes);
  stackBytes("target.supervisorStackSizeInBytes", result.supervisorStackBytes);
  if (o.contains("aspen.maxRunCycles")) {
    const std::string text = o.at("aspen.maxRunCycles").str(); // digits only: checked by checkOption
    try {
      result.maxRunCycles =
          std::stoull(text, nullptr, text.size() > 2 && (text[1] == 'x' || text[1] == 'X') ? 16 : 10);
    } catch (const std::out_of_range &) {
      throw poplar::invalid_option("Engine option 'aspen.maxRunCycles' is too large: " + text);
    }
  }
  if (o.contains("aspen.maxRunSeconds")) {
    const std::string text = o.at("aspen.maxRunSeconds").str();
    char *end = nullptr;
    const double seconds = text.empty() ? -1 : std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(seconds >= 0) || seconds > 1e9)
      throw poplar::invalid_option(
          "Engine option 'aspen.maxRunSeconds' must be a number of seconds (0 for no "
          "bound), not \"" +
          text + "\"");
    result.maxRunSeconds = seconds;
  }
  // Lightweight profiling (docs/lightweight-profiling.md).
  for (const auto &[key, out] :
       {std::pair<const char *, std::string *>{"profiler.blocks.filter", &result.blocksFilter},
        {"profiler.programs.filter", &result.programsFilter}}) {
    if (!o.contains(key))
      continue;
    *out = o.at(key).str();
    try {
      std::regex check(*out);
    } catch (const std::regex_error &e) {
      throw poplar::invalid_option(std::string("Engine option '") + key +
                                   "' is not a valid regular expression (\"" + *out + "\"): " + e.what());
    }
  }
  if (o.contains("profiler.blocks.tile")) {
    // Decimal or 0x hexadecimal: checked by checkOption (an unsigned row); the range against
    // the target's tiles is checked by the engine.
    const std::string text = o.at("profiler.blocks.tile").str();
    unsigned long long tile = 0;
    try {
      tile = std::stoull(text, nullptr, text.size() > 2 && (text[1] == 'x' || text[1] == 'X') ? 16 : 10);
    } catch (const std::out_of_range &) {
      tile = ~0ull;
    }
    if (tile > std::numeric_limits<unsigned>::max())
      throw poplar::invalid_option("Engine option 'profiler.blocks.tile' is too large: " + text);
    result.blocksTile = static_cast<unsigned>(tile);
  }
  result.instrumentExternalExchange = flag(o, "debug.instrumentExternalExchange", false);
  return result;
}

std::uint64_t EngineOptions::hostStackBytes() const {
  return std::max(kMinHostStackBytes, kHostStackScale * std::max(workerStackBytes, supervisorStackBytes));
}

std::string EngineOptions::stackOptionsText() const {
  return "target.workerStackSizeInBytes = " + std::to_string(workerStackBytes) +
         " and target.supervisorStackSizeInBytes = " + std::to_string(supervisorStackBytes);
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
