// Copyright (c) Aspen contributors.
// SPDX-License-Identifier: MIT
#include "ir/MutationGuard.hpp"

#include "poplar/exceptions.hpp"

#include <pthread.h>

#include <string>

namespace aspen::ir {

std::uintptr_t MutationGuard::currentThread() {
  // pthread_self is one load from the thread pointer on glibc, and never 0.
  return static_cast<std::uintptr_t>(pthread_self());
}

void MutationGuard::throwConcurrentUse(const char *operation, const char *otherOperation) {
  throw poplar::poplar_error(std::string(operation) + " was called while another thread is in " +
                             (otherOperation ? otherOperation : "a call that changes the same graph") +
                             " on the same graph: a poplar::Graph (and its virtual graphs) is not "
                             "thread-safe; build it from one thread, or serialise the calls with a mutex");
}

} // namespace aspen::ir
