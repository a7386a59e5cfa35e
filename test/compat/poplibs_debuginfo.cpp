// Copyright (c) Aspen contributors.
// The PopLibs functions added for Poplar 3.x programs record their arguments (and outputs) as
// debug information like every libops op: the profile report carries a context per op with
// the library's layer, the op's name as api and its arguments.
#include <poplar/DebugContext.hpp>
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/Convolution.hpp>
#include <poplin/MultiConvolution.hpp>
#include <poplin/codelets.hpp>
#include <popnn/InstanceNorm.hpp>
#include <popnn/codelets.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using nlohmann::json;
using namespace poplar;

namespace {
std::vector<json> contextsFor(const json &report, const std::string &layer, const std::string &api) {
  std::vector<json> out;
  for (const json &d : report["debugContexts"])
    if (d["layer"] == layer && d["values"].value("api", "") == api)
      out.push_back(d);
  return out;
}
} // namespace

TEST_CASE("popnn::in, poplin::multiconv and fullyConnectedWeightTranspose record their arguments",
          "[compat][debuginfo]") {
  IPUModel model;
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);
  program::Sequence prog;

  Tensor acts = graph.addVariable(FLOAT, {2, 3, 4}, "acts");
  Tensor gamma = graph.addVariable(FLOAT, {3}, "gamma"), beta = graph.addVariable(FLOAT, {3}, "beta");
  for (Tensor t : {acts, gamma, beta})
    poputil::mapTensorLinearly(graph, t);
  auto stats = popnn::in::instanceNormStatistics(graph, acts, 0.01f, prog, true, false, FLOAT, "stats");
  popnn::in::instanceNormalise(graph, acts, gamma, beta, stats.first, stats.second, prog, "norm");

  const poplin::ConvParams p(FLOAT, 2, {6}, {3}, 2, 3, 1);
  const std::vector<poplin::multiconv::CreateTensorArgs> create{{p, {}, "in"}};
  Tensor in = poplin::multiconv::createInput(graph, create, 0);
  std::vector<poplin::multiconv::CreateTensorArgs> createW = create;
  createW[0].name = "w";
  Tensor w = poplin::multiconv::createWeights(graph, createW, 0);
  poplin::multiconv::convolution(graph, {{in, w, p, {}}}, false, prog, "multi", {{"planType", "serial"}});

  const poplin::ConvParams bwd(FLOAT, 2, {1}, {1}, 5, 4, 1);
  Tensor fcW = graph.addVariable(FLOAT, {1, 5, 4, 1}, "fcW");
  poputil::mapTensorLinearly(graph, fcW);
  poplin::fullyConnectedWeightTranspose(graph, fcW, bwd, prog, "wT", {{"pass", "FC_TRAINING_BWD"}});

  const std::string dir = "/tmp/aspen-poplibs-debuginfo-" + std::to_string(::getpid());
  std::system(("rm -rf '" + dir + "'").c_str());
  Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", dir}});
  engine.load(device);
  engine.run(0);
  std::ifstream file(dir + "/profile.json");
  REQUIRE(file.good());
  const json report = json::parse(file);
  std::system(("rm -rf '" + dir + "'").c_str());

  const auto st = contextsFor(report, "popnn", "instanceNormStatistics");
  REQUIRE(st.size() == 1);
  CHECK(st[0]["path"] == "stats");
  CHECK(st[0]["values"]["args"]["acts"]["shape"] == "[2, 3, 4]");
  CHECK(st[0]["values"]["args"]["eps"].get<double>() == Approx(0.01));
  CHECK(st[0]["values"]["args"]["unbiasedVarEstimate"] == true);
  CHECK(st[0]["values"]["outputs"]["mean"]["shape"] == "[6]");

  const auto nm = contextsFor(report, "popnn", "instanceNormalise");
  REQUIRE(nm.size() == 1);
  CHECK(nm[0]["values"]["args"]["gamma"]["shape"] == "[3]");
  CHECK(nm[0]["values"]["outputs"]["normActs"]["shape"] == "[2, 3, 4]");

  bool sawMulti = false;
  for (const json &c : contextsFor(report, "poplin", "convolution"))
    if (c["values"]["args"].contains("params") && c["values"]["args"]["params"].is_array()) {
      sawMulti = true;
      CHECK(c["path"] == "multi");
      CHECK(c["values"]["args"]["params"].size() == 1);
      CHECK(c["values"]["args"]["options"]["planType"] == "serial");
    }
  CHECK(sawMulti);
  CHECK(contextsFor(report, "poplin", "createInput").size() >= 1);

  const auto wt = contextsFor(report, "poplin", "fullyConnectedWeightTranspose");
  REQUIRE(wt.size() == 1);
  CHECK(wt[0]["values"]["args"]["weights"]["shape"] == "[1, 5, 4, 1]");
  CHECK(wt[0]["values"]["args"]["options"]["pass"] == "FC_TRAINING_BWD");
  CHECK(wt[0]["values"]["output"]["shape"] == "[1, 4, 5, 1]");
}
