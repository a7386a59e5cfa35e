// Copyright (c) Aspen contributors.
// SPDX-License-Identifier: MIT
//
// Catches most uses of one poplar::Graph from two threads at once. Poplar's
// Graph is not thread-safe (docs/internals.md); building one from two threads
// used to crash inside a std::vector. Each mutating Graph call marks its
// GraphData with the calling thread for its duration; a call from another
// thread that finds the mark throws instead of corrupting the graph.
//
// The mark is a relaxed load and store, not a compare-and-swap: it costs about
// nothing on the build path (a graph of 1M vertices makes millions of these
// calls), at the price of missing two calls that start within a few
// instructions of each other. It is a diagnostic, not a lock.
#pragma once

#include <atomic>
#include <cstdint>

namespace aspen::ir {

/// The mark a GraphData carries. Copying a GraphData makes another graph,
/// which nobody is changing yet.
class MutationMark {
public:
  MutationMark() = default;
  MutationMark(const MutationMark &) {}
  MutationMark &operator=(const MutationMark &) { return *this; }

private:
  friend class MutationGuard;
  std::atomic<std::uintptr_t> thread_{0};
  std::atomic<const char *> operation_{nullptr};
};

/// Marks `mark` as changed by this thread in `operation` (a string literal,
/// e.g. "Graph::addVertex") until it goes out of scope. Nested calls on one
/// thread (addVertex calling connect) are fine; a call from another thread
/// while the mark is held throws poplar::poplar_error naming both calls.
class MutationGuard {
public:
  MutationGuard(MutationMark &mark, const char *operation) : mark_(mark) {
    const std::uintptr_t self = currentThread();
    const std::uintptr_t holder = mark.thread_.load(std::memory_order_relaxed);
    if (holder == self)
      return;
    if (holder != 0)
      throwConcurrentUse(operation, mark.operation_.load(std::memory_order_relaxed));
    mark.operation_.store(operation, std::memory_order_relaxed);
    mark.thread_.store(self, std::memory_order_relaxed);
    outermost_ = true;
  }
  ~MutationGuard() {
    if (outermost_)
      mark_.thread_.store(0, std::memory_order_relaxed);
  }
  MutationGuard(const MutationGuard &) = delete;
  MutationGuard &operator=(const MutationGuard &) = delete;

private:
  static std::uintptr_t currentThread();
  [[noreturn]] static void throwConcurrentUse(const char *operation, const char *otherOperation);

  MutationMark &mark_;
  bool outermost_ = false;
};

} // namespace aspen::ir
