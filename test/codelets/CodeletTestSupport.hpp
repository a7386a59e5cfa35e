// Copyright (c) Aspen contributors.
// Host-side helpers for the codelet tests: where the corpus is, the flags it
// is compiled with, and a vertex object whose fields are bound to host buffers
// following the vertex ABI (docs/internals.md, "Host layout of vertex fields"),
// the way the runtime binds them to tile memory.
#pragma once

#include "codelets/CodeletAbi.h"
#include "ir/GraphData.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace codelet_test {

inline std::string corpusDir() {
  return ASPEN_CODELET_CORPUS_DIR;
}
/// Every test compiles the corpus with the same flags, so that the codelet cache
/// shares one compile between them.
inline std::string corpusFlags() {
  return "-DCORPUS_SCALE=3 -I " + corpusDir();
}
inline std::string corpusFile(const std::string &name) {
  return corpusDir() + "/" + name;
}

/// Host bytes laid out like a vertex of `type`, with fields bound by name.
class VertexObject {
public:
  explicit VertexObject(const aspen::ir::VertexTypeInfo &type)
      : type_(type), storage_((type.objectSize + 15) / 16 + 1) {
    REQUIRE(type.objectAlign <= 16);
  }
  void *data() { return storage_.data(); }

  const aspen::ir::FieldInfo &field(const std::string &name) const {
    const int i = type_.fieldIndex(name);
    INFO("field " << name << " of " << type_.name);
    REQUIRE(i >= 0);
    return type_.fields[static_cast<std::size_t>(i)];
  }
  /// A scalar edge (T *ptr).
  void bindScalar(const std::string &name, const void *p) {
    const auto &f = field(name);
    REQUIRE(f.size == 8);
    std::memcpy(bytes() + f.offset, &p, 8);
  }
  /// A vector edge, a state vector, or a list of edges: {pointer, 32-bit size}.
  void bindVector(const std::string &name, const void *p, std::uint32_t size) {
    const auto &f = field(name);
    REQUIRE(f.size == 16);
    std::memcpy(bytes() + f.offset, &p, 8);
    std::memcpy(bytes() + f.offset + 8, &size, 4);
  }
  template <class T> void setState(const std::string &name, T value) {
    const auto &f = field(name);
    REQUIRE(f.size == sizeof(T));
    std::memcpy(bytes() + f.offset, &value, sizeof(T));
  }

private:
  unsigned char *bytes() { return reinterpret_cast<unsigned char *>(storage_.data()); }
  const aspen::ir::VertexTypeInfo &type_;
  struct alignas(16) Chunk {
    unsigned char b[16];
  };
  std::vector<Chunk> storage_;
};

/// The descriptor of one region of a list of edges: {pointer, 32-bit size}.
struct Region {
  const void *ptr;
  std::uint32_t size;
  std::uint32_t pad;
};
static_assert(sizeof(Region) == 16, "descriptor layout");

} // namespace codelet_test
