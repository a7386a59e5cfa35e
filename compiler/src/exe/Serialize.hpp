// Copyright (c) Aspen contributors.
// The on-disk form of an executable (docs/executable-format.md).
#pragma once

#include "exe/ExecutableData.hpp"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace aspen::exe {

/// The format this Aspen writes and the only one it reads.
/// 3: codeletData (each tile's copy of a codelet library's writable data); 4: the Streaming
/// Memory layout; 5: counted vertex instances (cycles from the code).
inline constexpr std::uint32_t kFormatVersion = 5;
/// Bytes of the fixed header that precedes the payload.
inline constexpr std::size_t kHeaderBytes = 48;

/// The executable as bytes: a 48-byte header (magic "ASPENEXE", format
/// version, payload size, 64-bit checksum of the payload, compiler build id)
/// then tagged sections. Identical executables give identical bytes.
std::vector<std::uint8_t> serializeToBytes(const ExecutableData &exe);
void serialize(const ExecutableData &exe, std::ostream &out);

/// Reads an executable. Throws `poplar::graph_object_load_error` whose message
/// says whether the input is not an Aspen executable, truncated, of another
/// format version, corrupt (checksum mismatch or malformed sections), or (when
/// `checkPackageHash`) written by another Aspen release. `what` names the input
/// in messages (a file path or "stream").
std::unique_ptr<ExecutableData> deserializeFromBytes(const std::uint8_t *data, std::size_t size,
                                                     bool checkPackageHash,
                                                     const std::string &what = "stream");
/// Reads exactly one executable from the stream (nothing after it).
std::unique_ptr<ExecutableData> deserialize(std::istream &in, bool checkPackageHash,
                                            const std::string &what = "stream");

/// Every parameter of a target as text (for cache keys).
std::string targetFingerprint(const ir::TargetData &target);

} // namespace aspen::exe
