// Copyright (c) Aspen contributors.
// Files compiled into libpoplar: the headers codelets see (vertices/include)
// and the support headers of the generated registration units. The codelet
// compiler writes them to the cache once and compiles against that copy, so a
// libpoplar never depends on where its SDK tree was installed, and any change to
// a header changes the cache key of every compiled codelet.
#pragma once

#include <cstddef>
#include <string>

namespace aspen::codelets {

struct EmbeddedFile {
  const char *path; // relative include path, e.g. "poplar/Vertex.hpp"
  const unsigned char *data;
  std::size_t size;
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kNumEmbeddedFiles;
/// The Aspen version that built this libpoplar ("0.1.0").
extern const char *const kAspenVersion;

/// A directory holding every embedded file at its relative path (created in the
/// codelet cache on first use, named by a hash of the contents).
std::string embeddedIncludeDir();
/// Hash of all embedded files and the Aspen version, part of every cache key.
const std::string &embeddedFilesHash();

} // namespace aspen::codelets
