// Copyright (c) Aspen contributors.
// Reading a profile report from disk (profile.json, or profile.pop: the same
// object in CBOR) with the checks every reader shares: aspen-vision, libpva and
// the page itself all see a report only through this.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace aspen::profile {

/// The newest report format version this build writes and reads.
inline constexpr int kReportVersion = 2;

/// Reads the report at `path`: a profile.json or profile.pop file, or a
/// directory holding one (profile.json preferred). Throws poplar::poplar_error
/// naming the file and what is wrong with it: missing, empty directory,
/// truncated or malformed JSON, not an Aspen profile, or a newer version.
/// `resolvedPath`, when given, receives the file actually read.
nlohmann::json readReport(const std::string &path, std::string *resolvedPath = nullptr);

/// The checks readReport makes on a parsed object (`file` names it in messages).
void checkReport(const nlohmann::json &report, const std::string &file);

/// Writes `report` to `<directory>/profile.json`, and `<directory>/profile.pop`
/// (CBOR) when `pop`, each through a temporary file and a rename.
void writeReportFiles(const std::string &directory, const nlohmann::json &report, bool pop);

/// Writes `contents` to `file` through a temporary file and a rename; throws
/// poplar_error naming the file when it cannot.
void writeFileAtomically(const std::string &file, const std::string &contents);

} // namespace aspen::profile
