// Copyright (c) Aspen contributors.
// The writable data of a codelet shared object (its globals and statics, those
// of C code compiled into it, function-local statics and their guards): which
// bytes of the loaded object each tile that runs its code owns a copy of
// (docs/tile-model.md, "What a tile owns"). Found from the ELF file itself, so
// the graph compiler (which reserves a copy in each tile's memory) and the
// runtime (which swaps a tile's copy in around its vertices) agree on it
// without loading anything.
//
//   DataLayout d = analyseWritableData(so, size, "my.gp");
//   if (d.stateful()) reserve d.bytes on each tile that runs its vertices;
#pragma once

#include "ir/GraphData.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aspen::codelets {

/// A run of the object's writable bytes that a tile owns.
struct DataPiece {
  std::uint64_t address = 0; // virtual address in the shared object (add the load base)
  std::uint32_t size = 0;
  std::uint32_t offset = 0; // where the run sits in a tile's copy
};

/// What of one shared object's writable memory is per-tile data.
struct DataLayout {
  std::vector<DataPiece> pieces;    // ascending address
  std::uint32_t bytes = 0;          // size of a tile's copy (0: stateless, costs nothing)
  std::vector<std::string> symbols; // the data's symbols (a few, for messages and logs)
  bool stateful() const { return bytes != 0; }
};

/// Tiles' copies of data are aligned to this (a piece starts at a multiple of it).
constexpr std::uint32_t kDataAlign = 8;
/// A shared object's per-tile data may not exceed this (a tile has less memory).
constexpr std::uint64_t kMaxDataBytes = 1u << 24;

/// Analyses a shared object's bytes: its writable memory (PT_LOAD segments with
/// PF_W, less PT_GNU_RELRO) holds per-tile data if its symbol table names a data
/// object there that neither the toolchain (`__dso_handle`, `completed.0`,
/// `DW.ref.*`, `__cpu_model`) nor Aspen's registration code (`aspen_codelet*`,
/// the print sink) put there. The pieces are the writable runs between those
/// excluded objects that hold such a symbol. Throws graph_object_load_error
/// naming `name` for a file that is not a 64-bit little-endian ELF object, or
/// one without a symbol table (stripped) whose data cannot be told apart.
DataLayout analyseWritableData(const std::uint8_t *so, std::size_t size, const std::string &name);

/// The size of a tile's copy of a whole library's data: its stateful shared
/// objects' copies one after the other, each starting at a multiple of
/// kDataAlign (0: stateless). Read once per library per process (by content
/// hash). Bytes that are not a .gp file (a hand-made graph IR) reserve nothing:
/// the loader refuses them. Throws graph_object_load_error naming the library
/// and `neededBy` when the library cannot be read or its data handled.
std::uint32_t libraryDataBytes(const ir::CodeletLibrary &library, const std::string &neededBy);

/// Where each part's copy starts in the library's copy, and its total size.
std::uint32_t layOutLibraryData(const std::vector<const DataLayout *> &parts,
                                std::vector<std::uint32_t> &offsets);

} // namespace aspen::codelets
