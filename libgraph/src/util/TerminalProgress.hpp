// Copyright (c) Aspen contributors.
// A progress bar on stderr for long work (graph compiles, codelet compiles):
//   compile [##########..........] 4/7 liveness  1.8 s
// drawn only when stderr is a terminal and the work has taken longer than a
// second (ASPEN_PROGRESS_DELAY_MS overrides the delay; ASPEN_PROGRESS=0 turns
// the bar off), redrawn while a long item runs, and erased when done: a
// finished or short run leaves nothing on the terminal.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace aspen {

class TerminalProgress {
public:
  /// `what` names the work ("compile"); `total` is its number of items.
  TerminalProgress(std::string what, unsigned total);
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress &) = delete;
  TerminalProgress &operator=(const TerminalProgress &) = delete;

  /// Item `name` begins (thread-safe).
  void begin(const std::string &name);
  /// One item finished (thread-safe).
  void advance();

private:
  void draw(); // with mutex_ held
  bool active_ = false;
  std::string what_;
  unsigned total_;
  unsigned done_ = 0;
  std::string current_;
  bool drawn_ = false;
  bool stop_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::milliseconds delay_{1000};
  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread ticker_;
};

} // namespace aspen
