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

std::string embeddedIncludeDir() {
  // Not remembered across calls: the cache directory may change (ASPEN_CACHE_DIR) or be
  // removed while the process runs; the marker is one stat.
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string root = codeletWorkRoot() + "/include-" + embeddedFilesHash().substr(0, 16);
  // A marker written last tells that every file is in place; files are written
  // atomically, so processes filling the directory at once agree.
  const std::string marker = root + "/.complete";
  struct stat st;
  if (::lstat(marker.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
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
  return root;
}

} // namespace aspen::codelets
