// Copyright (c) Aspen contributors.
#include "util/TerminalProgress.hpp"

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace aspen {

TerminalProgress::TerminalProgress(std::string what, unsigned total)
    : what_(std::move(what)), total_(total), start_(std::chrono::steady_clock::now()) {
  const char *off = std::getenv("ASPEN_PROGRESS");
  if ((off && std::string(off) == "0") || !::isatty(STDERR_FILENO))
    return;
  if (const char *ms = std::getenv("ASPEN_PROGRESS_DELAY_MS"))
    delay_ = std::chrono::milliseconds(std::atol(ms));
  active_ = true;
  // Redraws while one item runs long, so the bar never stalls silently.
  ticker_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::milliseconds(250));
      if (!stop_)
        draw();
    }
  });
}

TerminalProgress::~TerminalProgress() {
  if (!active_)
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    if (drawn_) {
      std::fputs("\r\033[K", stderr); // erase the bar: quiet once done
      std::fflush(stderr);
    }
  }
  wake_.notify_all();
  ticker_.join();
}

void TerminalProgress::begin(const std::string &name) {
  if (!active_)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  current_ = name;
  draw();
}

void TerminalProgress::advance() {
  if (!active_)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  draw();
}

void TerminalProgress::draw() {
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  if (elapsed < delay_)
    return;
  constexpr unsigned width = 20;
  const unsigned filled = total_ ? std::min(width, done_ * width / total_) : 0;
  std::string bar(filled, '#');
  bar.append(width - filled, '.');
  const double seconds = std::chrono::duration<double>(elapsed).count();
  std::fprintf(stderr, "\r\033[K%s [%s] %u/%u %s  %.1f s", what_.c_str(), bar.c_str(), done_, total_,
               current_.c_str(), seconds);
  std::fflush(stderr);
  drawn_ = true;
}

} // namespace aspen
