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
#include <map>
#include <string>
#include <vector>

namespace aspen::codelets {

/// 2: the checksum became exe::Hash128 (version 1 files would read as corrupt).
/// 3: a library may hold several shared objects (popc links .gp inputs into one
///    library); the metadata lists them ("sharedObjects") and each vertex names its
///    part. Version 2 files (one shared object) are still read.
/// 4: a library also carries the relocatable objects its shared object was linked
///    from ("objects", after the shared objects), so that libraries link into one
///    image (docs/codelets.md, "Linking"); "undefined" lists the symbols no object
///    defines (the shared object then only describes the vertex types).
/// 5: a library may carry its IPU build (`ipuBuild`, a whole .gp after the objects;
///    docs/codelets.md, "Which build runs where"). Only such libraries are written as 5,
///    so that readers of format 4 still read every other library.
constexpr std::uint32_t kGpFormatVersion = 5;
constexpr std::uint32_t kGpFormatWithoutIpuBuild = 4;
constexpr std::uint32_t kGpOldestReadableVersion = 2;

/// Bounds the reader enforces on metadata (a vertex object lives in one tile's memory).
constexpr std::uint32_t kMaxVertexObjectBytes = 1u << 24;
constexpr std::uint32_t kMaxFieldAlign = 1u << 16;

/// One shared object of a library, in the order they follow the metadata.
struct SharedObjectRef {
  std::string hash;       // content hash of its bytes
  std::uint64_t size = 0; // bytes
};

/// A relocatable object a library's shared object was linked from (format 4).
struct ObjectRef {
  std::string name;       // the source it was compiled from ("a.cpp"), for messages
  std::string hash;       // content hash of its bytes
  std::uint64_t size = 0; // bytes
};

/// What a vertex library holds besides its code.
struct LibraryMetadata {
  std::string aspenVersion;
  std::string sharedObjectHash;                // content hash of the shared object
  std::vector<std::string> sources;            // what it was compiled from, for messages
  std::vector<std::string> targets;            // e.g. {"ipu2", "cpu"}; informational
  std::vector<ir::VertexTypeInfo> vertexTypes; // `library` left 0
  std::string compilerOutput;                  // the host compiler's warnings, replayed on a cache hit
  /// The codelet cache key it was compiled under (codeletCacheKey): a cache entry is used
  /// only under the key it records (docs/caches.md). Empty in libraries popc links.
  std::string cacheKey;
  /// The shared objects (one unless popc linked .gp inputs); empty = one, the whole region.
  std::vector<SharedObjectRef> sharedObjects;
  /// Parallel to vertexTypes: the index of the shared object that implements each
  /// (empty = all in part 0).
  std::vector<std::uint32_t> vertexParts;
  /// Parallel to sources: how many vertex types each source declared (empty = unknown).
  std::vector<std::uint32_t> vertexCounts;
  /// Other names of vertex types: a template instantiation as the source wrote it with
  /// defaulted arguments left out ("Foo<float>") -> its canonical name ("Foo<float,2>").
  std::map<std::string, std::string> aliases;
  /// The relocatable objects (empty: a library of format 2 or 3, which cannot be linked
  /// again), in the order they follow the shared objects; and the tokens of their
  /// registration units (RegistrationUnit.hpp), which the linker's entry unit lists.
  std::vector<ObjectRef> objects;
  std::vector<std::string> units;
  /// Symbols (mangled) the objects use and none defines. Non-empty: the library must be
  /// linked with the ones that define them before it runs; its shared object only
  /// describes the vertex types (the missing symbols are stubs).
  std::vector<std::string> undefined;
  /// The library's IPU build (docs/codelets.md, "Which build runs where"): a whole .gp
  /// compiled with __IPU__ for `ipuBuild.name` (the architecture, "ipu2"), which a
  /// DeviceManager IPU device runs instead of this (host) build. Its bytes follow the
  /// objects; size 0: none.
  ObjectRef ipuBuild;
};

/// A decoded .gp: the metadata and where the shared object is in the bytes.
struct GpContents {
  LibraryMetadata metadata;
  std::size_t sharedObjectOffset = 0; // the whole shared-object region (all parts)
  std::size_t sharedObjectSize = 0;
  struct Part {
    std::size_t offset = 0; // in the file's bytes
    std::size_t size = 0;
  };
  std::vector<Part> parts;       // at least one; metadata.sharedObjects has the same length
  std::vector<Part> objectParts; // parallel to metadata.objects
  Part ipuBuild;                 // metadata.ipuBuild's bytes (size 0: none)
};

/// Builds the bytes of a .gp file.
struct GpInput {
  const std::uint8_t *bytes = nullptr;
  std::size_t size = 0;
  std::string name; // for messages
};
/// `objects` (parallel to metadata.objects, whose hashes and sizes are filled in)
/// follow the shared object.
std::vector<std::uint8_t> encodeGp(const LibraryMetadata &metadata, const std::uint8_t *sharedObject,
                                   std::size_t sharedObjectSize, const std::vector<GpInput> &objects = {});

/// Puts decoded libraries side by side in one .gp, their shared objects the parts of
/// one library (for inputs without objects, which cannot be linked again; see
/// linkCodeletLibraries in CodeletCompiler.hpp). Throws graph_object_creation_error
/// naming a vertex type defined by two inputs.
std::vector<std::uint8_t> linkGp(const std::vector<GpInput> &inputs, const std::vector<std::string> &targets);

/// `host` (a .gp) with `ipu` (a .gp built with __IPU__ for `arch`) as its IPU build,
/// replacing any it had; `ipu` empty: `host` without an IPU build.
std::vector<std::uint8_t> withIpuBuild(const std::vector<std::uint8_t> &host,
                                       const std::vector<std::uint8_t> &ipu, const std::string &arch);
/// The IPU build a .gp carries (empty: none). `bytes` must have been checked (decodeGp).
std::vector<std::uint8_t> ipuBuildOf(const std::uint8_t *bytes, std::size_t size,
                                     const std::string &fileName);

/// Checks and decodes a .gp file's bytes. Throws poplar::graph_object_load_error
/// naming `fileName` and the problem: not a .gp, truncated, another format
/// version, corrupt content or metadata. Every count, offset, size, alignment and
/// type in the metadata is checked before use (a field lies inside its vertex
/// object, its size fits its shape, ...), so the metadata may come from anyone;
/// the shared object is native code, and loading it means trusting it. This is the
/// entry point a fuzzer of .gp files calls.
GpContents decodeGp(const std::uint8_t *data, std::size_t size, const std::string &fileName);

/// The bytes of a library a graph recorded (Graph::addCodelets): kept in memory, or
/// read again from its file and checked against the content hash recorded then.
/// Throws graph_object_load_error naming the file and `neededBy` (defined in
/// GraphCodelets.cpp).
std::vector<std::uint8_t> readCodeletLibrary(const ir::CodeletLibrary &library, const std::string &neededBy);

/// Reads a whole file; throws graph_object_load_error naming it if it cannot.
std::vector<std::uint8_t> readBinaryFile(const std::string &path);

/// The metadata as JSON text and back (exposed for tests and popc --describe).
std::string metadataToJson(const LibraryMetadata &metadata);
LibraryMetadata metadataFromJson(const std::string &json, const std::string &fileName);

/// Checks a library's vertex types (what decodeGp checks of the metadata, and what
/// the codelet compiler checks of a fresh library): throws graph_object_load_error
/// naming `fileName`, the vertex type and the field.
void validateVertexTypes(const std::vector<ir::VertexTypeInfo> &types, const std::string &fileName);

/// Poplar's C spelling of an element type id ("unsigned int") and back.
const char *elementTypeName(poplar::Type::Id id);
poplar::Type::Id elementTypeFromName(const std::string &name);

} // namespace aspen::codelets
