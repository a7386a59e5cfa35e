// Copyright (c) Aspen contributors.
#include "CompileOptions.hpp"

#include "poplar/exceptions.hpp"

#include <cstdlib>

namespace aspen::compiler {
namespace {

constexpr const char *kAllowOutOfMemory = "debug.allowOutOfMemory";
constexpr const char *kCompileCache = "aspen.compileCache";
constexpr const char *kDumpIR = "aspen.dumpIR";
constexpr const char *kOwnedPrefix = "aspen.compile";

bool parseBool(const std::string &key, const std::string &value) {
  if (value == "true")
    return true;
  if (value == "false")
    return false;
  throw poplar::invalid_option("Option '" + key + "' must be \"true\" or \"false\", not \"" + value + "\"");
}

} // namespace

bool isCompilerOption(const std::string &key) {
  return key == kAllowOutOfMemory || key == kCompileCache || key == kDumpIR;
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
    if (key == kAllowOutOfMemory) {
      out.allowOutOfMemory = parseBool(key, value);
    } else if (key == kCompileCache) {
      out.useCache = parseBool(key, value);
      cacheGiven = true;
    } else if (key == kDumpIR) {
      if (value.empty())
        throw poplar::invalid_option("Option '" + key + "' needs a directory");
      out.dumpIRDir = value;
    } else if (key.rfind(kOwnedPrefix, 0) == 0) {
      throw poplar::invalid_option("Unrecognised compile option '" + key + "' (the compiler knows '" +
                                   std::string(kCompileCache) + "' and '" + kAllowOutOfMemory + "')");
    }
  }
  if (!cacheGiven) {
    const char *env = std::getenv("ASPEN_COMPILE_CACHE");
    out.useCache = env && (std::string(env) == "1" || std::string(env) == "true");
  }
  return out;
}

} // namespace aspen::compiler
