// Copyright (c) Aspen contributors.
// The graph IR: flat tables that poplar::Graph appends to and the compiler reads.
#pragma once

#include "ir/DebugRecord.hpp"
#include "ir/MutationGuard.hpp"
#include "ir/ProgramNode.hpp"
#include "ir/TargetData.hpp"
#include "ir/TensorView.hpp"
#include "ir/Vertices.hpp"
#include "poplar/GraphElements.hpp"
#include "poplar/PerfEstimateFunc.hpp"
#include "poplar/Tensor.hpp"
#include "poplar/Type.hpp"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace aspen::ir {

/// A run of a variable's elements `[begin, end)` mapped to one tile.
struct TileInterval {
  std::uint64_t begin;
  std::uint64_t end;
  std::uint32_t tile; // absolute tile number
};

struct Variable {
  poplar::Type type;
  std::uint64_t numElements = 0;
  bool isConstant = false;
  std::string name;
  std::vector<std::size_t> shape;    // as created, for messages and profiles
  std::vector<TileInterval> mapping; // sorted by begin, disjoint; gaps = unmapped
  std::uint64_t debugId = 0;         // the DebugInfo it was made under (0: none)
};

// ---- vertex types (filled by the codelet loader) ---------------------------

enum class FieldKind : std::uint8_t { Input, Output, InOut, State };
/// How a field holds its data:
///  Scalar        Input<T> / Output<T> / InOut<T>, or a plain state member `T x;`
///  Vector        Input<Vector<T>> etc.; for State: `Vector<T>` state array
///  VectorOfEdges Vector<Input<Vector<T>>>, Input<VectorList<T>> (jagged 2-D)
///  VectorOfScalarEdges Vector<Input<T>> (a list of scalar edges)
enum class FieldShape : std::uint8_t { Scalar, Vector, VectorOfEdges, VectorOfScalarEdges };

/// poplar::VectorLayout values, in Poplar's order.
enum class Layout : std::uint8_t {
  NotAVector,
  Span,
  ShortSpan,
  OnePtr,
  ScaledPtr32,
  ScaledPtr64,
  ScaledPtr128,
  CompactPtr,
  DeltaN,
  DeltaNElements,
};

struct FieldInfo {
  std::string name;
  FieldKind kind = FieldKind::Input;
  FieldShape shape = FieldShape::Scalar;
  poplar::Type elementType;
  Layout layout = Layout::NotAVector;      // inner vector layout
  Layout outerLayout = Layout::NotAVector; // for VectorOfEdges
  std::uint32_t minAlign = 1;              // bytes
  std::uint32_t offset = 0;                // offsetof in the host vertex object
  std::uint32_t size = 0;                  // sizeof the member
  bool isConst = false;
};

struct VertexTypeInfo {
  std::string name;          // canonical: "ns::Foo<float,true>"
  std::uint32_t library = 0; // index into GraphData::codeletLibraries
  std::uint32_t objectSize = 0;
  std::uint32_t objectAlign = 8;
  bool isMultiVertex = false;
  bool isSupervisor = false;
  /// Its build marks it isExternalCodelet (an IPU build: its compute is IPU assembly,
  /// which the simulator cannot run; docs/codelets.md, "Which build runs where").
  bool isExternal = false;
  /// The object that defines it declares that its vertices never write through an Input
  /// (`aspen_codelet_inputs_read_only`, found in that object's symbol table when the library
  /// was linked): the exchange may let them read edge data in place (docs/exchange.md).
  bool inputsReadOnly = false;
  std::vector<FieldInfo> fields;
  int fieldIndex(const std::string &field) const {
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].name == field)
        return static_cast<int>(i);
    return -1;
  }
};

/// A compiled vertex library: the .gp file's bytes (self-contained) and where it is on disk.
struct CodeletLibrary {
  std::string contentHash; // hex digest of the .gp bytes
  std::string path;        // the .gp file (in the codelet cache or as given)
  std::string origin;      // what the user passed (source file name, "<stringstream>", ...)
  /// The bytes, when they are not kept on disk (the codelet cache could not take
  /// them); else the compiler re-reads `path` and checks it against contentHash.
  std::shared_ptr<const std::vector<std::uint8_t>> bytes;
  /// Symbols (mangled) its codelets use and no library of the graph defines yet: it
  /// cannot run until the codelets that define them are added (docs/codelets.md).
  std::vector<std::string> undefined;
  /// It carries objects, so it can be linked with the graph's other libraries.
  bool linkable = false;
  /// The content hashes of the libraries linked into it (added again: no change).
  std::vector<std::string> linkedFrom;
};

// ---- vertices and compute sets ---------------------------------------------

struct ComputeSetRecord {
  std::string name;
  std::vector<std::uint32_t> vertices;
  std::uint64_t debugId = 0; // the DebugInfo it was made under (0: none); its vertices' too
};

// ---- host transfer ---------------------------------------------------------

struct HostHandle {
  std::string name;
  poplar::Tensor tensor;
  bool isWrite; // createHostWrite
};

struct StreamRecord {
  std::string handle;
  poplar::Type type;
  std::uint64_t numElements;
  bool hostToDevice;
  poplar::ReplicatedStreamMode mode;
};

struct RemoteBufferRecord {
  std::string handle;
  poplar::Type type;
  std::uint64_t numElements;
  std::uint64_t repeats;
};

/// A GraphData's GraphId (see TensorView.hpp) and its entry in the registry
/// that lockGraph() reads. A copy is another graph: it gets an id of its own.
class GraphIdentity {
public:
  GraphIdentity();
  GraphIdentity(const GraphIdentity &) : GraphIdentity() {}
  GraphIdentity &operator=(const GraphIdentity &) { return *this; }
  ~GraphIdentity();
  GraphId id() const { return id_; }
  /// Makes lockGraph(id()) find `graph`, whose identity this is, while it
  /// lives. Takes a lock the first time only: every view is made by a call
  /// that publishes its graph (makeVariableTensor, makeTensor).
  void publish(const std::shared_ptr<GraphData> &graph) {
    if (!published_.load(std::memory_order_acquire))
      publishSlow(graph);
  }

private:
  void publishSlow(const std::shared_ptr<GraphData> &graph);
  GraphId id_;
  std::atomic<bool> published_{false};
};

/// Everything a Graph (and its virtual graphs) records.
struct GraphData {
  /// The id its views hold (compared for "same graph" checks).
  GraphIdentity identity;
  GraphId id() const { return identity.id(); }
  /// Which thread is changing the graph now (MutationGuard.hpp).
  MutationMark mutation;

  TargetData target; // one replica's target (the whole device has replicationFactor times its IPUs)
  unsigned replicationFactor = 1;
  /// Constants made by addReplicationIndexConstant: each replica's copy holds
  /// its index, written when the replica is loaded.
  std::vector<VarId> replicationIndexVars;

  std::vector<Variable> variables;
  std::unordered_map<VarId, std::vector<std::uint8_t>> initialValues; // device bytes, whole variable

  std::vector<VertexTypeInfo> vertexTypes;
  std::unordered_map<std::string, std::uint32_t> vertexTypeByName;
  /// The vertex type addVertex found last (~0u: none): graphs add runs of
  /// vertices of one type, and a name compare is cheaper than a hash lookup.
  std::uint32_t lastAddedVertexType = ~0u;
  std::vector<CodeletLibrary> codeletLibraries;
  std::map<std::string, poplar::PerfEstimateFunc> perfEstimators;

  std::vector<ComputeSetRecord> computeSets;
  VertexTable vertices;
  /// The estimate Graph::setPerfEstimate set for vertex `v`, or null.
  const poplar::VertexPerfEstimate *estimateOf(std::uint32_t v) const { return vertices.estimateOf(v); }

  std::vector<HostHandle> hostHandles;
  std::vector<StreamRecord> streams;
  std::vector<RemoteBufferRecord> remoteBuffers;
  std::vector<std::shared_ptr<ProgramNode>> functions;

  /// Constants made by `Graph::connect(FieldRef, T)` for a vertex not yet
  /// mapped: they go to the vertex's tile when it is mapped.
  std::unordered_map<std::uint32_t, std::vector<VarId>> vertexScalarConstants;
  /// fp8: the scalar QUARTER_METADATA tensor the elements of each QUARTER variable
  /// carry (docs/fp8.md). A QUARTER variable not listed has no metadata.
  std::unordered_map<VarId, poplar::Tensor> quarterMetadata;
  /// The metadata of variable `v`, or null.
  const poplar::Tensor *metadataOf(VarId v) const {
    const auto it = quarterMetadata.find(v);
    return it == quarterMetadata.end() ? nullptr : &it->second;
  }
  /// The variable holding the simulated hardware random seeds (poplar/RandomSeed.hpp), once made.
  std::int64_t hwSeedsVariable = -1;

  /// The records of the DebugInfos that variables and compute sets were made
  /// under (program nodes hold their own), for the profile.
  std::unordered_map<std::uint64_t, std::shared_ptr<const DebugRecord>> debugRecords;
  /// Notes that an element was made under `dc` and returns its debug id (0: none).
  std::uint64_t noteDebugContext(const poplar::DebugContext &dc) {
    const std::uint64_t id = dc.getId();
    if (id != 0 && id != lastDebugId) {
      lastDebugId = id;
      auto it = debugRecords.find(id);
      if (it == debugRecords.end())
        if (auto record = findDebugRecord(id))
          debugRecords.emplace(id, std::move(record));
    }
    return id;
  }
  std::uint64_t lastDebugId = 0;

  /// Describes a variable for messages: `'name' (variable 12, {2,3} float)`.
  std::string describeVariable(VarId v) const;
};

/// Adds Poplar's built-in poplar_rt:: vertices to a graph (vertices/poplar_rt/). The codelet
/// loader lives in the compiler module, which sets this when libpoplar loads; libgraph calls
/// it from addVertex the first time a graph asks for a poplar_rt:: type (null: none).
using BuiltinVertexLoader = void (*)(poplar::Graph &);
BuiltinVertexLoader &builtinVertexLoader();

} // namespace aspen::ir
