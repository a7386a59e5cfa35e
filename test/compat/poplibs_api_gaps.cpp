// Copyright (c) Aspen contributors.
// Issue 24 item 2: Poplar API PopLibs @ 7eac0f26 uses that building it on Aspen found missing,
// each written as PopLibs writes it, with its result checked against host values:
//  - addConstant(type, {}, value, {di}) is not ambiguous with the fp8 metadata overloads;
//  - addConstant(type, shape, const void *, const TypeTraits &, bool broadcast, di);
//  - Graph::isConstant(VariableRef);
//  - clone(metadata, t, di, method), and t.getMetadata() of a float tensor is an empty Tensor
//    that addVariable, addConstant and clone accept;
//  - pvti::createJsonMetadata;
//  - VertexIntrospector: getInitialValues of an edge connected to a constant;
//  - dumpProgram(graph, program, out): the program tree as JSON.
#include "ir/GraphData.hpp"

#include <poplar/DebugContext.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Quarter.hpp>
#include <poplar/TypeConversion.hpp>
#include <poplar/TypeTraits.hpp>
#include <poplar/VertexIntrospector.hpp>
#include <pvti/pvti.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/lexical_cast.hpp>

// A program's own stream operators for the fp8 format, written as PopLibs' test support
// library writes them (in namespace std); see the "own stream operators" case below.
namespace std {
inline std::ostream &operator<<(std::ostream &os, poplar::QuarterMetadata::Format format) {
  return os << (format == poplar::QuarterMetadata::Format::F143 ? "F143" : "F152");
}
inline std::istream &operator>>(std::istream &is, poplar::QuarterMetadata::Format &format) {
  std::string word;
  is >> word;
  if (word == "F143")
    format = poplar::QuarterMetadata::Format::F143;
  else if (word == "F152")
    format = poplar::QuarterMetadata::Format::F152;
  else
    is.setstate(std::ios::failbit);
  return is;
}
} // namespace std

using namespace poplar;

namespace {

// The values of FLOAT tensors, read back through an engine (copied to host-readable variables).
std::vector<std::vector<float>> readBack(Graph &graph, Device &device, const std::vector<Tensor> &ts) {
  program::Sequence prog;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    Tensor out = graph.addVariable(FLOAT, {ts[i].numElements()}, "out" + std::to_string(i));
    graph.setTileMapping(out, 0);
    graph.setTileMapping(ts[i], 0);
    prog.add(program::Copy(ts[i].flatten(), out));
    graph.createHostRead("read" + std::to_string(i), out);
  }
  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  std::vector<std::vector<float>> values;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    values.emplace_back(ts[i].numElements());
    engine.readTensor("read" + std::to_string(i), values.back().data(),
                      values.back().data() + values.back().size());
  }
  return values;
}

} // namespace

TEST_CASE("issue 24: constants as PopLibs writes them", "[compat][poplibs]") {
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  const DebugNameAndId di("op");
  const float scale = 0.25f;
  // Braced debug contexts next to a braced empty shape: unambiguous (7 PopLibs sources).
  Tensor a = graph.addConstant(FLOAT, {}, scale, {di, "scaleTensor"});
  Tensor b = graph.addConstant(FLOAT, {}, 1.0f / 8, {di});
  Tensor c = graph.addConstant(FLOAT, {2}, 3, {di});
  // Expression constants: host data described by TypeTraits (popops' map).
  const float x = 1.5f;
  const int ints[3] = {-4, 7, 9};
  const std::uint8_t flag = 1;
  Tensor d = graph.addConstant(FLOAT, {}, &x, TypeTraits::make<float>(), false, {di, "<const>"});
  Tensor e = graph.addConstant(FLOAT, {3}, ints, TypeTraits::make<int>(), false, {di});
  Tensor f = graph.addConstant(FLOAT, {2, 2}, &x, TypeTraits::make<float>(), true, {di});
  Tensor g = graph.addConstant(FLOAT, {1}, &flag, TypeTraits::make<bool>(), false, {di});
  const auto values = readBack(graph, device, {a, b, c, d, e, f, g});
  CHECK(values[0] == std::vector<float>{0.25f});
  CHECK(values[1] == std::vector<float>{0.125f});
  CHECK(values[2] == std::vector<float>{3.0f, 3.0f});
  CHECK(values[3] == std::vector<float>{1.5f});
  CHECK(values[4] == std::vector<float>{-4.0f, 7.0f, 9.0f});
  CHECK(values[5] == std::vector<float>(4, 1.5f));
  CHECK(values[6] == std::vector<float>{1.0f});
}

TEST_CASE("issue 24: isConstant of a VariableRef", "[compat][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  Tensor v = graph.addVariable(FLOAT, {4}, "v");
  Tensor k = graph.addConstant(FLOAT, {2}, 1.0f);
  Tensor mixed = concat(v.slice(0, 2), k);
  // As poputil's TensorUseTracker walks a tensor's variables.
  std::vector<bool> constant;
  for (const auto &region : mixed.getVarRegions())
    constant.push_back(graph.isConstant(region.var));
  CHECK(constant == std::vector<bool>{false, true});
  CHECK_FALSE(graph.isConstant(mixed));
}

TEST_CASE("issue 24: metadata of a float tensor is empty and accepted", "[compat][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  Tensor t = graph.addVariable(FLOAT, {2, 3}, "t");
  graph.setTileMapping(t, 1);
  const Tensor md = t.getMetadata();
  CHECK_FALSE(md.valid());
  // poplin's returnClone path and popops' Rearrange, written for any element type.
  Tensor c = graph.clone(t.getMetadata(), t, {DebugNameAndId("conv")},
                         TensorCloneMethod::GATHER_AND_PRESERVE_TILE_ORDER_AND_ALIASES);
  CHECK(c.shape() == t.shape());
  CHECK(c.elementType() == FLOAT);
  CHECK(graph.getTileMapping(c) == graph.getTileMapping(t));
  Tensor c2 = graph.clone(HALF, t.getMetadata(), t, {"c2"});
  CHECK(c2.elementType() == HALF);
  Tensor v = graph.addVariable(t.elementType(), t.getMetadata(), {4}, {"pad"});
  CHECK(v.elementType() == FLOAT);
  CHECK(v.shape() == std::vector<std::size_t>{4});
  Tensor k = graph.addConstant(t.elementType(), t.getMetadata(), {3}, 0, {"zeros"});
  CHECK(graph.isConstant(k));
  CHECK(k.numElements() == 3);
  // A quarter tensor's metadata is still its own.
  Tensor q = graph.addVariable(QUARTER, {4}, "q");
  CHECK(q.getMetadata().valid());
  CHECK(q.getMetadata().elementType() == QUARTER_METADATA);
  Tensor qc = graph.clone(q.getMetadata(), q, {"qc"});
  CHECK(qc.elementType() == QUARTER);
  CHECK(qc.getMetadata().getVarRegions()[0].var == q.getMetadata().getVarRegions()[0].var);
}

TEST_CASE("issue 24: pvti::createJsonMetadata", "[compat][poplibs]") {
  const pvti::Metadata md = pvti::createJsonMetadata(R"({"name": "conv/1"})");
  CHECK(md.json() == R"({"name": "conv/1"})");
  // As poplibs_support's Tracepoint takes it.
  const pvti::Metadata copy = pvti::Metadata(pvti::createJsonMetadata("{}"));
  CHECK_FALSE(copy.empty());
}

TEST_CASE("issue 24: initial values of an edge connected to a constant", "[compat][poplibs]") {
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  graph.addCodelets(std::string(root) + "/test/compat/vertices/api_scalar_vertices.cpp");
  ComputeSet cs = graph.addComputeSet("cs");
  Tensor in = graph.addConstant<float>(FLOAT, {5}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}, "in");
  Tensor out = graph.addVariable(FLOAT, {3}, "out");
  Tensor scale = graph.addConstant(FLOAT, {}, 0.5f, "scale");
  Tensor offset = graph.addVariable(UNSIGNED_INT, {}, "offset");
  graph.setTileMapping(in, 0);
  graph.setTileMapping(out, 0);
  graph.setTileMapping(scale, 0);
  graph.setTileMapping(offset, 0);
  // A strided view: elements 4, 2, 0 of `in`.
  VertexRef v = graph.addVertex(cs, "ScaleOffset",
                                {{"in", in.slice(0, 5).subSample(2, 0).reverse(0)},
                                 {"out", out},
                                 {"scale", scale},
                                 {"offset", offset}});
  const VertexIntrospector vi(&graph.getImpl(), v.getId());
  const Target &target = graph.getTarget();
  CHECK(vi.getFieldInfo("in").getInitialValues<float>(target) == std::vector<float>{5.0f, 3.0f, 1.0f});
  CHECK(vi.getFieldInfo("in").size() == 3);
  CHECK(vi.getFieldInfo("scale").getInitialValue<float>(target) == 0.5f);
  // A variable with no initial value reads as zeros, one per element.
  CHECK(vi.getFieldInfo("out").getInitialValues<float>(target) == std::vector<float>(3, 0.0f));
  CHECK(vi.getFieldInfo("offset").getInitialValue<unsigned>(target) == 0u);
}

TEST_CASE("issue 24: a program's own stream operators for QuarterMetadata::Format are unambiguous",
          "[compat][poplibs]") {
  // PopLibs' tests declare po::value<QuarterMetadata::Format>(...) for --fp8-format=F143, with
  // the operators their poplibs_test/Util.hpp defines in namespace std (as this file does
  // above); program_options converts through boost::lexical_cast. Poplar declares none for
  // Format, so these are the only candidates; Aspen's own made both directions ambiguous and
  // 141 PopLibs tests did not compile.
  for (const auto format : {QuarterMetadata::Format::F143, QuarterMetadata::Format::F152}) {
    const std::string text = boost::lexical_cast<std::string>(format);
    CHECK(text == (format == QuarterMetadata::Format::F143 ? "F143" : "F152"));
    CHECK(boost::lexical_cast<QuarterMetadata::Format>(text) == format);
  }
  CHECK_THROWS_AS(boost::lexical_cast<QuarterMetadata::Format>(std::string("F999")), boost::bad_lexical_cast);
  // QuarterMetadata itself still prints.
  std::ostringstream os;
  os << QuarterMetadata(QuarterMetadata::Format::F152, -3);
  CHECK(os.str() == "F152 scale -3");
}

// PopLibs' libraries each link poplibs_support's channels (tracePopops, ...) and export them, so
// the dynamic linker makes one object of each for all of them; every library's exit then
// destroys it. Poplar's TraceChannel is trivially destructible, so that is harmless; Aspen's
// was not (a std::string name) and every PopLibs program died of a double free at exit.
static_assert(std::is_trivially_destructible<pvti::TraceChannel>::value,
              "pvti::TraceChannel must be trivially destructible, as Poplar's is");

TEST_CASE("issue 24: a pvti::TraceChannel is a name, as PopLibs defines its channels", "[compat][poplibs]") {
  static pvti::TraceChannel channel = {"poplibs_compat"};
  CHECK(std::string(channel.name) == "poplibs_compat");
  pvti::Tracepoint::begin(&channel, "step");
  pvti::Tracepoint::end(&channel, "step");
}

TEST_CASE("issue 24: getSortedContiguousRegions reports each interval's first occurrence in aliases",
          "[compat][poplibs]") {
  // PopLibs' broadcast analysis (popops' binary ops) and poputil::cloneAndExpandAliasing read
  // aliases[i] for each interval of the flattened result: an interval whose lower() differs
  // from aliases[i] aliases an earlier one.
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  Tensor a = graph.addVariable(FLOAT, {2}, "a");
  Tensor b = graph.addVariable(FLOAT, {2}, "b");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 0);
  const Tensor t = concat({a, b, a}); // positions 0-1 a, 2-3 b, 4-5 a again
  std::vector<std::size_t> aliases;
  auto regions = graph.getSortedContiguousRegions(t, {{0, 6}}, false, &aliases);
  REQUIRE(regions.size() == 3);
  CHECK(regions[0] == std::vector<Interval>{{0, 2}});
  CHECK(regions[1] == std::vector<Interval>{{4, 6}});
  CHECK(regions[2] == std::vector<Interval>{{2, 4}});
  CHECK(aliases == std::vector<std::size_t>{0, 0, 2}); // [4, 6) holds a[0..1], first at 0

  // A scalar broadcast: every element is the same one, first at position 0.
  Tensor s = graph.addVariable(FLOAT, {1}, "s");
  graph.setTileMapping(s, 1);
  regions = graph.getSortedContiguousRegions(s.broadcast(4, 0), {{0, 4}}, false, &aliases);
  REQUIRE(regions.size() == 4);
  CHECK(aliases == std::vector<std::size_t>(4, 0));

  // With the aliased intervals removed, each interval is its own first occurrence.
  regions = graph.getSortedContiguousRegions(t, {{0, 6}}, true, &aliases);
  std::vector<std::size_t> lowers;
  for (const auto &sequence : regions)
    for (const Interval &i : sequence)
      lowers.push_back(i.begin());
  CHECK(aliases == lowers);
  CHECK(lowers.size() == 2);
}

namespace {

/// The number getSortedContiguousRegions' `aliases` gives each position of `regions`:
/// the entry of the returned interval holding it, plus its offset in that interval.
std::vector<std::size_t> aliasNumbers(const Graph &graph, const Tensor &t) {
  std::vector<std::size_t> aliases;
  const auto groups = graph.getSortedContiguousRegions(t, {{0, t.numElements()}}, false, &aliases);
  std::vector<std::size_t> number(t.numElements(), SIZE_MAX);
  std::size_t i = 0;
  for (const auto &group : groups)
    for (const auto &interval : group) {
      REQUIRE(i < aliases.size());
      for (std::size_t p = interval.begin(); p < interval.end(); ++p)
        number[p] = aliases[i] + (p - interval.begin());
      ++i;
    }
  CHECK(i == aliases.size()); // one entry for each returned interval
  return number;
}

} // namespace

TEST_CASE("issue 24: getSortedContiguousRegions numbers aliased elements alike", "[compat][poplibs]") {
  // PopLibs' broadcast analysis (popops::mapInPlace of a broadcast operand) reads
  // `aliases` from worker threads and indexes it once per returned interval.
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor v = graph.addVariable(FLOAT, {3}, "v");
  graph.setTileMapping(v, 0);
  // Position p of each view holds element element[p] of v.
  const std::vector<std::pair<Tensor, std::vector<int>>> cases = {
      {v.reshape({3, 1}).broadcast(2, 1).flatten(), {0, 0, 1, 1, 2, 2}},
      {v.broadcast(2, 0), {0, 1, 2, 0, 1, 2}},
      {concat(v.slice(1, 3), v), {1, 2, 0, 1, 2}},
      {v.reverse(0), {2, 1, 0}},
  };
  for (const auto &[t, element] : cases) {
    INFO("view " << t.shortString());
    const auto number = aliasNumbers(graph, t);
    for (std::size_t p = 0; p < number.size(); ++p)
      for (std::size_t q = 0; q < number.size(); ++q)
        CHECK((number[p] == number[q]) == (element[p] == element[q]));
  }
  // With no aliases asked for, nothing changes.
  CHECK(graph.getSortedContiguousRegions(v, {{0, 3}}).size() == 1);
}

TEST_CASE("issue 24: Poplar's built-in poplar_rt transpose vertices, added by name", "[compat][poplibs]") {
  // popops' rearrangements (regroup, partialTranspose) add these without adding codelets.
  IPUModel model;
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  program::Sequence prog;
  ComputeSet cs = graph.addComputeSet("transposes");
  struct Case {
    std::string vertex;
    unsigned rows, cols, matrices;
  };
  // One Transpose2D over a list of two 3 x 5 matrices (one edge each); the 1-D forms over
  // matrices back to back, rows and columns counted in blocks of 4 (8 for 1-byte types).
  const std::vector<Case> cases = {{"poplar_rt::Transpose2D<int>", 3, 5, 2},
                                   {"poplar_rt::Transpose1D<int>", 4, 8, 3},
                                   {"poplar_rt::Transpose1DSingleWorker<int>", 8, 4, 2},
                                   {"poplar_rt::SplitTranspose1D<int>", 4, 4, 2}};
  std::vector<Tensor> ins, outs;
  for (const Case &c : cases) {
    const std::size_t n = std::size_t(c.rows) * c.cols * c.matrices;
    std::vector<int> values(n);
    for (std::size_t i = 0; i < n; ++i)
      values[i] = static_cast<int>(i * 7 % 101);
    Tensor in = graph.addConstant<int>(INT, {n}, values, c.vertex + "/in");
    Tensor out = graph.addVariable(INT, {n}, c.vertex + "/out");
    graph.setTileMapping(in, 1);
    graph.setTileMapping(out, 1);
    VertexRef v = graph.addVertex(cs, c.vertex);
    graph.setTileMapping(v, 1);
    if (c.vertex.find("Transpose2D") != std::string::npos) {
      const std::size_t m = std::size_t(c.rows) * c.cols;
      graph.connect(v["src"], std::vector<Tensor>{in.slice(0, m), in.slice(m, 2 * m)});
      graph.connect(v["dst"], std::vector<Tensor>{out.slice(0, m), out.slice(m, 2 * m)});
      graph.setInitialValue(v["numSrcRows"], c.rows);
      graph.setInitialValue(v["numSrcColumns"], c.cols);
    } else {
      graph.connect(v["src"], in);
      graph.connect(v["dst"], out);
      graph.setInitialValue(v["numSrcRowsD4Or8"], c.rows / 4);
      graph.setInitialValue(v["numSrcColumnsD4Or8"], c.cols / 4);
      if (c.vertex.find("SingleWorker") != std::string::npos) {
        graph.setInitialValue(v["numTranspositionsM1"], c.matrices - 1);
      } else if (c.vertex.find("Split") != std::string::npos) {
        Tensor workList = graph.addConstant<unsigned short>(UNSIGNED_SHORT, {2}, {0, 1}, "workList");
        graph.setTileMapping(workList, 1);
        graph.connect(v["workList"], workList);
      } else {
        graph.setInitialValue(v["numTranspositions"], 1u);
        graph.setInitialValue(v["workerCount"], c.matrices);
      }
    }
    ins.push_back(in);
    outs.push_back(out);
    graph.createHostRead(c.vertex + "/read", out);
  }
  prog.add(program::Execute(cs));
  Engine engine(graph, prog);
  engine.load(device);
  engine.run(0);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const Case &c = cases[k];
    INFO(c.vertex);
    const std::size_t n = std::size_t(c.rows) * c.cols * c.matrices;
    std::vector<int> got(n);
    engine.readTensor(c.vertex + "/read", got.data(), got.data() + n);
    for (std::size_t m = 0; m < c.matrices; ++m)
      for (unsigned r = 0; r < c.rows; ++r)
        for (unsigned col = 0; col < c.cols; ++col) {
          const std::size_t base = m * c.rows * c.cols;
          CHECK(got[base + col * c.rows + r] == static_cast<int>((base + r * c.cols + col) * 7 % 101));
        }
  }
  // A name in the namespace that Poplar does not have is still an unknown vertex type.
  CHECK_THROWS_AS(graph.addVertex(cs, "poplar_rt::NoSuchVertex<float>"), unknown_vertex_type);
}

TEST_CASE("issue 24: dumpProgram writes a program's tree as JSON", "[compat][poplibs]") {
  // PopLibs' ReduceEdgeCases reads dumpProgram's text to see whether a reduction
  // needed a Copy or an Execute; the dump names each program's kind.
  Graph graph(Target::createIPUTarget(1, 2, "ipu2"));
  Tensor a = graph.addVariable(FLOAT, {4}, "a");
  Tensor b = graph.addVariable(FLOAT, {4}, "b");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 1);
  ComputeSet cs = graph.addComputeSet("work");
  program::Sequence body({program::Copy(a, b), program::Execute(cs)}, {"body"});
  program::Sequence prog({program::Repeat(3, body)}, {"outer"});

  std::stringstream s;
  dumpProgram(graph, prog, s);
  const nlohmann::json doc = nlohmann::json::parse(s.str());
  CHECK(doc["kind"] == "Sequence");
  CHECK(doc["name"] == "outer");
  REQUIRE(doc["children"].size() == 1);
  const auto &repeat = doc["children"][0];
  CHECK(repeat["kind"] == "Repeat");
  CHECK(repeat["count"] == 3);
  const auto &inner = repeat["children"][0]["children"];
  REQUIRE(inner.size() == 2);
  CHECK(inner[0]["kind"] == "Copy");
  CHECK(inner[1]["kind"] == "Execute");
  CHECK(inner[1]["computeSet"] == cs.getId());

  // An empty sequence has neither kind of work in it.
  std::stringstream empty;
  dumpProgram(graph, program::Sequence(), empty);
  CHECK(empty.str().find("Copy") == std::string::npos);
  CHECK(empty.str().find("Execute") == std::string::npos);
  CHECK(nlohmann::json::parse(empty.str())["kind"] == "Sequence");
}

TEST_CASE("issue 24: clone keeping aliases, as poputil::copyToIpu asks", "[compat][poplibs]") {
  // PopLibs' CopyToIpu and DuplicateTensor clone a broadcast tensor with
  // PRESERVE_ORDER_AND_ALIASES and expect the clone's aliased elements to be one.
  Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
  Tensor v = graph.addVariable(FLOAT, {6}, "v");
  for (unsigned i = 0; i < 6; ++i)
    graph.setTileMapping(v[i], i % 4);
  const Tensor t = concat({v.slice(2, 5), v.broadcast(2, 0), v.slice(0, 2).reverse(0)});
  const std::size_t n = t.numElements();
  for (auto method : {TensorCloneMethod::PRESERVE_ORDER_AND_ALIASES,
                      TensorCloneMethod::GATHER_AND_PRESERVE_TILE_ORDER_AND_ALIASES}) {
    const Tensor c = graph.clone(t, {"c"}, method);
    REQUIRE(c.shape() == t.shape());
    CHECK(c.containsAliases());
    CHECK_FALSE(c.intersectsWith(v));
    // Positions alias in the clone exactly where they alias in t, and each is on t's tile.
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j)
        CHECK(c[i].intersectsWith(c[j]) == t[i].intersectsWith(t[j]));
    }
    CHECK(graph.getTileMapping(c) == graph.getTileMapping(t));
    const auto distinct = graph.getSortedContiguousRegions(c, {{0, n}}, true);
    std::size_t count = 0;
    for (const auto &group : distinct)
      for (const Interval &i : group)
        count += i.size();
    CHECK(count == 6);
  }
  // The methods that do not keep aliases give one element per position.
  const Tensor plain = graph.clone(t, {"plain"});
  CHECK_FALSE(plain.containsAliases());
  CHECK(graph.getTileMapping(plain) == graph.getTileMapping(t));
  // Without aliases the clone is one new variable either way.
  const Tensor w = graph.clone(v, {"w"}, TensorCloneMethod::PRESERVE_ORDER_AND_ALIASES);
  CHECK(w.getVarRegions().size() == 1);
}
