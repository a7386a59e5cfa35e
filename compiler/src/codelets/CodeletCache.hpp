// Copyright (c) Aspen contributors.
// The per-user cache of compiled codelets:
//   <root>/codelets/<key>.gp        compiled vertex libraries, by cache key
//   <root>/codelets/lib/<hash>.so   shared objects, by content hash (what dlopen loads)
//   <root>/codelets/include-<hash>/ the embedded codelet headers
//   <root>/codelets/src/<hash>.cpp  codelet sources given as streams
// <root> is $ASPEN_CACHE_DIR, else $XDG_CACHE_HOME/aspen, else ~/.cache/aspen.
// Writes are atomic (temporary file + rename), so two processes compiling the
// same codelets at once both succeed and readers never see a partial file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aspen::codelets {

/// <root>/codelets, created if needed. Throws poplar_error if it cannot be made.
std::string codeletCacheDir();

/// Creates `dir` and its parents; false if that failed.
bool makeDirectories(const std::string &dir);

/// Writes `size` bytes to `path` atomically; false if the file could not be written.
bool writeFileAtomic(const std::string &path, const void *data, std::size_t size);
/// The file's bytes, or nothing if it cannot be read.
std::optional<std::vector<std::uint8_t>> readFileIfExists(const std::string &path);

/// `<cxx> --version`, run once per process and compiler.
const std::string &compilerIdentity(const std::string &cxx);

/// What a cache key is made of.
struct CodeletCacheKeyInput {
  std::vector<std::string> sources;      // absolute paths
  std::vector<std::string> compilerArgs; // the host compiler's arguments that change the output
  std::vector<std::string> includeDirs;  // user include directories, to find local headers
  std::string compiler;                  // the host compiler command
};

/// The local headers the sources include (found by scanning #include lines in
/// every preprocessor branch, relative to each file and to `includeDirs`).
std::vector<std::string> localIncludes(const std::vector<std::string> &sources,
                                       const std::vector<std::string> &includeDirs);

/// Hash of the sources' contents (and of the local headers they include), the
/// flags, the compiler's identity, the embedded headers and the Aspen version.
/// Throws graph_object_creation_error naming a source that cannot be read.
std::string codeletCacheKey(const CodeletCacheKeyInput &input);

} // namespace aspen::codelets
