// Copyright (c) Aspen contributors.
// Benchmark (label bench, not run by ctest): compiling one vertex of 1,000 to 10,000 fields,
// and one file of 1,000 to 4,000 vertex types, uncached. Issue 25's target: 10,000 fields in
// under 10 s; the time per field (and per vertex type) should not grow with the count.
//   build-*/test/bin/popc_fields_bench
#include "BenchSupport.hpp"
#include "codelets/CodeletCompiler.hpp"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

using aspen::bench::Clock;
using aspen::bench::millisecondsSince;

namespace {

double compileMs(const std::string &dir, const std::string &name, const std::string &text,
                 std::size_t types) {
  const std::string source = dir + "/" + name;
  std::ofstream(source) << text;
  const auto start = Clock::now();
  const auto compiled = aspen::codelets::compileCodelets({source}, aspen::codelets::parseCodeletFlags("-O2"));
  const double ms = millisecondsSince(start);
  REQUIRE_FALSE(compiled.fromCache);
  REQUIRE(compiled.metadata.vertexTypes.size() == types);
  return ms;
}

std::string wideVertex(unsigned fields) {
  std::string s =
      "#include <poplar/Vertex.hpp>\nusing namespace poplar;\nclass Wide : public Vertex {\npublic:\n";
  for (unsigned i = 0; i < fields; ++i)
    s += "  Input<float> in" + std::to_string(i) + ";\n";
  s += "  Output<float> out;\n  bool compute() { *out = *in0 + *in" + std::to_string(fields - 1) +
       "; return true; }\n};\n";
  return s;
}

std::string manyVertices(unsigned types) {
  std::string s = "#include <poplar/Vertex.hpp>\nusing namespace poplar;\n"
                  "template <int K> class Add : public Vertex {\npublic:\n  Input<float> a;\n"
                  "  Output<float> out;\n  bool compute() { *out = *a + K; return true; }\n};\n";
  for (unsigned i = 0; i < types; ++i)
    s += "template class Add<" + std::to_string(i) + ">;\n";
  return s;
}

TEST_CASE("popc: compile time against the number of fields and of vertex types", "[bench]") {
  char t[] = "/tmp/aspen-popc-fields-bench-XXXXXX";
  const std::string dir = ::mkdtemp(t);
  ::setenv("ASPEN_CACHE_DIR", (dir + "/cache").c_str(), 1);
  double firstPerField = 0;
  for (unsigned fields : {1000u, 2000u, 5000u, 10000u}) {
    const double ms = compileMs(dir, "Wide" + std::to_string(fields) + ".cpp", wideVertex(fields), 1);
    const double perField = ms / fields;
    if (firstPerField == 0)
      firstPerField = perField;
    std::printf(
        "popc, one vertex of %5u fields: %8.0f ms | %.3f ms per field | %.2fx the per-field time at 1,000\n",
        fields, ms, perField, perField / firstPerField);
    if (fields == 10000)
      CHECK(ms < 10000.0);
  }
  double firstPerType = 0;
  for (unsigned types : {1000u, 4000u}) {
    const double ms = compileMs(dir, "Many" + std::to_string(types) + ".cpp", manyVertices(types), types);
    const double perType = ms / types;
    if (firstPerType == 0)
      firstPerType = perType;
    std::printf("popc, %5u vertex types: %8.0f ms | %.3f ms per type | %.2fx the per-type time at 1,000\n",
                types, ms, perType, perType / firstPerType);
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}

} // namespace
