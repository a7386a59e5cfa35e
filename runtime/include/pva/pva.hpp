// Copyright (c) Aspen contributors.
// libpva: reading a profile report from C++, as Graphcore's libpva does.
//
//   #include <pva/pva.hpp>        // link with -lpva
//   auto report = pva::openReport("./profile.pop");
//   std::cout << report.compilation().target().numTiles() << " tiles, "
//             << report.compilation().graph().numComputeSets() << " compute sets\n";
//   for (const pva::Tile &tile : report.compilation().tiles())
//     std::cout << tile.number() << ": " << tile.memory().total().includingGaps() << " bytes\n";
//   for (const pva::ExecutionStep &step : report.execution().steps())
//     std::cout << step.program()->name() << ": " << step.cycles() << " cycles\n";
//
// The report is the one the engine writes with autoReport (profile.pop, or
// profile.json; docs/profile-format.md). Every object here is a light view
// into it that stays valid while any copy of its Report exists. Errors
// (missing, truncated or foreign file, a newer format version) throw
// pva::Exception (a std::runtime_error) naming the file.
#ifndef PVA_PVA_HPP
#define PVA_PVA_HPP

#include <cstdint>
#include <iomanip> // programs using libpva (Graphcore's lightweight-profiling tutorial) call std::setw without including it
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pva {

namespace detail {
struct ReportData;
using Data = std::shared_ptr<const ReportData>;
} // namespace detail

/// Thrown when a report cannot be opened or read.
class Exception : public std::runtime_error {
public:
  explicit Exception(const std::string &message) : std::runtime_error(message) {}
};

/// The version of the SDK that wrote the report.
class Version {
public:
  Version(unsigned major, unsigned minor, unsigned point, std::string text)
      : major_(major), minor_(minor), point_(point), text_(std::move(text)) {}
  unsigned major() const { return major_; }
  unsigned minor() const { return minor_; }
  unsigned point() const { return point_; }
  /// "major.minor.point (Aspen)".
  std::string string() const { return text_; }

private:
  unsigned major_, minor_, point_;
  std::string text_;
};

class Target {
public:
  explicit Target(detail::Data d) : d_(std::move(d)) {}
  /// "IPU_MODEL", "IPU" or "CPU".
  std::string type() const;
  /// "ipu2", ...
  std::string architecture() const;
  unsigned numIPUs() const;
  unsigned tilesPerIPU() const;
  unsigned numTiles() const;
  unsigned numReplicas() const;
  unsigned numWorkerContexts() const;
  std::uint64_t bytesPerTile() const;
  std::uint64_t totalMemory() const;
  double clockFrequency() const;

private:
  detail::Data d_;
};

class Graph {
public:
  explicit Graph(detail::Data d) : d_(std::move(d)) {}
  std::uint64_t numComputeSets() const;
  std::uint64_t numVertices() const;
  std::uint64_t numEdges() const;
  std::uint64_t numVars() const;
  std::uint64_t numVertexTypes() const;

private:
  detail::Data d_;
};

/// Bytes of one memory category on one tile, split as Poplar splits them.
/// Aspen's tile memory has no interleaved or overflow regions: every byte is
/// nonInterleaved. `total()` counts every object of the category in full;
/// `nonOverlapped()` the bytes of the tile's address space it occupies, a byte
/// that several not-always-live objects share counted once (for one of them);
/// `overlapped()` the rest. The nonOverlapped bytes of all categories plus the
/// control code add up to the tile's bytes excluding gaps.
class MemoryUsage {
public:
  explicit MemoryUsage(std::uint64_t bytes) : nonOverlapped_(bytes), total_(bytes) {}
  MemoryUsage(std::uint64_t nonOverlapped, std::uint64_t total)
      : nonOverlapped_(nonOverlapped < total ? nonOverlapped : total), total_(total) {}
  std::uint64_t nonOverlapped() const { return nonOverlapped_; }
  std::uint64_t overlapped() const { return total_ - nonOverlapped_; }
  std::uint64_t total() const { return total_; }

private:
  std::uint64_t nonOverlapped_, total_;
};

class MemoryCategory {
public:
  explicit MemoryCategory(std::uint64_t bytes) : usage_(bytes) {}
  MemoryCategory(std::uint64_t nonOverlapped, std::uint64_t total) : usage_(nonOverlapped, total) {}
  MemoryUsage nonInterleaved() const { return usage_; }
  MemoryUsage interleaved() const { return MemoryUsage(0); }
  MemoryUsage overflowed() const { return MemoryUsage(0); }
  std::uint64_t total() const { return usage_.total(); }

private:
  MemoryUsage usage_;
};

/// One tile's memory by category. Categories Aspen does not have (code,
/// exchange code) are zero; the stack and control code are `controlCode()`.
class MemoryCategories {
public:
  MemoryCategories(detail::Data d, unsigned tile) : d_(std::move(d)), tile_(tile) {}
  MemoryCategory variable() const { return get("variables"); }
  MemoryCategory constant() const { return get("constants"); }
  MemoryCategory vertexInstanceState() const { return get("vertexInstances"); }
  MemoryCategory vertexFieldData() const { return get("vertexFieldData"); }
  MemoryCategory vectorListDescriptor() const { return get("descriptors"); }
  MemoryCategory copyDescriptor() const { return MemoryCategory(0); }
  MemoryCategory internalExchangeCode() const { return MemoryCategory(0); }
  MemoryCategory hostExchangeCode() const { return MemoryCategory(0); }
  MemoryCategory vertexCode() const { return MemoryCategory(0); }
  /// Exchange buffers of edges whose data lives on another tile.
  MemoryCategory message() const { return get("edgeBuffers"); }
  MemoryCategory controlCode() const;
  /// Bytes of a category by the report's key ("variables", "edgeBuffers", ...); 0 if absent.
  MemoryCategory get(const std::string &reportKey) const;

private:
  detail::Data d_;
  unsigned tile_;
};

class TileMemoryTotal {
public:
  TileMemoryTotal(std::uint64_t including, std::uint64_t excluding)
      : including_(including), excluding_(excluding) {}
  /// Highest byte used on the tile, gaps between objects included.
  std::uint64_t includingGaps() const { return including_; }
  /// Bytes of the tile's address space objects use, and the overhead: the categories'
  /// nonOverlapped bytes plus the control code.
  std::uint64_t excludingGaps() const { return excluding_; }

private:
  std::uint64_t including_, excluding_;
};

/// A vertex type of the graph: a codelet class with its template arguments
/// ("popops::ScaledAdd2D<float,float,float,false>").
class VertexType {
public:
  VertexType(detail::Data d, std::size_t index) : d_(std::move(d)), index_(index) {}
  std::string name() const;
  /// A number unique to this vertex type in its report.
  std::size_t _id() const { return index_; }

private:
  detail::Data d_;
  std::size_t index_;
};

/// The vertices of one type in a group: a compute set (`ComputeSet::vertices()`),
/// or those on one tile over the executed compute sets (`TileMemory::vertices()`).
class Vertex {
public:
  Vertex(detail::Data d, std::size_t type, std::uint64_t count)
      : d_(std::move(d)), type_(type), count_(count) {}
  VertexType type() const { return VertexType(d_, type_); }
  /// How many vertices of the type the group has (at least 1).
  std::uint64_t count() const { return count_; }

private:
  detail::Data d_;
  std::size_t type_;
  std::uint64_t count_;
};

class TileMemory {
public:
  TileMemory(detail::Data d, unsigned tile) : d_(std::move(d)), tile_(tile) {}
  /// The vertices on this tile, one entry per vertex type (ascending type), over
  /// every compute set the programs execute.
  std::vector<Vertex> vertices() const;
  TileMemoryTotal total() const;
  std::uint64_t alwaysLiveBytes() const;
  std::uint64_t notAlwaysLiveBytes() const;
  MemoryCategories category() const { return MemoryCategories(d_, tile_); }

private:
  detail::Data d_;
  unsigned tile_;
};

class Tile {
public:
  Tile(detail::Data d, unsigned number) : d_(std::move(d)), number_(number) {}
  unsigned number() const { return number_; }
  unsigned ipu() const;
  TileMemory memory() const { return TileMemory(d_, number_); }

private:
  detail::Data d_;
  unsigned number_;
};

/// The debug information a graph element was made under: one poplar::DebugInfo
/// (an op of PopLibs, an application layer), a node of the report's tree.
class DebugContext {
public:
  DebugContext(detail::Data d, std::size_t index) : d_(std::move(d)), index_(index) {}
  /// The DebugInfo's id (poplar::DebugInfo::getId()).
  std::uint64_t id() const;
  /// The id of the DebugInfo its DebugContext came from (0: none).
  std::uint64_t parentId() const;
  /// That DebugInfo, or null.
  std::shared_ptr<DebugContext> parent() const;
  /// "popops", "poplin", "poplibs", "app", ...
  std::string layer() const;
  /// The DebugContext's path name.
  std::string name() const;
  /// The values set on the DebugInfo as a JSON object ("api", "args", ...).
  std::string json() const;

private:
  detail::Data d_;
  std::size_t index_;
};

class ProgramVisitor;

/// A variable a program step uses: its name, its bytes over all tiles, and whether it is live
/// for the whole program.
class Variable {
public:
  Variable(std::string name, std::uint64_t bytes, bool alwaysLive)
      : name_(std::move(name)), bytes_(bytes), alwaysLive_(alwaysLive) {}
  std::string name() const { return name_; }
  std::uint64_t bytes() const { return bytes_; }
  bool alwaysLive() const { return alwaysLive_; }

private:
  std::string name_;
  std::uint64_t bytes_;
  bool alwaysLive_;
};

/// A node of the program tree: a control program, a named block, or a step.
class Program {
public:
  enum class Type {
    Sequence,        // a control program or a named block
    OnTileExecute,   // Execute
    DoExchange,      // Copy and exchange
    StreamCopyBegin, // never produced: Aspen's stream copies are one phase (StreamCopyMid)
    StreamCopyMid,   // StreamToDevice / DeviceToStream
    StreamCopyEnd,   // never produced, as StreamCopyBegin
    RemoteBufferCopy,
    Sync,
    Call,
    Repeat, // loop control
    If,     // conditional jumps, switch
    Other,
  };
  Program(detail::Data d, std::size_t index) : d_(std::move(d)), index_(index) {}
  std::string name() const;
  Type type() const;
  /// Children of a Sequence, in order; empty for a step.
  std::vector<std::shared_ptr<Program>> children() const;
  /// Estimated cycles (sum over children for a Sequence).
  std::uint64_t estimatedCycles() const;
  /// Bytes of not-always-live variables live at this step (0 for a Sequence).
  std::uint64_t notAlwaysLiveBytes() const;
  /// The debug information the step was made under (its program's, else its
  /// compute set's); empty for a Sequence or a step made under none.
  std::vector<std::shared_ptr<DebugContext>> debugContexts() const;
  /// A number unique to this program in its report.
  std::size_t _id() const { return index_; }
  /// The variables the step uses, as far as the report records them (Aspen's reports do not
  /// record them per step yet: empty; docs/profiling.md).
  std::vector<Variable> vars() const;
  /// Calls the visitor's method for this program's type (`visitOnTileExecute` for an
  /// OnTileExecute step, ...), with this program as that type's class.
  void accept(ProgramVisitor &visitor) const;

private:
  detail::Data d_;
  std::size_t index_;
};

/// The program classes a ProgramVisitor receives, one per Program::Type.
class SequenceProgram : public Program {
  using Program::Program;
};
class OnTileExecuteProgram : public Program {
  using Program::Program;
};
class DoExchangeProgram : public Program {
  using Program::Program;
};
class StreamCopyMidProgram : public Program {
  using Program::Program;
};
class RemoteBufferCopyProgram : public Program {
  using Program::Program;
};
class SyncProgram : public Program {
  using Program::Program;
};
class CallProgram : public Program {
  using Program::Program;
};
class RepeatProgram : public Program {
  using Program::Program;
};
class IfProgram : public Program {
  using Program::Program;
};

/// Visits programs by type (`program->accept(visitor)`); each method does nothing unless
/// overridden. A program of type Other goes to `visitProgram`.
class ProgramVisitor {
public:
  virtual ~ProgramVisitor() = default;
  virtual void visitSequence(const SequenceProgram &) {}
  virtual void visitOnTileExecute(const OnTileExecuteProgram &) {}
  virtual void visitDoExchange(const DoExchangeProgram &) {}
  virtual void visitStreamCopyMid(const StreamCopyMidProgram &) {}
  virtual void visitRemoteBufferCopy(const RemoteBufferCopyProgram &) {}
  virtual void visitSync(const SyncProgram &) {}
  virtual void visitCall(const CallProgram &) {}
  virtual void visitRepeat(const RepeatProgram &) {}
  virtual void visitIf(const IfProgram &) {}
  virtual void visitProgram(const Program &) {}
};

/// A compute set the programs execute. From `Compilation::computeSets()`, the
/// compiled compute set; from `ExecutionStep::computeSets()`, the one that step
/// executed, with `cyclesByTile()` of that execution.
class ComputeSet {
public:
  static constexpr std::size_t npos = ~std::size_t(0);
  /// `index` into the report's compute sets (npos: a report without the graph
  /// part); `entry`: the execution trace entry it was executed in (npos: none).
  ComputeSet(detail::Data d, std::size_t index, std::size_t entry = npos)
      : d_(std::move(d)), index_(index), entry_(entry) {}
  /// The name the compute set was made with (Graph::addComputeSet).
  std::string name() const;
  /// Its vertices, one entry per vertex type (ascending type), over all tiles.
  std::vector<Vertex> vertices() const;
  /// Estimated compute cycles of one execution on each tile (one entry per tile,
  /// zero on tiles without its vertices), by the cost model's rule
  /// (docs/cost-model.md).
  std::vector<std::uint64_t> estimatedCyclesByTile() const;
  /// One entry per tile: for a compute set from an ExecutionStep, its cycles in
  /// that execution (counted where the vertices count them, else the estimate);
  /// otherwise `estimatedCyclesByTile()`.
  std::vector<std::uint64_t> cyclesByTile() const;
  /// The debug information it was made under (empty if none).
  std::vector<std::shared_ptr<DebugContext>> debugContexts() const;
  /// A number unique to this compute set in its report (npos: unknown).
  std::size_t _id() const { return index_; }

private:
  detail::Data d_;
  std::size_t index_, entry_;
};

class NotAlwaysLiveMemory {
public:
  explicit NotAlwaysLiveMemory(std::uint64_t bytes) : bytes_(bytes) {}
  std::uint64_t bytes() const { return bytes_; }

private:
  std::uint64_t bytes_;
};

/// Liveness at one program step.
class LivenessProgramStep {
public:
  LivenessProgramStep(detail::Data d, std::size_t step) : d_(std::move(d)), step_(step) {}
  std::shared_ptr<Program> program() const;
  NotAlwaysLiveMemory notAlwaysLiveMemory() const;

private:
  detail::Data d_;
  std::size_t step_;
};

class Compilation {
public:
  explicit Compilation(detail::Data d) : d_(std::move(d)) {}
  Target target() const { return Target(d_); }
  Graph graph() const { return Graph(d_); }
  std::vector<Tile> tiles() const;
  /// Every program node: the control programs first (in engine order), then the rest.
  std::vector<std::shared_ptr<Program>> programs() const;
  /// The control programs the engine runs (Engine::run(i) runs controlPrograms()[i]).
  std::vector<std::shared_ptr<Program>> controlPrograms() const;
  std::vector<LivenessProgramStep> livenessProgramSteps() const;
  /// Every compute set the programs execute, in the order the compiler lists them.
  std::vector<ComputeSet> computeSets() const;
  /// Every DebugInfo the report records, by ascending id.
  std::vector<std::shared_ptr<DebugContext>> debugContexts() const;
  /// Sum over tiles of the peak bytes (including gaps).
  std::uint64_t totalMemory() const;
  bool outOfMemory() const;

private:
  detail::Data d_;
};

/// One execution of one step.
class ExecutionStep {
public:
  ExecutionStep(detail::Data d, std::size_t entry) : d_(std::move(d)), entry_(entry) {}
  /// The step's program node (never null). In a report without the graph part
  /// (only autoReport.outputExecutionProfile) it is a leaf with the name and
  /// type the execution part records, no children and no estimated cycles.
  std::shared_ptr<Program> program() const;
  /// Device cycle counter when the step began and ended.
  std::uint64_t cyclesFrom() const;
  std::uint64_t cyclesTo() const;
  std::uint64_t cycles() const { return cyclesTo() - cyclesFrom(); }
  /// Cycles of this step per tile (compute for Execute, exchange for Copy;
  /// zero on other tiles and for other steps); one entry per tile.
  std::vector<std::uint64_t> cyclesByTile() const;
  /// The compute set an Execute step ran (one), with this execution's cycles;
  /// empty for other steps.
  std::vector<ComputeSet> computeSets() const;
  /// The run (index of the Engine::run call) it belongs to.
  std::size_t run() const;

private:
  detail::Data d_;
  std::size_t entry_;
};

/// One Engine::run call.
class Run {
public:
  Run(detail::Data d, std::size_t index) : d_(std::move(d)), index_(index) {}
  std::shared_ptr<Program> program() const;
  std::vector<ExecutionStep> steps() const;
  std::uint64_t cyclesFrom() const;
  std::uint64_t cyclesTo() const;

private:
  detail::Data d_;
  std::size_t index_;
};

/// One interval of lightweight profiling (docs/lightweight-profiling.md): an execution of a
/// `Block` program whose name matches the engine option `profiler.blocks.filter`, of a program
/// whose name matches `profiler.programs.filter`, or (with `debug.instrumentExternalExchange`)
/// of a stream copy, as one tile saw it. Aspen reads the blocks from the execution trace, so no
/// block is ever a buffer flush or an overflow marker.
class Block {
public:
  enum class Kind { Common, StreamCopy };
  Block(detail::Data d, std::size_t node, unsigned tile, std::uint64_t from, std::uint64_t to, Kind kind)
      : d_(std::move(d)), node_(node), tile_(tile), from_(from), to_(to), kind_(kind) {}
  /// The Block program (named as the block), the program matched by name, or the stream copy.
  std::shared_ptr<Program> program() const;
  std::uint64_t cyclesFrom() const { return from_; }
  std::uint64_t cyclesTo() const { return to_; }
  unsigned tile() const { return tile_; }
  bool isCommon() const { return kind_ == Kind::Common; }
  bool isStreamCopy() const { return kind_ == Kind::StreamCopy; }
  bool isBlockFlush() const { return false; }
  bool isOverflow() const { return false; }

private:
  detail::Data d_;
  std::size_t node_;
  unsigned tile_;
  std::uint64_t from_, to_;
  Kind kind_;
};

class Execution {
public:
  explicit Execution(detail::Data d) : d_(std::move(d)) {}
  /// Every executed step in order (empty when the report has no execution part).
  std::vector<ExecutionStep> steps() const;
  /// The lightweight-profiling blocks `tile` recorded, in the order they began. Blocks and
  /// matched programs are recorded on tile `profiler.blocks.tile` (default 0) of each IPU they
  /// run on (a block holding only control flow: of every IPU); stream copies on the tiles they
  /// write or read. Empty for any other tile.
  std::vector<Block> blocks(unsigned tile) const;
  std::vector<Run> runs() const;
  std::uint64_t totalCycles() const;
  /// Cycles by category: "compute", "exchange", "hostExchange", "sync", "control".
  std::uint64_t cycles(const std::string &category) const;

private:
  detail::Data d_;
};

class Report {
public:
  explicit Report(detail::Data d) : d_(std::move(d)) {}
  Compilation compilation() const { return Compilation(d_); }
  Execution execution() const { return Execution(d_); }
  Version poplarVersion() const;
  /// The file the report was read from.
  std::string path() const;

private:
  detail::Data d_;
};

/// Opens a report: a profile.pop or profile.json file, or the directory
/// holding it. `debugFilename` is accepted for compatibility and ignored.
Report openReport(const std::string &reportFilename, const std::string &debugFilename = "");

} // namespace pva

#endif // PVA_PVA_HPP
