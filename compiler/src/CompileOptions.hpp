// Copyright (c) Aspen contributors.
// The options compileGraph reads (docs/compiler.md).
#pragma once

#include "poplar/OptionFlags.hpp"

#include <string>

namespace aspen::compiler {

struct CompileOptions {
  /// "debug.allowOutOfMemory": finish compiling a graph that does not fit.
  bool allowOutOfMemory = false;
  /// "aspen.compileCache", or ASPEN_COMPILE_CACHE=1 when the option is absent.
  bool useCache = false;
  /// "aspen.dumpIR": a directory to write a text dump after each pass into
  /// (empty: no dump).
  std::string dumpIRDir;
};

/// Reads the compiler's options from `options` merged with POPLAR_ENGINE_OPTIONS
/// (the environment wins, as for the Engine). The compiler owns
/// "debug.allowOutOfMemory" and every key starting with "aspen.compile"; an
/// unknown key of that family, or a value that is not "true"/"false", throws
/// `invalid_option` naming the key. Other keys are engine options and are left
/// to the Engine.
CompileOptions parseCompileOptions(const poplar::OptionFlags &options);

/// True for the keys parseCompileOptions reads.
bool isCompilerOption(const std::string &key);

} // namespace aspen::compiler
