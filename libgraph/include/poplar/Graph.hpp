// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_GRAPH_HPP
#define POPLAR_GRAPH_HPP

#include <poplar/ArrayRef.hpp>
#include <poplar/CodeletFileType.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Device.hpp> // also the standard headers Poplar's bring (see there)
#include <poplar/GraphElements.hpp>
#include <poplar/Interval.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/PerfEstimateFunc.hpp>
#include <poplar/Program.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/SerializationFormat.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/TensorCloneMethod.hpp>
#include <poplar/Type.hpp>
#include <poplar/TypeTraits.hpp>
#include <poplar/VariableMappingMethod.hpp>
#include <poplar/Version.hpp>
#include <poplar/exceptions.hpp>
#include <poplar/replication_factor.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace aspen {
namespace ir {
struct GraphData;
} // namespace ir
} // namespace aspen

/// Marks the Poplar 1.x-era calls that Poplar deprecated; they still work.
#ifndef POPLAR_DEPRECATED
#if __cplusplus >= 201402L
#define POPLAR_DEPRECATED(msg) [[deprecated(msg)]]
#elif defined(__GNUC__) || defined(__clang__)
#define POPLAR_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define POPLAR_DEPRECATED(msg)
#endif
#endif

namespace poplar {

/// Tile mapping: `m[tile]` holds intervals of the tensor's flattened element indices.
using TileToTensorMapping = std::vector<std::vector<Interval>>;

/// A graph of variables, constants, vertices and compute sets for one target.
/// Graphs made by `createVirtualGraph` share their parent's elements and use
/// tile numbers relative to their first tile.
///
/// Not thread-safe, as Poplar's Graph: one thread at a time may use a Graph (and
/// its virtual graphs, tensors and compute sets); callers sharing one serialise
/// its use (docs/porting-from-poplar.md).
class Graph {
public:
  /// Poplar spells it `Graph::TileToTensorMapping` too (PopLibs uses this form).
  using TileToTensorMapping = poplar::TileToTensorMapping;

  Graph();
  explicit Graph(const Target &target, replication_factor r = replication_factor(1));
  explicit Graph(const Device &device, replication_factor r = replication_factor(1));
  Graph(Graph &&) noexcept;
  Graph &operator=(Graph &&) noexcept;
  ~Graph();

  const Target &getTarget() const;
  unsigned getReplicationFactor() const;

  // --- virtual graphs ------------------------------------------------------
  Graph createVirtualGraph(unsigned lowerTile, unsigned upperTile);
  Graph createVirtualGraph(unsigned numTilesPerIPU);
  Graph createVirtualGraph(const std::vector<unsigned> &perIpuTiles);
  Graph getTopLevelGraph();

  // --- variables and constants ---------------------------------------------
  Tensor addVariable(const Type &type, ArrayRef<std::size_t> shape, const DebugContext &debugContext = {});
  Tensor addVariable(const Type &type, ArrayRef<std::size_t> shape, VariableMappingMethod mappingMethod,
                     const DebugContext &debugContext = {});
  Tensor addLinearlyMappedVariable(const Type &type, ArrayRef<std::size_t> shape,
                                   const DebugContext &debugContext = {});
  Tensor addLinearlyMappedVariable(const Type &type, ArrayRef<std::size_t> shape, unsigned minElementsPerTile,
                                   unsigned grainSize, const DebugContext &debugContext = {});

  /// A constant from `values` (converted from the host type to `type`).
  template <typename T>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, ArrayRef<T> values,
                     const DebugContext &debugContext = {"<const>"}) {
    return addConstantFromHost(type, shape, equivalent_device_type<T>().value, values.data(), values.size(),
                               false, debugContext);
  }
  template <typename T>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, const std::vector<T> &values,
                     const DebugContext &debugContext = {"<const>"}) {
    return addConstant<T>(type, shape, ArrayRef<T>(values), debugContext);
  }
  /// A braced list, `addConstant<float>(FLOAT, {3}, {0.5f, 1.0f, 2.0f})`: an exact match, so
  /// neither the ArrayRef nor the vector overload makes the call ambiguous.
  template <typename T>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, std::initializer_list<T> values,
                     const DebugContext &debugContext = {"<const>"}) {
    return addConstant<T>(type, shape, ArrayRef<T>(values), debugContext);
  }
  template <typename T>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, const T *values,
                     const DebugContext &debugContext = {"<const>"}) {
    return addConstantFromHost(type, shape, equivalent_device_type<T>().value, values, ~std::size_t(0), false,
                               debugContext);
  }
  /// A constant with every element equal to `value` (shape `{}` is a scalar).
  /// Not for pointers: a non-const `T *` must reach the `const T *` form above.
  template <typename T, typename std::enable_if<!std::is_pointer<T>::value, int>::type = 0>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, T value,
                     const DebugContext &debugContext = {"<const>"}) {
    return addConstantFromHost(type, shape, equivalent_device_type<T>().value, &value, 1, true, debugContext);
  }
  /// A constant from host data described only by its traits (size, integral/floating,
  /// signed), as expression trees hold their constants: `values` points at one element when
  /// `broadcast` (every element equal to it), else at one per element of `shape`.
  /// Example: `graph.addConstant(FLOAT, {}, &x, TypeTraits::make<float>(), false, {di})`.
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, const void *values,
                     const TypeTraits &traits, bool broadcast,
                     const DebugContext &debugContext = {"<const>"});
  Tensor addConstantHalf(const Type &type, ArrayRef<std::size_t> shape, uint16_t value,
                         const DebugContext &debugContext = {"<const>"});
  Tensor addConstantHalf(const Type &type, ArrayRef<std::size_t> shape, const uint16_t *values,
                         const DebugContext &debugContext = {"<const>"});
  /// Scalar UNSIGNED_INT holding the replica index (always 0 in Aspen's single replica).
  Tensor addReplicationIndexConstant(const DebugContext &debugContext = {});

  Tensor clone(const Tensor &t, const DebugContext &debugContext = {},
               TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);
  Tensor clone(const Type &type, const Tensor &t, const DebugContext &debugContext = {},
               TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);
  /// N copies of `t` stacked in a new outer dimension ({N, t's shape}), each mapped like `t`.
  Tensor
  cloneN(const Tensor &t, std::size_t N, const DebugContext &debugContext = {},
         TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES,
         TensorCloneDuplicationMethod dupMethod = TensorCloneDuplicationMethod::DUPLICATE_BY_OUTER_DIMENSION);
  /// As above, with elements of `type` (a QUARTER clone of a QUARTER tensor keeps its metadata).
  Tensor
  cloneN(const Type &type, const Tensor &t, std::size_t N, const DebugContext &debugContext = {},
         TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES,
         TensorCloneDuplicationMethod dupMethod = TensorCloneDuplicationMethod::DUPLICATE_BY_OUTER_DIMENSION);

  // --- fp8 (QUARTER) tensors with metadata (docs/fp8.md) -------------------
  /// A variable whose elements carry `metadata`, a scalar QUARTER_METADATA
  /// tensor (poplar/MetadataCreation.hpp makes one). `type` must require
  /// metadata (QUARTER). `addVariable(QUARTER, shape)` without metadata makes
  /// one for the tensor (F143, scale 0 until written).
  /// Example: `auto md = createVariableMetadataTensor(graph, QuarterMetadata::Format::F143, 0);
  ///           auto q = graph.addVariable(QUARTER, md, {16}, "q");`
  Tensor addVariable(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                     const DebugContext &debugContext = {});
  Tensor addVariable(const Type &type, const Tensor *metadata, ArrayRef<std::size_t> shape,
                     const DebugContext &debugContext = {});
  Tensor addVariable(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                     VariableMappingMethod mappingMethod, const DebugContext &debugContext = {});
  Tensor addVariable(const Type &type, const Tensor *metadata, ArrayRef<std::size_t> shape,
                     VariableMappingMethod mappingMethod, const DebugContext &debugContext = {});
  /// A QUARTER constant from host values, encoded with the value of `metadata`
  /// (which must be known when the graph is built: a constant or a tensor with an
  /// initial value, as createConstantMetadataTensor/createVariableMetadataTensor give).
  // The element type of every metadata form is a host arithmetic type: otherwise a braced
  // DebugContext (`addConstant(FLOAT, {}, 1.0f, {di})`) would deduce T in the list form and
  // make the shape-first call ambiguous.
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  Tensor addConstant(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                     ArrayRef<T> values, const DebugContext &debugContext = {"<const>"}) {
    return addConstantWithMetadata(type, metadata, shape, equivalent_device_type<T>().value, values.data(),
                                   values.size(), false, debugContext);
  }
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  Tensor addConstant(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                     const std::vector<T> &values, const DebugContext &debugContext = {"<const>"}) {
    return addConstant<T>(type, metadata, shape, ArrayRef<T>(values), debugContext);
  }
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  Tensor addConstant(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                     std::initializer_list<T> values, const DebugContext &debugContext = {"<const>"}) {
    return addConstant<T>(type, metadata, shape, ArrayRef<T>(values), debugContext);
  }
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  Tensor addConstant(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape, T value,
                     const DebugContext &debugContext = {"<const>"}) {
    return addConstantWithMetadata(type, metadata, shape, equivalent_device_type<T>().value, &value, 1, true,
                                   debugContext);
  }
  /// A new variable of `type` shaped and mapped like `t`, whose elements carry `metadata`.
  /// For a `type` without metadata, an empty `metadata` (what getMetadata() gives for a float
  /// tensor) is the same as `clone(type, t, ...)`; so is an empty one in addVariable/addConstant.
  Tensor clone(const Type &type, const Tensor &metadata, const Tensor &t,
               const DebugContext &debugContext = {},
               TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);
  /// `clone(t.elementType(), metadata, t, ...)`, as PopLibs writes
  /// `graph.clone(t.getMetadata(), t, {di}, method)` for a tensor of any type.
  Tensor clone(const Tensor &metadata, const Tensor &t, const DebugContext &debugContext = {},
               TensorCloneMethod method = TensorCloneMethod::PRESERVE_ORDER_UNLESS_ALIASES);

  /// Contents of a variable when the executable is loaded.
  template <typename T> void setInitialValue(const Tensor &t, T value) {
    setInitialValueFromHost(t, equivalent_device_type<T>().value, &value, 1, true);
  }
  template <typename T> void setInitialValue(const Tensor &t, ArrayRef<T> values) {
    setInitialValueFromHost(t, equivalent_device_type<T>().value, values.data(), values.size(), false);
  }
  template <typename T> void setInitialValue(const Tensor &t, const std::vector<T> &values) {
    setInitialValue<T>(t, ArrayRef<T>(values));
  }
  template <typename T> void setInitialValue(const Tensor &t, std::initializer_list<T> values) {
    setInitialValue<T>(t, ArrayRef<T>(values));
  }
  void setInitialValueHalf(const Tensor &t, ArrayRef<uint16_t> values);

  /// True when every element of `t` belongs to a constant.
  bool isConstant(const Tensor &t) const;
  /// True when the variable `v` names (from `Tensor::getVarRegions`) is a constant.
  /// Example: `for (auto &r : t.getVarRegions()) if (graph.isConstant(r.var)) ...`
  bool isConstant(VariableRef v) const;
  /// The whole variable a VariableRef (from `Tensor::getVarRegions`) names.
  Tensor getVariable(VariableRef v) const;
  /// The physical tile of virtual tile `virtualTileId` of this graph
  /// (Aspen numbers tiles the same way in both, so this is the absolute tile).
  unsigned convertVirtualTileToPhysicalTile(unsigned virtualTileId) const;
  Tensor findUnbroadcastTensor(const Tensor &t) const;

  // --- tile mapping --------------------------------------------------------
  void setTileMapping(const Tensor &t, unsigned tileNum);
  void setTileMapping(const Tensor &t, const TileToTensorMapping &mapping);
  void setTileMapping(VertexRef v, unsigned tileNum);
  TileToTensorMapping getTileMapping(const Tensor &t, bool requireComplete = true) const;
  TileToTensorMapping getTileMapping(const Tensor &t, bool *isComplete) const;
  TileToTensorMapping getVariableTileMapping(const Tensor &t) const;
  unsigned getTileMapping(VertexRef v) const;
  /// `regions` of `t` as sequences of intervals, each sequence contiguous in memory, in
  /// memory order. `aliases`, when given, gets one entry per interval (in the order of the
  /// flattened result): the position in `t` where the element the interval begins with first
  /// appears, its own `lower()` unless an earlier interval holds the same element.
  std::vector<std::vector<Interval>>
  getSortedContiguousRegions(const Tensor &t, ArrayRef<Interval> regions, bool removeAliasedIntervals = false,
                             std::vector<std::size_t> *aliases = nullptr) const;
  void reorderToSimplify(Tensor *ref, ArrayRef<Tensor *> ts, bool requireSimplestOrder = true) const;

  // --- codelets and vertices -----------------------------------------------
  /// Adds codelets from a source file (compiled now) or a `.gp` vertex library.
  /// Returns false when the same codelets were already added.
  bool addCodelets(StringRef src, CodeletFileType type = CodeletFileType::Auto, StringRef compileFlags = "",
                   StringRef targetName = "");
  /// `addCodelets(path)` with a std::string: an exact match, so the list overload
  /// (ArrayRef<std::string> also converts from one string) does not make it ambiguous.
  template <class S, typename std::enable_if<std::is_same<S, std::string>::value, int>::type = 0>
  bool addCodelets(const S &src, CodeletFileType type = CodeletFileType::Auto, StringRef compileFlags = "",
                   StringRef targetName = "") {
    return addCodelets(StringRef(src), type, compileFlags, targetName);
  }
  bool addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags, std::ostream &compileOutput,
                   StringRef targetName = "");
  void addCodelets(ArrayRef<std::string> srcs, StringRef compileFlags = "");
  void addCodelets(std::stringstream &stream, StringRef compileFlags = "",
                   CodeletFileType type = CodeletFileType::CppSource, StringRef targetName = "");
  void addCodelets(std::stringstream &stream, StringRef compileFlags, std::ostream &compileOutput,
                   CodeletFileType type = CodeletFileType::CppSource, StringRef targetName = "");
  bool hasCodelet(StringRef codeletName) const;

  ComputeSet addComputeSet(const DebugContext &debugContext = {});
  /// One connection for `addVertex`: `{"field", tensor}` or `{"field", {t0, t1}}`.
  struct ConnectionDesc {
    ConnectionDesc(StringRef field, const Tensor &t) : field(field.str()), tensors(1, t), isVector(false) {}
    ConnectionDesc(StringRef field, ArrayRef<Tensor> ts)
        : field(field.str()), tensors(ts.vec()), isVector(true) {}
    template <class T>
    ConnectionDesc(StringRef field, const std::vector<T> &ts)
        : field(field.str()), tensors(ts.begin(), ts.end()), isVector(true) {}
    /// `{"field", 3}`: a constant holding `value` (converted to the field's
    /// element type) is made on the vertex's tile and connected, as
    /// `Graph::connect(FieldRef, T)` does.
    template <class T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
    ConnectionDesc(StringRef field, T value)
        : field(field.str()), isVector(false), valueType(equivalent_device_type<T>().value) {
      static_assert(sizeof(T) <= sizeof(valueBytes), "scalar connection value too large");
      std::memcpy(valueBytes, &value, sizeof(T));
    }
    std::string field;
    /// As Poplar: the one tensor of `{"field", tensor}`, or the list (`isVector`).
    std::vector<Tensor> tensors;
    bool isVector;
    /// Aspen: the host type of a scalar value (invalid for tensor connections).
    Type valueType;
    /// Aspen: the host bytes of a scalar value.
    unsigned char valueBytes[8] = {};
  };
  VertexRef addVertex(ComputeSet cs, StringRef vertexType);
  VertexRef addVertex(ComputeSet cs, StringRef vertexType, ArrayRef<ConnectionDesc> connections);
  void connect(FieldRef field, const Tensor &tensor);
  void connect(FieldRef field, ArrayRef<Tensor> tensors);
  template <class T> void connect(FieldRef field, const std::vector<T> &tensors) {
    std::vector<Tensor> ts(tensors.begin(), tensors.end());
    connect(field, ArrayRef<Tensor>(ts));
  }
  /// Connects a constant holding `value` to a scalar (or one-element vector)
  /// input field: the constant has the field's element type and lives on the
  /// vertex's tile (mapped when the vertex is mapped).
  /// Example: `graph.connect(v["n"], 16u);`
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  void connect(FieldRef field, T value) {
    connectScalarValue(field, equivalent_device_type<T>().value, &value);
  }
  void setFieldSize(FieldRef field, std::size_t size);
  std::size_t getFieldSize(FieldRef field) const;
  unsigned getMaxFieldDim(StringRef vertexType, StringRef fieldName, unsigned dimIndex) const;
  double getMaxVertexFieldValue(StringRef vertexType, StringRef fieldName) const;

  template <typename T> void setInitialValue(const FieldRef &field, T value) {
    setFieldInitialValue(field, equivalent_device_type<T>().value, &value, 1, true);
  }
  template <typename T> void setInitialValue(const FieldRef &field, ArrayRef<T> values) {
    setFieldInitialValue(field, equivalent_device_type<T>().value, values.data(), values.size(), false);
  }
  template <typename T> void setInitialValue(const FieldRef &field, const std::vector<T> &values) {
    setInitialValue<T>(field, ArrayRef<T>(values));
  }
  void setInitialValue(const FieldRef &field, const std::vector<bool> &values);
  void setInitialValueHalf(const FieldRef &field, uint16_t value);
  void setInitialValueHalf(const FieldRef &field, ArrayRef<uint16_t> values);

  void setPerfEstimate(const VertexRef &v, std::uint64_t cycles, std::uint64_t flops = 0);
  void setPerfEstimate(const VertexRef &v, const VertexPerfEstimate &estimate);
  /// Poplar 1.x: the vertex's cycle estimate (as `setPerfEstimate(v, cycles)`).
  POPLAR_DEPRECATED("use setPerfEstimate")
  void setCycleEstimate(const VertexRef &v, std::uint64_t cycles);
  void registerPerfEstimator(StringRef vertexTypeName, PerfEstimateFunc f);

  // --- host data transfer --------------------------------------------------
  void createHostWrite(StringRef handle, const Tensor &t, bool rearrangeOnHost = false);
  void createHostRead(StringRef handle, const Tensor &t, bool rearrangeOnHost = false);
  DataStream addHostToDeviceFIFO(StringRef handle, const Type &elementType, std::size_t numElements,
                                 ReplicatedStreamMode replicatedMode = ReplicatedStreamMode::REPLICATE,
                                 const OptionFlags &options = {});
  DataStream addDeviceToHostFIFO(StringRef handle, const Type &elementType, std::size_t numElements,
                                 const OptionFlags &options = {});
  RemoteBuffer addRemoteBuffer(StringRef handle, const Type &elementType, std::size_t numElements,
                               std::size_t repeats = 1, bool rearrangeOnHost = false,
                               bool optimiseMemory = false);
  Function addFunction(const program::Program &program);

  // --- serialisation -------------------------------------------------------
  /// Writes the graph (target, variables with their tile mappings, constants'
  /// values, compute sets, vertices and their connections, host handles and
  /// streams) to `out`. `SerializationFormat::JSON` is a JSON document for
  /// people and tools; `Binary` is the same document as CBOR behind an 8-byte
  /// header. Both are described in docs/graph-serialization.md.
  void serialize(std::ostream &out, SerializationFormat format) const;
  /// The same, with the programs `progs` (program i as the Engine's run(i)).
  void serialize(std::ostream &out, ArrayRef<program::Program> progs, SerializationFormat format) const;

  /// Writes `tensors` (their element types, shapes, tile mappings and which
  /// elements of which variables they view; no values) to `out`, for
  /// deserializeTensors. `Binary` is a Cap'n Proto message laid out as Poplar's
  /// (as far as a file Poplar wrote shows it); `JSON` is a JSON document.
  /// Every tensor must be of this graph. docs/graph-serialization.md.
  void serializeTensors(std::ostream &out, ArrayRef<Tensor> tensors, SerializationFormat format) const;
  /// Reads tensors written by serializeTensors (Aspen's or Poplar's binary form,
  /// or Aspen's JSON) and recreates them in this graph: one new variable for
  /// each variable the file names, each tensor the same view of them as it was,
  /// mapped as it was. Returns the tensors in the order they were written.
  /// Malformed input throws `parse_error`, naming the part at fault.
  std::vector<Tensor> deserializeTensors(std::istream &in, SerializationFormat format);

  // --- debug output --------------------------------------------------------
  void outputComputeGraph(std::ostream &os, ArrayRef<program::Program> progs = {}) const;
  void outputVertexGraph(std::ostream &os, ArrayRef<program::Program> progs = {}) const;

  /// Internal: the shared graph data and this view's first tile. Not Poplar API.
  aspen::ir::GraphData &getImpl() const { return *data_; }
  const std::shared_ptr<aspen::ir::GraphData> &getImplPtr() const { return data_; }
  unsigned getTileOffset() const { return tileBase_; }
  /// Internal: the absolute tile of this graph's tile `tile` (a virtual graph
  /// numbers its tiles from 0; per-IPU virtual graphs need not be contiguous).
  /// `tile` must be below getTarget().getNumTiles(). Not Poplar API.
  unsigned toAbsoluteTile(unsigned tile) const { return tileTable_ ? (*tileTable_)[tile] : tileBase_ + tile; }
  /// Internal: this graph's number for absolute tile `absoluteTile`, or -1 when
  /// the tile is not part of this graph. Not Poplar API.
  int toRelativeTile(unsigned absoluteTile) const;

private:
  Graph(std::shared_ptr<aspen::ir::GraphData> data, unsigned tileBase, unsigned numTiles);
  Graph(std::shared_ptr<aspen::ir::GraphData> data, unsigned tileBase, const Target &target,
        std::shared_ptr<const std::vector<unsigned>> tileTable);
  Tensor addConstantFromHost(const Type &type, ArrayRef<std::size_t> shape, const Type &hostType,
                             const void *values, std::size_t count, bool splat, const DebugContext &dc);
  void setInitialValueFromHost(const Tensor &t, const Type &hostType, const void *values, std::size_t count,
                               bool splat);
  Tensor addVariableImpl(const Type &type, const Tensor *metadata, ArrayRef<std::size_t> shape,
                         VariableMappingMethod mappingMethod, const DebugContext &debugContext);
  Tensor addConstantWithMetadata(const Type &type, const Tensor &metadata, ArrayRef<std::size_t> shape,
                                 const Type &hostType, const void *values, std::size_t count, bool splat,
                                 const DebugContext &dc);
  void setFieldInitialValue(const FieldRef &field, const Type &hostType, const void *values,
                            std::size_t count, bool scalar);
  void connectScalarValue(FieldRef field, const Type &hostType, const void *value);

  std::shared_ptr<aspen::ir::GraphData> data_;
  unsigned tileBase_;
  unsigned numTiles_;
  std::unique_ptr<Target> target_;
  std::shared_ptr<const std::vector<unsigned>> tileTable_; // relative -> absolute; null = tileBase_ + t
};

} // namespace poplar

#endif
