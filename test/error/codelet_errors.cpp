// Copyright (c) Aspen contributors.
// Error cases of codelets and vertices: each bad input is rejected with a
// poplar_error of the right kind whose message names the file, vertex type,
// field and tensor at fault.
#include "CodeletTestSupport.hpp"
#include "ErrorCheck.hpp"

#include "codelets/CodeletCompiler.hpp"
#include "codelets/ContentHash.hpp"
#include "poplar/Graph.hpp"
#include "poplar/Program.hpp"
#include "poplar/exceptions.hpp"
#include <poplar/Executable.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <unistd.h>

using namespace poplar;
using aspen::test::requireError;
using codelet_test::corpusFile;
using codelet_test::corpusFlags;

namespace {

Target smallTarget() {
  return Target::createIPUTarget(1, 4, "ipu2");
}

Graph corpusGraph() {
  Graph g(smallTarget());
  g.addCodelets(corpusFile("FieldKinds.cpp"), CodeletFileType::Auto, corpusFlags());
  return g;
}

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/aspen-codelet-errors-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string write(const std::string &name, const std::vector<std::uint8_t> &bytes) const {
    const std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
};

std::vector<std::uint8_t> validGp() {
  return aspen::codelets::compileCodelets({corpusFile("Templates.cpp")},
                                          aspen::codelets::parseCodeletFlags(corpusFlags()))
      .gpBytes;
}

TEST_CASE("codelet_errors: a codelet that does not compile", "[codelets][error]") {
  Graph g(smallTarget());
  const std::string file = corpusFile("BadCodelet.cpp");
  requireError<graph_object_creation_error>([&] { g.addCodelets(file); },
                                            {"BadCodelet.cpp", "BadCodelet.cpp:9:", "undeclaredName"});
  REQUIRE_FALSE(g.hasCodelet("Bad"));
}

TEST_CASE("codelet_errors: a corrupt .gp", "[codelets][error]") {
  TempDir dir;
  std::vector<std::uint8_t> bytes = validGp();
  bytes[bytes.size() / 2] ^= 0x5a;
  const std::string path = dir.write("corrupt.gp", bytes);
  Graph g(smallTarget());
  requireError<graph_object_load_error>([&] { g.addCodelets(path); }, {"corrupt.gp", "corrupt"});
}

TEST_CASE("codelet_errors: a .gp of another format version", "[codelets][error]") {
  TempDir dir;
  std::vector<std::uint8_t> bytes = validGp();
  const std::uint32_t version = 99;
  std::memcpy(bytes.data() + 8, &version, 4);
  const std::string path = dir.write("future.gp", bytes);
  Graph g(smallTarget());
  requireError<graph_object_load_error>([&] { g.addCodelets(path); }, {"future.gp", "format version 99"});
}

TEST_CASE("codelet_errors: a .gp whose IPU build is damaged", "[codelets][error]") {
  // A library carrying its IPU build (docs/codelets.md, "Which build runs where"), the IPU
  // build's bytes changed and the file's own checksum made to match again: an IPU target,
  // which runs the IPU build, names the file and what is wrong.
  TempDir dir;
  const std::vector<std::uint8_t> host = validGp();
  std::vector<std::uint8_t> bytes = aspen::codelets::withIpuBuild(host, host, "ipu2");
  bytes[bytes.size() - 10] ^= 0x5a;
  const std::string hash = aspen::codelets::contentHash(bytes.data() + 64, bytes.size() - 64);
  std::memcpy(bytes.data() + 32, hash.data(), 32);
  const std::string path = dir.write("damaged-ipu.gp", bytes);
  Graph g(smallTarget());
  requireError<graph_object_load_error>([&] { g.addCodelets(path); },
                                        {"damaged-ipu.gp", "IPU build does not match its recorded hash"});
}

TEST_CASE("codelet_errors: a truncated .gp, and a file that is not a .gp", "[codelets][error]") {
  TempDir dir;
  std::vector<std::uint8_t> bytes = validGp();
  bytes.resize(bytes.size() - 100);
  const std::string truncated = dir.write("truncated.gp", bytes);
  const std::string text = dir.write("text.gp", {'h', 'e', 'l', 'l', 'o', '\n'});
  Graph g(smallTarget());
  requireError<graph_object_load_error>([&] { g.addCodelets(truncated); }, {"truncated.gp", "truncated"});
  requireError<graph_object_load_error>([&] { g.addCodelets(text); },
                                        {"text.gp", "not an Aspen vertex library"});
  requireError<graph_object_load_error>([&] { g.addCodelets(dir.path + "/missing.gp"); }, {"missing.gp"});
}

TEST_CASE("codelet_errors: an assembly codelet and an unknown file type", "[codelets][error]") {
  Graph g(smallTarget());
  requireError<graph_object_creation_error>([&] { g.addCodelets("kernels.S"); }, {"kernels.S", "assembly"});
  requireError<graph_object_creation_error>([&] { g.addCodelets("kernels.txt"); },
                                            {"kernels.txt", "file type"});
}

TEST_CASE("codelet_errors: popc's target list: an unknown target, a bad JSON list", "[codelets][error]") {
  Graph g(smallTarget());
  const std::string src = corpusFile("FieldKinds.cpp");
  const std::string flags = corpusFlags();
  requireError<graph_object_creation_error>(
      [&] { g.addCodelets(src, CodeletFileType::Auto, flags + " --target ipu2,ipu9"); },
      {"ipu9", "targets:"});
  requireError<graph_object_creation_error>(
      [&] { g.addCodelets(src, CodeletFileType::Auto, flags + " -target='[\"ipu2\",{\"arch\":\"ipu3\"}]'"); },
      {"target list", "\"name\""});
  requireError<graph_object_creation_error>(
      [&] { g.addCodelets(src, CodeletFileType::Auto, flags + " --target '[\"ipu2\"'"); },
      {"not valid JSON"});
  requireError<graph_object_creation_error>(
      [&] {
        g.addCodelets(
            src, CodeletFileType::Auto,
            flags + " --target '[{\"name\":\"ipu2:cpp\",\"arch\":\"ipu2\",\"compile-flags\":\"-DX\"}]'");
      },
      {"ipu2:cpp", "compile-flags"});
  requireError<graph_object_creation_error>([&] { g.addCodelets(src, CodeletFileType::Auto, flags + " -X"); },
                                            {"'-X'", "needs"});
}

TEST_CASE("codelet_errors: an unknown vertex type", "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  requireError<unknown_vertex_type>([&] { g.addVertex(cs, "MultiScale<double>"); },
                                    {"'MultiScale<double>'", "MultiScale<float>"});
  Graph empty(smallTarget());
  const ComputeSet cs2 = empty.addComputeSet();
  requireError<unknown_vertex_type>([&] { empty.addVertex(cs2, "Foo"); }, {"'Foo'", "addCodelets"});
}

TEST_CASE("codelet_errors: an unknown field", "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "ScalarEdges");
  const Tensor t = g.addVariable(FLOAT, {1}, "t");
  requireError<unknown_field>([&] { g.connect(v["input"], t); }, {"'ScalarEdges'", "'input'", "'a'"});
  requireError<unknown_field>(
      [&] {
        g.addVertex(cs, "ScalarEdges", {{"nope", t}});
      },
      {"'ScalarEdges'", "'nope'"});
}

TEST_CASE("codelet_errors: a scalar field connected to a tensor of several elements", "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "ScalarEdges");
  const Tensor t = g.addVariable(FLOAT, {3}, "threeFloats");
  requireError<graph_connection_error>([&] { g.connect(v["a"], t); },
                                       {"'ScalarEdges'", "field 'a'", "threeFloats", "3 elements"});
}

TEST_CASE("codelet_errors: a field connected to a tensor of another element type", "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "ScalarEdges");
  const Tensor t = g.addVariable(INT, {1}, "anInt");
  requireError<graph_connection_error>([&] { g.connect(v["a"], t); },
                                       {"'ScalarEdges'", "field 'a'", "anInt", "float", "int"});
}

TEST_CASE("codelet_errors: a field connected to a tensor of another graph, or of a graph that is gone",
          "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "ScalarEdges");
  Tensor gone;
  {
    Graph other(smallTarget());
    const Tensor theirs = other.addVariable(FLOAT, {1}, "theirs");
    requireError<graph_connection_error>([&] { g.connect(v["a"], theirs); },
                                         {"'theirs'", "field 'a'", "belongs to another graph"});
    gone = theirs;
  }
  requireError<graph_connection_error>([&] { g.connect(v["a"], gone); },
                                       {"variable 0", "field 'a'", "belongs to another graph"});
}

TEST_CASE("codelet_errors: setInitialValue on an edge field", "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "ScalarEdges");
  requireError<graph_connection_error>([&] { g.setInitialValue(v["a"], 1.0f); },
                                       {"field 'a'", "'ScalarEdges'", "edge"});
}

TEST_CASE("codelet_errors: an Output connected to a constant", "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "ScalarEdges");
  const Tensor c = g.addConstant(FLOAT, {}, 1.0f, "aConstant");
  requireError<graph_connection_error>([&] { g.connect(v["out"], c); },
                                       {"Output field 'out'", "'ScalarEdges'", "aConstant", "constant"});
  g.connect(v["a"], c); // an Input may read a constant
}

TEST_CASE("codelet_errors: a tensor connected to a state field, a vertex mapped beyond the graph",
          "[codelets][error]") {
  Graph g = corpusGraph();
  const ComputeSet cs = g.addComputeSet();
  VertexRef v = g.addVertex(cs, "StateFields");
  requireError<graph_connection_error>([&] { g.connect(v["n"], g.addVariable(UNSIGNED_INT, {1})); },
                                       {"state field 'n'", "'StateFields'", "setInitialValue"});
  requireError<invalid_tile_mapping>([&] { g.setTileMapping(v, 4); }, {"vertex", "'StateFields'", "tile 4"});
  requireError<graph_connection_error>([&] { g.setInitialValue(v["offsets"][1], 3u); }, {"'offsets'"});
}

} // namespace

TEST_CASE("codelet_errors: a stripped library, whose variables cannot be told apart", "[codelets][error]") {
  // Without a symbol table Aspen cannot find which writable bytes are the
  // codelets' own variables, each tile's to own (docs/tile-model.md).
  Graph g(smallTarget());
  requireError<graph_object_creation_error>(
      [&] { g.addCodelets(corpusFile("FieldKinds.cpp"), CodeletFileType::Auto, corpusFlags() + " -Wl,-s"); },
      {"FieldKinds.cpp", "no symbol table", "stripped"});
}

TEST_CASE("codelet_errors: codelets whose variables do not fit in a tile", "[codelets][error]") {
  // Each tile that runs them holds a copy of their globals and statics
  // (docs/tile-model.md): out of memory names them.
  Graph g(smallTarget());
  std::stringstream source;
  source << "#include <poplar/Vertex.hpp>\n"
            "static char big[700000];\n"
            "class UsesBig : public poplar::Vertex {\n"
            "public:\n"
            "  poplar::Output<int> out;\n"
            // Touch the whole array: clang keeps only the elements a program uses.
            "  void compute() { for (int i = 0; i < 700000; i += 4096) ++big[i]; *out = big[0]; }\n"
            "};\n";
  g.addCodelets(source);
  Tensor out = g.addVariable(INT, {}, "out");
  g.setTileMapping(out, 2);
  ComputeSet cs = g.addComputeSet("big");
  g.setTileMapping(g.addVertex(cs, "UsesBig", {{"out", out}}), 2);
  requireError<graph_memory_allocation_error>([&] { compileGraph(g, {program::Execute(cs)}); },
                                              {"Out of memory on tile 2", "codeletData",
                                               "Global and static variables of codelets on tile 2",
                                               "codelets from '<stringstream>': 700"});
}
