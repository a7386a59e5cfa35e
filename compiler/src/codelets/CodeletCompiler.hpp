// Copyright (c) Aspen contributors.
// The codelet compiler: codelet sources (C++, C) -> a .gp vertex library, used by
// Graph::addCodelets and popc. Steps: find vertex types (Introspect), generate a
// registration unit per source (RegistrationUnit), build one shared object with
// the host compiler (clang, or $ASPEN_CXX) with __POPC__ defined (and __IPU__ only in an
// IPU build, compileForTargets),
// load it to read the field layout the compiler chose, and wrap it as a .gp
// (GpFile). Results are cached by content (CodeletCache).
#pragma once

#include "codelets/GpFile.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace aspen::codelets {

/// Compile flags as Poplar's popc and addCodelets take them
/// ("-O3 -g -I dir -Idir -D X=1 -std=c++17 --target ipu2,cpu ...").
struct CodeletFlags {
  std::vector<std::string> compilerArgs; // for the host compiler (relative -I made absolute)
  std::vector<std::string> clangArgs;    // the subset that changes parsing: -std, -I, -D, -U, -include
  std::vector<std::string> includeDirs;  // absolute
  std::vector<std::string> targets;      // from --target; informational
};

/// Parses flags given as separate arguments. Throws graph_object_creation_error
/// for an argument the codelet compiler cannot take (e.g. a stray file name).
CodeletFlags parseCodeletFlags(const std::vector<std::string> &args);
/// Parses a flags string (split at blanks; '...' and "..." quote).
CodeletFlags parseCodeletFlags(std::string_view flags);

/// A compiled vertex library.
struct CompiledCodelets {
  std::string gpPath;      // the .gp file in the codelet cache; empty if it could not be cached
  std::string contentHash; // of the .gp bytes
  std::vector<std::uint8_t> gpBytes;
  LibraryMetadata metadata;
  bool fromCache = false;
};

/// Compiles `sources` (paths; .cpp/.cc/.cxx/.c++ as C++, .c as C) into one vertex
/// library, or returns the cached one. Compiler messages (warnings included) are
/// written to `compileOutput` when given. Throws graph_object_creation_error with
/// the compiler's diagnostics, naming the file, when the sources do not compile.
/// `displayNames` (parallel to `sources`, optional) name the sources in messages
/// and metadata.
CompiledCodelets compileCodelets(const std::vector<std::string> &sources, const CodeletFlags &flags,
                                 std::ostream *compileOutput = nullptr,
                                 const std::vector<std::string> &displayNames = {});

/// Links vertex libraries into one, as the IPU linker makes one image of them (popc
/// with .gp inputs, several Graph::addCodelets): their objects are linked into one
/// shared object, so a function one defines, another calls. Throws
/// graph_object_creation_error naming both files for a symbol or vertex type defined
/// twice. Symbols none defines stay listed in the result's `undefined` (linked later).
/// Libraries without objects (built by an older Aspen) are put side by side (linkGp).
/// Results are cached by the inputs' content.
CompiledCodelets linkCodeletLibraries(const std::vector<GpInput> &inputs,
                                      const std::vector<std::string> &targets);

/// Which build runs where (docs/codelets.md): the architecture of the IPU build a target
/// list asks for ("ipu2" when listed, else "ipu21", else "ipu1"; "" when it names no IPU).
std::string ipuBuildArch(const std::vector<std::string> &targets);
/// `flags` with __IPU__ and __IPU_ARCH_VERSION__ defined for `arch`, as Graphcore's popc.
CodeletFlags ipuBuildFlags(const CodeletFlags &flags, const std::string &arch);
/// The IPU build of `sources` (a .gp), or empty with `why` set when the IPU device must run
/// the host build: the build does not compile (first error, file:line) or a vertex type in it
/// is isExternalCodelet (its compute is IPU assembly).
std::vector<std::uint8_t> compileIpuBuild(const std::vector<std::string> &sources, const CodeletFlags &flags,
                                          const std::string &arch,
                                          const std::vector<std::string> &displayNames, std::string &why);
/// compileCodelets (the host build), and when `flags.targets` names an IPU architecture the
/// IPU build too, carried inside the result's .gp (then gpPath is empty: the pair is not
/// cached, each build is). When there is none, `noIpuBuild` (if given) says why.
CompiledCodelets compileForTargets(const std::vector<std::string> &sources, const CodeletFlags &flags,
                                   std::ostream *compileOutput = nullptr,
                                   const std::vector<std::string> &displayNames = {},
                                   std::string *noIpuBuild = nullptr);

/// Mangled symbols as a message lists them: "'foo(int)', 'bar'".
std::string demangledSymbols(const std::vector<std::string> &symbols);

/// `.cpp` for `dir/a.cpp`, "" when the file name has no dot.
std::string extensionOf(const std::string &path);

/// What a codelet source is written in, by its extension (the one table that
/// addCodelets' Auto type and the compiler both use).
enum class SourceLanguage { Cpp, C, Assembly, Unknown };
SourceLanguage languageOf(const std::string &path);

/// The host compiler command: $ASPEN_CXX, else clang++-16 (or clang++-15) when
/// installed, else g++ (docs/codelets.md, "The dialect").
std::string hostCompiler();
/// Whether `cxx --version` names clang (it takes no GCC-only flags).
bool hostCompilerIsClang(const std::string &cxx);
/// clang's major version of `cxx` (0: not clang).
int clangMajorVersion(const std::string &cxx);

/// The cycle-counting pass plugin (aspen-cyclecount.so beside libpoplar; docs/cost-model.md,
/// "Cycles from the code") when `cxx` can load it (clang 16), else empty: then codelets do not
/// count their cycles, and a warning (once a process) says what that means. ASPEN_CYCLE_COUNT=0
/// turns counting off.
std::string cycleCountPlugin(const std::string &cxx);
/// The macro a counting compile defines: the registration unit then gives the library its slot.
inline constexpr const char *kCycleCountMacro = "__ASPEN_CYCLE_COUNT__";
/// The macro the entry unit is compiled with when the objects check their writes: it then
/// defines the write check's range, fault function and the setter the loader looks for.
inline constexpr const char *kWriteCheckMacro = "__ASPEN_WRITE_CHECK__";
/// The macro the entry unit is compiled with when some object calls an IPU builtin backed by
/// the runtime (<ipu_tile_builtins.h>): it then defines the builtins' table slot and the setter
/// the loader looks for, so a library that calls none says so and its vertices run without
/// the executor's per-call record for the builtins (docs/codelets.md).
inline constexpr const char *kTileBuiltinsMacro = "__ASPEN_TILE_BUILTINS__";

} // namespace aspen::codelets
