// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_EXECUTABLE_HPP
#define POPLAR_EXECUTABLE_HPP

#include <poplar/ArrayRef.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <functional>
#include <istream>
#include <memory>
#include <ostream>

namespace aspen {
namespace exe {
struct ExecutableData;
} // namespace exe
} // namespace aspen

namespace poplar {

/// Called during compilation with the number of the step reached and the total
/// number of steps; `step` only increases.
using ProgressFunc = std::function<void(int, int)>;

/// A compiled graph and its programs, ready to be loaded by an Engine. Move-only.
/// Unlike Poplar, Aspen can save simulator (IPU_MODEL and CPU) executables:
/// ```
/// poplar::Executable exe = poplar::compileGraph(graph, {prog});
/// std::ofstream out("prog.aspenexe", std::ios::binary);
/// exe.serialize(out);
/// // later, maybe in another process:
/// std::ifstream in("prog.aspenexe", std::ios::binary);
/// poplar::Engine engine(poplar::Executable::deserialize(in));
/// ```
class Executable {
public:
  /// An empty executable, to be assigned later (`Executable exe; ... exe = compileGraph(...)`).
  /// Serializing it or making an Engine from it throws poplar::poplar_error.
  Executable();
  Executable(Executable &&other) noexcept;
  Executable &operator=(Executable &&other) noexcept;
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;
  ~Executable();

  /// Writes the executable (versioned and checksummed; see docs/executable-format.md).
  /// Identical executables give identical bytes.
  void serialize(std::ostream &out) const;

  /// Reads an executable written by `serialize`. Throws `graph_object_load_error`
  /// naming the problem when the stream is truncated, corrupt (checksum mismatch),
  /// of another format version or not an Aspen executable. When
  /// `checkPackageHash` is true, an executable written by another Aspen release is
  /// refused too.
  static Executable deserialize(std::istream &in, bool checkPackageHash = true);
  static Executable deserialize(std::unique_ptr<std::istream> in, bool checkPackageHash = true);

  /// Internal: the compiled program. Not part of Poplar's API.
  const aspen::exe::ExecutableData &getImpl() const { return *impl_; }
  /// Internal: false once moved from. Not part of Poplar's API.
  bool hasImpl() const { return impl_ != nullptr; }
  /// Internal: takes ownership of a compiled program. Not part of Poplar's API.
  explicit Executable(std::unique_ptr<aspen::exe::ExecutableData> impl);

private:
  std::unique_ptr<aspen::exe::ExecutableData> impl_;
};

/// Compiles `graph` and `programs` (program i is run by `Engine::run(i)`).
/// Options read here: "debug.allowOutOfMemory" ("true": a graph that does not
/// fit still compiles, with a memory report, and cannot be run) and
/// "aspen.compileCache" ("true": look up and store the executable in the compile
/// cache; see docs/compiler.md). Other engine options are accepted and left to
/// the Engine. Throws `graph_connection_error`, `invalid_tile_mapping`,
/// `control_program_error`, `graph_cycle_error` for invalid graphs and
/// `graph_memory_allocation_error` when the graph does not fit in tile memory.
Executable compileGraph(const Graph &graph, ArrayRef<program::Program> programs,
                        const OptionFlags &options = {}, ProgressFunc progressCallBack = ProgressFunc(),
                        const DebugContext &debugContext = {});
/// Same as above; the graph may be released once compiled.
Executable compileGraph(Graph &&graph, ArrayRef<program::Program> programs, const OptionFlags &options = {},
                        ProgressFunc progressCallBack = ProgressFunc(),
                        const DebugContext &debugContext = {});

} // namespace poplar

#endif
