// Copyright (c) Aspen contributors.
// Issue 24 item 4: one process, one build of PopLibs. A program uses Aspen's libpop*.so with
// Aspen's .gp files, or PopLibs built from source with its own; libpoplar refuses a mix:
//  - Aspen's and another build's PopLibs libraries loaded together (Graph construction);
//  - <lib>.gp of one build added while the other build's lib<lib>.so is loaded (addCodelets).
// PopLibs itself is not needed: the other build is simulated by libraries named libpopops.so
// and libpopnn.so (test/error/foreign_poplib.cpp) that lack Aspen's marker symbol, with a
// copy of a vertex library as "their" popops.gp. Each scenario runs in a child process, so
// what it loads does not stay loaded for the next.
#include "util/PoplibsBuilds.hpp"

#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>

namespace {

std::string sdkLib() {
  const char *sdk = std::getenv("ASPEN_SDK_DIR");
  return std::string(sdk ? sdk : "") + "/lib";
}
const std::string foreignDir = ASPEN_FOREIGN_POPLIBS_DIR;

// "" when f throws a poplar_error whose message holds every fragment; else what went wrong.
std::string expectRefusal(const std::function<void()> &f, std::initializer_list<std::string> fragments) {
  try {
    f();
  } catch (const poplar::poplar_error &e) {
    const std::string what = e.what();
    for (const std::string &fragment : fragments)
      if (what.find(fragment) == std::string::npos)
        return "message '" + what + "' lacks '" + fragment + "'";
    return "";
  } catch (const std::exception &e) {
    return std::string("not a poplar_error: ") + e.what();
  }
  return "nothing was refused";
}

std::string expectAccepted(const std::function<void()> &f) {
  try {
    f();
  } catch (const std::exception &e) {
    return std::string("refused: ") + e.what();
  }
  return "";
}

std::string load(const std::string &path) {
  if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL))
    return std::string("dlopen: ") + ::dlerror();
  return "";
}

// Runs the scenario in a child process; its first failure comes back through a pipe.
void inChild(const std::function<std::string()> &scenario) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string failure;
    try {
      failure = scenario();
    } catch (const std::exception &e) {
      failure = std::string("unexpected exception: ") + e.what();
    }
    if (!failure.empty() && ::write(fds[1], failure.data(), failure.size()) < 0)
      ::_exit(3);
    ::_exit(failure.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  std::string failure;
  char buffer[512];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;)
    failure.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(failure);
  CHECK(failure.empty());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

#define STEP(x)                                                                                              \
  do {                                                                                                       \
    const std::string why_ = (x);                                                                            \
    if (!why_.empty())                                                                                       \
      return std::string(#x) + ": " + why_;                                                                  \
  } while (0)

// "Their" popops.gp: a copy of a vertex library, beside the stand-in libpopops.so.
void placeForeignGp() {
  std::filesystem::copy_file(sdkLib() + "/popops.gp", foreignDir + "/popops.gp",
                             std::filesystem::copy_options::overwrite_existing);
}

} // namespace

TEST_CASE("issue 24 item 4: Aspen's PopLibs libraries alone are one build", "[error][poplibs]") {
  inChild([] {
    STEP(load(sdkLib() + "/libpoplin.so")); // and its libpopops, libpoputil
    for (const auto &l : aspen::util::loadedPoplibsLibraries())
      if (!l.aspens)
        return "lib" + l.name + ".so at " + l.path + " is not recognised as Aspen's";
    if (aspen::util::loadedPoplibsLibraries().size() < 3)
      return std::string("libpoplin, libpopops and libpoputil are not all found");
    STEP(expectAccepted([] { poplar::Graph g(poplar::Target::createCPUTarget()); }));
    return std::string();
  });
}

TEST_CASE("issue 24 item 4: Aspen's libpoplin with another build's libpopnn is refused", "[error][poplibs]") {
  inChild([] {
    STEP(load(sdkLib() + "/libpoplin.so"));
    STEP(load(foreignDir + "/libpopnn.so"));
    STEP(expectRefusal([] { poplar::Graph g(poplar::Target::createCPUTarget()); },
                       {"Graph: ", "two builds", "libpoplin.so", "Aspen's", "libpopnn.so", foreignDir,
                        "not Aspen's", "LD_LIBRARY_PATH"}));
    return std::string();
  });
}

TEST_CASE("issue 24 item 4: a PopLibs test program run on Aspen's libraries is refused", "[error][poplibs]") {
  // Measured: with Aspen's lib/ first on LD_LIBRARY_PATH, PopLibs' random_generator loaded Aspen's
  // libpoprand, libpopops and libpoputil beside PopLibs' own libpoplibs_test.so.
  inChild([] {
    STEP(load(sdkLib() + "/libpoprand.so"));
    STEP(load(foreignDir + "/libpoplibs_test.so"));
    STEP(expectRefusal([] { poplar::Graph g(poplar::Target::createCPUTarget()); },
                       {"two builds", "libpoplibs_test.so", "not Aspen's", "Aspen's"}));
    return std::string();
  });
}

TEST_CASE("issue 24 item 4: a program linked against another build's libpopops but given Aspen's is refused",
          "[error][poplibs]") {
  // The case the two-builds check cannot see: only Aspen's libpopops is loaded, but the program
  // (here a library standing for it) was linked against PopLibs' own (SONAME libpopops.so) and the
  // dynamic loader found Aspen's (SONAME libpopops.so.0) first.
  inChild([] {
    STEP(load(foreignDir + "/program/libforeign_program.so"));
    bool aspensPopops = false;
    for (const auto &l : aspen::util::loadedPoplibsLibraries())
      aspensPopops |= l.name == "popops" && l.aspens;
    if (!aspensPopops)
      return std::string("the stand-in program did not get Aspen's libpopops.so");
    STEP(expectRefusal([] { poplar::Graph g(poplar::Target::createCPUTarget()); },
                       {"Graph: ", "libforeign_program.so", "linked against another build of libpopops.so",
                        "needs 'libpopops.so'", "Aspen's is 'libpopops.so.0'", "LD_LIBRARY_PATH"}));
    return std::string();
  });
}

TEST_CASE("issue 24 item 4: a mix loaded after the graph is made is refused at addCodelets",
          "[error][poplibs]") {
  inChild([] {
    poplar::Graph g(poplar::Target::createCPUTarget());
    STEP(load(foreignDir + "/libpopops.so"));
    STEP(load(sdkLib() + "/libpoprand.so"));
    STEP(expectRefusal([&] { g.addCodelets(sdkLib() + "/poprand.gp"); },
                       {"Graph::addCodelets", "two builds", "libpoprand.so", "libpopops.so"}));
    return std::string();
  });
}

TEST_CASE("issue 24 item 4: Aspen's popops.gp in a program of another build's libpopops is refused",
          "[error][poplibs]") {
  placeForeignGp();
  inChild([] {
    STEP(load(foreignDir + "/libpopops.so"));
    poplar::Graph g(poplar::Target::createCPUTarget());
    STEP(expectRefusal([&] { g.addCodelets(sdkLib() + "/popops.gp"); },
                       {"Graph::addCodelets", sdkLib() + "/popops.gp", "another build of popops",
                        foreignDir + "/libpopops.so", "not Aspen's", foreignDir + "/popops.gp"}));
    // Its own popops.gp, beside it, is accepted; so is one its override names.
    STEP(expectAccepted([&] { g.addCodelets(foreignDir + "/popops.gp"); }));
    ::setenv("IPU_POPOPS_GP", (sdkLib() + "/popops.gp").c_str(), 1);
    poplar::Graph h(poplar::Target::createCPUTarget());
    STEP(expectAccepted([&] { h.addCodelets(sdkLib() + "/popops.gp"); }));
    return std::string();
  });
}

TEST_CASE("issue 24 item 4: another build's popops.gp in a program of Aspen's libpopops is refused",
          "[error][poplibs]") {
  placeForeignGp();
  inChild([] {
    STEP(load(sdkLib() + "/libpopops.so"));
    poplar::Graph g(poplar::Target::createCPUTarget());
    STEP(expectRefusal([&] { g.addCodelets(foreignDir + "/popops.gp"); },
                       {foreignDir + "/popops.gp", "another build of popops", "Aspen's"}));
    STEP(expectAccepted([&] { g.addCodelets(sdkLib() + "/popops.gp"); }));
    return std::string();
  });
}
