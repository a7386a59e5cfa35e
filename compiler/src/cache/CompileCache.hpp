// Copyright (c) Aspen contributors.
// The compile cache: executables on disk, keyed by everything that decides them.
#pragma once

#include "CompileOptions.hpp"
#include "exe/ExecutableData.hpp"
#include "ir/GraphData.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace aspen::cache {

/// Where the cache lives and how big it may grow.
struct CacheConfig {
  /// $ASPEN_CACHE_DIR/executables, else $XDG_CACHE_HOME/aspen/executables,
  /// else ~/.cache/aspen/executables, else <tmp>/aspen-<uid>/executables (per user,
  /// 0700); empty when that is not the user's own: nothing is cached.
  std::filesystem::path directory;
  /// ASPEN_COMPILE_CACHE_MAX_BYTES, default 2 GiB.
  std::uint64_t maxBytes = std::uint64_t(2) << 30;
  /// From the environment.
  static CacheConfig fromEnvironment();
};

/// A 128-bit hex key over the graph (every IR table, initial values, vertex
/// fields and their views), the programs and functions, the options that change
/// the output, the content hashes of the vertex libraries, the names of
/// registered perf estimators, the target, the executable format version and
/// the compiler build id.
std::string computeCacheKey(const ir::GraphData &graph, const std::vector<const ir::ProgramNode *> &programs,
                            const compiler::CompileOptions &options);

/// The cached executable for `key`, or null. Costs one file open whatever the
/// cache size; a hit marks the entry as recently used. Null, so that the caller
/// recompiles, unless the directory and the entry pass docs/caches.md's checks and
/// the entry records `key`; a corrupt entry or one recording another key is removed.
std::unique_ptr<exe::ExecutableData> lookup(const CacheConfig &config, const std::string &key);

/// Stores an executable atomically (an exclusive temporary file, then rename) after a
/// line recording `key`, in a directory that passes docs/caches.md's checks,
/// then evicts (see evict). Failures to write (a full disk, a file size limit, a
/// read-only directory) are logged, never thrown, and leave no temporary file:
/// the cache is an optimisation, and the compile goes on "not cached".
void store(const CacheConfig &config, const std::string &key, const exe::ExecutableData &exe);

/// What one eviction pass did.
struct EvictionReport {
  /// Cache entries removed to bring the cache under maxBytes.
  std::size_t entriesRemoved = 0;
  /// Temporary files of dead writers removed (see evict).
  std::size_t tempFilesRemoved = 0;
  /// Bytes in the cache directory afterwards: entries plus live writers' temporary files.
  std::uint64_t bytesAfter = 0;
};

/// One eviction pass (store runs it after every write). Temporary files
/// (`<key>.tmp.<pid>.<random>`) whose writer process is gone, or that are older than
/// kStaleTempAge whoever wrote them (a pid may be reused), are removed; live
/// writers' temporary files count towards the cache size but are never removed.
/// Then least-recently-used entries other than `keep` go while the total exceeds
/// maxBytes.
EvictionReport evict(const CacheConfig &config, const std::filesystem::path &keep = {});

/// A temporary file this old belongs to a dead writer even if its pid is alive.
inline constexpr std::chrono::hours kStaleTempAge{6};

/// The path of the entry for `key`.
std::filesystem::path entryPath(const CacheConfig &config, const std::string &key);

} // namespace aspen::cache
