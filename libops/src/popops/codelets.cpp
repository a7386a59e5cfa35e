// Copyright (c) Aspen contributors.
// popops::addCodelets: loads popops.gp, found beside libpopops.so (or at $ASPEN_POPOPS_GP).
#include "popops/codelets.hpp"

#include "poputil/exceptions.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <sys/stat.h>

namespace popops {

namespace {

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The directory of the shared object that holds this function.
std::string libraryDirectory() {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void *>(&libraryDirectory), &info) == 0 || !info.dli_fname)
    return std::string();
  const std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string codeletsPath() {
  if (const char *env = std::getenv("ASPEN_POPOPS_GP"))
    if (*env)
      return env;
  return libraryDirectory() + "/popops.gp";
}

} // namespace

void addCodelets(poplar::Graph &graph) {
  // Adding the same library twice is harmless (Graph::addCodelets returns false), but a
  // cheap check first avoids reading the file again.
  if (graph.hasCodelet("popops::Fill<float>"))
    return;
  const std::string path = codeletsPath();
  if (!fileExists(path))
    throw poputil::poplibs_error("popops::addCodelets: vertex library " + path +
                                 " not found (set ASPEN_POPOPS_GP to its location)");
  graph.addCodelets(poplar::StringRef(path));
}

} // namespace popops
