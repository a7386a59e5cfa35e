// Copyright (c) Aspen contributors.
// The .gp vertex library file: a self-contained, versioned container of the
// vertex metadata (JSON) and the host shared object that implements the
// vertices. Layout (little-endian):
//
//   0   char[8]  magic "ASPENGP\0"
//   8   u32      format version (kGpFormatVersion)
//   12  u32      header size in bytes (64)
//   16  u64      metadata size
//   24  u64      shared object size
//   32  char[32] content hash (hex) of metadata + shared object
//   64  metadata (JSON, see docs/internals.md), then the shared object
#pragma once

#include "ir/GraphData.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aspen::codelets {

/// 2: the checksum became exe::Hash128 (version 1 files would read as corrupt).
constexpr std::uint32_t kGpFormatVersion = 2;

/// What a vertex library holds besides its code.
struct LibraryMetadata {
  std::string aspenVersion;
  std::string sharedObjectHash;                // content hash of the shared object
  std::vector<std::string> sources;            // what it was compiled from, for messages
  std::vector<std::string> targets;            // e.g. {"ipu2", "cpu"}; informational
  std::vector<ir::VertexTypeInfo> vertexTypes; // `library` left 0
  std::string compilerOutput;                  // the host compiler's warnings, replayed on a cache hit
};

/// A decoded .gp: the metadata and where the shared object is in the bytes.
struct GpContents {
  LibraryMetadata metadata;
  std::size_t sharedObjectOffset = 0;
  std::size_t sharedObjectSize = 0;
};

/// Builds the bytes of a .gp file.
std::vector<std::uint8_t> encodeGp(const LibraryMetadata &metadata, const std::uint8_t *sharedObject,
                                   std::size_t sharedObjectSize);

/// Checks and decodes a .gp file's bytes. Throws poplar::graph_object_load_error
/// naming `fileName` and the problem: not a .gp, truncated, another format
/// version, corrupt content or metadata.
GpContents decodeGp(const std::uint8_t *data, std::size_t size, const std::string &fileName);

/// Reads a whole file; throws graph_object_load_error naming it if it cannot.
std::vector<std::uint8_t> readBinaryFile(const std::string &path);

/// The metadata as JSON text and back (exposed for tests and popc --describe).
std::string metadataToJson(const LibraryMetadata &metadata);
LibraryMetadata metadataFromJson(const std::string &json, const std::string &fileName);

/// Poplar's C spelling of an element type id ("unsigned int") and back.
const char *elementTypeName(poplar::Type::Id id);
poplar::Type::Id elementTypeFromName(const std::string &name);

} // namespace aspen::codelets
