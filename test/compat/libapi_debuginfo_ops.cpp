// Copyright (c) Aspen contributors.
// Issue 15 item 6, library side: Aspen's own libraries record each op's arguments as
// PopLibs does (poputil::PoplibsOpDebugInfo, DI_ARGS, toProfileValue), a library
// author's op does the same, and the profile report carries the DebugInfo tree with the
// compute sets, program steps and variables made under each id.
#include <gcl/Collectives.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popnn/NonLinearity.hpp>
#include <popnn/codelets.hpp>
#include <popops/Cast.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Fill.hpp>
#include <popops/Gather.hpp>
#include <popops/Pad.hpp>
#include <popops/Reduce.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/DebugInfo.hpp>
#include <poputil/TileMapping.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <utility>

using nlohmann::json;

namespace {

// A library author's op, written as PopLibs' ops are.
poplar::Tensor scaleBy(poplar::Graph &graph, const poplar::Tensor &in, float scale, bool inPlace,
                       poplar::program::Sequence &prog, const poplar::DebugContext &debugContext = {}) {
  poputil::PoplibsOpDebugInfo di(debugContext, DI_ARGS(in, scale, inPlace));
  poplar::Tensor out = popops::mul(graph, in, scale, prog, {di, "mul"});
  di.addOutput(out);
  return out;
}

std::string freshDir(const char *tag) {
  const std::string dir = "/tmp/aspen-libapi-" + std::string(tag) + "-" + std::to_string(::getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  return dir;
}

json readReport(const std::string &dir) {
  std::ifstream in(dir + "/profile.json");
  REQUIRE(in.good());
  return json::parse(in);
}

/// The debug context of `id` in the report.
const json &contextOf(const json &report, std::uint64_t id) {
  for (const json &d : report["debugContexts"])
    if (d["id"] == id)
      return d;
  FAIL("no debug context with id " << id);
  static const json none;
  return none;
}

/// The contexts whose layer and api are as given.
std::vector<json> contextsFor(const json &report, const std::string &layer, const std::string &api) {
  std::vector<json> out;
  for (const json &d : report["debugContexts"])
    if (d["layer"] == layer && d["values"].value("api", "") == api)
      out.push_back(d);
  return out;
}

/// Whether `id` is `ancestor` or below it in the report's tree.
bool isUnder(const json &report, std::uint64_t id, std::uint64_t ancestor) {
  for (int depth = 0; id != 0 && depth < 64; ++depth) {
    if (id == ancestor)
      return true;
    id = contextOf(report, id)["parent"].get<std::uint64_t>();
  }
  return false;
}

} // namespace

TEST_CASE("poputil::toProfileValue and DI_ARGS convert as PopLibs does", "[compat][debuginfo]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  const poplar::Tensor t = graph.addVariable(poplar::HALF, {2, 3}, "t");
  const poplar::ComputeSet cs = graph.addComputeSet("cs");
  const std::vector<unsigned> dims{4, 5};
  const std::vector<bool> flags{true, false};
  const poplar::Tensor *none = nullptr;
  const poplar::Tensor *some = &t;
  const poplar::OptionFlags options{{"availableMemoryProportion", "0.3"}};
  const std::string label = "x";
  const double ratio = 0.25;
  const long long big = -(1LL << 40);
  poputil::PoplibsOpDebugInfo di(
      "ctx", DI_ARGS(t, cs, dims, flags, none, some, options, label, ratio, big, poplar::FLOAT));
  const poplar::ProfileValue &args = di.getValues().at("args");
  CHECK(di.getLayer() == "poplibs");
  CHECK(di.getValues().at("api").asString() == __func__); // the calling function
  CHECK(args["t"]["shape"].asString() == "[2, 3]");
  CHECK(args["t"]["type"].asString() == "half");
  CHECK(args["cs"].asUint() == cs.getId());
  CHECK(args["dims"]["0"].asUint() == 4);
  CHECK(args["dims"]["1"].asUint() == 5);
  CHECK(args["flags"]["0"].asBool());
  CHECK_FALSE(args["flags"]["1"].asBool());
  CHECK(args["none"].asString() == "<nullptr>");
  CHECK(args["some"]["shape"].asString() == "[2, 3]");
  CHECK(args["options"]["availableMemoryProportion"].asString() == "0.3");
  CHECK(args["label"].asString() == "x");
  CHECK(args["ratio"].asDouble() == 0.25);
  CHECK(args["big"].asInt() == -(1LL << 40));
  CHECK(args["poplar::FLOAT"].asString() == "float");
  // addOutputs and addOutput.
  di.addOutputs({{"first", poputil::toProfileValue(t)}});
  di.addOutput(t.slice(0, 1, 0));
  CHECK(di.getValues().at("outputs")["first"]["type"].asString() == "half");
  CHECK(di.getValues().at("output")["shape"].asString() == "[1, 3]");
  // An explicit api name, and OpDebugInfo::add.
  poputil::PoplibsOpDebugInfo named({di, "inner"}, {}, "myApi");
  CHECK(named.getValues().at("api").asString() == "myApi");
  CHECK(named.getValues().count("args") == 0); // nothing recorded for no arguments
  CHECK(named.getPathName() == "ctx/inner");
}

TEST_CASE("libops records each op's arguments and the report links elements to them", "[compat][debuginfo]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);

  poplar::program::Sequence prog;
  poplar::DebugInfo layer(poplar::DebugContext("layer1"), "app");
  layer.setValue("batch", 4);
  poplar::Tensor a = graph.addVariable(poplar::FLOAT, {4, 8}, {layer, "a"});
  poplar::Tensor b = graph.addVariable(poplar::FLOAT, {4, 8}, {layer, "b"});
  poplar::Tensor w = graph.addVariable(poplar::FLOAT, {8, 3}, {layer, "w"});
  poputil::mapTensorLinearly(graph, a);
  poputil::mapTensorLinearly(graph, b);
  poputil::mapTensorLinearly(graph, w);
  popops::fill(graph, a, prog, 1.5f, {layer, "fillA"});
  popops::fill(graph, b, prog, 2.0f, {layer, "fillB"});
  popops::fill(graph, w, prog, 0.25f, {layer, "fillW"});
  poplar::Tensor sum = popops::add(graph, a, b, prog, {layer, "sum"});
  poplar::Tensor prod =
      poplin::matMul(graph, sum, w, prog, poplar::FLOAT, {layer, "mm"}, {{"partialsType", "float"}});
  popnn::nonLinearityInPlace(graph, popnn::NonLinearityType::RELU, prod, prog, {layer, "relu"});
  poplar::Tensor red =
      popops::reduce(graph, prod, poplar::FLOAT, {0}, popops::Operation::MAX, prog, {layer, "max"});
  poplar::Tensor scaled = scaleBy(graph, red, 0.5f, false, prog, {layer, "myScale"});
  graph.createHostRead("scaled", scaled);

  const std::string dir = freshDir("ops");
  poplar::Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
  engine.load(device);
  engine.run(0);
  std::vector<float> host(3);
  engine.readTensor("scaled", host.data(), host.data() + host.size());
  // (1.5 + 2) * 0.25 * 8 = 7, relu(7) = 7, max over rows = 7, halved = 3.5.
  CHECK(host == std::vector<float>(3, 3.5f));

  const json report = readReport(dir);
  REQUIRE(report.contains("debugContexts"));

  // The application's own DebugInfo, with its value.
  const json &app = contextOf(report, layer.getId());
  CHECK(app["layer"] == "app");
  CHECK(app["path"] == "layer1");
  CHECK(app["values"]["batch"] == 4);
  CHECK(app["parent"] == 0);

  // popops::add: layer popops, api "add", its operands as passed, a child of the app's DebugInfo.
  const auto adds = contextsFor(report, "popops", "add");
  REQUIRE(adds.size() == 1);
  const json &add = adds[0];
  CHECK(add["path"] == "layer1/sum/add"); // popops::add names its map "add"
  CHECK(add["parent"] == layer.getId());
  CHECK(add["values"]["args"]["ts"]["0"]["shape"] == "[4, 8]");
  CHECK(add["values"]["args"]["ts"]["0"]["type"] == "float");
  CHECK(add["values"]["args"]["ts"]["1"]["shape"] == "[4, 8]");
  CHECK(add["values"]["args"]["expr"].is_string());

  // popops::fill: the value and the tensor.
  std::map<double, std::string> fills;
  for (const json &f : contextsFor(report, "popops", "fill")) {
    CHECK(f["values"]["args"]["hostType"] == "float");
    fills[f["values"]["fillValue"].get<double>()] = f["path"].get<std::string>();
  }
  CHECK(fills ==
        std::map<double, std::string>{{0.25, "layer1/fillW"}, {1.5, "layer1/fillA"}, {2.0, "layer1/fillB"}});

  // poplin::matMul: both operands' shapes, the output type and the options as given.
  const auto mms = contextsFor(report, "poplin", "matMul");
  REQUIRE_FALSE(mms.empty());
  const json &mm = mms.front();
  CHECK(mm["parent"] == layer.getId());
  CHECK(mm["values"]["args"]["A"]["shape"] == "[4, 8]");
  CHECK(mm["values"]["args"]["B"]["shape"] == "[8, 3]");
  CHECK(mm["values"]["args"]["outputType"] == "float");
  CHECK(mm["values"]["args"]["options"]["partialsType"] == "float");

  // popnn::nonLinearityInPlace: the enum by name.
  const auto nls = contextsFor(report, "popnn", "nonLinearityInPlace");
  REQUIRE_FALSE(nls.empty());
  CHECK(nls.front()["values"]["args"]["nonLinearityType"] == "RELU");

  // popops::reduce: dims and the operation.
  const auto reds = contextsFor(report, "popops", "reduce");
  REQUIRE_FALSE(reds.empty());
  bool sawMax = false;
  for (const json &r : reds)
    if (r["values"]["args"].contains("params") && r["values"]["args"]["params"]["op"] == "MAX") {
      sawMax = true;
      CHECK(r["values"]["args"]["dims"]["0"] == 0);
      CHECK(r["values"]["args"]["in"]["shape"] == "[4, 3]");
    }
  CHECK(sawMax);

  // The library author's op: layer poplibs, api = the function's name, its arguments and output.
  const auto mine = contextsFor(report, "poplibs", "scaleBy");
  REQUIRE(mine.size() == 1);
  CHECK(mine[0]["values"]["args"]["scale"] == 0.5);
  CHECK(mine[0]["values"]["args"]["inPlace"] == false);
  CHECK(mine[0]["values"]["args"]["in"]["shape"] == "[3]");
  CHECK(mine[0]["values"]["output"]["shape"] == "[3]");
  // ... and popops::mul inside it is its child.
  const auto muls = contextsFor(report, "popops", "mul");
  REQUIRE(muls.size() == 1);
  CHECK(muls[0]["parent"] == mine[0]["id"]);

  // Compute sets, program steps and variables reference the ids they were made under.
  const std::uint64_t addId = add["id"];
  bool csOfAdd = false;
  for (const json &cs : report["computeSets"])
    if (cs.contains("debugId") && cs["debugId"] == addId)
      csOfAdd = true;
  CHECK(csOfAdd);
  bool stepOfAdd = false, stepOfMatMul = false;
  for (const json &s : report["steps"]) {
    if (!s.contains("debugId"))
      continue;
    stepOfAdd = stepOfAdd || s["debugId"] == addId;
    stepOfMatMul = stepOfMatMul || isUnder(report, s["debugId"], mm["id"]);
  }
  CHECK(stepOfAdd);
  CHECK(stepOfMatMul);
  bool varA = false, outOfAdd = false;
  for (const json &v : report["variables"]) {
    if (v["name"] == "layer1/a")
      varA = v.value("debugId", std::uint64_t(0)) == layer.getId();
    if (v.contains("debugId") && v["debugId"] == addId)
      outOfAdd = true;
  }
  CHECK(varA);
  CHECK(outOfAdd);
  // autoReport.all also writes debug.cbor, as Poplar does: the records in the streamer's layout.
  {
    std::ifstream cborFile(dir + "/debug.cbor", std::ios::binary);
    REQUIRE(cborFile.good());
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(cborFile)),
                                          std::istreambuf_iterator<char>());
    const json debug = json::from_cbor(bytes);
    REQUIRE(debug["contexts"].size() == report["debugContexts"].size());
    bool sawAdd = false;
    for (const json &c : debug["contexts"])
      if (c["id"] == addId) {
        sawAdd = true;
        CHECK(c["layer"] == "popops");
        CHECK(c["api"] == "add");
        CHECK(c["args"] == add["values"]["args"]);
        CHECK(c["parent"] == layer.getId());
      }
    CHECK(sawAdd);
  }

  // libpva: a step's debug contexts, and the tree up to the application's DebugInfo.
  const pva::Report pvaReport = pva::openReport(dir + "/profile.pop");
  bool pvaAdd = false;
  for (const auto &program : pvaReport.compilation().programs())
    for (const auto &dc : program->debugContexts())
      if (dc->id() == addId) {
        pvaAdd = true;
        CHECK(dc->layer() == "popops");
        CHECK(dc->name() == "layer1/sum/add");
        CHECK(json::parse(dc->json())["args"] == add["values"]["args"]);
        REQUIRE(dc->parent() != nullptr);
        CHECK(dc->parent()->id() == layer.getId());
        CHECK(dc->parent()->layer() == "app");
      }
  CHECK(pvaAdd);
  CHECK(pvaReport.compilation().debugContexts().size() == report["debugContexts"].size());

  // Every referenced id is in the tree.
  for (const char *table : {"computeSets", "steps", "variables"})
    for (const json &e : report[table])
      if (e.contains("debugId"))
        CHECK(contextOf(report, e["debugId"])["id"] == e["debugId"]);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("cast, zero, pad and gather record their arguments", "[compat][debuginfo]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 4;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplar::program::Sequence prog;
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {6, 4}, "x");
  poplar::Tensor idx = graph.addVariable(poplar::UNSIGNED_INT, {3}, "idx");
  poputil::mapTensorLinearly(graph, x);
  poputil::mapTensorLinearly(graph, idx);
  popops::zero(graph, x, prog, "zx");
  popops::fill(graph, idx, prog, 2u, "fillIdx");
  poplar::Tensor h = popops::cast(graph, x, poplar::HALF, prog, "toHalf");
  poplar::Tensor p = popops::pad(graph, x, {1, 0}, {0, 2}, 0.5f);
  poplar::Tensor g = popops::gather(graph, x, idx, 0, prog, popops::GatherParams(1000), "g");
  graph.createHostRead("h", h);
  graph.createHostRead("p", p);
  graph.createHostRead("g", g);
  const std::string dir = freshDir("misc");
  poplar::Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
  const json report = readReport(dir);

  const auto zeros = contextsFor(report, "popops", "zero");
  REQUIRE(zeros.size() == 1);
  CHECK(zeros[0]["path"] == "zx");
  CHECK(zeros[0]["values"]["args"]["t"]["shape"] == "[6, 4]");
  const auto casts = contextsFor(report, "popops", "cast");
  REQUIRE_FALSE(casts.empty());
  CHECK(casts.front()["values"]["args"]["dstType"] == "half");
  CHECK(casts.front()["values"]["args"]["src"]["type"] == "float");
  const auto pads = contextsFor(report, "popops", "pad");
  REQUIRE(pads.size() == 1);
  CHECK(pads[0]["values"]["args"]["lower"] == json{{"0", 1}, {"1", 0}});
  CHECK(pads[0]["values"]["args"]["upper"] == json{{"0", 0}, {"1", 2}});
  CHECK(pads[0]["values"]["args"]["val"] == 0.5);
  CHECK(pads[0]["values"]["args"]["mapping"] == "ZERO");
  bool padConstant = false; // the padding constants are made under it
  for (const json &v : report["variables"])
    padConstant = padConstant || (v.contains("debugId") && v["debugId"] == pads[0]["id"]);
  CHECK(padConstant);
  const auto gathers = contextsFor(report, "popops", "gather");
  REQUIRE_FALSE(gathers.empty());
  CHECK(gathers.front()["values"]["args"]["axis"] == 0);
  CHECK(gathers.front()["values"]["args"]["params"]["maxElementsPerTile"] == 1000);
  CHECK(gathers.front()["values"]["args"]["indices"]["type"] == "unsigned int");
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("the debug information travels with a serialized executable", "[compat][debuginfo]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplar::program::Sequence prog;
  poplar::Tensor x = graph.addVariable(poplar::FLOAT, {8}, "x");
  poputil::mapTensorLinearly(graph, x);
  popops::fill(graph, x, prog, 3.0f, "three");
  popops::sqrtInPlace(graph, x, prog, "root");
  std::stringstream bytes;
  poplar::compileGraph(graph, {prog}).serialize(bytes);

  // Another engine, from the bytes only: its report still names the ops and their arguments.
  const std::string dir = freshDir("exe");
  {
    poplar::Engine engine(poplar::Executable::deserialize(bytes),
                          {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
  }
  const json report = readReport(dir);
  const auto roots = contextsFor(report, "popops", "sqrtInPlace");
  REQUIRE(roots.size() == 1);
  CHECK(roots[0]["path"] == "root/sqrtInPlace");
  CHECK(roots[0]["values"]["args"]["ts"]["0"]["shape"] == "[8]");
  const auto fills = contextsFor(report, "popops", "fill");
  REQUIRE(fills.size() == 1);
  CHECK(fills[0]["values"]["fillValue"] == 3.0);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("gcl collectives record their operator and group", "[compat][debuginfo]") {
  poplar::IPUModel model;
  model.numIPUs = 2;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget(), poplar::replication_factor(2));
  popops::addCodelets(graph);
  poplar::program::Sequence prog;
  poplar::Tensor t = graph.addVariable(poplar::FLOAT, {6}, "t");
  poputil::mapTensorLinearly(graph, t);
  popops::fill(graph, t, prog, 1.0f);
  poplar::Tensor r = gcl::allReduceCrossReplica(graph, t, gcl::CollectiveOperator::MAX, prog,
                                                gcl::CommGroup(gcl::CommGroupType::ALL, 0), "ar");
  graph.createHostRead("r", r);
  const std::string dir = freshDir("gcl");
  poplar::Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
  const json report = readReport(dir);
  const auto ars = contextsFor(report, "gcl", "allReduceCrossReplica");
  REQUIRE_FALSE(ars.empty());
  CHECK(ars.front()["values"]["args"]["data"]["shape"] == "[6]");
  std::ostringstream op;
  op << gcl::CollectiveOperator::MAX;
  CHECK(ars.front()["values"]["args"]["op"] == op.str());
  CHECK(ars.front()["values"]["args"]["group"]["type"] == "ALL");
  std::system(("rm -rf '" + dir + "'").c_str());
}

// Issue 15 item 7 (audit): the return types library code relies on, as Poplar declares them.
static_assert(std::is_same<decltype(std::declval<const poplar::Target &>().getTypeSize(poplar::FLOAT)),
                           std::size_t>::value,
              "Target::getTypeSize returns std::size_t");
static_assert(
    std::is_same<decltype(std::declval<const poplar::Target &>() < std::declval<const poplar::Target &>()),
                 bool>::value,
    "Target::operator< gives bool");
