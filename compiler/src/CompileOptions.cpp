// Copyright (c) Aspen contributors.
#include "CompileOptions.hpp"

#include "OptionTable.hpp"

#include "poplar/exceptions.hpp"

#include <algorithm>
#include <cstdlib>

namespace aspen::compiler {
namespace {

constexpr const char *kAllowOutOfMemory = "debug.allowOutOfMemory";
constexpr const char *kCompileCache = "aspen.compileCache";
constexpr const char *kDumpIR = "aspen.dumpIR";
constexpr const char *kOwnedPrefix = "aspen.compile";
constexpr const char *kStreamingMemory = "aspen.streamingMemory";
constexpr const char *kStreamingMemoryPinned = "aspen.streamingMemoryPinned";

bool parseBool(const std::string &key, const std::string &value) {
  if (value == "true")
    return true;
  if (value == "false")
    return false;
  throw poplar::invalid_option("Option '" + key + "' must be \"true\" or \"false\", not \"" + value + "\"");
}

} // namespace

std::uint64_t parseStackBytes(const std::string &key, const std::string &text) {
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string digits = hex ? text.substr(2) : text;
  const bool ok =
      !digits.empty() && digits.size() <= 8 &&
      digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") == std::string::npos;
  const std::uint64_t bytes = ok ? std::stoull(digits, nullptr, hex ? 16 : 10) : 0;
  if (bytes == 0 || bytes > (1u << 20))
    throw poplar::invalid_option("Option '" + key + "' must be from 1 to 1048576 bytes, not \"" + text +
                                 "\"");
  return bytes;
}

bool isCompilerOption(const std::string &key) {
  return key == kAllowOutOfMemory || key == kCompileCache || key == kDumpIR || key == kStreamingMemory ||
         key == kStreamingMemoryPinned;
}

CompileOptions parseCompileOptions(const poplar::OptionFlags &given) {
  poplar::OptionFlags options = given;
  if (const char *env = std::getenv("POPLAR_ENGINE_OPTIONS"); env && *env) {
    poplar::OptionFlags fromEnvironment;
    poplar::readJSON(poplar::StringRef(env), fromEnvironment);
    for (const auto &[key, value] : fromEnvironment)
      options.set(key, value);
  }
  CompileOptions out;
  bool cacheGiven = false;
  for (const auto &[key, value] : options) {
    checkOption(key, value);
    if (key == "debug.loweredVarDumpFile") {
      out.loweredVarDumpFile = value;
    } else if (key == "target.workerStackSizeInBytes") {
      out.workerStackBytes = parseStackBytes(key, value);
    } else if (key == "target.supervisorStackSizeInBytes") {
      out.supervisorStackBytes = parseStackBytes(key, value);
    } else if (key == "target.saveArchive") {
      if (value.empty())
        throw poplar::invalid_option("Option 'target.saveArchive' needs a file name");
      out.saveArchive = value;
    } else if (key == kAllowOutOfMemory) {
      out.allowOutOfMemory = parseBool(key, value);
    } else if (key == kCompileCache) {
      out.useCache = parseBool(key, value);
      cacheGiven = true;
    } else if (key == kDumpIR) {
      if (value.empty())
        throw poplar::invalid_option("Option '" + key + "' needs a directory");
      out.dumpIRDir = value;
    } else if (key == kStreamingMemory) {
      if (value != "off" && value != "auto")
        throw poplar::invalid_option("Option '" + key + "' must be \"off\" or \"auto\", not \"" + value +
                                     "\"");
      out.streamingMemoryAuto = value == "auto";
    } else if (key == kStreamingMemoryPinned) {
      std::size_t begin = 0;
      while (begin <= value.size()) {
        const std::size_t comma = std::min(value.find(',', begin), value.size());
        if (comma > begin)
          out.streamingMemoryPinned.push_back(value.substr(begin, comma - begin));
        begin = comma + 1;
      }
    } else if (key.rfind(kOwnedPrefix, 0) == 0) {
      throw poplar::invalid_option("Unrecognised compile option '" + key + "' (the compiler knows '" +
                                   std::string(kCompileCache) + "' and '" + kAllowOutOfMemory + "')");
    }
  }
  // autoReport files the compiler writes (given explicitly; autoReport.all does not imply them).
  const std::string dir =
      options.contains("autoReport.directory") ? options.at("autoReport.directory").str() : ".";
  if (options.contains("autoReport.outputLoweredVars") &&
      options.at("autoReport.outputLoweredVars") == "true" && out.loweredVarDumpFile.empty()) {
    out.loweredVarDumpFile = dir + "/vars.json";
    out.makeReportDirectory = true;
  }
  if (options.contains("autoReport.outputSerializedGraph") &&
      options.at("autoReport.outputSerializedGraph") == "true")
    out.serializedGraphFile = dir + "/serialized_graph.json";
  if (!cacheGiven) {
    const char *env = std::getenv("ASPEN_COMPILE_CACHE");
    out.useCache = env && (std::string(env) == "1" || std::string(env) == "true");
  }
  return out;
}

} // namespace aspen::compiler
