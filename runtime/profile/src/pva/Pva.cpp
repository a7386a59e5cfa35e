// Copyright (c) Aspen contributors.
// libpva over the Aspen report: the report is read once (ReportFile.hpp) into
// flat tables; the public classes are views into them.
#include "pva/pva.hpp"

#include "ReportFile.hpp"
#include "poplar/Engine.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <type_traits>

namespace pva {

using nlohmann::json;

namespace detail {

struct Node {
  std::string name;
  Program::Type type = Program::Type::Other;
  std::vector<std::size_t> children;
  std::int64_t step = -1; // for leaves: the step index
  std::uint64_t cycles = 0;
};

struct TraceEntry {
  std::uint32_t step, run;
  std::uint64_t start, cycles;
};

struct ReportData {
  std::string path;
  json report;
  json empty = json::object();
  std::vector<Node> nodes;
  std::size_t numControl = 0;
  std::vector<std::size_t> stepNode; // per step: its leaf node (or ~0)
  // Nodes before this index are the compilation's programs; after it, leaves made for executed
  // steps the report has no graph part for (an execution-only report).
  std::size_t numCompiledNodes = 0;
  std::map<std::uint32_t, std::size_t> executedNode; // such a step: its leaf node
  std::vector<TraceEntry> trace;
  std::vector<std::size_t> runBegin; // trace index where each run begins, plus the end
  std::vector<std::int64_t> runProgram;
  // Per executed step: (tiles, cycles) from execution.steps.
  std::map<std::size_t, const json *> executedStep;
  // debugContexts: index by id.
  std::map<std::uint64_t, std::size_t> debugIndex;
  // BlockBegin step -> the node of its Block program in the compilation's program tree.
  std::map<std::size_t, std::size_t> blockNode;

  const json &at(const char *a) const {
    auto it = report.find(a);
    return it != report.end() && it->is_object() ? *it : empty;
  }
  const json &at(const char *a, const char *b) const {
    const json &o = at(a);
    auto it = o.find(b);
    return it != o.end() && it->is_object() ? *it : empty;
  }
};

} // namespace detail

namespace {

/// `o[key]` if `o` is an object holding it with the type of `otherwise`, else `otherwise`:
/// a report that parses but holds odd content never makes an accessor throw a JSON
/// library's exception (only Poplar's exceptions cross libpva's API).
/// The array `o[key]` without copying it; an empty array when absent or not an array.
const json &arrayAt(const json &o, const char *key) {
  static const json empty = json::array();
  if (!o.is_object())
    return empty;
  const auto it = o.find(key);
  return it != o.end() && it->is_array() ? *it : empty;
}

template <class T> T val(const json &o, const char *key, T otherwise) {
  if (!o.is_object())
    return otherwise;
  const auto it = o.find(key);
  if (it == o.end())
    return otherwise;
  if constexpr (std::is_same_v<T, std::string>) {
    return it->is_string() ? it->get<std::string>() : otherwise;
  } else if constexpr (std::is_same_v<T, bool>) {
    return it->is_boolean() ? it->get<bool>() : otherwise;
  } else if constexpr (std::is_same_v<T, json>) {
    return it->type() == otherwise.type() ? *it : otherwise;
  } else if constexpr (std::is_floating_point_v<T>) {
    return it->is_number() ? it->get<T>() : otherwise;
  } else {
    return it->is_number_unsigned() || (it->is_number_integer() && it->get<std::int64_t>() >= 0)
               ? it->get<T>()
               : otherwise;
  }
}

std::uint64_t num(const json &o, const char *key, std::uint64_t otherwise = 0) {
  auto it = o.find(key);
  return it != o.end() && it->is_number() ? it->get<std::uint64_t>() : otherwise;
}

std::uint64_t element(const json &o, const char *key, std::size_t i) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_array() || i >= it->size() || !(*it)[i].is_number())
    return 0;
  return (*it)[i].get<std::uint64_t>();
}

Program::Type typeOf(const std::string &kind) {
  if (kind == "Execute")
    return Program::Type::OnTileExecute;
  if (kind == "Copy")
    return Program::Type::DoExchange;
  if (kind == "StreamToDevice" || kind == "DeviceToStream")
    return Program::Type::StreamCopyMid;
  if (kind == "RemoteToDevice" || kind == "DeviceToRemote")
    return Program::Type::RemoteBufferCopy;
  if (kind == "Sync")
    return Program::Type::Sync;
  if (kind == "Call")
    return Program::Type::Call;
  if (kind == "SetCounter" || kind == "LoopTest")
    return Program::Type::Repeat;
  if (kind == "JumpIfZero" || kind == "JumpIfNonZero" || kind == "SwitchJump")
    return Program::Type::If;
  return Program::Type::Other;
}

const json &debugList(const detail::ReportData &d) {
  auto it = d.report.find("debugContexts");
  return it != d.report.end() && it->is_array() ? *it : d.empty;
}

void build(detail::ReportData &d) {
  const json &r = d.report;
  {
    const json &list = debugList(d);
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i].is_object() && list[i].contains("id") && list[i]["id"].is_number_unsigned())
        d.debugIndex.emplace(list[i]["id"].get<std::uint64_t>(), i);
  }
  const json steps = val(r, "steps", json::array());
  const json programs = val(r, "programs", json::array());
  d.stepNode.assign(steps.size(), ~std::size_t(0));
  d.numControl = programs.size();
  d.nodes.resize(programs.size());
  for (std::size_t p = 0; p < programs.size(); ++p) {
    detail::Node &root = d.nodes[p];
    root.name = "Program " + std::to_string(p);
    root.type = Program::Type::Sequence;
    std::vector<std::size_t> stack{p};
    for (std::size_t s = val(programs[p], "entry", std::size_t(0)); s < steps.size(); ++s) {
      const json &st = steps[s];
      const std::string kind = val(st, "kind", std::string());
      if (kind == "End")
        break;
      if (kind == "BlockEnd") {
        if (stack.size() > 1)
          stack.pop_back();
        continue;
      }
      detail::Node n;
      n.name = val(st, "name", std::string());
      const std::uint64_t cycles = val(st, "cycles", std::uint64_t(0));
      if (kind == "BlockBegin") {
        n.type = Program::Type::Sequence;
      } else {
        n.type = typeOf(kind);
        n.step = static_cast<std::int64_t>(s);
        n.cycles = cycles;
        if (n.name.empty())
          n.name = kind;
        for (std::size_t a : stack)
          d.nodes[a].cycles += cycles;
      }
      const std::size_t index = d.nodes.size();
      d.nodes[stack.back()].children.push_back(index);
      if (n.step >= 0 && d.stepNode[s] == ~std::size_t(0))
        d.stepNode[s] = index;
      d.nodes.push_back(std::move(n));
      if (kind == "BlockBegin") {
        stack.push_back(index);
        d.blockNode.emplace(s, index);
      }
    }
  }
  // Steps no program reaches directly (functions): leaves of their own.
  for (std::size_t s = 0; s < steps.size(); ++s)
    if (d.stepNode[s] == ~std::size_t(0)) {
      detail::Node n;
      n.name = val(steps[s], "name", std::string());
      n.type = typeOf(val(steps[s], "kind", std::string()));
      n.step = static_cast<std::int64_t>(s);
      n.cycles = val(steps[s], "cycles", std::uint64_t(0));
      d.stepNode[s] = d.nodes.size();
      d.nodes.push_back(std::move(n));
    }

  d.numCompiledNodes = d.nodes.size();

  const json &x = d.at("execution");
  if (auto it = x.find("steps"); it != x.end() && it->is_array())
    for (const json &e : *it) {
      // Without a graph part "steps" is absent, so the execution part alone says which steps ran.
      const std::size_t s = val(e, "step", ~std::size_t(0));
      if (s < steps.size() || (steps.empty() && s != ~std::size_t(0)))
        d.executedStep[s] = &e;
    }
  if (auto it = x.find("trace"); it != x.end() && it->is_array()) {
    for (const json &e : *it) {
      if (!e.is_array() || e.size() != 4 ||
          !std::all_of(e.begin(), e.end(), [](const json &v) { return v.is_number_unsigned(); }))
        throw Exception("Cannot read the profile report '" + d.path +
                        "': an execution.trace entry is not [step, run, startCycle, cycles]");
      d.trace.push_back({e[0].get<std::uint32_t>(), e[1].get<std::uint32_t>(), e[2].get<std::uint64_t>(),
                         e[3].get<std::uint64_t>()});
    }
  }
  for (std::size_t i = 0; i < d.trace.size(); ++i)
    if (i == 0 || d.trace[i].run != d.trace[i - 1].run)
      d.runBegin.push_back(i);
  d.runBegin.push_back(d.trace.size());
  // A traced step the graph part does not describe (an execution-only report): a leaf made from
  // what the execution part records of it (name, kind), so ExecutionStep::program() is valid.
  for (const detail::TraceEntry &t : d.trace) {
    if (t.step < d.stepNode.size() || d.executedNode.count(t.step))
      continue;
    const auto found = d.executedStep.find(t.step);
    const json *e = found != d.executedStep.end() ? found->second : nullptr;
    detail::Node n;
    const std::string kind = e ? val(*e, "kind", std::string()) : std::string();
    n.name = e ? val(*e, "name", std::string()) : std::string();
    if (n.name.empty())
      n.name = kind.empty() ? "Step " + std::to_string(t.step) : kind;
    n.type = typeOf(kind);
    n.step = static_cast<std::int64_t>(t.step);
    d.executedNode.emplace(t.step, d.nodes.size());
    d.nodes.push_back(std::move(n));
  }
  // Each run's program: the control program whose entry step the run begins at.
  for (std::size_t k = 0; k + 1 < d.runBegin.size(); ++k) {
    std::int64_t program = -1;
    const std::uint32_t first = d.trace[d.runBegin[k]].step;
    for (std::size_t p = 0; p < programs.size(); ++p)
      if (val(programs[p], "entry", ~0u) == first)
        program = static_cast<std::int64_t>(p);
    d.runProgram.push_back(program);
  }
}

std::shared_ptr<Program> node(const detail::Data &d, std::size_t i) {
  return std::make_shared<Program>(d, i);
}

std::shared_ptr<DebugContext> debugContextOf(const detail::Data &d, std::uint64_t id) {
  auto it = d->debugIndex.find(id);
  return id == 0 || it == d->debugIndex.end() ? nullptr : std::make_shared<DebugContext>(d, it->second);
}

} // namespace

namespace {
Report fromData(std::shared_ptr<detail::ReportData> data) {
  try {
    build(*data);
  } catch (const json::exception &e) {
    throw Exception("Cannot read the profile report '" + data->path + "': unexpected content (" + e.what() +
                    ")");
  }
  return Report(std::move(data));
}
} // namespace

Report openReport(const std::string &reportFilename, const std::string &) {
  auto data = std::make_shared<detail::ReportData>();
  try {
    data->report = aspen::profile::readReport(reportFilename, &data->path);
  } catch (const poplar::poplar_error &e) {
    throw Exception(e.what());
  }
  return fromData(std::move(data));
}

std::string Report::path() const {
  return d_->path;
}

Version Report::poplarVersion() const {
  const std::string text = val(d_->report, "poplarVersion", std::string());
  unsigned major = 0, minor = 0, point = 0;
  std::sscanf(text.c_str(), "%u.%u.%u", &major, &minor, &point);
  return Version(major, minor, point, text);
}

// ---- target and graph ------------------------------------------------------------
std::string Target::type() const {
  return val(d_->at("target"), "type", std::string());
}
std::string Target::architecture() const {
  return val(d_->at("target"), "arch", std::string());
}
unsigned Target::numIPUs() const {
  return static_cast<unsigned>(num(d_->at("target"), "numIPUs"));
}
unsigned Target::tilesPerIPU() const {
  return static_cast<unsigned>(num(d_->at("target"), "tilesPerIPU"));
}
unsigned Target::numTiles() const {
  return static_cast<unsigned>(num(d_->at("target"), "numTiles"));
}
unsigned Target::numReplicas() const {
  return static_cast<unsigned>(num(d_->at("target"), "replicationFactor", 1));
}
unsigned Target::numWorkerContexts() const {
  return static_cast<unsigned>(num(d_->at("target"), "numWorkerContexts"));
}
std::uint64_t Target::bytesPerTile() const {
  return num(d_->at("target"), "bytesPerTile");
}
std::uint64_t Target::totalMemory() const {
  return bytesPerTile() * numTiles();
}
double Target::clockFrequency() const {
  return val(d_->at("target"), "tileClockFrequency", 0.0);
}

std::uint64_t Graph::numComputeSets() const {
  return num(d_->at("graph"), "numComputeSets");
}
std::uint64_t Graph::numVertices() const {
  return num(d_->at("graph"), "numVertices");
}
std::uint64_t Graph::numEdges() const {
  return num(d_->at("graph"), "numEdges");
}
std::uint64_t Graph::numVars() const {
  return num(d_->at("graph"), "numVariables");
}
std::uint64_t Graph::numVertexTypes() const {
  return num(d_->at("graph"), "numVertexTypes");
}

// ---- memory ------------------------------------------------------------------------
MemoryCategory MemoryCategories::get(const std::string &key) const {
  const json &tiles = d_->at("memory", "tiles");
  const json &byCategory = val(tiles, "byCategory", json::object());
  auto it = byCategory.find(key);
  if (it == byCategory.end() || !it->is_array() || tile_ >= it->size() || !(*it)[tile_].is_number_unsigned())
    return MemoryCategory(0);
  const std::uint64_t total = (*it)[tile_].get<std::uint64_t>();
  // Profiles from before byCategoryNonOverlapped: every byte nonOverlapped.
  const json &nonOverlapped = val(tiles, "byCategoryNonOverlapped", json::object());
  auto no = nonOverlapped.find(key);
  if (no == nonOverlapped.end() || !no->is_array() || tile_ >= no->size() ||
      !(*no)[tile_].is_number_unsigned())
    return MemoryCategory(total);
  return MemoryCategory((*no)[tile_].get<std::uint64_t>(), total);
}

MemoryCategory MemoryCategories::controlCode() const {
  return MemoryCategory(num(d_->at("memory"), "perTileOverheadBytes"));
}

TileMemoryTotal TileMemory::total() const {
  const json &tiles = d_->at("memory", "tiles");
  const std::uint64_t including = element(tiles, "peakBytes", tile_);
  // The bytes of the address space used: the overhead and each category's non-overlapped
  // bytes (profiles from before byCategoryNonOverlapped: always-live plus the not-always-live peak).
  const json &nonOverlapped = tiles.value("byCategoryNonOverlapped", json::object());
  std::uint64_t excluding = 0;
  if (nonOverlapped.is_object() && !nonOverlapped.empty()) {
    excluding = num(d_->at("memory"), "perTileOverheadBytes");
    for (auto it = nonOverlapped.begin(); it != nonOverlapped.end(); ++it)
      if (it->is_array() && tile_ < it->size() && (*it)[tile_].is_number_unsigned())
        excluding += (*it)[tile_].get<std::uint64_t>();
  } else {
    excluding = element(tiles, "alwaysLiveBytes", tile_) + element(tiles, "notAlwaysLivePeakBytes", tile_);
  }
  return TileMemoryTotal(including, std::min(including, excluding));
}
std::uint64_t TileMemory::alwaysLiveBytes() const {
  return element(d_->at("memory", "tiles"), "alwaysLiveBytes", tile_);
}
std::uint64_t TileMemory::notAlwaysLiveBytes() const {
  return element(d_->at("memory", "tiles"), "notAlwaysLivePeakBytes", tile_);
}
unsigned Tile::ipu() const {
  const unsigned perIpu = static_cast<unsigned>(num(d_->at("target"), "tilesPerIPU", 1));
  return perIpu ? number_ / perIpu : 0;
}

// ---- programs ------------------------------------------------------------------------
std::string Program::name() const {
  return d_->nodes[index_].name;
}
Program::Type Program::type() const {
  return d_->nodes[index_].type;
}
std::vector<std::shared_ptr<Program>> Program::children() const {
  std::vector<std::shared_ptr<Program>> out;
  for (std::size_t c : d_->nodes[index_].children)
    out.push_back(node(d_, c));
  return out;
}
std::vector<Variable> Program::vars() const {
  return {};
}
void Program::accept(ProgramVisitor &visitor) const {
  switch (type()) {
  case Type::Sequence:
    return visitor.visitSequence(SequenceProgram(d_, index_));
  case Type::OnTileExecute:
    return visitor.visitOnTileExecute(OnTileExecuteProgram(d_, index_));
  case Type::DoExchange:
    return visitor.visitDoExchange(DoExchangeProgram(d_, index_));
  case Type::StreamCopyMid:
    return visitor.visitStreamCopyMid(StreamCopyMidProgram(d_, index_));
  case Type::RemoteBufferCopy:
    return visitor.visitRemoteBufferCopy(RemoteBufferCopyProgram(d_, index_));
  case Type::Sync:
    return visitor.visitSync(SyncProgram(d_, index_));
  case Type::Call:
    return visitor.visitCall(CallProgram(d_, index_));
  case Type::Repeat:
    return visitor.visitRepeat(RepeatProgram(d_, index_));
  case Type::If:
    return visitor.visitIf(IfProgram(d_, index_));
  case Type::StreamCopyBegin:
  case Type::StreamCopyEnd:
  case Type::Other:
    break;
  }
  visitor.visitProgram(*this);
}
std::uint64_t Program::estimatedCycles() const {
  return d_->nodes[index_].cycles;
}
std::uint64_t Program::notAlwaysLiveBytes() const {
  const std::int64_t s = d_->nodes[index_].step;
  const json steps = val(d_->report, "steps", json::array());
  return s >= 0 && std::size_t(s) < steps.size() ? val(steps[s], "notAlwaysLiveBytes", std::uint64_t(0)) : 0;
}

std::vector<std::shared_ptr<DebugContext>> Program::debugContexts() const {
  std::vector<std::shared_ptr<DebugContext>> out;
  const std::int64_t s = d_->nodes[index_].step;
  const auto steps = d_->report.find("steps");
  if (s < 0 || steps == d_->report.end() || !steps->is_array() || std::size_t(s) >= steps->size())
    return out;
  const json &step = (*steps)[std::size_t(s)];
  std::uint64_t id = num(step, "debugId");
  const auto css = d_->report.find("computeSets");
  if (id == 0 && css != d_->report.end() && css->is_array()) {
    const std::uint64_t c = num(step, "computeSet", ~std::uint64_t(0));
    if (c < css->size() && (*css)[c].is_object())
      id = num((*css)[c], "debugId");
  }
  if (auto dc = debugContextOf(d_, id))
    out.push_back(std::move(dc));
  return out;
}

std::vector<std::shared_ptr<DebugContext>> Compilation::debugContexts() const {
  std::vector<std::shared_ptr<DebugContext>> out;
  for (const auto &kv : d_->debugIndex)
    out.push_back(std::make_shared<DebugContext>(d_, kv.second));
  return out;
}

std::uint64_t DebugContext::id() const {
  return num(debugList(*d_)[index_], "id");
}
std::uint64_t DebugContext::parentId() const {
  return num(debugList(*d_)[index_], "parent");
}
std::shared_ptr<DebugContext> DebugContext::parent() const {
  return debugContextOf(d_, parentId());
}
std::string DebugContext::layer() const {
  const auto &entry = debugList(*d_)[index_];
  auto it = entry.find("layer");
  return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::string DebugContext::name() const {
  const auto &entry = debugList(*d_)[index_];
  auto it = entry.find("path");
  return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}
std::string DebugContext::json() const {
  const auto &entry = debugList(*d_)[index_];
  auto it = entry.find("values");
  return it != entry.end() ? it->dump() : "{}";
}

std::shared_ptr<Program> LivenessProgramStep::program() const {
  return node(d_, d_->stepNode[step_]);
}
NotAlwaysLiveMemory LivenessProgramStep::notAlwaysLiveMemory() const {
  const auto it = d_->report.find("steps");
  return NotAlwaysLiveMemory(val((*it)[step_], "notAlwaysLiveBytes", std::uint64_t(0)));
}

// ---- compilation ----------------------------------------------------------------------
std::vector<Tile> Compilation::tiles() const {
  std::vector<Tile> out;
  const unsigned n = Target(d_).numTiles();
  out.reserve(n);
  for (unsigned t = 0; t < n; ++t)
    out.emplace_back(d_, t);
  return out;
}
std::vector<std::shared_ptr<Program>> Compilation::programs() const {
  std::vector<std::shared_ptr<Program>> out;
  for (std::size_t i = 0; i < d_->numCompiledNodes; ++i)
    out.push_back(node(d_, i));
  return out;
}
std::vector<std::shared_ptr<Program>> Compilation::controlPrograms() const {
  std::vector<std::shared_ptr<Program>> out;
  for (std::size_t i = 0; i < d_->numControl; ++i)
    out.push_back(node(d_, i));
  return out;
}
std::vector<LivenessProgramStep> Compilation::livenessProgramSteps() const {
  std::vector<LivenessProgramStep> out;
  for (std::size_t s = 0; s < d_->stepNode.size(); ++s)
    out.emplace_back(d_, s);
  return out;
}
std::uint64_t Compilation::totalMemory() const {
  return num(d_->at("memory"), "totalPeakBytes");
}
bool Compilation::outOfMemory() const {
  return val(d_->at("memory"), "outOfMemory", false);
}

// ---- execution ----------------------------------------------------------------------
std::shared_ptr<Program> ExecutionStep::program() const {
  const std::uint32_t s = d_->trace[entry_].step;
  return node(d_, s < d_->stepNode.size() ? d_->stepNode[s] : d_->executedNode.at(s));
}
std::uint64_t ExecutionStep::cyclesFrom() const {
  return d_->trace[entry_].start;
}
std::uint64_t ExecutionStep::cyclesTo() const {
  return d_->trace[entry_].start + d_->trace[entry_].cycles;
}
std::size_t ExecutionStep::run() const {
  return d_->trace[entry_].run;
}
std::vector<std::uint64_t> ExecutionStep::cyclesByTile() const {
  std::vector<std::uint64_t> out(Target(d_).numTiles(), 0);
  const std::uint32_t s = d_->trace[entry_].step;
  const auto found = d_->executedStep.find(s);
  const json *e = found != d_->executedStep.end() ? found->second : nullptr;
  if (!e)
    return out;
  const json tiles = val(*e, "tiles", json::array());
  json cycles = val(*e, "tileComputeCycles", json::array());
  if (cycles.empty())
    cycles = val(*e, "tileExchangeCycles", json::array());
  for (std::size_t k = 0; k < tiles.size() && k < cycles.size(); ++k) {
    if (!tiles[k].is_number_unsigned() || !cycles[k].is_number_unsigned())
      continue;
    const std::size_t t = tiles[k].get<std::size_t>();
    if (t < out.size())
      out[t] = cycles[k].get<std::uint64_t>();
  }
  return out;
}

std::vector<ExecutionStep> Execution::steps() const {
  std::vector<ExecutionStep> out;
  out.reserve(d_->trace.size());
  for (std::size_t i = 0; i < d_->trace.size(); ++i)
    out.emplace_back(d_, i);
  return out;
}
std::shared_ptr<Program> Block::program() const {
  return node(d_, node_);
}

std::vector<Block> Execution::blocks(unsigned tile) const {
  // What the engine recorded of its lightweight-profiling options (docs/profile-format.md,
  // execution.blocks); without it (an older report) no program was instrumented.
  const json &x = d_->at("execution");
  const json options = val(x, "blocks", json::object());
  const std::string blocksFilter = val(options, "filter", std::string());
  const std::string programsFilter = val(options, "programsFilter", std::string());
  const bool streamCopies = val(options, "streamCopies", false);
  const unsigned perIpu = Target(d_).tilesPerIPU();
  const bool instrumented =
      perIpu != 0 && tile < Target(d_).numTiles() && tile % perIpu == val(options, "tile", std::uint64_t(0));
  // The engine checked both patterns when it was created; a report edited since falls back to
  // matching nothing rather than throwing std::regex_error through libpva.
  auto compile = [](const std::string &pattern, std::regex &out) {
    if (pattern.empty())
      return false;
    try {
      out = std::regex(pattern);
      return true;
    } catch (const std::regex_error &) {
      return false;
    }
  };
  std::regex blocksRe, programsRe;
  const bool haveBlocks = instrumented && compile(blocksFilter, blocksRe);
  const bool havePrograms = instrumented && compile(programsFilter, programsRe);

  // Read by reference: blocks(tile) is called for every tile of large reports.
  const json &compiledSteps = arrayAt(d_->report, "steps");
  auto kindOf = [&](std::uint32_t s) {
    if (s < compiledSteps.size())
      return val(compiledSteps[s], "kind", std::string());
    const auto found = d_->executedStep.find(s);
    return found != d_->executedStep.end() ? val(*found->second, "kind", std::string()) : std::string();
  };
  auto leaf = [&](std::uint32_t s) {
    return s < d_->stepNode.size() ? d_->stepNode[s] : d_->executedNode.at(s);
  };
  auto touches = [&](std::uint32_t s) {
    const auto found = d_->executedStep.find(s);
    if (found == d_->executedStep.end())
      return false;
    const json &tiles = arrayAt(*found->second, "tiles");
    return std::any_of(tiles.begin(), tiles.end(),
                       [&](const json &t) { return t.is_number_unsigned() && t.get<unsigned>() == tile; });
  };

  // As on the IPU, where each IPU's control code holds only what runs on it, a block or program
  // is recorded on the IPUs its steps run on: 1 if step `s` touches a tile of `tile`'s IPU, 0 if
  // it touches only other IPUs' tiles, -1 if the report lists no tiles for it (control steps).
  std::map<std::uint32_t, int> onIpuCache;
  auto onIpu = [&](std::uint32_t s) {
    const auto cached = onIpuCache.find(s);
    if (cached != onIpuCache.end())
      return cached->second;
    int result = -1;
    const auto found = d_->executedStep.find(s);
    if (found != d_->executedStep.end()) {
      const json &tiles = arrayAt(*found->second, "tiles");
      if (!tiles.empty())
        result = std::any_of(tiles.begin(), tiles.end(), [&](const json &t) {
          return t.is_number_unsigned() && perIpu != 0 && t.get<unsigned>() / perIpu == tile / perIpu;
        });
    }
    onIpuCache.emplace(s, result);
    return result;
  };

  struct Open {
    std::size_t begin, node; // trace index of its BlockBegin; its node, or ~0 if not recorded
    bool here = false, anywhere = false;
  };
  std::vector<std::pair<std::size_t, Block>> out; // (trace index where it began, block)
  std::vector<Open> open;
  for (std::size_t i = 0; i < d_->trace.size(); ++i) {
    const detail::TraceEntry &t = d_->trace[i];
    if (i > 0 && t.run != d_->trace[i - 1].run)
      open.clear(); // every run ends its blocks
    const std::string kind = kindOf(t.step);
    if (kind == "BlockBegin") {
      const auto found = d_->blockNode.find(t.step);
      const std::size_t n = found != d_->blockNode.end() ? found->second : leaf(t.step);
      const bool wanted = haveBlocks && std::regex_match(d_->nodes[n].name, blocksRe);
      open.push_back({i, wanted ? n : ~std::size_t(0)});
      continue;
    }
    if (kind == "BlockEnd") {
      if (open.empty())
        continue;
      const Open o = open.back();
      open.pop_back();
      if (o.node != ~std::size_t(0) && (o.here || !o.anywhere))
        out.emplace_back(o.begin, Block(d_, o.node, tile, d_->trace[o.begin].start, t.start + t.cycles,
                                        Block::Kind::Common));
      continue;
    }
    const int where = onIpu(t.step);
    for (Open &o : open) {
      o.anywhere = o.anywhere || where >= 0;
      o.here = o.here || where == 1;
    }
    if (kind == "StreamToDevice" || kind == "DeviceToStream") {
      if (streamCopies && touches(t.step))
        out.emplace_back(i,
                         Block(d_, leaf(t.step), tile, t.start, t.start + t.cycles, Block::Kind::StreamCopy));
    } else if (havePrograms && where != 0 &&
               (kind == "Execute" || kind == "Copy" || kind == "RemoteToDevice" ||
                kind == "DeviceToRemote") &&
               std::regex_match(d_->nodes[leaf(t.step)].name, programsRe)) {
      out.emplace_back(i, Block(d_, leaf(t.step), tile, t.start, t.start + t.cycles, Block::Kind::Common));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<Block> blocks;
  blocks.reserve(out.size());
  for (auto &entry : out)
    blocks.push_back(std::move(entry.second));
  return blocks;
}

std::vector<Run> Execution::runs() const {
  std::vector<Run> out;
  for (std::size_t k = 0; k + 1 < d_->runBegin.size(); ++k)
    out.emplace_back(d_, k);
  return out;
}
std::uint64_t Execution::totalCycles() const {
  return num(d_->at("execution"), "totalCycles");
}
std::uint64_t Execution::cycles(const std::string &category) const {
  return num(d_->at("execution", "cycles"), category.c_str());
}

std::shared_ptr<Program> Run::program() const {
  const std::int64_t p = d_->runProgram[index_];
  return p < 0 ? nullptr : node(d_, static_cast<std::size_t>(p));
}
std::vector<ExecutionStep> Run::steps() const {
  std::vector<ExecutionStep> out;
  for (std::size_t i = d_->runBegin[index_]; i < d_->runBegin[index_ + 1]; ++i)
    out.emplace_back(d_, i);
  return out;
}
std::uint64_t Run::cyclesFrom() const {
  return d_->trace[d_->runBegin[index_]].start;
}
std::uint64_t Run::cyclesTo() const {
  const auto &last = d_->trace[d_->runBegin[index_ + 1] - 1];
  return last.start + last.cycles;
}

// ---- vertices and compute sets ---------------------------------------------------------
namespace {
const json &arrayAt(const detail::ReportData &d, const char *key) {
  auto it = d.report.find(key);
  return it != d.report.end() && it->is_array() ? *it : d.empty;
}

/// `[key, count, key, count, ...]` of `o[member]` as (key, count) pairs, entries that are
/// not numbers (or a count of 0) left out.
std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs(const json &o, const char *member) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  if (!o.is_object())
    return out;
  auto it = o.find(member);
  if (it == o.end() || !it->is_array())
    return out;
  for (std::size_t k = 0; k + 1 < it->size(); k += 2)
    if ((*it)[k].is_number_unsigned() && (*it)[k + 1].is_number_unsigned() &&
        (*it)[k + 1].get<std::uint64_t>())
      out.emplace_back((*it)[k].get<std::uint64_t>(), (*it)[k + 1].get<std::uint64_t>());
  return out;
}

/// Per tile (numTiles entries): `cycles[k]` on tile `tiles[k]` of `o`.
std::vector<std::uint64_t> perTile(const detail::ReportData &d, const json &o, const char *tilesKey,
                                   const char *cyclesKey) {
  std::vector<std::uint64_t> out(static_cast<std::size_t>(num(d.at("target"), "numTiles")), 0);
  if (!o.is_object())
    return out;
  const json tiles = val(o, tilesKey, json::array());
  const json cycles = val(o, cyclesKey, json::array());
  for (std::size_t k = 0; k < tiles.size() && k < cycles.size(); ++k)
    if (tiles[k].is_number_unsigned() && cycles[k].is_number_unsigned() &&
        tiles[k].get<std::size_t>() < out.size())
      out[tiles[k].get<std::size_t>()] = cycles[k].get<std::uint64_t>();
  return out;
}

const json &computeSetJson(const detail::ReportData &d, std::size_t index) {
  const json &list = arrayAt(d, "computeSets");
  return index < list.size() && list[index].is_object() ? list[index] : d.empty;
}
} // namespace

std::string VertexType::name() const {
  const json &types = arrayAt(*d_, "vertexTypes");
  return index_ < types.size() ? val(types[index_], "name", std::string()) : std::string();
}

std::vector<Vertex> TileMemory::vertices() const {
  std::vector<Vertex> out;
  const json &types = arrayAt(*d_, "vertexTypes");
  for (std::size_t t = 0; t < types.size(); ++t)
    for (const auto &[tile, count] : pairs(types[t], "tiles"))
      if (tile == tile_)
        out.emplace_back(d_, t, count);
  return out;
}

std::string ComputeSet::name() const {
  if (index_ != npos)
    return val(computeSetJson(*d_, index_), "name", std::string());
  if (entry_ < d_->trace.size()) {
    // The step that ran it names it: the graph part's step, else the execution part's.
    const std::uint32_t s = d_->trace[entry_].step;
    const json &steps = arrayAt(*d_, "steps");
    if (s < steps.size() && steps[s].is_object() && steps[s].contains("name"))
      return val(steps[s], "name", std::string());
    const auto found = d_->executedStep.find(s);
    if (found != d_->executedStep.end())
      return val(*found->second, "name", std::string());
  }
  return std::string();
}

std::vector<Vertex> ComputeSet::vertices() const {
  std::vector<Vertex> out;
  if (index_ == npos)
    return out;
  const std::size_t numTypes = arrayAt(*d_, "vertexTypes").size();
  for (const auto &[type, count] : pairs(computeSetJson(*d_, index_), "vertexTypeCounts"))
    if (type < numTypes)
      out.emplace_back(d_, static_cast<std::size_t>(type), count);
  return out;
}

std::vector<std::uint64_t> ComputeSet::estimatedCyclesByTile() const {
  return perTile(*d_, index_ == npos ? d_->empty : computeSetJson(*d_, index_), "tileList",
                 "tileEstimatedCycles");
}

std::vector<std::uint64_t> ComputeSet::cyclesByTile() const {
  if (entry_ < d_->trace.size())
    return ExecutionStep(d_, entry_).cyclesByTile();
  return estimatedCyclesByTile();
}

std::vector<std::shared_ptr<DebugContext>> ComputeSet::debugContexts() const {
  std::vector<std::shared_ptr<DebugContext>> out;
  if (auto dc = debugContextOf(d_, index_ == npos ? 0 : num(computeSetJson(*d_, index_), "debugId")))
    out.push_back(std::move(dc));
  return out;
}

std::vector<ComputeSet> Compilation::computeSets() const {
  std::vector<ComputeSet> out;
  const std::size_t n = arrayAt(*d_, "computeSets").size();
  out.reserve(n);
  for (std::size_t c = 0; c < n; ++c)
    out.emplace_back(d_, c);
  return out;
}

std::vector<ComputeSet> ExecutionStep::computeSets() const {
  std::vector<ComputeSet> out;
  const std::uint32_t s = d_->trace[entry_].step;
  const json &steps = arrayAt(*d_, "steps");
  if (s < steps.size()) {
    if (val(steps[s], "kind", std::string()) != "Execute")
      return out;
    const std::size_t c = val(steps[s], "computeSet", ComputeSet::npos);
    out.emplace_back(d_, c < arrayAt(*d_, "computeSets").size() ? c : ComputeSet::npos, entry_);
    return out;
  }
  // A report without the graph part: the execution part says the step's kind and name.
  const auto found = d_->executedStep.find(s);
  if (found != d_->executedStep.end() && val(*found->second, "kind", std::string()) == "Execute")
    out.emplace_back(d_, ComputeSet::npos, entry_);
  return out;
}

} // namespace pva

// ---- Engine::getReport: defined here, in libpva, as it returns libpva's Report ------------
pva::Report poplar::Engine::getReport(bool reportExecution) const {
  auto data = std::make_shared<pva::detail::ReportData>();
  data->report = aspen::profile::engineReport(*this, reportExecution);
  return pva::fromData(std::move(data));
}
