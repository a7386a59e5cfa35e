// Copyright (c) Aspen contributors.
// Conformance: the __POPC__ same-file idiom (reference/poplar_api.md, "Codelets";
// reference/vertex_model.md §6): one file holds both the host program and, behind
// #ifdef __POPC__, its codelets; the host calls graph.addCodelets(__FILE__). The
// codelet compiler defines __POPC__ (and not __IPU__), the host compiler neither.
#ifdef __POPC__

#include <poplar/Vertex.hpp>

#ifdef __IPU__
#error "__IPU__ is only defined for IPU machine code"
#endif

// out[i] = in[i] * in[i]
class SameFileSquare : public poplar::Vertex {
public:
  poplar::Input<poplar::Vector<float>> in;
  poplar::Output<poplar::Vector<float>> out;
  bool compute() {
    for (unsigned i = 0; i < in.size(); ++i)
      out[i] = in[i] * in[i];
    return true;
  }
};

#else

#include "codelets/VertexLibrary.hpp"
#include "ir/GraphData.hpp"
#include "poplar/Graph.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

TEST_CASE("codelets_samefile: a program adds the codelets in its own file", "[codelets][graph]") {
  poplar::Graph g(poplar::Target::createIPUTarget(1, 4, "ipu2"));
  // __FILE__ as the compiler saw it; a build through ccache with a base directory
  // makes it relative to the build directory, not to where the test runs.
  std::string self = __FILE__;
  if (!std::ifstream(self).good() && std::getenv("ASPEN_SOURCE_DIR"))
    self = std::string(std::getenv("ASPEN_SOURCE_DIR")) + "/test/conformance/codelets_samefile.cpp";
  REQUIRE(g.addCodelets(self));
  REQUIRE(g.hasCodelet("SameFileSquare"));
  REQUIRE_FALSE(g.addCodelets(self));

  // The compiled vertex squares its input (run directly until the runtime lands).
  const auto &data = g.getImpl();
  const auto &lib = data.codeletLibraries.front();
  std::ifstream in(lib.path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  const auto &loaded = aspen::codelets::loadVertexLibrary(lib.contentHash, bytes, lib.path);
  const AspenVertexEntry *entry = loaded.find("SameFileSquare");
  REQUIRE(entry != nullptr);
  const auto &type = data.vertexTypes.at(data.vertexTypeByName.at("SameFileSquare"));
  std::vector<float> input = {1, -2, 3}, output(3);
  alignas(16) unsigned char object[64] = {};
  REQUIRE(type.objectSize <= sizeof object);
  for (const auto &f : type.fields) {
    const void *p = f.name == "in" ? static_cast<const void *>(input.data()) : output.data();
    const std::uint32_t n = 3;
    std::memcpy(object + f.offset, &p, 8);
    std::memcpy(object + f.offset + 8, &n, 4);
  }
  REQUIRE(entry->compute(object, 0) == 1);
  REQUIRE(output == std::vector<float>{1, 4, 9});
}

#endif
