// Copyright (c) Aspen contributors.
#include "codelets/EmbeddedFiles.hpp"

#include "codelets/CodeletCache.hpp"
#include "codelets/ContentHash.hpp"
#include "poplar/exceptions.hpp"

#include <mutex>
#include <sys/stat.h>

namespace aspen::codelets {

const std::string &embeddedFilesHash() {
  static const std::string hash = [] {
    ContentHasher hasher;
    hasher.addField(kAspenVersion);
    for (std::size_t i = 0; i < kNumEmbeddedFiles; ++i)
      hasher.addField(kEmbeddedFiles[i].path)
          .addField(std::string_view(reinterpret_cast<const char *>(kEmbeddedFiles[i].data),
                                     kEmbeddedFiles[i].size));
    return hasher.hex();
  }();
  return hash;
}

const std::string &embeddedIncludeDir() {
  static std::mutex mutex;
  static std::string dir;
  std::lock_guard<std::mutex> lock(mutex);
  if (!dir.empty())
    return dir;
  const std::string root = codeletCacheDir() + "/include-" + embeddedFilesHash().substr(0, 16);
  // A marker written last tells that every file is in place; files are written
  // atomically, so processes filling the directory at once agree.
  const std::string marker = root + "/.complete";
  struct stat st;
  if (::stat(marker.c_str(), &st) != 0) {
    for (std::size_t i = 0; i < kNumEmbeddedFiles; ++i) {
      const std::string path = root + "/" + kEmbeddedFiles[i].path;
      const std::size_t slash = path.rfind('/');
      if (!makeDirectories(path.substr(0, slash)) ||
          !writeFileAtomic(path, kEmbeddedFiles[i].data, kEmbeddedFiles[i].size))
        throw poplar::poplar_error("Cannot write the codelet headers to '" + root + "'");
    }
    if (!writeFileAtomic(marker, "", 0))
      throw poplar::poplar_error("Cannot write the codelet headers to '" + root + "'");
  }
  dir = root;
  return dir;
}

} // namespace aspen::codelets
