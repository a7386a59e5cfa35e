// Copyright (c) Aspen contributors.
// Benchmark (label bench, not run by ctest): compiling a 20-vertex codelet file
// for the first time versus finding it in the codelet cache, directly and through
// Graph::addCodelets. Target: a cache hit well under 20 ms.
//   build-*/test/bin/codelets_cache_bench
#include "BenchSupport.hpp"
#include "codelets/CodeletCompiler.hpp"
#include "poplar/Graph.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

using aspen::bench::Clock;
using aspen::bench::millisecondsSince;

namespace {

TEST_CASE("codelet cache: first compile vs cache hit, 20 vertex types", "[bench]") {
  char t[] = "/tmp/aspen-codelet-bench-XXXXXX";
  const std::string dir = ::mkdtemp(t);
  ::setenv("ASPEN_CACHE_DIR", (dir + "/cache").c_str(), 1);
  const std::string source = dir + "/Twenty.cpp";
  {
    std::ofstream out(source);
    out << "#include <poplar/Vertex.hpp>\nusing namespace poplar;\n";
    for (int i = 0; i < 20; ++i)
      out << "template <typename T> class V" << i << " : public Vertex {\npublic:\n"
          << "  Input<Vector<T>> in;\n  Output<Vector<T, VectorLayout::ONE_PTR>> out;\n  T scale;\n"
          << "  bool compute() {\n    for (unsigned k = 0; k < in.size(); ++k)\n"
          << "      out[k] = in[k] * scale + T(" << i << ");\n    return true;\n  }\n};\n"
          << "template class V" << i << (i % 2 ? "<float>" : "<int>") << ";\n";
  }
  const auto flags = aspen::codelets::parseCodeletFlags("-O2");

  auto start = Clock::now();
  const auto first = aspen::codelets::compileCodelets({source}, flags);
  const double compileMs = millisecondsSince(start);
  REQUIRE_FALSE(first.fromCache);
  REQUIRE(first.metadata.vertexTypes.size() == 20);

  start = Clock::now();
  const auto hit = aspen::codelets::compileCodelets({source}, flags);
  const double hitMs = millisecondsSince(start);
  REQUIRE(hit.fromCache);

  start = Clock::now();
  poplar::Graph g(poplar::Target::createIPUTarget(1, 4, "ipu2"));
  g.addCodelets(source, poplar::CodeletFileType::Auto, "-O2");
  const double graphHitMs = millisecondsSince(start);
  REQUIRE(g.hasCodelet("V19<float>"));

  std::printf("codelet cache, 20 vertex types: first compile %8.1f ms | cache hit %6.2f ms | "
              "Graph::addCodelets hit %6.2f ms | ratio %.0fx\n",
              compileMs, hitMs, graphHitMs, compileMs / hitMs);
  CHECK(hitMs < 20.0);
  CHECK(graphHitMs < 20.0);
  std::system(("rm -rf '" + dir + "'").c_str());
}

} // namespace
