// Copyright (c) Aspen contributors.
// Reading a profile report from disk (profile.json, or profile.pop: the same
// object in CBOR) with the checks every reader shares: aspen-vision, libpva and
// the page itself all see a report only through this.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace poplar {
class Engine;
}

namespace aspen::profile {

/// The newest report format version this build writes and reads.
inline constexpr int kReportVersion = 2;

/// Reads the report at `path`: a profile.json or profile.pop file, or a
/// directory holding one (profile.json preferred). Throws poplar::poplar_error
/// naming the file and what is wrong with it: missing, empty directory,
/// truncated or malformed JSON, not an Aspen profile, or a newer version.
/// `resolvedPath`, when given, receives the file actually read.
nlohmann::json readReport(const std::string &path, std::string *resolvedPath = nullptr);

/// How deep a report, or a line of a .pvti trace, may nest. Aspen's reports nest a few
/// levels; the CBOR reader, and everything that walks a parsed value, recurses per level, so
/// a crafted file 100,000 levels deep would overflow the stack.
inline constexpr std::size_t kMaxReportDepth = 256;
/// Bounds on the target a report describes: larger counts are not a report Aspen wrote, and
/// would make readers allocate per tile without end.
inline constexpr std::uint64_t kMaxReportTiles = std::uint64_t(1) << 22;

/// Parses JSON (or CBOR when `cbor`) into `out`, nesting at most `maxDepth` levels. False
/// when the input nests deeper (nothing is recursed into past the limit); malformed input
/// throws nlohmann::json::parse_error as json::parse does.
bool parseLimited(const std::string &bytes, bool cbor, nlohmann::json &out,
                  std::size_t maxDepth = kMaxReportDepth);

/// `j` as JSON text; bytes of strings that are not UTF-8 (names are bytes in Poplar) become
/// U+FFFD instead of an exception.
std::string dumpText(const nlohmann::json &j, int indent = -1);

/// The checks readReport makes on a parsed object (`file` names it in messages).
void checkReport(const nlohmann::json &report, const std::string &file);

/// Writes `report` to `<directory>/profile.json`, and `<directory>/profile.pop`
/// (CBOR) when `pop`, each through a temporary file and a rename.
void writeReportFiles(const std::string &directory, const nlohmann::json &report, bool pop);

/// Writes `contents` to `file` through a temporary file and a rename; throws
/// poplar_error naming the file when it cannot.
void writeFileAtomically(const std::string &file, const std::string &contents);

/// The report `engine` would write with autoReport now: its graph part always, and its
/// execution part (every run since the engine was made or its profile reset) when
/// `includeExecution`. Defined in libpoplar (runtime/src/Engine.cpp) for libpva's
/// `Engine::getReport`; throws poplar_error for a moved-from engine.
nlohmann::json engineReport(const poplar::Engine &engine, bool includeExecution);

} // namespace aspen::profile
