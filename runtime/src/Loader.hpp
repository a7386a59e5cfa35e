// Copyright (c) Aspen contributors.
// Puts an executable on the simulated device: checks that it is well formed,
// writes its memory image (blobs, then relocations), and finds the compute
// entry of each vertex type in its vertex library.
#pragma once

#include "Executor.hpp"
#include "TileMemory.hpp"
#include "codelets/VertexLibrary.hpp"
#include "exe/ExecutableData.hpp"

#include <mutex>
#include <ostream>
#include <vector>

namespace aspen::rt {

/// Throws graph_object_load_error naming the first inconsistency (an index or
/// address out of range) so that a corrupt executable cannot touch memory it
/// does not own: exe::validateStructure, unless `exe.provenance` says it was
/// already validated (deserialised) or compiled in this process.
void validateExecutable(const exe::ExecutableData &exe);

/// Where in its page tile memory should start for `exe` (a TileMemory
/// constructor argument): of the offsets allowed, the one at which the blobs
/// touch the fewest pages, the lowest of those; 0 when no offset touches fewer
/// pages than 0. Each page touched is a page fault on fresh memory.
std::uint32_t imagePageOffset(const exe::ExecutableData &exe);

/// Zeroes `memory`, copies every MemoryBlob and applies every Relocation (the
/// host address of the target, 8 bytes, at `where`).
void loadMemoryImage(const exe::ExecutableData &exe, TileMemory &memory, bool poison = false);

using VertexLibraries = std::vector<const codelets::LoadedVertexLibrary *>;

/// Loads the vertex libraries of `exe` (once per process; they stay loaded
/// until exit) into `libraries` and returns the code of each vertex type, in
/// `exe.vertexTypes` order. Throws graph_object_load_error naming a library or
/// vertex type that cannot be found.
std::vector<VertexCode> loadVertexCode(const exe::ExecutableData &exe, VertexLibraries &libraries);

/// Where codelets' printf output goes: an engine's print stream, one writer at a time.
struct PrintSink {
  std::mutex mutex;
  std::ostream *stream = nullptr;
};

/// Sends the printf output of `libraries` to `sink` (null: back to stdout).
/// Libraries are shared by the process, so an engine sets this before each run.
/// With `epoch` (the engine's, 0 at first): nothing is called when no sink has been set
/// since this engine's last call, which stored its number there.
void setPrintSink(const VertexLibraries &libraries, PrintSink *sink, std::uint64_t *epoch = nullptr);

} // namespace aspen::rt
