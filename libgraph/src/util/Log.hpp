// Copyright (c) Aspen contributors.
// Minimal levelled logging to stderr, controlled by POPLAR_LOG_LEVEL / ASPEN_LOG_LEVEL.
#pragma once

#include <sstream>
#include <string>

namespace aspen::log {

enum class Level { Trace = 0, Debug = 1, Info = 2, Warn = 3, Err = 4, Off = 5 };

/// The level set by the environment (read once).
Level threshold();
bool enabled(Level l);
void write(Level l, const std::string &message);

} // namespace aspen::log

#define ASPEN_LOG(level, expr)                                                                               \
  do {                                                                                                       \
    if (::aspen::log::enabled(::aspen::log::Level::level)) {                                                 \
      std::ostringstream aspen_log_os_;                                                                      \
      aspen_log_os_ << expr;                                                                                 \
      ::aspen::log::write(::aspen::log::Level::level, aspen_log_os_.str());                                  \
    }                                                                                                        \
  } while (0)
