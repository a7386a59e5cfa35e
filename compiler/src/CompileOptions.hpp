// Copyright (c) Aspen contributors.
// The options compileGraph reads (docs/compiler.md).
#pragma once

#include "poplar/OptionFlags.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace aspen::compiler {

struct CompileOptions {
  /// "debug.allowOutOfMemory": finish compiling a graph that does not fit.
  bool allowOutOfMemory = false;
  /// "aspen.compileCache", or ASPEN_COMPILE_CACHE=1 when the option is absent.
  bool useCache = false;
  /// "debug.loweredVarDumpFile": where to write every variable's tile, address and size.
  std::string loweredVarDumpFile;
  /// The dump goes to the autoReport directory, made when it does not exist.
  bool makeReportDirectory = false;
  /// "autoReport.outputSerializedGraph": write Graph::serialize's JSON to
  /// <autoReport.directory>/serialized_graph.json (empty = do not).
  std::string serializedGraphFile;
  /// "target.saveArchive": where to write the executable's code (its .gp vertex libraries) as
  /// an `ar` archive (empty: do not).
  std::string saveArchive;
  /// "aspen.dumpIR": a directory to write a text dump after each pass into
  /// (empty: no dump).
  std::string dumpIRDir;
  /// "aspen.streamingMemory": "auto" lets the compiler place variables in Streaming Memory when
  /// tile memory would overflow; "off" (the default) keeps Poplar's behaviour.
  bool streamingMemoryAuto = false;
  /// "aspen.streamingMemoryPinned": comma-separated names of variables never to offload.
  std::vector<std::string> streamingMemoryPinned;
  /// "target.workerStackSizeInBytes" / "target.supervisorStackSizeInBytes" (0: not given).
  std::uint64_t workerStackBytes = 0, supervisorStackBytes = 0;
};

/// Aspen's stack sizes when the options are not given: six worker stacks and
/// the supervisor's make the 3,168 bytes of stack per tile measured on
/// hardware (docs/tile-model.md, "Stacks").
inline constexpr std::uint64_t kDefaultWorkerStackBytes = 512;
inline constexpr std::uint64_t kDefaultSupervisorStackBytes = 96;
/// The value of a stack size option (decimal, or hexadecimal with 0x), from 1
/// to 1 MiB; `invalid_option` naming `key` otherwise.
std::uint64_t parseStackBytes(const std::string &key, const std::string &value);

/// Reads the compiler's options from `options` merged with POPLAR_ENGINE_OPTIONS
/// (the environment wins, as for the Engine). The compiler owns
/// "debug.allowOutOfMemory" and every key starting with "aspen.compile"; an
/// unknown key of that family, or a value that is not "true"/"false", throws
/// `invalid_option` naming the key. Every other key must be in the option table
/// (OptionTable.cpp), as for the Engine.
CompileOptions parseCompileOptions(const poplar::OptionFlags &options);

/// True for the keys parseCompileOptions reads.
bool isCompilerOption(const std::string &key);

} // namespace aspen::compiler
