// Copyright (c) Aspen contributors.
// Errors of the API issue 24 added for PopLibs (compat/poplibs_api_gaps.cpp): each names the
// thing at fault.
#include "ErrorCheck.hpp"

#include <poplar/Engine.hpp> // dumpProgram
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>
#include <poplar/TypeTraits.hpp>
#include <poplar/VertexIntrospector.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using aspen::test::requireError;

TEST_CASE("issue 24 errors: host data of traits with no host type", "[error][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  const char bytes[3] = {1, 2, 3};
  // A 3-byte integer, and a type neither integral nor floating point.
  requireError<type_error>(
      [&] { graph.addConstant(FLOAT, {1}, bytes, TypeTraits(1, 3, true, false, false), false, {"odd"}); },
      {"'odd'", "3 bytes", "integral", "no host type"});
  requireError<type_error>(
      [&] { graph.addConstant(FLOAT, {1}, bytes, TypeTraits(1, 2, false, false, false), true, {"opaque"}); },
      {"'opaque'", "2 bytes", "neither integral nor floating point"});
}

TEST_CASE("issue 24 errors: isConstant of a variable not of the graph", "[error][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  graph.addVariable(FLOAT, {2}, "v");
  requireError<index_error>([&] { graph.isConstant(VariableRef(42)); },
                            {"isConstant", "variable 42", "not a variable of this graph"});
}

TEST_CASE("issue 24 errors: clone of a tensor of another graph", "[error][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  Graph other(Target::createIPUTarget(1, 2, "ipu2"));
  Tensor t = other.addVariable(FLOAT, {2}, "elsewhere");
  requireError<poplar_error>([&] { graph.clone(t.getMetadata(), t, {"c"}); }, {"clone", "different graph"});
}

TEST_CASE("issue 24 errors: rows of initial values from a field that is not 2-D", "[error][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  graph.addCodelets(std::string(root) + "/test/compat/vertices/worklist_vertices.cpp");
  ComputeSet cs = graph.addComputeSet("cs");
  VertexRef v = graph.addVertex(cs, "PairListCount");
  const VertexIntrospector vi(&graph.getImpl(), v.getId());
  const Target &target = graph.getTarget();
  requireError<type_error>([&] { vi.getFieldInfo("limits").getInitialValues<std::vector<unsigned>>(target); },
                           {"field 'limits'", "'PairListCount'", "not a 2-D field"});
  requireError<type_error>(
      [&] { vi.getFieldInfo("work")[1].getInitialValues<std::vector<unsigned short>>(target); },
      {"field 'work[1]'", "'PairListCount'", "not a 2-D field"});
}

TEST_CASE("issue 24 errors: dumpProgram of an empty graph or to a failed stream", "[error][poplibs]") {
  Graph empty;
  std::stringstream s;
  requireError<poplar_error>([&] { dumpProgram(empty, program::Sequence(), s); },
                             {"dumpProgram", "empty Graph"});
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  std::stringstream bad;
  bad.setstate(std::ios::badbit);
  requireError<poplar_error>([&] { dumpProgram(graph, program::Sequence(), bad); },
                             {"dumpProgram", "output stream"});
}

TEST_CASE("issue 24 errors: a conv unit's pipeline depth for a type it does not accumulate",
          "[error][poplibs]") {
  const Target target = Target::createIPUTarget(1, 2, "ipu2");
  // Quarter, half and float have a depth (quarter goes through the half pipeline); others not.
  CHECK(target.getConvUnitMaxPipelineDepth(QUARTER) == target.getConvUnitMaxPipelineDepth(HALF));
  requireError<type_error>([&] { (void)target.getConvUnitMaxPipelineDepth(INT); },
                           {"getConvUnitMaxPipelineDepth", "'int'"});
  requireError<type_error>([&] { (void)target.getConvUnitMaxPipelineDepth(UNSIGNED_CHAR); },
                           {"getConvUnitMaxPipelineDepth", "'unsigned char'"});
}
