// Copyright (c) Aspen contributors.
#include "util/Log.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

namespace aspen::log {

static Level parse(const char *s) {
  if (!s)
    return Level::Warn;
  if (!std::strcmp(s, "TRACE"))
    return Level::Trace;
  if (!std::strcmp(s, "DEBUG"))
    return Level::Debug;
  if (!std::strcmp(s, "INFO"))
    return Level::Info;
  if (!std::strcmp(s, "WARN"))
    return Level::Warn;
  if (!std::strcmp(s, "ERR"))
    return Level::Err;
  if (!std::strcmp(s, "OFF"))
    return Level::Off;
  return Level::Warn;
}

Level threshold() {
  static const Level level = [] {
    const char *a = std::getenv("ASPEN_LOG_LEVEL");
    return parse(a ? a : std::getenv("POPLAR_LOG_LEVEL"));
  }();
  return level;
}

bool enabled(Level l) {
  return l >= threshold() && l != Level::Off;
}

void write(Level l, const std::string &message) {
  static const char *names[] = {"T", "D", "I", "W", "E", ""};
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  std::cerr << "aspen[" << names[static_cast<int>(l)] << "] " << message << '\n';
}

} // namespace aspen::log
