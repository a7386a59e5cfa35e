// Copyright (c) Aspen contributors.
// Issue 15 items 6, 7, 10 and issue 10 items 7, 8, as operator-library code uses them:
// DebugInfo and ProfileValue, DebugNameAndId/DebugContext from a DebugInfo, TypeTraits,
// Target queries, OptionFlags::find, getAsProfileValue, constant queries, VariableRef
// hashing, DataStreamType, shapeToString, hardware seeds, floating-point behaviour and
// the version string.
#include <poplar/CSRFunctions.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/RandomSeed.hpp>
#include <poplar/TensorCloneMethod.hpp>
#include <poplar/TypeTraits.hpp>
#include <poplar/VariableMappingMethod.hpp>
#include <poplar/VectorLayout.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unistd.h>
#include <unordered_set>

namespace {

// Library code subclasses DebugInfo as PopLibs' OpDebugInfo does.
class MyOpDebugInfo : public poplar::DebugInfo {
public:
  MyOpDebugInfo(const poplar::DebugContext &dc, const std::string &api) : poplar::DebugInfo(dc, "mylib") {
    setValue("api", api);
  }
  using poplar::DebugInfo::setValue;
};

poplar::Device smallDevice() {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  return model.createDevice();
}

} // namespace

TEST_CASE("ProfileValue holds Boolean, Number, String, Vector and Map", "[compat][debuginfo]") {
  poplar::ProfileValue::Map m{
      {"shape", poplar::ProfileValue::Vector{2, 3}}, {"inPlace", true}, {"name", "x"}, {"scale", 0.5}};
  const poplar::ProfileValue v(m);
  CHECK(v.type() == poplar::ProfileValue::Type::MAP);
  CHECK(v.size() == 4);
  CHECK(v["shape"][1].asUint() == 3);
  CHECK(v["shape"].sumUint() == 5);
  CHECK(v["inPlace"].asBool());
  CHECK(v["name"].asString() == "x");
  CHECK(v["scale"].asDouble() == 0.5);
  CHECK(v.getOrNull("absent") == nullptr);
  CHECK_THROWS_AS(v["name"].asDouble(), poplar::poplar_error);
  std::stringstream ss;
  poplar::serializeToJSON(ss, v);
  CHECK(nlohmann::json::parse(ss.str()) ==
        nlohmann::json::parse(R"({"inPlace":true,"name":"x","scale":0.5,"shape":[2,3]})"));
  const poplar::ProfileValue copy = v;
  CHECK(copy == v);
}

TEST_CASE("DebugInfo: ids, path names, values and the streamer file", "[compat][debuginfo]") {
  const std::string path = "/tmp/aspen-compat-debuginfo-" + std::to_string(::getpid()) + ".json";
  poplar::DebugInfo::initializeStreamer(path, poplar::DebugSerializationFormat::JSON);
  poplar::DebugId firstId = 0;
  {
    poplar::DebugContext parent("layer1");
    MyOpDebugInfo di({parent, "matmul"}, "myMatMul");
    firstId = di.getId();
    CHECK(di.getId() != 0);
    CHECK(di.getPathName() == "layer1/matmul");
    CHECK(di.setValue("rows", 4));
    CHECK_FALSE(di.setValue("rows", 5)); // first value kept

    const poplar::DebugNameAndId dnai(di, "weights");
    CHECK(dnai.getId() == di.getId());
    CHECK(dnai.getPathName() == "layer1/matmul/weights");
    const poplar::DebugContext fromInfo(di, "out");
    CHECK(fromInfo.getPathName() == "layer1/matmul/out");
    std::ostringstream os;
    os << fromInfo;
    CHECK(os.str() == "layer1/matmul/out");

    MyOpDebugInfo second("other", "x");
    CHECK(second.getId() != di.getId());
  }
  poplar::DebugInfo::closeStreamer();
  std::ifstream in(path);
  REQUIRE(in.good());
  const nlohmann::json doc = nlohmann::json::parse(in);
  std::remove(path.c_str());
  REQUIRE(doc["contexts"].size() == 2);
  const auto &ctx = doc["contexts"][1]; // destroyed second
  CHECK(ctx["id"] == firstId);
  CHECK(ctx["layer"] == "mylib");
  CHECK(ctx["path"] == "layer1/matmul");
  CHECK(ctx["api"] == "myMatMul");
  CHECK(ctx["rows"] == 4);
}

TEST_CASE("TypeTraits, OptionFlags::find and getAsProfileValue", "[compat][types]") {
  const poplar::TypeTraits f = poplar::TypeTraits::make<float>();
  CHECK(f.size == 4);
  CHECK(f.isFloat);
  CHECK_FALSE(f.isIntegral);
  CHECK(f.isSigned);
  const poplar::TypeTraits u = poplar::TypeTraits::make<unsigned short>();
  CHECK(u.size == 2);
  CHECK(u.isIntegral);
  CHECK_FALSE(u.isSigned);
  static_assert(poplar::TypeTraits::isSimpleType<int>(), "int is simple");
  static_assert(!poplar::TypeTraits::isSimpleType<std::string>(), "string is not");

  CHECK(poplar::QUARTER.requiresMetadata());
  CHECK_FALSE(poplar::HALF.requiresMetadata());
  const std::string owned = poplar::StringRef("abc", 2).cloneAsString();
  CHECK(owned == "ab");

  const poplar::OptionFlags opts{{"availableMemoryProportion", "0.3"}, {"partialsType", "half"}};
  auto it = opts.find("partialsType");
  REQUIRE(it != opts.end());
  CHECK(it->second == "half");
  CHECK(opts.find("absent") == opts.end());
  const poplar::ProfileValue pv = poplar::getAsProfileValue(opts);
  CHECK(pv["availableMemoryProportion"].asString() == "0.3");
  CHECK(pv.size() == 2);
}

TEST_CASE("Target queries of operator libraries (ipu2 values)", "[compat][target]") {
  poplar::Device device = smallDevice();
  const poplar::Target &t = device.getTarget();
  const std::size_t floatSize = t.getTypeSize(poplar::FLOAT);
  CHECK(floatSize == 4);
  CHECK(t.getTypeLimitsMaxAs<double>(poplar::HALF) == 65504.0);
  CHECK(t.getTypeLimitsMaxAs<int>(poplar::INT) == std::numeric_limits<int>::max());
  CHECK(t.getTypeLimitsMaxAs<std::uint64_t>(poplar::UNSIGNED_LONGLONG) ==
        std::numeric_limits<std::uint64_t>::max());
  CHECK(t.getTypeLimitsLowestAs<float>(poplar::FLOAT) == std::numeric_limits<float>::lowest());
  CHECK(t.getFp16ConvUnitInputLoadElemsPerCycle() == 4);
  CHECK(t.getFp32ConvUnitInputLoadElemsPerCycle() == 2);
  CHECK(t.getConvUnitInputLoadElemsPerCycle(poplar::HALF) == 4);
  CHECK(t.getWeightsPerConvUnit(poplar::HALF) == 16);
  CHECK(t.getWeightsPerConvUnit(poplar::FLOAT) == 8);
  CHECK(t.getConvUnitCoeffLoadBytesPerCycle() == 16);
  CHECK(t.getConvUnitMaxPipelineDepth(poplar::HALF) == 4);
  CHECK(t.getConvUnitMaxPipelineDepth(poplar::FLOAT) == 4);

  const poplar::Target v = t.createVirtualTarget(1, 2);
  CHECK(v.getTilesPerIPU() == 2);
  CHECK(v.getNumTiles() == 2);
  CHECK((v < t) != (t < v));
  CHECK_FALSE(t < t);
  std::map<poplar::Target, int> byTarget{{t, 1}, {v, 2}};
  CHECK(byTarget.size() == 2);
  CHECK_THROWS_AS(t.createVirtualTarget(1, 5), poplar::poplar_error);
}

TEST_CASE("Tensor and Graph queries of library code", "[compat][graph]") {
  poplar::Device device = smallDevice();
  poplar::Graph graph(device.getTarget());
  poplar::Tensor c = graph.addConstant(poplar::FLOAT, {2, 3}, 1.5f, "c");
  poplar::Tensor mixed = graph.addConstant<int>(poplar::INT, {3}, {1, 2, 1}, "mixed");
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {2, 3}, poplar::VariableMappingMethod::LINEAR, "x");
  graph.setTileMapping(c, 0);
  graph.setTileMapping(mixed, 0);

  CHECK(c.shapeToString() == "[2,3]");
  CHECK(c[0][0].shapeToString() == "[]");
  double value = 0;
  CHECK(c.getConstantValue(&value));
  CHECK(value == 1.5);
  int iv = -7;
  CHECK_FALSE(mixed.getConstantValue(&iv)); // elements differ
  CHECK(iv == -7);
  CHECK(mixed.slice(1, 2).getConstantValue(&iv));
  CHECK(iv == 2);
  float fv = 0;
  CHECK_FALSE(x.getConstantValue(&fv)); // not a constant
  CHECK(graph.isConstant(c));
  CHECK_FALSE(graph.isConstant(x));

  const auto regions = x.slice(1, 2, 1).getVarRegions();
  REQUIRE(regions.size() == 2);
  const poplar::Tensor whole = graph.getVariable(regions[0].var);
  CHECK(whole == x);
  std::unordered_set<poplar::VariableRef> vars{regions[0].var, regions[1].var};
  CHECK(vars.size() == 1);
  CHECK(graph.convertVirtualTileToPhysicalTile(3) == 3);
  poplar::Graph sub = graph.createVirtualGraph(2, 4);
  CHECK(sub.convertVirtualTileToPhysicalTile(1) == 3);

  poplar::DataStream in = graph.addHostToDeviceFIFO("in", poplar::FLOAT, 4);
  poplar::DataStream out = graph.addDeviceToHostFIFO("out", poplar::FLOAT, 4);
  CHECK(in.type() == poplar::DataStreamType::HostToDeviceFIFO);
  CHECK(out.type() == poplar::DataStreamType::DeviceToHostFIFO);
  CHECK(poplar::layout::to_string(poplar::layout::Vector::ShortSpan) == "ShortSpan");
  CHECK(poplar::TensorCloneMethod::CREATE_NEW_ORDER != poplar::TensorCloneMethod::PRESERVE_ORDER_AND_ALIASES);
  // "POPLAR version 3.3.0 (...)": the Poplar API version first.
  CHECK(poplar::versionString().rfind("3.3.0 ", 0) == 0);
}

TEST_CASE("Hardware seeds and floating-point behaviour round-trip", "[compat][graph]") {
  poplar::Device device = smallDevice();
  poplar::Graph graph(device.getTarget());
  poplar::program::Sequence prog;
  poplar::Tensor seeds = poplar::getHwSeeds(graph, prog);
  REQUIRE(seeds.shape() == std::vector<std::size_t>{4, 6, 4});
  std::vector<unsigned> host(4 * 6 * 4);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<unsigned>(i * 2654435761u);
  poplar::Tensor fresh = graph.clone(seeds, "fresh");
  graph.createHostWrite("fresh", fresh);
  poplar::program::Sequence write;
  poplar::setHwSeeds(graph, fresh, write);
  poplar::Tensor back = poplar::getHwSeeds(graph, write);
  graph.createHostRead("seeds", seeds);
  graph.createHostRead("back", back);
  const poplar::FloatingPointBehaviour none(false, false, false, false, false);
  poplar::Tensor saved = poplar::getAndModifyFloatingPointBehaviour(graph, write, none, none);
  poplar::setFloatingPointBehaviour(graph, write, saved);
  CHECK_THROWS_AS(poplar::setFloatingPointBehaviour(graph, write, seeds), poplar::poplar_error);

  poplar::Engine engine(graph, {prog, write});
  engine.load(device);
  engine.run(0);
  std::vector<unsigned> initial(host.size(), 1u);
  engine.readTensor("seeds", initial.data(), initial.data() + initial.size());
  // Before setHwSeeds: the generators' default states (docs/codelets.md): state (tile t,
  // worker w) is two outputs of splitmix64 started at t * 6 + w, as {low, high} words.
  std::vector<unsigned> defaults;
  for (std::uint64_t g = 0; g < 4 * 6; ++g) {
    std::uint64_t x = g;
    for (int k = 0; k < 2; ++k) {
      std::uint64_t z = (x += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      defaults.push_back(static_cast<unsigned>(z));
      defaults.push_back(static_cast<unsigned>(z >> 32));
    }
  }
  CHECK(initial == defaults);
  engine.writeTensor("fresh", host.data(), host.data() + host.size());
  engine.run(1);
  std::vector<unsigned> got(host.size());
  engine.readTensor("back", got.data(), got.data() + got.size());
  CHECK(got == host);
}
