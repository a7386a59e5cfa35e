// Copyright (c) Aspen contributors.
#include "exe/BuildInfo.hpp"

#include "exe/Hash.hpp"

#include <dlfcn.h>

#include <fstream>
#include <vector>

#ifndef ASPEN_VERSION
#error "ASPEN_VERSION (the package version) must be defined by the build (compiler/CMakeLists.txt)"
#endif

namespace aspen::exe {

const std::string &packageVersion() {
  static const std::string version = std::string("Aspen ") + ASPEN_VERSION;
  return version;
}

const std::string &compilerBuildId() {
  static const std::string id = [] {
    Dl_info info{};
    Hash64 h(0x6275696c64ull);
    h.string(packageVersion());
    if (dladdr(reinterpret_cast<const void *>(&compilerBuildId), &info) && info.dli_fname) {
      std::ifstream in(info.dli_fname, std::ios::binary);
      std::vector<char> buf(1 << 20);
      while (in) {
        in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
        h.update(buf.data(), static_cast<std::size_t>(in.gcount()));
      }
    }
    return toHex(h.digest());
  }();
  return id;
}

} // namespace aspen::exe
