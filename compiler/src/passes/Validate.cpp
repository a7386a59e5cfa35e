// Copyright (c) Aspen contributors.
#include "passes/Validate.hpp"

#include "passes/ViewRuns.hpp"
#include "poplar/exceptions.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace aspen::compiler {
namespace {

/// WriteConflict: two vertices of one compute set write one element (Poplar:
/// graph_cycle_error when that is all that is wrong).
enum class ProblemKind : std::uint8_t { Mapping, Connection, Program, WriteConflict };

struct Problem {
  ProblemKind kind;
  std::string text;
};

using Problems = std::vector<Problem>;

/// At most this many problems are spelled out; the rest are counted.
constexpr std::size_t kMaxListed = 200;

std::string computeSetName(const ir::GraphData &g, std::uint32_t cs) {
  std::string s = "compute set ";
  if (cs < g.computeSets.size() && !g.computeSets[cs].name.empty())
    s += "'" + g.computeSets[cs].name + "' (id " + std::to_string(cs) + ")";
  else
    s += std::to_string(cs);
  return s;
}

std::string vertexName(const ir::GraphData &g, std::uint32_t v) {
  const ir::Vertex &vx = g.vertices[v];
  std::string type = vx.type < g.vertexTypes.size() ? g.vertexTypes[vx.type].name : "<unknown type>";
  return "vertex " + std::to_string(v) + " (" + type + ")";
}

std::string where(const ir::GraphData &g, std::uint32_t v, const std::string &field) {
  return vertexName(g, v) + " in " + computeSetName(g, g.vertices[v].computeSet) + ", field '" + field + "'";
}

bool isEdge(ir::FieldKind k) {
  return k != ir::FieldKind::State;
}
bool writes(ir::FieldKind k) {
  return k == ir::FieldKind::Output || k == ir::FieldKind::InOut;
}

/// One byte run written by a vertex edge, for the overlapping-writes check.
struct WriteRun {
  std::uint32_t var;
  std::uint64_t begin, end; // bytes of the variable
  std::uint32_t vertex;
  std::uint32_t field;
  std::uint32_t edge;
};

// ---- mapping -------------------------------------------------------------------

void checkVariableMapping(const ir::GraphData &g, std::uint32_t v, Problems &out) {
  const ir::Variable &var = g.variables[v];
  const unsigned numTiles = g.target.numTiles();
  std::uint64_t covered = 0;
  std::uint64_t firstGap = ~std::uint64_t(0), gapElems = 0;
  std::uint64_t at = 0;
  for (const ir::TileInterval &ti : var.mapping) {
    if (ti.tile >= numTiles) {
      out.push_back({ProblemKind::Mapping,
                     "Tensor " + g.describeVariable(v) + ": elements [" + std::to_string(ti.begin) + ", " +
                         std::to_string(ti.end) + ") are mapped to tile " + std::to_string(ti.tile) +
                         " but the target has only " + std::to_string(numTiles) + " tiles"});
    }
    if (ti.begin > at) {
      if (firstGap == ~std::uint64_t(0))
        firstGap = at;
      gapElems += ti.begin - at;
    }
    covered += ti.end - ti.begin;
    at = std::max(at, ti.end);
  }
  if (at < var.numElements) {
    if (firstGap == ~std::uint64_t(0))
      firstGap = at;
    gapElems += var.numElements - at;
  }
  (void)covered;
  if (gapElems) {
    out.push_back({ProblemKind::Mapping,
                   "Tensor " + g.describeVariable(v) +
                       " is not completely mapped to tiles: " + std::to_string(gapElems) + " of its " +
                       std::to_string(var.numElements) + " elements have no tile (the first is element " +
                       std::to_string(firstGap) + "); call Graph::setTileMapping"});
  }
}

// ---- vertices ------------------------------------------------------------------

void checkEdge(const ir::GraphData &g, std::uint32_t v, const ir::FieldInfo &f, const ir::Edge &view,
               const std::string &fieldLabel, bool scalarEdge, Problems &out) {
  if (!view.connected()) {
    out.push_back({ProblemKind::Connection, where(g, v, fieldLabel) + ": not connected"});
    return;
  }
  // The edge as a tensor, made only for a message or an fp8 metadata lookup.
  auto tensor = [&] { return ir::edgeTensor(g, view); };
  if (f.elementType.valid() && view.elementType != f.elementType) {
    out.push_back({ProblemKind::Connection, where(g, v, fieldLabel) + ": the field holds " +
                                                std::string(f.elementType.toString()) +
                                                " but is connected to tensor " + tensor().shortString()});
  }
  const bool quarter = f.elementType == poplar::QUARTER && view.elementType == poplar::QUARTER;
  const poplar::Tensor t = quarter ? tensor() : poplar::Tensor();
  if (quarter && !t.hasMetadata()) {
    out.push_back({ProblemKind::Connection, where(g, v, fieldLabel) +
                                                ": the field holds quarter but tensor " + t.shortString() +
                                                " has no metadata (a quarter tensor needs a QUARTER_METADATA "
                                                "tensor: Graph::addVariable(QUARTER, metadata, shape))"});
  } else if (quarter) {
    try {
      (void)t.getMetadata();
    } catch (const poplar::poplar_error &e) {
      out.push_back({ProblemKind::Connection, where(g, v, fieldLabel) + ": " + e.what()});
    }
  }
  if (scalarEdge && view.numElements() != 1) {
    out.push_back({ProblemKind::Connection, where(g, v, fieldLabel) +
                                                ": a scalar edge needs a tensor of 1 element "
                                                "but is connected to tensor " +
                                                tensor().shortString() + " of " +
                                                std::to_string(view.numElements()) + " elements"});
  }
  if (writes(f.kind)) {
    bool constant = false;
    forEachByteRun(view, [&](std::uint32_t var, std::uint64_t, std::uint64_t) {
      if (var < g.variables.size() && g.variables[var].isConstant) {
        constant = true;
        return false;
      }
      return true;
    });
    if (constant) {
      out.push_back({ProblemKind::Connection, where(g, v, fieldLabel) + ": an " +
                                                  (f.kind == ir::FieldKind::Output ? "Output" : "InOut") +
                                                  " field cannot write tensor " + tensor().shortString() +
                                                  ", which is (part of) a constant"});
    }
  }
}

void checkVertex(const ir::GraphData &g, std::uint32_t v, Problems &out) {
  const ir::Vertex &vx = g.vertices[v];
  const unsigned numTiles = g.target.numTiles();
  if (vx.type >= g.vertexTypes.size()) {
    out.push_back({ProblemKind::Connection, "vertex " + std::to_string(v) + " in " +
                                                computeSetName(g, vx.computeSet) +
                                                " has an unknown vertex type"});
    return;
  }
  if (vx.tile < 0) {
    if (g.target.type != poplar::TargetType::CPU)
      out.push_back(
          {ProblemKind::Mapping, vertexName(g, v) + " in " + computeSetName(g, vx.computeSet) +
                                     " has no tile mapping; call Graph::setTileMapping(vertex, tile)"});
  } else if (static_cast<std::uint64_t>(vx.tile) >= numTiles) {
    out.push_back({ProblemKind::Mapping, vertexName(g, v) + " in " + computeSetName(g, vx.computeSet) +
                                             " is mapped to tile " + std::to_string(vx.tile) +
                                             " but the target has only " + std::to_string(numTiles) +
                                             " tiles"});
  }
  const ir::VertexTypeInfo &type = g.vertexTypes[vx.type];
  static const ir::FieldValue unset;
  for (std::size_t fi = 0; fi < type.fields.size(); ++fi) {
    const ir::FieldInfo &f = type.fields[fi];
    const ir::FieldValue &val = fi < vx.fields.size() ? vx.fields[fi] : unset;
    if (!isEdge(f.kind)) {
      // State: optional (zero when unset); when set, its bytes must match its count.
      if (val.set && f.elementType.valid() &&
          val.stateBytes().size() != val.stateCount * f.elementType.size()) {
        out.push_back({ProblemKind::Connection, where(g, v, f.name) + ": holds " +
                                                    std::to_string(val.stateBytes().size()) + " bytes for " +
                                                    std::to_string(val.stateCount) + " values of " +
                                                    std::string(f.elementType.toString())});
      }
      if (f.shape == ir::FieldShape::Scalar && val.set && val.stateCount != 1) {
        out.push_back({ProblemKind::Connection, where(g, v, f.name) + ": a scalar field was given " +
                                                    std::to_string(val.stateCount) + " values"});
      }
      continue;
    }
    switch (f.shape) {
    case ir::FieldShape::Scalar:
    case ir::FieldShape::Vector:
      if (!val.set || val.edges().empty()) {
        out.push_back({ProblemKind::Connection, where(g, v, f.name) + ": not connected"});
        break;
      }
      checkEdge(g, v, f, val.edges()[0], f.name, f.shape == ir::FieldShape::Scalar, out);
      break;
    case ir::FieldShape::VectorOfEdges:
    case ir::FieldShape::VectorOfScalarEdges: {
      const bool declared = val.declaredSize != ir::FieldValue::kNoDeclaredSize;
      if (!val.set && !declared) {
        out.push_back({ProblemKind::Connection, where(g, v, f.name) + ": not connected"});
        break;
      }
      const auto edges = val.edges();
      if (declared && val.declaredSize != edges.size()) {
        out.push_back({ProblemKind::Connection, where(g, v, f.name) + ": its size was set to " +
                                                    std::to_string(val.declaredSize) + " but " +
                                                    std::to_string(edges.size()) + " tensors are connected"});
      }
      for (std::size_t e = 0; e < edges.size(); ++e)
        checkEdge(g, v, f, edges[e], f.name + "[" + std::to_string(e) + "]",
                  f.shape == ir::FieldShape::VectorOfScalarEdges, out);
      // fp8: a list of quarter edges has one metadata pointer (docs/fp8.md).
      if (f.elementType == poplar::QUARTER)
        for (std::size_t e = 1; e < edges.size(); ++e) {
          if (!edges[0].connected() || !edges[e].connected())
            continue; // reported above
          const poplar::Tensor a = ir::edgeTensor(g, edges[0]), b = ir::edgeTensor(g, edges[e]);
          if (!a.hasMetadata() || !b.hasMetadata())
            continue; // reported above
          try {
            const auto ra = a.getMetadata().getVarRegions(), rb = b.getMetadata().getVarRegions();
            if (ra.empty() || rb.empty() || ra[0].var != rb[0].var ||
                ra[0].interval.begin() != rb[0].interval.begin())
              out.push_back(
                  {ProblemKind::Connection,
                   where(g, v, f.name) + ": a list of quarter edges shares one metadata, but tensor " +
                       a.shortString() + " carries " + a.getMetadata().shortString() + " and tensor " +
                       b.shortString() + " carries " + b.getMetadata().shortString()});
          } catch (const poplar::poplar_error &) {
            // reported by checkEdge
          }
        }
      break;
    }
    }
  }
}

void collectWrites(const ir::GraphData &g, std::uint32_t v, std::vector<WriteRun> &out) {
  const ir::Vertex &vx = g.vertices[v];
  if (vx.type >= g.vertexTypes.size())
    return;
  const ir::VertexTypeInfo &type = g.vertexTypes[vx.type];
  for (std::size_t fi = 0; fi < type.fields.size() && fi < vx.fields.size(); ++fi) {
    if (!writes(type.fields[fi].kind))
      continue;
    const auto edges = vx.fields[fi].edges();
    for (std::size_t e = 0; e < edges.size(); ++e) {
      if (!edges[e].connected())
        continue;
      forEachByteRun(edges[e], [&](std::uint32_t var, std::uint64_t b, std::uint64_t n) {
        out.push_back({var, b, b + n, v, static_cast<std::uint32_t>(fi), static_cast<std::uint32_t>(e)});
        return true;
      });
    }
  }
}

std::string fieldLabel(const ir::GraphData &g, const WriteRun &w) {
  const ir::Vertex &vx = g.vertices[w.vertex];
  const ir::FieldInfo &f = g.vertexTypes[vx.type].fields[w.field];
  std::string s = f.name;
  if (f.shape == ir::FieldShape::VectorOfEdges || f.shape == ir::FieldShape::VectorOfScalarEdges)
    s += "[" + std::to_string(w.edge) + "]";
  return s;
}

poplar::Tensor writeTensor(const ir::GraphData &g, const WriteRun &w) {
  return ir::edgeTensor(g, g.vertices[w.vertex].fields[w.field].edges()[w.edge]);
}

/// No two vertices of one compute set may write one element, and no edge may
/// write an element twice.
void checkOverlappingWrites(const ir::GraphData &g, std::uint32_t cs, Problems &out) {
  std::vector<WriteRun> runs;
  for (std::uint32_t v : g.computeSets[cs].vertices)
    collectWrites(g, v, runs);
  auto byVarBegin = [](const WriteRun &a, const WriteRun &b) {
    return a.var != b.var ? a.var < b.var : a.begin < b.begin;
  };
  if (!std::is_sorted(runs.begin(), runs.end(), byVarBegin))
    std::sort(runs.begin(), runs.end(), byVarBegin);
  std::set<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>> reported;
  std::size_t conflicts = 0;
  std::size_t i = 0;
  while (i < runs.size()) {
    // Within one variable, compare each run with the run that reaches furthest so far.
    std::size_t reach = i;
    std::size_t j = i + 1;
    for (; j < runs.size() && runs[j].var == runs[i].var; ++j) {
      const WriteRun &a = runs[reach], &b = runs[j];
      if (b.begin < a.end) {
        const bool sameEdge = a.vertex == b.vertex && a.field == b.field && a.edge == b.edge;
        const bool sameVertex = a.vertex == b.vertex;
        if (sameEdge || !sameVertex) {
          auto key =
              std::make_tuple(std::min(a.vertex, b.vertex), std::max(a.vertex, b.vertex), a.field, b.field);
          if (reported.insert(key).second) {
            ++conflicts;
            const std::size_t elemSize = g.variables[b.var].type.size();
            const std::uint64_t element = elemSize ? b.begin / elemSize : 0;
            std::string text;
            if (sameEdge) {
              text = where(g, a.vertex, fieldLabel(g, a)) + ": writes element " + std::to_string(element) +
                     " of " + g.describeVariable(b.var) + " more than once (tensor " +
                     writeTensor(g, a).shortString() + " contains aliases)";
            } else {
              text = vertexName(g, a.vertex) + " field '" + fieldLabel(g, a) + "' and " +
                     vertexName(g, b.vertex) + " field '" + fieldLabel(g, b) + "' in " +
                     computeSetName(g, cs) + " both write element " + std::to_string(element) + " of " +
                     g.describeVariable(b.var) + " (tensors " + writeTensor(g, a).shortString() + " and " +
                     writeTensor(g, b).shortString() + ")";
            }
            out.push_back({sameEdge ? ProblemKind::Connection : ProblemKind::WriteConflict, std::move(text)});
          }
        }
      }
      if (b.end > runs[reach].end)
        reach = j;
    }
    i = j;
    if (conflicts > kMaxListed)
      break;
  }
}

// ---- programs ------------------------------------------------------------------

class ProgramChecker {
public:
  ProgramChecker(const ir::GraphData &g, Problems &out) : g_(g), out_(out) {}

  void check(const ir::ProgramNode *node) {
    if (!node || !visited_.insert(node).second)
      return;
    using K = ir::ProgramKind;
    const std::string what = label(node);
    if (!usesOwnTensors(node, what)) {
      for (const auto &child : node->children)
        check(child.get());
      return;
    }
    switch (node->kind) {
    case K::Execute:
      if (node->computeSet >= g_.computeSets.size())
        problem(what + " names compute set " + std::to_string(node->computeSet) + ", which does not exist");
      if (node->predicate.valid())
        scalar(node->predicate, what + " (failure flag)", false);
      break;
    case K::Copy:
      tensors(node->src, node->dst, what);
      break;
    case K::StreamToTensor:
    case K::TensorToStream: {
      const bool toDevice = node->kind == K::StreamToTensor;
      const poplar::Tensor &t = toDevice ? node->dst : node->src;
      if (node->stream >= g_.streams.size()) {
        problem(what + " names stream " + std::to_string(node->stream) + ", which does not exist");
        break;
      }
      const ir::StreamRecord &s = g_.streams[node->stream];
      if (s.hostToDevice != toDevice)
        problem(what + " uses stream '" + s.handle + "' in the wrong direction");
      if (!t.valid()) {
        problem(what + " with stream '" + s.handle + "' has no tensor");
        break;
      }
      if (t.elementType() != s.type || t.numElements() != s.numElements)
        problem(what + " copies tensor " + t.shortString() + " (" + std::to_string(t.numElements()) +
                " elements) but stream '" + s.handle + "' carries " + std::to_string(s.numElements) + " " +
                std::string(s.type.toString()) + " elements");
      if (toDevice)
        notConstant(t, what);
      break;
    }
    case K::RemoteToTensor:
    case K::TensorToRemote: {
      const bool toDevice = node->kind == K::RemoteToTensor;
      const poplar::Tensor &t = toDevice ? node->dst : node->src;
      if (node->remoteBuffer >= g_.remoteBuffers.size()) {
        problem(what + " names remote buffer " + std::to_string(node->remoteBuffer) +
                ", which does not exist");
        break;
      }
      const ir::RemoteBufferRecord &rb = g_.remoteBuffers[node->remoteBuffer];
      if (!t.valid()) {
        problem(what + " with remote buffer '" + rb.handle + "' has no tensor");
        break;
      }
      const std::size_t rows = node->offset.valid() ? node->offset.numElements() : 1;
      if (t.elementType() != rb.type || t.numElements() != rows * rb.numElements)
        problem(what + " copies tensor " + t.shortString() + " but remote buffer '" + rb.handle +
                "' rows hold " + std::to_string(rb.numElements) + " " + std::string(rb.type.toString()) +
                " elements (" + std::to_string(rows) + " row(s) copied)");
      if (node->offset.valid() && !node->offset.elementType().isIntegral())
        problem(what + ": the row offset tensor " + node->offset.shortString() + " must be integral");
      if (node->offset.valid())
        elementsInOnePlace(node->offset, what + " (row offsets)");
      if (toDevice)
        notConstant(t, what);
      break;
    }
    case K::Repeat:
    case K::RepeatForever:
    case K::Sequence:
    case K::Block:
      break;
    case K::RepeatWhileTrue:
    case K::RepeatWhileFalse:
    case K::If:
    case K::AbortOnCondition:
      scalar(node->predicate, what + " (predicate)", true);
      break;
    case K::Switch:
      if (scalar(node->predicate, what + " (control)", true) && !node->predicate.elementType().isIntegral())
        problem(what + ": the control tensor " + node->predicate.shortString() +
                " must be an integral scalar");
      {
        std::set<std::int32_t> seen;
        for (std::int32_t c : node->caseValues)
          if (!seen.insert(c).second)
            problem(what + " has case value " + std::to_string(c) + " twice");
      }
      break;
    case K::Call:
      if (node->function >= g_.functions.size())
        problem(what + " calls function " + std::to_string(node->function) + ", which does not exist");
      break;
    case K::WriteUndef:
      if (!node->dst.valid())
        problem(what + " has no tensor");
      break;
    case K::PrintTensor:
      if (!node->src.valid())
        problem(what + " has no tensor");
      break;
    case K::Sync:
    case K::Abort:
      break;
    case K::Collective: // shapes and groups are checked by libgcl when it records the node
      if (!node->src.valid() || !node->dst.valid())
        problem(what + " has no tensor");
      else
        notConstant(node->dst, what);
      break;
    }
    for (const auto &child : node->children)
      check(child.get());
  }

private:
  std::string label(const ir::ProgramNode *node) const {
    std::string s = "program ";
    s += ir::programKindName(node->kind);
    if (!node->debugName.empty())
      s += " '" + node->debugName + "'";
    return s;
  }
  void problem(std::string text) { out_.push_back({ProblemKind::Program, std::move(text)}); }
  /// A program's tensors must be this graph's: another graph's variable ids
  /// mean nothing here. Reports each foreign tensor; true when there is none.
  bool usesOwnTensors(const ir::ProgramNode *node, const std::string &what) {
    bool own = true;
    for (const poplar::Tensor *t : {&node->src, &node->dst, &node->predicate, &node->offset}) {
      if (t->valid() && t->getImpl().graph != g_.id()) {
        problem(what + " uses tensor " + t->shortString() + ", which belongs to another graph");
        own = false;
      }
    }
    return own;
  }
  bool scalar(const poplar::Tensor &t, const std::string &what, bool required) {
    if (!t.valid()) {
      if (required)
        problem(what + " has no tensor");
      return false;
    }
    if (t.numElements() != 1) {
      problem(what + " must be a scalar (1 element) but is tensor " + t.shortString() + " of " +
              std::to_string(t.numElements()) + " elements");
      return false;
    }
    return elementsInOnePlace(t, what);
  }
  /// The runtime reads control values (predicates, switch controls, failure
  /// flags, remote-buffer offsets) at one address, so each element must lie in
  /// one variable on one tile. A `reinterpret` to a wider type of elements
  /// mapped to different tiles splits one; such a tensor is reported.
  bool elementsInOnePlace(const poplar::Tensor &t, const std::string &what) {
    const ir::TensorView &view = t.getImpl();
    const std::uint64_t elementBytes = view.elementType.size();
    const bool oneTile = g_.target.type == poplar::TargetType::CPU; // unmapped = tile 0
    bool split = false;
    forEachByteRun(view, [&](std::uint32_t var, std::uint64_t begin, std::uint64_t bytes) {
      split = bytes % elementBytes != 0; // the run ends inside an element
      if (!split && !oneTile && var < g_.variables.size()) {
        const ir::Variable &v = g_.variables[var];
        const std::uint64_t varBytes = v.type.size();
        // A tile border inside the run must fall between elements.
        auto it = std::lower_bound(
            v.mapping.begin(), v.mapping.end(), begin,
            [&](const ir::TileInterval &ti, std::uint64_t b) { return ti.end * varBytes <= b; });
        for (; !split && it != v.mapping.end() && it->begin * varBytes < begin + bytes; ++it)
          for (std::uint64_t border : {it->begin * varBytes, it->end * varBytes})
            split |= border > begin && border < begin + bytes && (border - begin) % elementBytes != 0;
      }
      return !split;
    });
    if (split)
      problem(what + ": an element of tensor " + t.shortString() +
              " is split between tiles (a reinterpret to a wider type); the value must lie on one tile");
    return !split;
  }
  void notConstant(const poplar::Tensor &t, const std::string &what) {
    bool constant = false;
    forEachByteRun(t.getImpl(), [&](std::uint32_t var, std::uint64_t, std::uint64_t) {
      constant = var < g_.variables.size() && g_.variables[var].isConstant;
      return !constant;
    });
    if (constant)
      problem(what + " writes tensor " + t.shortString() + ", which is (part of) a constant");
  }
  void tensors(const poplar::Tensor &src, const poplar::Tensor &dst, const std::string &what) {
    if (!src.valid() || !dst.valid()) {
      problem(what + " needs a source and a destination tensor");
      return;
    }
    if (src.numElements() != dst.numElements())
      problem(what + " copies tensor " + src.shortString() + " (" + std::to_string(src.numElements()) +
              " elements) to tensor " + dst.shortString() + " (" + std::to_string(dst.numElements()) +
              " elements)");
    if (src.elementType() != dst.elementType())
      problem(what + " copies tensor " + src.shortString() + " to tensor " + dst.shortString() +
              " of a different element type");
    notConstant(dst, what);
  }

  const ir::GraphData &g_;
  Problems &out_;
  std::unordered_set<const ir::ProgramNode *> visited_;
};

void checkHandles(const ir::GraphData &g, Problems &out) {
  std::map<std::string, int> writesSeen, readsSeen, streamsSeen;
  for (const ir::HostHandle &h : g.hostHandles) {
    auto &seen = h.isWrite ? writesSeen : readsSeen;
    if (seen[h.name]++ == 1)
      out.push_back({ProblemKind::Connection, std::string("host ") + (h.isWrite ? "write" : "read") +
                                                  " handle '" + h.name + "' is created more than once"});
  }
  for (const ir::StreamRecord &s : g.streams)
    if (streamsSeen[s.handle]++ == 1)
      out.push_back(
          {ProblemKind::Connection, "stream handle '" + s.handle + "' is used by more than one stream"});
  for (const ir::RemoteBufferRecord &r : g.remoteBuffers)
    if (streamsSeen[r.handle]++ == 1)
      out.push_back({ProblemKind::Connection, "remote buffer handle '" + r.handle +
                                                  "' is used by more than one stream or remote buffer"});
}

} // namespace

std::size_t programNestingDepth(const ir::GraphData &g,
                                const std::vector<const ir::ProgramNode *> &programs) {
  // Depth-first with an explicit stack; shared subtrees are measured once.
  std::unordered_map<const ir::ProgramNode *, std::size_t> depthOf; // finished nodes
  std::unordered_set<const ir::ProgramNode *> open;                 // nodes on the stack
  struct Frame {
    const ir::ProgramNode *node;
    std::size_t nextChild;
    std::size_t deepestChild;
  };
  std::size_t deepest = 0;
  auto measure = [&](const ir::ProgramNode *root) {
    if (!root || depthOf.count(root))
      return;
    std::vector<Frame> stack{{root, 0, 0}};
    open.insert(root);
    while (!stack.empty()) {
      Frame &frame = stack.back();
      if (frame.nextChild < frame.node->children.size()) {
        const ir::ProgramNode *child = frame.node->children[frame.nextChild++].get();
        if (!child)
          continue;
        if (auto done = depthOf.find(child); done != depthOf.end()) {
          frame.deepestChild = std::max(frame.deepestChild, done->second);
          continue;
        }
        if (open.count(child))
          throw poplar::graph_cycle_error("program '" + child->debugName +
                                          "' contains itself; a program tree must not be cyclic");
        open.insert(child);
        stack.push_back({child, 0, 0});
        continue;
      }
      const std::size_t depth = frame.deepestChild + 1;
      depthOf[frame.node] = depth;
      open.erase(frame.node);
      stack.pop_back();
      if (!stack.empty())
        stack.back().deepestChild = std::max(stack.back().deepestChild, depth);
      deepest = std::max(deepest, depth);
    }
  };
  for (const ir::ProgramNode *p : programs)
    measure(p);
  for (const auto &f : g.functions)
    measure(f.get());
  return deepest;
}

void validateGraph(const ir::GraphData &g, const std::vector<const ir::ProgramNode *> &programs) {
  Problems problems;

  // Variables: per-chunk problem lists, concatenated in order (deterministic).
  const bool cpu = g.target.type == poplar::TargetType::CPU;
  if (!cpu) {
    for (std::uint32_t v = 0; v < g.variables.size(); ++v)
      checkVariableMapping(g, v, problems);
  }

  // Vertices: fields and mapping, in parallel over ranges of vertices.
  {
    constexpr std::size_t kChunk = 4096;
    const std::size_t numChunks = (g.vertices.size() + kChunk - 1) / kChunk;
    std::vector<Problems> perChunk(numChunks);
    tbb::parallel_for(std::size_t(0), numChunks, [&](std::size_t c) {
      const std::size_t end = std::min(g.vertices.size(), (c + 1) * kChunk);
      for (std::size_t v = c * kChunk; v < end; ++v)
        checkVertex(g, static_cast<std::uint32_t>(v), perChunk[c]);
    });
    for (auto &p : perChunk)
      for (auto &q : p)
        problems.push_back(std::move(q));
  }

  // Overlapping writes, per compute set in parallel.
  {
    std::vector<Problems> perCs(g.computeSets.size());
    tbb::parallel_for(std::size_t(0), g.computeSets.size(), [&](std::size_t cs) {
      checkOverlappingWrites(g, static_cast<std::uint32_t>(cs), perCs[cs]);
    });
    for (auto &p : perCs)
      for (auto &q : p)
        problems.push_back(std::move(q));
  }

  checkHandles(g, problems);

  ProgramChecker programChecker(g, problems);
  for (const ir::ProgramNode *p : programs)
    programChecker.check(p);
  for (const auto &f : g.functions)
    programChecker.check(f.get());

  if (problems.empty())
    return;

  bool allMapping = true, allProgram = true, allConflicts = true;
  for (const Problem &p : problems) {
    allMapping &= p.kind == ProblemKind::Mapping;
    allProgram &= p.kind == ProblemKind::Program;
    allConflicts &= p.kind == ProblemKind::WriteConflict;
  }
  std::ostringstream msg;
  msg << "The graph cannot be compiled: " << problems.size()
      << (problems.size() == 1 ? " problem" : " problems") << ":";
  for (std::size_t i = 0; i < problems.size() && i < kMaxListed; ++i)
    msg << "\n  " << problems[i].text;
  if (problems.size() > kMaxListed)
    msg << "\n  ... and " << (problems.size() - kMaxListed) << " more";
  if (allMapping)
    throw poplar::invalid_tile_mapping(msg.str());
  if (allProgram)
    throw poplar::control_program_error(msg.str());
  if (allConflicts)
    throw poplar::graph_cycle_error(msg.str());
  throw poplar::graph_connection_error(msg.str());
}

} // namespace aspen::compiler
