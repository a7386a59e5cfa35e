// Copyright (c) Aspen contributors.
// Graph::serialize: the whole recorded graph as one JSON document (for people
// and tools) or as the same document in CBOR behind a small header (Aspen's
// binary form). The format is described in docs/graph-serialization.md.
#include "ir/GraphData.hpp"
#include "ir/ProgramNode.hpp"
#include "ir/TensorAlgebra.hpp"
#include "poplar/Graph.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <span>
#include <unordered_map>

namespace poplar {

namespace {

using aspen::ir::GraphData;
using aspen::ir::ProgramKind;
using aspen::ir::ProgramNode;
using aspen::ir::Segment;
using json = nlohmann::json;

/// Version of the document layout; bumped when a field changes meaning.
constexpr unsigned kGraphFormatVersion = 1;
/// First bytes of the binary form: "ASPG", then the version as 4 little-endian bytes.
constexpr char kBinaryMagic[4] = {'A', 'S', 'P', 'G'};

const char *kindName(aspen::ir::FieldKind k) {
  switch (k) {
  case aspen::ir::FieldKind::Input:
    return "Input";
  case aspen::ir::FieldKind::Output:
    return "Output";
  case aspen::ir::FieldKind::InOut:
    return "InOut";
  case aspen::ir::FieldKind::State:
    return "State";
  }
  return "?";
}

/// A tensor as the list of its variable regions: `[[var, start, stride, count], ...]` and its shape.
json tensorJson(const Tensor &t) {
  if (!t.valid())
    return nullptr;
  json regions = json::array();
  for (const Segment &s : *t.getImpl().segments)
    regions.push_back({s.var, s.start, s.stride, s.count});
  return {{"type", t.elementType().toString().str()}, {"shape", t.shape()}, {"regions", std::move(regions)}};
}

std::string hex(std::span<const std::uint8_t> bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

class ProgramWriter {
public:
  explicit ProgramWriter(const GraphData &data) : data_(data) {}

  json write(const ProgramNode &n) {
    json out = {{"kind", aspen::ir::programKindName(n.kind)}};
    if (!n.debugName.empty())
      out["name"] = n.debugName;
    switch (n.kind) {
    case ProgramKind::Execute:
      out["computeSet"] = n.computeSet;
      break;
    case ProgramKind::Copy:
      out["src"] = tensorJson(n.src);
      out["dst"] = tensorJson(n.dst);
      break;
    case ProgramKind::StreamToTensor:
      out["stream"] = streamName(n.stream);
      out["dst"] = tensorJson(n.dst);
      break;
    case ProgramKind::TensorToStream:
      out["src"] = tensorJson(n.src);
      out["stream"] = streamName(n.stream);
      break;
    case ProgramKind::RemoteToTensor:
    case ProgramKind::TensorToRemote:
      out["remoteBuffer"] = n.remoteBuffer < data_.remoteBuffers.size()
                                ? json(data_.remoteBuffers[n.remoteBuffer].handle)
                                : json();
      out[n.kind == ProgramKind::RemoteToTensor ? "dst" : "src"] =
          tensorJson(n.kind == ProgramKind::RemoteToTensor ? n.dst : n.src);
      if (n.offset.valid())
        out["offset"] = tensorJson(n.offset);
      break;
    case ProgramKind::Repeat:
      out["count"] = n.count;
      break;
    case ProgramKind::RepeatWhileTrue:
    case ProgramKind::RepeatWhileFalse:
    case ProgramKind::If:
    case ProgramKind::AbortOnCondition:
      out["predicate"] = tensorJson(n.predicate);
      break;
    case ProgramKind::Switch:
      out["control"] = tensorJson(n.predicate);
      out["caseValues"] = n.caseValues;
      out["hasDefault"] = n.hasDefault;
      break;
    case ProgramKind::Call:
      out["function"] = n.function;
      break;
    case ProgramKind::WriteUndef:
      out["dst"] = tensorJson(n.dst);
      break;
    case ProgramKind::PrintTensor:
      out["src"] = tensorJson(n.src);
      break;
    default:
      break;
    }
    if (!n.message.empty())
      out["message"] = n.message;
    if (!n.children.empty()) {
      json children = json::array();
      for (const auto &c : n.children)
        children.push_back(c ? write(*c) : json());
      out["children"] = std::move(children);
    }
    return out;
  }

private:
  json streamName(std::uint32_t s) const {
    return s < data_.streams.size() ? json(data_.streams[s].handle) : json();
  }
  const GraphData &data_;
};

json graphJson(const Graph &graph, ArrayRef<program::Program> progs) {
  const GraphData &data = graph.getImpl();
  const Target &target = graph.getTarget();
  json doc;
  doc["format"] = "aspen-graph";
  doc["version"] = kGraphFormatVersion;
  doc["target"] = {
      {"type", toString(target.getTargetType())}, {"arch", target.getTargetArchString()},
      {"numIPUs", target.getNumIPUs()},           {"tilesPerIPU", target.getTilesPerIPU()},
      {"bytesPerTile", target.getBytesPerTile()}, {"numWorkerContexts", target.getNumWorkerContexts()}};
  doc["replicationFactor"] = data.replicationFactor;

  json variables = json::array();
  for (std::size_t v = 0; v < data.variables.size(); ++v) {
    const auto &var = data.variables[v];
    json mapping = json::array();
    for (const auto &m : var.mapping)
      mapping.push_back({m.tile, m.begin, m.end});
    json entry = {{"id", v},
                  {"name", var.name},
                  {"type", var.type.toString().str()},
                  {"shape", var.shape},
                  {"numElements", var.numElements},
                  {"constant", var.isConstant},
                  {"mapping", std::move(mapping)}};
    auto init = data.initialValues.find(static_cast<aspen::ir::VarId>(v));
    if (init != data.initialValues.end())
      entry["initialValue"] = hex(init->second);
    variables.push_back(std::move(entry));
  }
  doc["variables"] = std::move(variables);

  json codelets = json::array();
  for (const auto &lib : data.codeletLibraries)
    codelets.push_back({{"origin", lib.origin}, {"contentHash", lib.contentHash}});
  doc["codeletLibraries"] = std::move(codelets);

  json computeSets = json::array();
  for (const auto &cs : data.computeSets)
    computeSets.push_back({{"name", cs.name}, {"vertices", cs.vertices}});
  doc["computeSets"] = std::move(computeSets);

  json vertices = json::array();
  for (std::size_t i = 0; i < data.vertices.size(); ++i) {
    const auto &v = data.vertices[i];
    const auto &type = data.vertexTypes[v.type];
    json fields = json::object();
    for (std::size_t f = 0; f < v.fields.size() && f < type.fields.size(); ++f) {
      const auto &value = v.fields[f];
      if (!value.set)
        continue;
      json field = {{"kind", kindName(type.fields[f].kind)}};
      if (type.fields[f].kind == aspen::ir::FieldKind::State) {
        field["count"] = value.stateCount;
        field["bytes"] = hex({value.stateBytes().data(), value.stateBytes().size()});
      } else {
        json edges = json::array();
        for (const aspen::ir::Edge &e : value.edges())
          edges.push_back(e.connected() ? tensorJson(aspen::ir::edgeTensor(data, e)) : tensorJson(Tensor()));
        field["edges"] = std::move(edges);
      }
      fields[type.fields[f].name] = std::move(field);
    }
    json vertex = {
        {"id", i}, {"type", type.name}, {"computeSet", v.computeSet}, {"fields", std::move(fields)}};
    vertex["tile"] = v.tile < 0 ? json() : json(v.tile);
    if (const auto *estimate = data.estimateOf(static_cast<std::uint32_t>(i)))
      vertex["cycles"] = estimate->cycles;
    vertices.push_back(std::move(vertex));
  }
  doc["vertices"] = std::move(vertices);

  json handles = json::array();
  for (const auto &h : data.hostHandles)
    handles.push_back(
        {{"name", h.name}, {"direction", h.isWrite ? "write" : "read"}, {"tensor", tensorJson(h.tensor)}});
  doc["hostHandles"] = std::move(handles);

  json streams = json::array();
  for (const auto &s : data.streams)
    streams.push_back({{"handle", s.handle},
                       {"direction", s.hostToDevice ? "hostToDevice" : "deviceToHost"},
                       {"type", s.type.toString().str()},
                       {"numElements", s.numElements}});
  doc["streams"] = std::move(streams);

  json remote = json::array();
  for (const auto &r : data.remoteBuffers)
    remote.push_back({{"handle", r.handle},
                      {"type", r.type.toString().str()},
                      {"numElements", r.numElements},
                      {"repeats", r.repeats}});
  doc["remoteBuffers"] = std::move(remote);

  ProgramWriter writer(data);
  json functions = json::array();
  for (const auto &f : data.functions)
    functions.push_back(f ? writer.write(*f) : json());
  doc["functions"] = std::move(functions);
  json programs = json::array();
  for (const program::Program &p : progs)
    programs.push_back(p.getImpl() ? writer.write(*p.getImpl()) : json({{"kind", "Sequence"}}));
  doc["programs"] = std::move(programs);
  return doc;
}

} // namespace

void Graph::serialize(std::ostream &out, SerializationFormat format) const {
  serialize(out, {}, format);
}

void Graph::serialize(std::ostream &out, ArrayRef<program::Program> progs, SerializationFormat format) const {
  if (!getImplPtr())
    throw poplar_error("Graph::serialize called on an empty Graph (default-constructed or moved from)");
  const json doc = graphJson(*this, progs);
  switch (format) {
  case SerializationFormat::JSON:
    out << doc.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    break;
  case SerializationFormat::Binary: {
    const std::vector<std::uint8_t> body = json::to_cbor(doc);
    out.write(kBinaryMagic, 4);
    const unsigned char version[4] = {static_cast<unsigned char>(kGraphFormatVersion & 0xff), 0, 0, 0};
    out.write(reinterpret_cast<const char *>(version), 4);
    out.write(reinterpret_cast<const char *>(body.data()), static_cast<std::streamsize>(body.size()));
    break;
  }
  default:
    throw poplar_error("Graph::serialize: unknown SerializationFormat " +
                       std::to_string(static_cast<int>(format)));
  }
  if (!out)
    throw poplar_error("Graph::serialize: writing to the output stream failed");
}

void dumpProgram(const Graph &graph, const program::Program &program, std::ostream &out) {
  if (!graph.getImplPtr())
    throw poplar_error("dumpProgram called with an empty Graph (default-constructed or moved from)");
  // The program tree as JSON, one object per program with its "kind" (Copy,
  // Execute, Sequence, ...), laid out as Graph::serialize's "programs" entries.
  const json doc = program.getImpl() ? ProgramWriter(graph.getImpl()).write(*program.getImpl())
                                     : json({{"kind", "Sequence"}});
  out << doc.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  if (!out)
    throw poplar_error("dumpProgram: writing to the output stream failed");
}

} // namespace poplar
