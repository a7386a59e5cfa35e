// Copyright (c) Aspen contributors.
// Running a command as a user's shell would (popc, a Makefile, a client program) and a
// temporary directory removed at scope end: shared by the tests that drive Aspen's tools.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace aspen::test {

/// A command's exit status (-1 when it did not exit normally) and its stdout and stderr.
struct CommandResult {
  int status;
  std::string output;
};

inline CommandResult runCommand(const std::string &command) {
  CommandResult r{-1, ""};
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    r.output.append(buffer, n);
  const int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// The SDK's popc (ASPEN_SDK_DIR, set by CTest for the tests that drive it).
inline std::string popc() {
  const char *sdk = std::getenv("ASPEN_SDK_DIR");
  REQUIRE(sdk != nullptr);
  return std::string(sdk) + "/bin/popc";
}

/// A codelet file of test/compat/codelets/ (ASPEN_SOURCE_DIR, set by CTest).
inline std::string compatCodeletFile(const std::string &name) {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  return std::string(root) + "/test/compat/codelets/" + name;
}

/// A fresh directory under /tmp, removed with everything in it when destroyed.
struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/aspen-test-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
};

} // namespace aspen::test
