// Copyright (c) Aspen contributors. Poplar-compatible public API.
#ifndef POPLAR_GRAPHELEMENTS_HPP
#define POPLAR_GRAPHELEMENTS_HPP

#include <poplar/ReplicatedStreamMode.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/Type.hpp>

#include <cstddef>
#include <string>

namespace poplar {

class Graph;

/// A set of vertices run together as one BSP superstep by `program::Execute`.
class ComputeSet {
public:
  ComputeSet() : id_(~0u) {}
  explicit ComputeSet(unsigned id) : id_(id) {}
  unsigned getId() const { return id_; }
  bool operator==(const ComputeSet &o) const { return id_ == o.id_; }
  bool operator!=(const ComputeSet &o) const { return id_ != o.id_; }

private:
  unsigned id_;
};

class FieldRef;

/// A vertex in a compute set. `v["in"]` names one of its fields.
class VertexRef {
public:
  VertexRef() : graph_(nullptr), id_(~0u) {}
  VertexRef(const Graph *graph, unsigned id) : graph_(graph), id_(id) {}
  unsigned getId() const { return id_; }
  const Graph *getGraph() const { return graph_; }
  inline FieldRef operator[](StringRef fieldName) const;
  bool operator==(const VertexRef &o) const { return id_ == o.id_; }

private:
  const Graph *graph_;
  unsigned id_;
};

/// A field of a vertex, or one element of a vector-of-edges field (`v["in"][2]`).
class FieldRef {
public:
  FieldRef() : index_(~std::size_t(0)) {}
  FieldRef(VertexRef vertex, StringRef name, std::size_t index = ~std::size_t(0))
      : vertex_(vertex), name_(name.str()), index_(index) {}
  FieldRef operator[](std::size_t index) const { return FieldRef(vertex_, name_, index); }
  const VertexRef &getVertex() const { return vertex_; }
  const std::string &getName() const { return name_; }
  bool isIndexed() const { return index_ != ~std::size_t(0); }
  std::size_t getIndex() const { return index_; }

private:
  VertexRef vertex_;
  std::string name_;
  std::size_t index_;
};

inline FieldRef VertexRef::operator[](StringRef fieldName) const {
  return FieldRef(*this, fieldName);
}

/// The kind of a DataStream.
enum class DataStreamType {
  HostToDeviceFIFO,
  DeviceToHostFIFO,
  HostToDeviceBuffer,
  DeviceToHostBuffer,
  RemoteBuffer
};

/// A host stream made by `addHostToDeviceFIFO` or `addDeviceToHostFIFO`.
class DataStream {
public:
  enum class Direction { HostToDevice, DeviceToHost };
  DataStream() : id_(~0u), numElements_(0), direction_(Direction::HostToDevice) {}
  DataStream(unsigned id, StringRef handle, Type type, std::size_t numElements, Direction dir)
      : id_(id), handle_(handle.str()), type_(type), numElements_(numElements), direction_(dir) {}
  unsigned getId() const { return id_; }
  const std::string &handle() const { return handle_; }
  Type elementType() const { return type_; }
  std::size_t numElements() const { return numElements_; }
  Direction direction() const { return direction_; }
  /// HostToDeviceFIFO or DeviceToHostFIFO (Aspen's streams are FIFOs).
  DataStreamType type() const {
    return direction_ == Direction::HostToDevice ? DataStreamType::HostToDeviceFIFO
                                                 : DataStreamType::DeviceToHostFIFO;
  }
  bool valid() const { return id_ != ~0u; }

private:
  unsigned id_;
  std::string handle_;
  Type type_;
  std::size_t numElements_;
  Direction direction_;
};

/// Off-chip memory in the host, addressed by `repeats` rows of `numElements`.
class RemoteBuffer {
public:
  RemoteBuffer() : id_(~0u), numElements_(0), repeats_(0) {}
  RemoteBuffer(unsigned id, StringRef handle, Type type, std::size_t numElements, std::size_t repeats)
      : id_(id), handle_(handle.str()), type_(type), numElements_(numElements), repeats_(repeats) {}
  unsigned getId() const { return id_; }
  const std::string &handle() const { return handle_; }
  Type elementType() const { return type_; }
  std::size_t numElements() const { return numElements_; }
  std::size_t getRepeats() const { return repeats_; }
  bool valid() const { return id_ != ~0u; }

private:
  unsigned id_;
  std::string handle_;
  Type type_;
  std::size_t numElements_;
  std::size_t repeats_;
};

/// A program body that several `program::Call`s share.
class Function {
public:
  Function() : id_(~0u) {}
  explicit Function(unsigned id) : id_(id) {}
  unsigned getId() const { return id_; }

private:
  unsigned id_;
};

} // namespace poplar

#endif
