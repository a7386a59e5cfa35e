// Copyright (c) Aspen contributors.
// The codelet compiler end to end, without a graph or a runtime: the corpus in
// test/codelets is compiled (through the cache), its vertex types and fields are
// checked field by field against the sources, and every vertex is run on host
// buffers bound the way the runtime binds tile memory, against a plain host loop.
#include "CodeletTestSupport.hpp"

#include "codelets/CodeletCache.hpp"
#include "codelets/CodeletCompiler.hpp"
#include "codelets/GpFile.hpp"
#include "codelets/VertexLibrary.hpp"
#include "poplar/exceptions.hpp"

#include <poputil/VertexTemplates.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

using namespace aspen::codelets;
using aspen::ir::FieldKind;
using aspen::ir::FieldShape;
using aspen::ir::Layout;
using codelet_test::Region;
using codelet_test::VertexObject;

namespace {

struct CompiledCorpus {
  CompiledCodelets compiled;
  const LoadedVertexLibrary *library = nullptr;
  const aspen::ir::VertexTypeInfo &type(const std::string &name) const {
    for (const auto &t : compiled.metadata.vertexTypes)
      if (t.name == name)
        return t;
    FAIL("no vertex type " << name);
    throw 0;
  }
  const AspenVertexEntry &entry(const std::string &name) const {
    const AspenVertexEntry *e = library->find(name);
    INFO(name);
    REQUIRE(e != nullptr);
    return *e;
  }
};

const CompiledCorpus &corpus(const std::string &file) {
  static std::map<std::string, CompiledCorpus> cache;
  auto it = cache.find(file);
  if (it != cache.end())
    return it->second;
  CompiledCorpus c;
  c.compiled =
      compileCodelets({codelet_test::corpusFile(file)}, parseCodeletFlags(codelet_test::corpusFlags()));
  c.library = &loadVertexLibrary(c.compiled.contentHash, c.compiled.gpBytes, file);
  return cache.emplace(file, std::move(c)).first->second;
}
const CompiledCorpus &fieldKinds() {
  return corpus("FieldKinds.cpp");
}
const CompiledCorpus &templates() {
  return corpus("Templates.cpp");
}

std::set<std::string> namesOf(const CompiledCorpus &c) {
  std::set<std::string> names;
  for (const auto &t : c.compiled.metadata.vertexTypes)
    names.insert(t.name);
  return names;
}

// ---- introspection -------------------------------------------------------------------

TEST_CASE("codelets_library: every vertex type of the corpus is found, under Poplar's names", "[codelets]") {
  const std::set<std::string> expectedFieldKinds = {
      "ScalarEdges",     "Layouts",  "EdgeLists",     "StateFields",    "MultiScale<float>",
      "MultiScale<int>", "SuperSum", "PrivateFields", "Derived<float>", "Printer",
      "VectorTypes",     "HalfAxpy", "Fails",         "VoidCompute"};
  REQUIRE(namesOf(fieldKinds()) == expectedFieldKinds); // NotAVertexType (no compute) is not one
  using poputil::templateVertex;
  const std::set<std::string> expectedTemplates = {
      templateVertex("ns::Param", poplar::FLOAT, 3u, true, "corpus::Op::ADD"),
      templateVertex("ns::Param", poplar::UNSIGNED_INT, 7u, false, "corpus::Op::MUL"),
      templateVertex("ns::Param", poplar::INT, 2u, true, "corpus::Op::MUL"),
      templateVertex("ns::Param", poplar::HALF, 1u, true, "corpus::Op::ADD"),
      templateVertex("ns::inner::Apply", "corpus::Twice", poplar::FLOAT),
      templateVertex("ns::inner::Apply", "corpus::Twice", poplar::UNSIGNED_SHORT),
      "Plain"};
  REQUIRE(namesOf(templates()) == expectedTemplates);
  REQUIRE(expectedTemplates.count("ns::Param<unsigned int,7,false,corpus::Op::MUL>") == 1);
  for (const auto *c : {&fieldKinds(), &templates()})
    REQUIRE(c->library->numEntries() == c->compiled.metadata.vertexTypes.size());
}

struct ExpectedField {
  const char *vertex;
  const char *name;
  FieldKind kind;
  FieldShape shape;
  poplar::Type type;
  Layout layout;
  Layout outer;
  unsigned minAlign;
  unsigned size;
  bool isConst;
};

TEST_CASE("codelets_library: fields are introspected field by field", "[codelets]") {
  using K = FieldKind;
  using S = FieldShape;
  using L = Layout;
  const L none = L::NotAVector;
  const ExpectedField expected[] = {
      {"ScalarEdges", "a", K::Input, S::Scalar, poplar::FLOAT, none, none, 4, 8, false},
      {"ScalarEdges", "b", K::Input, S::Scalar, poplar::INT, none, none, 4, 8, false},
      {"ScalarEdges", "out", K::Output, S::Scalar, poplar::FLOAT, none, none, 4, 8, false},
      {"ScalarEdges", "acc", K::InOut, S::Scalar, poplar::UNSIGNED_INT, none, none, 4, 8, false},
      {"Layouts", "span", K::Input, S::Vector, poplar::FLOAT, L::Span, none, 4, 16, false},
      {"Layouts", "shortSpan", K::Input, S::Vector, poplar::FLOAT, L::ShortSpan, none, 4, 16, false},
      {"Layouts", "onePtr", K::Input, S::Vector, poplar::FLOAT, L::OnePtr, none, 4, 16, false},
      {"Layouts", "ptr32", K::Input, S::Vector, poplar::FLOAT, L::ScaledPtr32, none, 4, 16, false},
      {"Layouts", "ptr64", K::Input, S::Vector, poplar::FLOAT, L::ScaledPtr64, none, 8, 16, false},
      {"Layouts", "ptr128", K::Input, S::Vector, poplar::FLOAT, L::ScaledPtr128, none, 16, 16, false},
      {"Layouts", "compact", K::Input, S::Vector, poplar::FLOAT, L::CompactPtr, none, 8, 16, false},
      {"Layouts", "out", K::Output, S::Vector, poplar::FLOAT, L::OnePtr, none, 4, 16, false},
      {"Layouts", "inout", K::InOut, S::Vector, poplar::INT, L::Span, none, 4, 16, false},
      {"Layouts", "n", K::State, S::Scalar, poplar::UNSIGNED_SHORT, none, none, 2, 2, false},
      {"EdgeLists", "rows", K::Input, S::VectorOfEdges, poplar::FLOAT, L::Span, L::Span, 4, 16, false},
      {"EdgeLists", "outRows", K::Output, S::VectorOfEdges, poplar::FLOAT, L::OnePtr, L::OnePtr, 4, 16,
       false},
      {"EdgeLists", "scalars", K::Input, S::VectorOfScalarEdges, poplar::FLOAT, none, L::Span, 4, 16, false},
      {"EdgeLists", "counters", K::InOut, S::VectorOfScalarEdges, poplar::INT, none, L::Span, 4, 16, false},
      {"EdgeLists", "lists", K::InOut, S::VectorOfEdges, poplar::INT, L::Span, L::DeltaN, 4, 16, false},
      {"EdgeLists", "deltaN", K::Input, S::VectorOfEdges, poplar::FLOAT, L::Span, L::DeltaNElements, 4, 16,
       false},
      {"EdgeLists", "total", K::Output, S::Scalar, poplar::FLOAT, none, none, 4, 8, false},
      {"StateFields", "n", K::State, S::Scalar, poplar::UNSIGNED_INT, none, none, 4, 4, false},
      {"StateFields", "c", K::State, S::Scalar, poplar::FLOAT, none, none, 4, 4, true},
      {"StateFields", "offsets", K::State, S::Vector, poplar::UNSIGNED_INT, L::Span, none, 4, 16, false},
      {"StateFields", "weights", K::State, S::Vector, poplar::INT, L::OnePtr, none, 4, 16, false},
      {"StateFields", "s", K::State, S::Scalar, poplar::SHORT, none, none, 2, 2, false},
      {"StateFields", "flag", K::State, S::Scalar, poplar::BOOL, none, none, 1, 1, false},
      {"StateFields", "h", K::State, S::Scalar, poplar::HALF, none, none, 2, 2, false},
      {"StateFields", "k", K::State, S::Scalar, poplar::LONGLONG, none, none, 8, 8, false},
      {"StateFields", "mode", K::State, S::Scalar, poplar::UNSIGNED_CHAR, none, none, 1, 1, false},
      {"StateFields", "out", K::Output, S::Vector, poplar::FLOAT, L::Span, none, 4, 16, false},
      {"MultiScale<float>", "data", K::InOut, S::Vector, poplar::FLOAT, L::OnePtr, none, 8, 16, false},
      {"MultiScale<float>", "factor", K::State, S::Scalar, poplar::FLOAT, none, none, 4, 4, false},
      {"MultiScale<int>", "factor", K::State, S::Scalar, poplar::INT, none, none, 4, 4, false},
      {"PrivateFields", "in", K::Input, S::Vector, poplar::INT, L::Span, none, 4, 16, false},
      {"PrivateFields", "bias", K::State, S::Scalar, poplar::INT, none, none, 4, 4, false},
      {"Derived<float>", "in", K::Input, S::Vector, poplar::FLOAT, L::Span, none, 4, 16, false},
      {"Derived<float>", "out", K::Output, S::Vector, poplar::FLOAT, L::OnePtr, none, 4, 16, false},
      {"HalfAxpy", "y", K::InOut, S::Vector, poplar::HALF, L::Span, none, 2, 16, false},
      {"VectorTypes", "hout", K::Output, S::Vector, poplar::HALF, L::OnePtr, none, 8, 16, false},
  };
  for (const ExpectedField &e : expected) {
    INFO(e.vertex << "::" << e.name);
    const auto &f = VertexObject(fieldKinds().type(e.vertex)).field(e.name);
    CHECK(f.kind == e.kind);
    CHECK(f.shape == e.shape);
    CHECK(f.elementType == e.type);
    CHECK(f.layout == e.layout);
    CHECK(f.outerLayout == e.outer);
    CHECK(f.minAlign == e.minAlign);
    CHECK(f.size == e.size);
    CHECK(f.isConst == e.isConst);
  }
  // Declaration order (base class fields first), no overlaps, and naturally aligned offsets.
  for (const auto &t : fieldKinds().compiled.metadata.vertexTypes) {
    INFO(t.name);
    std::uint32_t end = 0;
    for (const auto &f : t.fields) {
      CHECK(f.offset >= end);
      CHECK(f.offset % (f.size >= 8 ? 8 : f.size) == 0);
      end = f.offset + f.size;
    }
    CHECK(end <= t.objectSize);
  }
  REQUIRE(fieldKinds().type("Derived<float>").fields.front().name == "in");
  REQUIRE(fieldKinds().type("ScalarEdges").fields.size() == 4);
  REQUIRE(fieldKinds().type("MultiScale<float>").isMultiVertex);
  REQUIRE(!fieldKinds().type("ScalarEdges").isMultiVertex);
  REQUIRE(fieldKinds().type("SuperSum").isSupervisor);
  REQUIRE((fieldKinds().entry("MultiScale<int>").flags & ASPEN_VERTEX_MULTI) != 0);
  REQUIRE((fieldKinds().entry("SuperSum").flags & ASPEN_VERTEX_SUPERVISOR) != 0);
  const auto &p = templates().type("ns::Param<half,1,true,corpus::Op::ADD>");
  REQUIRE(p.fields.size() == 2);
  REQUIRE(p.fields[0].elementType == poplar::HALF);
  REQUIRE(templates().type("ns::inner::Apply<corpus::Twice,unsigned short>").fields[1].elementType ==
          poplar::UNSIGNED_SHORT);
}

// ---- running vertices on host buffers --------------------------------------------------

int run(const CompiledCorpus &c, const std::string &name, VertexObject &v, unsigned worker = 0) {
  return c.entry(name).compute(v.data(), worker);
}

TEST_CASE("codelets_library: scalar edges", "[codelets][run]") {
  VertexObject v(fieldKinds().type("ScalarEdges"));
  float a = 1.5f, out = 0;
  int b = 4;
  unsigned acc = 10;
  v.bindScalar("a", &a);
  v.bindScalar("b", &b);
  v.bindScalar("out", &out);
  v.bindScalar("acc", &acc);
  REQUIRE(run(fieldKinds(), "ScalarEdges", v) == 1);
  REQUIRE(out == a * static_cast<float>(b) * 3); // CORPUS_SCALE from the compile flags
  REQUIRE(acc == 11);
}

TEST_CASE("codelets_library: vector edges in every layout", "[codelets][run]") {
  VertexObject v(fieldKinds().type("Layouts"));
  const unsigned n = 5;
  std::vector<std::vector<float>> inputs(7, std::vector<float>(n));
  const char *names[] = {"span", "shortSpan", "onePtr", "ptr32", "ptr64", "ptr128", "compact"};
  for (unsigned k = 0; k < 7; ++k) {
    for (unsigned i = 0; i < n; ++i)
      inputs[k][i] = static_cast<float>(k * 10 + i);
    v.bindVector(names[k], inputs[k].data(), n);
  }
  std::vector<float> out(n, -1);
  std::vector<int> inout = {1, -2, 3, 40};
  v.bindVector("out", out.data(), n);
  v.bindVector("inout", inout.data(), static_cast<std::uint32_t>(inout.size()));
  v.setState<unsigned short>("n", n);
  REQUIRE(run(fieldKinds(), "Layouts", v) == 1);
  for (unsigned i = 0; i < n; ++i) {
    float expected = 0;
    for (unsigned k = 0; k < 7; ++k)
      expected += inputs[k][i];
    REQUIRE(out[i] == expected);
  }
  REQUIRE(inout == std::vector<int>{2, -4, 6, 80});
  v.setState<unsigned short>("n", n + 1); // disagrees with span.size(): compute returns false
  REQUIRE(run(fieldKinds(), "Layouts", v) == 0);
}

TEST_CASE("codelets_library: lists of edges and vector lists", "[codelets][run]") {
  VertexObject v(fieldKinds().type("EdgeLists"));
  std::vector<float> row0 = {1, 2}, row1 = {3, 4, 5};
  std::vector<float> out0(2), out1(3);
  Region rows[2] = {{row0.data(), 2, 0}, {row1.data(), 3, 0}};
  Region outRows[2] = {{out0.data(), 2, 0}, {out1.data(), 3, 0}};
  float s0 = 1, s1 = 2, s2 = 0.5f;
  const float *scalars[3] = {&s0, &s1, &s2};
  int c0 = 100, c1 = 200;
  int *counters[2] = {&c0, &c1};
  std::vector<int> l0 = {1, 2, 3}, l1 = {-1};
  Region lists[2] = {{l0.data(), 3, 0}, {l1.data(), 1, 0}};
  std::vector<float> d0 = {0.25f, 0.5f}, d1 = {8};
  Region deltaN[2] = {{d0.data(), 2, 0}, {d1.data(), 1, 0}};
  float total = 0;
  v.bindVector("rows", rows, 2);
  v.bindVector("outRows", outRows, 2);
  v.bindVector("scalars", scalars, 3);
  v.bindVector("counters", counters, 2);
  v.bindVector("lists", lists, 2);
  v.bindVector("deltaN", deltaN, 2);
  v.bindScalar("total", &total);
  REQUIRE(run(fieldKinds(), "EdgeLists", v) == 1);
  const float factor = s0 + s1 + s2;
  REQUIRE(out0 == std::vector<float>{row0[0] * factor, row0[1] * factor});
  REQUIRE(out1 == std::vector<float>{row1[0] * factor, row1[1] * factor, row1[2] * factor});
  REQUIRE(c0 == 101);
  REQUIRE(c1 == 202);
  REQUIRE(l0 == std::vector<int>{2, 3, 4});
  REQUIRE(l1 == std::vector<int>{0});
  REQUIRE(total == 0.25f + 0.5f + 8);
}

TEST_CASE("codelets_library: state fields", "[codelets][run]") {
  VertexObject v(fieldKinds().type("StateFields"));
  std::vector<unsigned> offsets = {2, 0, 1};
  std::vector<int> weights = {10, 20, 30};
  std::vector<float> out(3);
  v.setState<unsigned>("n", 2);
  v.setState<float>("c", 0.5f);
  v.bindVector("offsets", offsets.data(), 3);
  v.bindVector("weights", weights.data(), 3);
  v.setState<short>("s", -3);
  v.setState<bool>("flag", true);
  v.setState<std::uint16_t>("h", 0x3400); // 0.25 as binary16
  v.setState<long long>("k", 1000);
  v.setState<unsigned char>("mode", 1); // Mode::On
  v.bindVector("out", out.data(), 3);
  REQUIRE(run(fieldKinds(), "StateFields", v) == 1);
  for (unsigned i = 0; i < 3; ++i)
    REQUIRE(out[i] == 0.5f * static_cast<float>(weights[offsets[i]]) + 2 - 3 + 1 + 0.25f + 1000 + 100);
}

TEST_CASE("codelets_library: a MultiVertex divides the work between the workers", "[codelets][run]") {
  VertexObject v(fieldKinds().type("MultiScale<float>"));
  std::vector<float> data(13);
  for (unsigned i = 0; i < data.size(); ++i)
    data[i] = static_cast<float>(i) + 1;
  const std::vector<float> original = data;
  v.bindVector("data", data.data(), 0);
  v.setState<unsigned>("n", 13);
  v.setState<float>("factor", -2.0f);
  for (unsigned w = 0; w + 1 < 6; ++w) // all but the last worker
    REQUIRE(run(fieldKinds(), "MultiScale<float>", v, w) == 1);
  for (unsigned i = 0; i < data.size(); ++i)
    REQUIRE(data[i] == (i % 6 == 5 ? original[i] : original[i] * -2.0f));
  REQUIRE(run(fieldKinds(), "MultiScale<float>", v, 5) == 1);
  for (unsigned i = 0; i < data.size(); ++i)
    REQUIRE(data[i] == original[i] * -2.0f);
}

TEST_CASE("codelets_library: supervisor, private, inherited, void and failing vertices", "[codelets][run]") {
  {
    VertexObject v(fieldKinds().type("SuperSum"));
    std::vector<float> in = {1, 2, 3.5f};
    float out = 0;
    v.bindVector("in", in.data(), 3);
    v.bindScalar("out", &out);
    REQUIRE(run(fieldKinds(), "SuperSum", v, 3) == 1); // run on every worker, it runs once: for worker 0
    REQUIRE(out == 0);
    REQUIRE(run(fieldKinds(), "SuperSum", v) == 1);
    REQUIRE(out == 6.5f);
  }
  {
    VertexObject v(fieldKinds().type("PrivateFields"));
    std::vector<int> in = {1, 2, 3}, out(3);
    v.bindVector("in", in.data(), 3);
    v.bindVector("out", out.data(), 3);
    v.setState<int>("bias", 10);
    REQUIRE(run(fieldKinds(), "PrivateFields", v) == 1);
    REQUIRE(out == std::vector<int>{11, 12, 13});
  }
  {
    VertexObject v(fieldKinds().type("Derived<float>"));
    std::vector<float> in = {1.5f, -2}, out(2);
    v.bindVector("in", in.data(), 2);
    v.bindVector("out", out.data(), 2);
    REQUIRE(run(fieldKinds(), "Derived<float>", v) == 1);
    REQUIRE(out == std::vector<float>{3, -4});
  }
  {
    VertexObject v(fieldKinds().type("VoidCompute"));
    int out = 0;
    v.bindScalar("out", &out);
    REQUIRE(run(fieldKinds(), "VoidCompute", v) == 1); // void compute() always succeeds
    REQUIRE(out == 42);
  }
  {
    VertexObject v(fieldKinds().type("Fails"));
    int in = -1;
    v.bindScalar("in", &in);
    REQUIRE(run(fieldKinds(), "Fails", v) == 0);
    in = 5;
    REQUIRE(run(fieldKinds(), "Fails", v) == 1);
  }
}

TEST_CASE("codelets_library: printf goes to the library's print sink", "[codelets][run]") {
  VertexObject v(fieldKinds().type("Printer"));
  std::vector<int> in = {1, 2, 3, 10};
  v.bindVector("in", in.data(), 4);
  std::string printed;
  fieldKinds().library->setPrintSink(
      [](void *context, const char *text, std::size_t length) {
        static_cast<std::string *>(context)->append(text, length);
      },
      &printed);
  REQUIRE(run(fieldKinds(), "Printer", v) == 1);
  REQUIRE(run(fieldKinds(), "Printer", v) == 1);
  fieldKinds().library->setPrintSink(nullptr, nullptr);
  REQUIRE(printed == "sum=16\nsum=16\n");
}

/// The binary16 value nearest to x (ties to even), by search over every finite half.
float nearestHalf(double x) {
  double best = 0;
  int bestBits = 0;
  for (int bits = 0; bits < 0x7c00; ++bits) {
    const int e = bits >> 10, m = bits & 0x3ff;
    const double value = e ? std::ldexp(1024.0 + m, e - 25) : std::ldexp(static_cast<double>(m), -24);
    const double d = std::fabs(std::fabs(x) - value), bestD = std::fabs(std::fabs(x) - best);
    if (bits == 0 || d < bestD || (d == bestD && (bits & 1) == 0 && (bestBits & 1))) {
      best = value;
      bestBits = bits;
    }
  }
  return static_cast<float>(x < 0 ? -best : best);
}

std::uint16_t halfBits(float exactHalfValue) {
  for (int bits = 0; bits < 0x10000; ++bits) {
    const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
    if (e == 31)
      continue;
    double value = e ? std::ldexp(1024.0 + m, e - 25) : std::ldexp(static_cast<double>(m), -24);
    if (bits & 0x8000)
      value = -value;
    if (value == exactHalfValue && std::signbit(value) == std::signbit(exactHalfValue))
      return static_cast<std::uint16_t>(bits);
  }
  FAIL("not a half value: " << exactHalfValue);
  return 0;
}

TEST_CASE("codelets_library: half arithmetic and ipudef.h vector types in codelets", "[codelets][run]") {
  {
    VertexObject v(fieldKinds().type("HalfAxpy"));
    const std::vector<float> xs = {1.0f, 0.3330078125f, -2.5f, 1000.0f, 3.0f};
    const std::vector<float> ys = {0.5f, 0.1000976562f, 4.0f, 1.0f, -9.0f};
    const float a = 1.099609375f; // a half
    std::vector<std::uint16_t> x, y;
    for (float f : xs)
      x.push_back(halfBits(f));
    for (float f : ys)
      y.push_back(halfBits(nearestHalf(f)));
    v.bindVector("x", x.data(), 5);
    v.bindVector("y", y.data(), 5);
    v.setState<std::uint16_t>("a", halfBits(a));
    REQUIRE(run(fieldKinds(), "HalfAxpy", v) == 1);
    for (unsigned i = 0; i < 5; ++i) {
      // Each operation is done in float and rounded to half.
      const float product = nearestHalf(static_cast<double>(a) * xs[i]);
      const float expected = nearestHalf(static_cast<float>(product + nearestHalf(ys[i])));
      INFO(i);
      REQUIRE(y[i] == halfBits(expected));
    }
  }
  {
    VertexObject v(fieldKinds().type("VectorTypes"));
    alignas(8) float in[4] = {1, -2, 3.5f, 8};
    alignas(8) float out[4] = {};
    alignas(8) std::uint16_t hin[8], hout[8] = {};
    const float hvalues[8] = {1, 2, 3, 0.5f, -1, 100, 0.25f, 1024};
    for (int i = 0; i < 8; ++i)
      hin[i] = halfBits(hvalues[i]);
    v.bindVector("in", in, 0);
    v.bindVector("out", out, 0);
    v.bindVector("hin", hin, 0);
    v.bindVector("hout", hout, 0);
    v.setState<unsigned>("pairs", 2);
    v.setState<float>("scale", 3.0f);
    REQUIRE(run(fieldKinds(), "VectorTypes", v) == 1);
    for (int i = 0; i < 4; ++i)
      REQUIRE(out[i] == in[i] * 3.0f);
    for (int i = 0; i < 8; ++i)
      REQUIRE(hout[i] == halfBits(nearestHalf(hvalues[i] * 3.0)));
  }
}

TEST_CASE("codelets_library: templated vertices run with their own arguments", "[codelets][run]") {
  {
    VertexObject v(templates().type("ns::Param<float,3,true,corpus::Op::ADD>"));
    std::vector<float> in = {1, 2.5f}, out(2);
    v.bindVector("in", in.data(), 2);
    v.bindVector("out", out.data(), 2);
    REQUIRE(run(templates(), "ns::Param<float,3,true,corpus::Op::ADD>", v) == 1);
    REQUIRE(out == std::vector<float>{4, 5.5f});
  }
  {
    VertexObject v(templates().type("ns::Param<unsigned int,7,false,corpus::Op::MUL>"));
    std::vector<unsigned> in = {1, 9}, out(2);
    v.bindVector("in", in.data(), 2);
    v.bindVector("out", out.data(), 2);
    REQUIRE(run(templates(), "ns::Param<unsigned int,7,false,corpus::Op::MUL>", v) == 1);
    REQUIRE(out == in); // disabled
  }
  {
    VertexObject v(templates().type("ns::Param<int,2,true,corpus::Op::MUL>"));
    std::vector<int> in = {-3, 9}, out(2);
    v.bindVector("in", in.data(), 2);
    v.bindVector("out", out.data(), 2);
    REQUIRE(run(templates(), "ns::Param<int,2,true,corpus::Op::MUL>", v) == 1);
    REQUIRE(out == std::vector<int>{-6, 18});
  }
  {
    VertexObject v(templates().type("ns::Param<half,1,true,corpus::Op::ADD>"));
    std::vector<std::uint16_t> in = {halfBits(2048.0f), halfBits(0.5f)}, out(2);
    v.bindVector("in", in.data(), 2);
    v.bindVector("out", out.data(), 2);
    REQUIRE(run(templates(), "ns::Param<half,1,true,corpus::Op::ADD>", v) == 1);
    REQUIRE(out[0] == halfBits(2048.0f)); // 2049 rounds to even
    REQUIRE(out[1] == halfBits(1.5f));
  }
  {
    VertexObject v(templates().type("ns::inner::Apply<corpus::Twice,unsigned short>"));
    unsigned short in = 1234, out = 0;
    v.bindScalar("in", &in);
    v.bindScalar("out", &out);
    REQUIRE(run(templates(), "ns::inner::Apply<corpus::Twice,unsigned short>", v) == 1);
    REQUIRE(out == 2468);
  }
  {
    VertexObject v(templates().type("Plain"));
    int out = 0;
    v.bindScalar("out", &out);
    REQUIRE(run(templates(), "Plain", v) == 1);
    REQUIRE(out == 3);
  }
}

// ---- the library file and the cache ----------------------------------------------------

TEST_CASE("codelets_library: the .gp file round-trips and loads once per process", "[codelets][gp]") {
  const CompiledCorpus &c = fieldKinds();
  const GpContents gp = decodeGp(c.compiled.gpBytes.data(), c.compiled.gpBytes.size(), "corpus");
  REQUIRE(metadataToJson(gp.metadata) == metadataToJson(c.compiled.metadata));
  REQUIRE(gp.metadata.sources == std::vector<std::string>{codelet_test::corpusFile("FieldKinds.cpp")});
  REQUIRE(metadataToJson(metadataFromJson(metadataToJson(gp.metadata), "x")) == metadataToJson(gp.metadata));
  REQUIRE(&loadVertexLibrary(c.compiled.contentHash, c.compiled.gpBytes) == c.library);
  REQUIRE(c.library->find("NoSuchVertex") == nullptr);
  // What the library says about itself is what the metadata says.
  LibraryMetadata described = c.compiled.metadata;
  described.vertexTypes = c.library->describe();
  REQUIRE(metadataToJson(described) == metadataToJson(c.compiled.metadata));
}

TEST_CASE("codelets_library: only libraries calling a builtin carry the builtins' table", "[codelets][gp]") {
  // The executor keeps the IPU builtins' per-call record only for vertices whose library may
  // call one (docs/codelets.md); the library says so by exporting the table's setter, which
  // the entry unit defines only when some object calls a builtin.
  const CompiledCorpus &plain = fieldKinds();
  const CompiledCorpus &calling = corpus("Builtins.cpp");
  for (const auto &t : plain.compiled.metadata.vertexTypes) {
    INFO(t.name);
    CHECK_FALSE(plain.library->usesBuiltins(&plain.entry(t.name)));
  }
  CHECK(calling.library->usesBuiltins(&calling.entry("TileOfVertex")));
}

TEST_CASE("codelets_library: the link flags read the objects' symbol tables, not strings in their data",
          "[codelets][gp]") {
  // The entry unit defines the counting slot, the write check's range setter and the builtins'
  // table only for objects whose symbol tables name them (defined or referenced): a string
  // equal to each name, in a data section, turns none of them on (it did when the linker
  // searched the objects' bytes).
  char dirTemplate[] = "/tmp/aspen-codelet-linkflags-XXXXXX";
  const std::string dir = ::mkdtemp(dirTemplate);
  const std::string source = dir + "/naming.cpp";
  std::ofstream(source)
      << "#include <poplar/Vertex.hpp>\n"
         "__attribute__((used)) static const char names[][40] = {\"aspen_codelet_cycle_offset\",\n"
         "  \"aspen_codelet_write_checked\", \"aspen_codelet_write_range_offset\",\n"
         "  \"aspen_codelet_runtime\", \"aspen_codelet_scount\"};\n"
         "extern \"C\" __attribute__((used)) const char *aspenName(unsigned i) { return names[i]; }\n"
         "class Naming : public poplar::Vertex {\npublic:\n  poplar::Output<int> out;\n"
         "  bool compute() { *out = 1; return true; }\n};\n";
  auto load = [&](const CompiledCodelets &lib) -> const LoadedVertexLibrary & {
    return loadVertexLibrary(lib.contentHash, lib.gpBytes, "naming.cpp");
  };
  // Compiled without counting (so neither counted nor checked): the names are only strings.
  const char *was = std::getenv("ASPEN_CYCLE_COUNT");
  const std::string saved = was ? was : "";
  ::setenv("ASPEN_CYCLE_COUNT", "0", 1);
  const CompiledCodelets off = compileCodelets({source}, parseCodeletFlags("-O2"));
  if (was)
    ::setenv("ASPEN_CYCLE_COUNT", saved.c_str(), 1);
  else
    ::unsetenv("ASPEN_CYCLE_COUNT");
  const LoadedVertexLibrary &plain = load(off);
  const AspenVertexEntry *e = plain.find("Naming");
  REQUIRE(e != nullptr);
  CHECK_FALSE(plain.countsCycles(e));
  CHECK_FALSE(plain.checksWrites(e));
  CHECK_FALSE(plain.usesBuiltins(e));
  // Compiled as usual: counted and checked as any library is, still no builtins' table.
  const CompiledCodelets on = compileCodelets({source}, parseCodeletFlags("-O2"));
  const LoadedVertexLibrary &usual = load(on);
  const AspenVertexEntry *u = usual.find("Naming");
  REQUIRE(u != nullptr);
  CHECK_FALSE(usual.usesBuiltins(u));
  const CompiledCorpus &reference = fieldKinds();
  const AspenVertexEntry &r = reference.entry(reference.compiled.metadata.vertexTypes.front().name);
  CHECK(usual.countsCycles(u) == reference.library->countsCycles(&r));
  CHECK(usual.checksWrites(u) == reference.library->checksWrites(&r));
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("codelets_library: each object's own declaration decides whether its vertices read inputs only",
          "[codelets][gp]") {
  // docs/exchange.md, "Reading in place": a vertex type may read exchanged data in place only
  // when the object that defines it defines `aspen_codelet_inputs_read_only` (non-zero), as
  // its symbol table says when the library is linked. Not: another object of the same
  // library, the name in a string literal or a comment, a definition of 0.
  char dirTemplate[] = "/tmp/aspen-codelet-readonly-XXXXXX";
  const std::string dir = ::mkdtemp(dirTemplate);
  auto write = [&](const std::string &name, const std::string &text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  };
  auto vertex = [](const std::string &name) {
    return "class " + name +
           " : public poplar::Vertex {\npublic:\n  poplar::Input<poplar::Vector<float>> in;\n"
           "  poplar::Output<float> out;\n  bool compute() { *out = in[0]; return true; }\n};\n";
  };
  const std::string head = "#include <poplar/Vertex.hpp>\n";
  const std::string declares = "extern \"C\" __attribute__((weak, used, visibility(\"default\"))) const int "
                               "aspen_codelet_inputs_read_only = 1;\n";
  const std::string a = write("a.cpp", head + declares + vertex("Declaring"));
  const std::string b =
      write("b.cpp", head + "float linkedHelper(float x) { return x; }\n" + vertex("Plain"));
  const std::string c = write(
      "c.cpp", head +
                   "// aspen_codelet_inputs_read_only is only named here, in a comment and a string:\n"
                   "__attribute__((used)) static const char note[] = \"aspen_codelet_inputs_read_only\";\n"
                   "extern \"C\" __attribute__((used)) const char *aspenNote() { return note; }\n" +
                   vertex("Mentioning"));
  const std::string d =
      write("d.cpp", head +
                         "extern \"C\" __attribute__((weak, used, visibility(\"default\"))) "
                         "const int aspen_codelet_inputs_read_only = 0;\n" +
                         vertex("DeclaringZero"));
  const CodeletFlags flags = parseCodeletFlags("-O2");
  auto readOnly = [](const CompiledCodelets &lib, const std::string &name) {
    const LoadedVertexLibrary &loaded = loadVertexLibrary(lib.contentHash, lib.gpBytes, name);
    const AspenVertexEntry *e = loaded.find(name);
    REQUIRE(e != nullptr);
    for (const auto &t : lib.metadata.vertexTypes)
      if (t.name == name) {
        // The metadata says what the entry's flag says (checked when the library loads).
        CHECK(t.inputsReadOnly == ((e->flags & ASPEN_VERTEX_INPUTS_READ_ONLY) != 0));
        return t.inputsReadOnly;
      }
    FAIL("no vertex type " << name);
    return false;
  };
  // One library of four sources, one object each.
  const CompiledCodelets all = compileCodelets({a, b, c, d}, flags);
  CHECK(readOnly(all, "Declaring"));
  CHECK_FALSE(readOnly(all, "Plain"));
  CHECK_FALSE(readOnly(all, "Mentioning"));
  CHECK_FALSE(readOnly(all, "DeclaringZero"));
  // Libraries compiled apart and linked into one image (popc with .gp inputs,
  // Graph::addCodelets of libraries that call each other): the same, vertex by vertex.
  const CompiledCodelets one = compileCodelets({a}, flags), two = compileCodelets({b}, flags);
  CHECK(readOnly(one, "Declaring"));
  const CompiledCodelets linked = linkCodeletLibraries({{one.gpBytes.data(), one.gpBytes.size(), "one.gp"},
                                                        {two.gpBytes.data(), two.gpBytes.size(), "two.gp"}},
                                                       {});
  CHECK(readOnly(linked, "Declaring"));
  CHECK_FALSE(readOnly(linked, "Plain"));
  // The metadata round-trips the flag.
  const LibraryMetadata back = metadataFromJson(metadataToJson(linked.metadata), "linked");
  CHECK(metadataToJson(back) == metadataToJson(linked.metadata));
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("codelets_library: compiling again is a cache hit", "[codelets][cache]") {
  const CompiledCorpus &c = templates();
  const auto again = compileCodelets({codelet_test::corpusFile("Templates.cpp")},
                                     parseCodeletFlags(codelet_test::corpusFlags()));
  REQUIRE(again.fromCache);
  REQUIRE(again.contentHash == c.compiled.contentHash);
  REQUIRE(again.gpBytes == c.compiled.gpBytes);
}

TEST_CASE("codelets_library: the cache key covers sources, local headers, flags and compiler",
          "[codelets][cache]") {
  char dirTemplate[] = "/tmp/aspen-codelet-key-XXXXXX";
  const std::string dir = ::mkdtemp(dirTemplate);
  auto write = [&](const std::string &name, const std::string &text) {
    std::ofstream(dir + "/" + name) << text;
  };
  write("k.cpp", "#include \"local.hpp\"\nint f() { return X; }\n");
  write("local.hpp", "#define X 1\n");
  CodeletCacheKeyInput input{{dir + "/k.cpp"}, {"-O2"}, {}, "g++"};
  const std::string base = codeletCacheKey(input);
  REQUIRE(codeletCacheKey(input) == base);
  write("local.hpp", "#define X 2\n");
  const std::string headerChanged = codeletCacheKey(input);
  REQUIRE(headerChanged != base);
  input.compilerArgs = {"-O3"};
  REQUIRE(codeletCacheKey(input) != headerChanged);
  input.compilerArgs = {"-O2"};
  write("k.cpp", "#include \"local.hpp\"\nint f() { return X + 1; }\n");
  REQUIRE(codeletCacheKey(input) != headerChanged);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("codelets_library: compile flags are parsed as popc takes them", "[codelets][flags]") {
  const auto f =
      parseCodeletFlags("-O3 -g -I inc -Iother '-DNAME=a b' -U OLD -std=c++14 --target ipu2,cpu -ffast-math");
  REQUIRE(f.includeDirs.size() == 2);
  REQUIRE(f.includeDirs[0].front() == '/'); // made absolute
  REQUIRE(f.includeDirs[0].substr(f.includeDirs[0].size() - 4) == "/inc");
  REQUIRE(f.targets == std::vector<std::string>{"ipu2", "cpu"});
  const std::vector<std::string> clang = f.clangArgs;
  REQUIRE(std::find(clang.begin(), clang.end(), "-DNAME=a b") != clang.end());
  REQUIRE(std::find(clang.begin(), clang.end(), "-UOLD") != clang.end());
  REQUIRE(std::find(clang.begin(), clang.end(), "-std=c++14") != clang.end());
  REQUIRE(std::find(clang.begin(), clang.end(), "-O3") == clang.end());
  REQUIRE(std::find(f.compilerArgs.begin(), f.compilerArgs.end(), "-O3") != f.compilerArgs.end());
  REQUIRE(std::find(f.compilerArgs.begin(), f.compilerArgs.end(), "-ffast-math") != f.compilerArgs.end());
  REQUIRE_THROWS_AS(parseCodeletFlags("-O2 stray.cpp"), poplar::graph_object_creation_error);
}

} // namespace
