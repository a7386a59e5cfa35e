// Copyright (c) Aspen contributors.
// Golden tests of poplin::convolution (forward with padding, stride, dilation, flip, groups and
// output padding; the backward pass as a convolution with transposed and flipped weights; the
// weight-update pass) and of the normalisations (popnn::bn / gn / ln, poplin::norm*) against
// plain host loops, in float and half.
#include "CommandSupport.hpp"
#include "OpsTestUtil.hpp"
#include "TestDevice.hpp"

#include <poplin/Convolution.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/Norms.hpp>
#include <poplin/codelets.hpp>
#include <popnn/BatchNorm.hpp>
#include <popnn/GroupNorm.hpp>
#include <popnn/LayerNorm.hpp>
#include <popnn/codelets.hpp>
#include <popops/codelets.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

using namespace poplar;
using aspen::test::mappedVariable;
using aspen::test::requireClose;
using aspen::test::TestDevice;
using aspen::test::TestTarget;

namespace {

// --- host reference of a 2-D convolution with every transform --------------------------------

struct Field {
  std::size_t h = 0, w = 0;
  std::vector<float> v; // h * w
  float at(std::size_t y, std::size_t x) const { return v[y * w + x]; }
};

Field transform(const Field &f, const poplin::ConvParams::InputTransform &t) {
  Field cur = f;
  // truncate
  {
    Field n;
    n.h = cur.h - t.truncationLower[0] - t.truncationUpper[0];
    n.w = cur.w - t.truncationLower[1] - t.truncationUpper[1];
    for (std::size_t y = 0; y < n.h; ++y)
      for (std::size_t x = 0; x < n.w; ++x)
        n.v.push_back(cur.at(y + t.truncationLower[0], x + t.truncationLower[1]));
    cur = n;
  }
  // dilate
  {
    Field n;
    n.h = cur.h ? (cur.h - 1) * t.dilation[0] + 1 : 0;
    n.w = cur.w ? (cur.w - 1) * t.dilation[1] + 1 : 0;
    n.v.assign(n.h * n.w, 0.0f);
    for (std::size_t y = 0; y < cur.h; ++y)
      for (std::size_t x = 0; x < cur.w; ++x)
        n.v[y * t.dilation[0] * n.w + x * t.dilation[1]] = cur.at(y, x);
    cur = n;
  }
  // pad
  {
    Field n;
    n.h = cur.h + t.paddingLower[0] + t.paddingUpper[0];
    n.w = cur.w + t.paddingLower[1] + t.paddingUpper[1];
    n.v.assign(n.h * n.w, 0.0f);
    for (std::size_t y = 0; y < cur.h; ++y)
      for (std::size_t x = 0; x < cur.w; ++x)
        n.v[(y + t.paddingLower[0]) * n.w + x + t.paddingLower[1]] = cur.at(y, x);
    cur = n;
  }
  // flip
  Field n = cur;
  for (std::size_t y = 0; y < cur.h; ++y)
    for (std::size_t x = 0; x < cur.w; ++x)
      n.v[y * n.w + x] = cur.at(t.flip[0] ? cur.h - 1 - y : y, t.flip[1] ? cur.w - 1 - x : x);
  return n;
}

// out {B, G*Co, OH, OW}
std::vector<float> hostConv(const poplin::ConvParams &p, const std::vector<float> &in,
                            const std::vector<float> &w) {
  const std::size_t B = p.batchSize, G = p.numConvGroups, Ci = p.inputChannelsPerConvGroup,
                    Co = p.outputChannelsPerConvGroup, H = p.inputFieldShape[0], W = p.inputFieldShape[1],
                    KH = p.kernelShape[0], KW = p.kernelShape[1];
  const std::size_t OH = p.getOutputSize(0), OW = p.getOutputSize(1);
  const auto &ot = p.outputTransform;
  std::vector<float> out(B * G * Co * OH * OW, 0.0f);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t g = 0; g < G; ++g)
      for (std::size_t co = 0; co < Co; ++co) {
        // untransformed output
        std::size_t UH = 0, UW = 0;
        std::vector<double> acc;
        for (std::size_t ci = 0; ci < Ci; ++ci) {
          Field fi{H, W, {}}, fk{KH, KW, {}};
          for (std::size_t i = 0; i < H * W; ++i)
            fi.v.push_back(in[((b * G + g) * Ci + ci) * H * W + i]);
          for (std::size_t i = 0; i < KH * KW; ++i)
            fk.v.push_back(w[((g * Co + co) * Ci + ci) * KH * KW + i]);
          const Field ti = transform(fi, p.inputTransform), tk = transform(fk, p.kernelTransform);
          UH = ti.h - tk.h + 1;
          UW = ti.w - tk.w + 1;
          acc.resize(UH * UW, 0.0);
          for (std::size_t y = 0; y < UH; ++y)
            for (std::size_t x = 0; x < UW; ++x)
              for (std::size_t ky = 0; ky < tk.h; ++ky)
                for (std::size_t kx = 0; kx < tk.w; ++kx)
                  acc[y * UW + x] += double(ti.at(y + ky, x + kx)) * tk.at(ky, kx);
        }
        for (std::size_t y = ot.truncationLower[0], oy = 0; y + ot.truncationUpper[0] < UH;
             y += ot.stride[0], ++oy)
          for (std::size_t x = ot.truncationLower[1], ox = 0; x + ot.truncationUpper[1] < UW;
               x += ot.stride[1], ++ox)
            out[((b * G + g) * Co + co) * OH * OW + (oy + ot.paddingLower[0]) * OW + ox +
                ot.paddingLower[1]] = float(acc[y * UW + x]);
      }
  return out;
}

std::vector<std::size_t> shapeOf(std::initializer_list<std::size_t> l) {
  return l;
}

void runConv(const poplin::ConvParams &p, const Type &type, TestTarget target, unsigned seed,
             const OptionFlags &options = {}) {
  TestDevice dev(target);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  program::Sequence prog;
  poplin::PlanningCache cache;
  Tensor in = poplin::createInput(graph, p, "in", options, &cache);
  Tensor w = poplin::createWeights(graph, p, "w", options, &cache);
  Tensor out = poplin::convolution(graph, in, w, p, false, prog, "conv", options, &cache);
  REQUIRE(out.shape() ==
          shapeOf({p.batchSize, p.getNumOutputChans(), p.getOutputSize(0), p.getOutputSize(1)}));
  const auto iv = aspen::test::randomValues(in.numElements(), -1, 1, seed, type, dev.getTarget());
  const auto wv = aspen::test::randomValues(w.numElements(), -1, 1, seed + 1, type, dev.getTarget());
  dev.write(graph, in, iv);
  dev.write(graph, w, wv);
  std::vector<float> got;
  dev.read(graph, out, got);
  dev.run(graph, prog);
  const double tol = type == HALF ? 2e-2 : 1e-5;
  requireClose(got, hostConv(p, iv, wv), tol, tol, "convolution");
}

} // namespace

TEST_CASE("convolution with padding and stride matches a host loop", "[poplin][conv]") {
  poplin::ConvParams p(FLOAT, 2, {6, 5}, {3, 3}, 3, 4, 1);
  p.inputTransform.paddingLower = {1, 1};
  p.inputTransform.paddingUpper = {1, 1};
  p.outputTransform.stride = {2, 1};
  REQUIRE(p.getOutputFieldShape() == shapeOf({3, 5}));
  for (TestTarget t : aspen::test::allTargets()) {
    INFO(aspen::test::targetName(t));
    runConv(p, FLOAT, t, 1);
  }
  poplin::ConvParams h = p;
  h.inputType = h.outputType = HALF;
  runConv(h, HALF, TestTarget::FewTiles, 2);
}

TEST_CASE("planConstraints split a convolution's product as they name", "[poplin][conv][planConstraints]") {
  // The product is {G, Co, K*Ci} x {G, K*Ci, B*O'}: outChanSplit splits its rows, batchSplit x
  // fieldSplit its columns, inChanSplit x kernelSplit its inner dimension.
  poplin::ConvParams p(FLOAT, 2, {6, 5}, {3, 3}, 3, 4, 2);
  p.inputTransform.paddingLower = {1, 1};
  p.inputTransform.paddingUpper = {1, 1};
  const OptionFlags options{
      {"planConstraints",
       R"({"0": {"partition": {"convGroupSplit": 2, "outChanSplit": {"parallel": 2}, "batchSplit": 2,
            "fieldSplit": {"0": 3}, "kernelSplit": {"1": 3}, "inChanSplit": {"parallel": 1}}},
          "method": {"type": "AMP"}})"}};
  Graph graph(Target::createIPUTarget(1, 1472, "ipu2"));
  std::ostringstream plan;
  poplin::reportPlanInfo(plan, graph, p, options);
  INFO(plan.str());
  CHECK(plan.str().find(
            "split: groups 2 (block 1), rows 2 (block 2), columns 6 (block 10), inner 3 (block 9)") !=
        std::string::npos);
  runConv(p, FLOAT, TestTarget::FullIpu, 3, options);
  // The same splits named as PopLibs names them for the swapped convolution (swapOperands: batch
  // and output channels exchanged; its kernel is the input field, split here in 3 pieces of the
  // inner dimension); then its serial split over the swapped output channels, the batch: passes
  // over the product's columns.
  const OptionFlags swapped{
      {"planConstraints",
       R"({"0": {"transform": {"swapOperands": true}, "partition": {"convGroupSplit": 2, "batchSplit": 2,
            "outChanSplit": {"parallel": 2}, "fieldSplit": {"0": 3}, "kernelSplit": {"1": 3}}}})"}};
  std::ostringstream swappedPlan;
  poplin::reportPlanInfo(swappedPlan, graph, p, swapped);
  INFO(swappedPlan.str());
  CHECK(swappedPlan.str().find(
            "split: groups 2 (block 1), rows 2 (block 2), columns 6 (block 10), inner 3 (block 9)") !=
        std::string::npos);
  runConv(p, FLOAT, TestTarget::FullIpu, 4, swapped);
  const OptionFlags batchPasses{
      {"planConstraints",
       R"({"0": {"transform": {"swapOperands": true}, "partition": {"outChanSplit": {"serial": 2}}}})"}};
  std::ostringstream passesPlan;
  poplin::reportPlanInfo(passesPlan, graph, p, batchPasses);
  INFO(passesPlan.str());
  CHECK(passesPlan.str().find("in 2 serial passes over columns") != std::string::npos);
  runConv(p, FLOAT, TestTarget::FewTiles, 5, batchPasses);
}

TEST_CASE("serial splits of a convolution: honoured from planConstraints",
          "[poplin][conv][planConstraints]") {
  // Forward product {G, Co, K*Ci} x {G, K*Ci, B*O'}: outChanSplit.serial passes over its rows
  // (output channels), inChanSplit.serial over its inner dimension (kernel positions x input
  // channels), adding into the partial sums of the earlier passes.
  poplin::ConvParams p(FLOAT, 2, {6, 5}, {3, 3}, 3, 4, 1);
  p.inputTransform.paddingLower = {1, 1};
  p.inputTransform.paddingUpper = {1, 1};
  Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
  const struct {
    const char *constraints, *expected;
  } cases[] = {
      {R"({"0": {"partition": {"outChanSplit": {"serial": 2}}}})", "in 2 serial passes over rows"},
      {R"({"0": {"partition": {"inChanSplit": {"serial": 3, "parallel": 1}, "kernelSplit": {"0": 2}}}})",
       "in 3 serial passes over the inner dimension"},
  };
  for (const auto &c : cases) {
    const OptionFlags options{{"planConstraints", c.constraints}};
    std::ostringstream plan;
    poplin::reportPlanInfo(plan, graph, p, options);
    INFO(c.constraints << "\n" << plan.str());
    CHECK(plan.str().find(c.expected) != std::string::npos);
    runConv(p, FLOAT, TestTarget::FewTiles, 21, options);
  }
}

TEST_CASE("createInput of a 1x1 convolution is laid out by the convolution's planConstraints",
          "[poplin][conv][planConstraints]") {
  // A 1x1 convolution's product is {G, Co, Ci} x {G, Ci, B*F}, the product createInput lays the
  // input out for: with planConstraints the input must be where the constrained plan reads it —
  // the layout of the product's right-hand side under the same splits written as PopLibs writes a
  // matMul's (swapOperands: batchSplit the columns, outChanSplit the rows), not the layout of the
  // unconstrained plan.
  poplin::ConvParams p(FLOAT, 4, {4, 4}, {1, 1}, 8, 8, 1);
  const OptionFlags options{
      {"planConstraints",
       R"({"0": {"partition": {"outChanSplit": {"parallel": 4}, "batchSplit": 1, "fieldSplit": {"0": 1},
            "inChanSplit": {"parallel": 1}}}})"}};
  const std::string product =
      R"({"0": {"transform": {"swapOperands": true}, "partition": {"outChanSplit": {"parallel": 4},
          "batchSplit": 1, "inChanSplit": {"parallel": 1}}}})";
  Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
  // Tile of each element of a {G, Ci, B*F} view.
  auto tiles = [&graph](const Tensor &t) {
    std::vector<unsigned> tileOf(t.numElements(), ~0u);
    const auto mapping = graph.getTileMapping(t);
    for (unsigned tile = 0; tile < mapping.size(); ++tile)
      for (const Interval &i : mapping[tile])
        for (std::size_t e = i.begin(); e < i.end(); ++e)
          tileOf[e] = tile;
    return tileOf;
  };
  // {B, Ci, H, W} -> {G, Ci, B*H*W}
  auto asRhs = [&p](const Tensor &in) {
    return in.reshape({p.batchSize, 1, 8, 16}).dimShuffle({1, 2, 0, 3}).reshape({1, 8, p.batchSize * 16});
  };
  const Tensor constrained = asRhs(poplin::createInput(graph, p, "in", options));
  const Tensor free = asRhs(poplin::createInput(graph, p, "free"));
  const Tensor rhs = poplin::createMatMulGroupedInputRHS(graph, FLOAT, FLOAT, {1, 8, 8}, {1, 8, 64}, "rhs",
                                                         {{"planConstraints", product}});
  CHECK(tiles(constrained) == tiles(rhs));
  CHECK(tiles(free) != tiles(rhs));
  runConv(p, FLOAT, TestTarget::FewTiles, 41, options);
}

namespace {
std::string fileText(const std::string &path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
std::string splitLine(const std::string &plan) {
  const std::size_t at = plan.find("split: ");
  REQUIRE(at != std::string::npos);
  return plan.substr(at, plan.find('\n', at) - at);
}
// The splits a matMul plan report gives: groups, rows, columns, inner, then the serial passes
// over rows, columns and the inner dimension.
std::vector<unsigned> reportedSplits(const std::string &plan) {
  const std::string line = splitLine(plan);
  std::smatch m;
  REQUIRE(
      std::regex_search(line, m, std::regex(R"(groups (\d+) .*rows (\d+) .*columns (\d+) .*inner (\d+) )")));
  std::vector<unsigned> out;
  for (unsigned i = 1; i <= 4; ++i)
    out.push_back(unsigned(std::stoul(m[i])));
  for (const char *over : {"rows", "columns", "the inner dimension"})
    out.push_back(
        std::regex_search(line, m, std::regex(std::string(R"(in (\d+) serial passes over )") + over))
            ? unsigned(std::stoul(m[1]))
            : 1u);
  return out;
}
// The same splits from the weight-update product's written planConstraints (its rows are the
// output channels, its columns the input channels and the kernel, its inner dimension the batch
// and the output field), but the serial passes over the inner dimension: PopLibs' keys cannot
// name them (docs/ops-conv.md), the file leaves them to the planner.
std::vector<unsigned> writtenWuSplits(const std::string &written) {
  const nlohmann::json part = nlohmann::json::parse(written).at("0").at("partition");
  unsigned columns = part.at("inChanSplit").at("parallel").get<unsigned>();
  for (const auto &kv : part.at("kernelSplit").items())
    columns *= kv.value().get<unsigned>();
  unsigned inner = part.at("batchSplit").get<unsigned>();
  for (const auto &kv : part.at("fieldSplit").items())
    inner *= kv.value().get<unsigned>();
  return {part.at("convGroupSplit").get<unsigned>(),
          part.at("outChanSplit").at("parallel").get<unsigned>(),
          columns,
          inner,
          part.at("outChanSplit").at("serial").get<unsigned>(),
          part.at("inChanSplit").at("serial").get<unsigned>()};
}
} // namespace

TEST_CASE("planConstraintsOutputFilename writes the plan as planConstraints that plan it again",
          "[poplin][conv][planConstraints]") {
  // PopLibs' option: "<value>_FWD.json" / "_BWD.json" / "_WU.json" by the pass option. Planned
  // with no constraints, written; given back as planConstraints, the same splits are planned and
  // written again, byte for byte; the convolution's result is unchanged.
  aspen::test::TempDir dir;
  const struct {
    poplin::ConvParams params;
    unsigned tiles;
    const char *amp;
  } cases[] = {
      {poplin::ConvParams(FLOAT, 2, {6, 5}, {3, 3}, 3, 4, 2), 1472, "0.6"},
      {poplin::ConvParams(FLOAT, 4, {8, 8}, {1, 1}, 8, 16, 1), 16, "0.6"},
      // Serial passes over the output channels and over the inner dimension.
      {poplin::ConvParams(FLOAT, 1, {16, 16}, {3, 3}, 16, 16, 1), 4, "0.05"},
      {poplin::ConvParams(FLOAT, 2, {16, 16}, {3, 3}, 16, 8, 1), 4, "0.05"},
  };
  for (const auto &c : cases) {
    const poplin::ConvParams &p = c.params;
    INFO("params " << p << " on " << c.tiles << " tiles");
    Graph graph(Target::createIPUTarget(1, c.tiles, "ipu2"));
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    for (const char *pass : {"TRAINING_FWD", "TRAINING_WU"}) {
      const bool wu = std::string(pass) == "TRAINING_WU";
      const std::string path = dir.path + "/plan", file = path + (wu ? "_WU.json" : "_FWD.json");
      std::remove(file.c_str());
      auto build = [&](const OptionFlags &options) {
        program::Sequence prog;
        Tensor in = poplin::createInput(graph, p, "in", options);
        if (wu) {
          Tensor deltas = poplin::createConvOutput(graph, p, "deltas", options);
          poplin::calculateWeightDeltas(graph, deltas, in, p, prog, "wu", options);
        } else {
          Tensor w = poplin::createWeights(graph, p, "w", options);
          poplin::convolution(graph, in, w, p, false, prog, "conv", options);
        }
        return fileText(file);
      };
      const OptionFlags first{
          {"pass", pass}, {"availableMemoryProportion", c.amp}, {"planConstraintsOutputFilename", path}};
      const std::string written = build(first);
      INFO(pass << " wrote " << written);
      REQUIRE(written.find("\"partition\"") != std::string::npos);
      OptionFlags again = first;
      again.set("planConstraints", written);
      CHECK(build(again) == written);
      if (!wu) {
        std::ostringstream free, constrained;
        poplin::reportPlanInfo(free, graph, p, {{"availableMemoryProportion", c.amp}});
        poplin::reportPlanInfo(constrained, graph, p, again);
        CHECK(splitLine(constrained.str()) == splitLine(free.str()));
      } else {
        // The splits written are those of the product the weight-update pass multiplies:
        // zDeltas {G, Co, B x O'} by the windows {G, B x O', K x Ci}, into the input type.
        std::size_t outField = 1, kernel = 1;
        for (std::size_t d : p.getOutputFieldShape())
          outField *= d;
        for (std::size_t d : p.kernelShape)
          kernel *= d;
        const std::size_t G = p.numConvGroups, M = p.batchSize * outField,
                          KCi = kernel * p.inputChannelsPerConvGroup;
        std::ostringstream wuPlan;
        poplin::matMulGroupedReportPlan(wuPlan, graph, p.inputType, p.inputType,
                                        {G, p.outputChannelsPerConvGroup, M}, {G, M, KCi},
                                        {{"availableMemoryProportion", c.amp}});
        INFO("the weight-update product's plan: " << wuPlan.str());
        std::vector<unsigned> reported = reportedSplits(wuPlan.str());
        reported.pop_back(); // the serial passes over the inner dimension
        CHECK(writtenWuSplits(written) == reported);
      }
    }
  }
  // The same constraints as PopLibs writes them (a Boost property tree: every value text, an empty
  // array ""), with the tile level and the method: accepted, and the convolution is right.
  poplin::ConvParams p(FLOAT, 2, {6, 5}, {3, 3}, 3, 4, 1);
  const OptionFlags popLibsStyle{
      {"planConstraints", R"({"0": {"transform": {"swapOperands": "false", "expandDims": "",
          "outChanFlattenDims": "", "combineConvGroupsFactor": ["1"]},
          "partition": {"fieldSplit": {"0": "2", "1": "1"}, "batchSplit": "1",
          "outChanSplit": {"serial": "1", "parallel": "2"}, "kernelSplit": {"0": "1", "1": "1"},
          "inChanSplit": {"serial": "1", "parallel": "1"}, "convGroupSplit": "1"}},
          "1": {"transform": {"swapOperands": "false", "expandDims": "", "outChanFlattenDims": "",
          "combineConvGroupsFactor": ["1"]}},
          "method": {"type": "AMP", "convUnits": "8"}, "convGroupsPerGroup": "1", "inChansPerGroup": "4",
          "partialChansPerGroup": "8"})"}};
  runConv(p, FLOAT, TestTarget::FewTiles, 51, popLibsStyle);
}

TEST_CASE("a convolution that fits only in serial passes", "[poplin][conv]") {
  // 16 -> 16 channels, 16 x 16 image, 3 x 3 kernel, float, on 4 tiles of 56 KiB: the windows
  // (im2col) of one pass are 9 x the input (144 KB). Told it may use all of a tile's memory, the
  // planner takes one pass, which does not fit; with the default budget it splits the product
  // into serial passes, each copying only the windows it reads, and the convolution fits.
  poplin::ConvParams p(FLOAT, 1, {16, 16}, {3, 3}, 16, 16, 1);
  p.inputTransform.paddingLower = {1, 1};
  p.inputTransform.paddingUpper = {1, 1};
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  model.memoryBytesPerTile = 56 * 1024;
  Device device = model.createDevice();
  auto build = [&](Graph &graph, program::Sequence &prog, const OptionFlags &options, std::string &plan) {
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    std::ostringstream report;
    poplin::reportPlanInfo(report, graph, p, options);
    plan = report.str();
    Tensor in = poplin::createInput(graph, p, "in", options);
    Tensor w = poplin::createWeights(graph, p, "w", options);
    Tensor out = poplin::convolution(graph, in, w, p, false, prog, "conv", options);
    graph.createHostWrite("in", in);
    graph.createHostWrite("w", w);
    graph.createHostRead("out", out);
    return std::make_pair(in, w);
  };
  {
    Graph graph(device.getTarget());
    program::Sequence prog;
    std::string plan;
    build(graph, prog, {{"availableMemoryProportion", "1"}}, plan);
    INFO(plan);
    CHECK(plan.find("serial passes") == std::string::npos);
    CHECK_THROWS_AS(Engine(graph, prog), graph_memory_allocation_error);
  }
  Graph graph(device.getTarget());
  program::Sequence prog;
  std::string plan;
  const auto [in, w] = build(graph, prog, {}, plan);
  INFO(plan);
  REQUIRE(plan.find("serial passes") != std::string::npos);
  REQUIRE(plan.find("over budget") == std::string::npos);
  const Target &target = graph.getTarget();
  const auto iv = aspen::test::randomValues(in.numElements(), -1, 1, 31, FLOAT, target);
  const auto wv = aspen::test::randomValues(w.numElements(), -1, 1, 32, FLOAT, target);
  Engine engine(graph, prog);
  engine.load(device);
  aspen::test::writeFloats(engine, "in", FLOAT, target, iv);
  aspen::test::writeFloats(engine, "w", FLOAT, target, wv);
  engine.run(0);
  const auto got = aspen::test::readFloats(engine, "out", FLOAT, target, 16 * 16 * 16);
  requireClose(got, hostConv(p, iv, wv), 1e-5, 1e-5, "convolution in serial passes");
}

TEST_CASE("grouped convolution with dilation, flip, truncation and output padding", "[poplin][conv]") {
  for (Type type : {FLOAT, HALF}) {
    INFO("type " << type);
    poplin::ConvParams p(
        type, type, 2, {5, 4}, {2, 2}, 2, 3, 2,
        poplin::ConvParams::InputTransform({1, 0}, {0, 0}, {1, 2}, {0, 1}, {1, 0}, {false, true}),
        poplin::ConvParams::InputTransform({0, 0}, {0, 0}, {2, 1}, {0, 0}, {0, 0}, {true, false}),
        poplin::ConvParams::OutputTransform({0, 1}, {0, 0}, {1, 2}, {1, 0}, {0, 1}));
    p.validate();
    runConv(p, type, TestTarget::FewTiles, 10);
  }
}

TEST_CASE("backward pass and weight deltas of a 3x3 convolution", "[poplin][conv]") {
  // The weight-update product {G, Co, B*O'} x {G, B*O', K*Ci} also in serial passes: over its
  // rows (outChanSplit.serial) and over its columns (inChanSplit.serial).
  const std::vector<std::pair<Type, std::string>> runs{
      {FLOAT, ""},
      {HALF, ""},
      {FLOAT, R"({"0": {"partition": {"outChanSplit": {"serial": 2}}}})"},
      {FLOAT, R"({"0": {"partition": {"inChanSplit": {"serial": 3}}}})"}};
  for (const auto &[type, constraints] : runs) {
    INFO("type " << type << ", weight update planConstraints " << constraints);
    const OptionFlags wuOptions =
        constraints.empty() ? OptionFlags{} : OptionFlags{{"planConstraints", constraints}};
    const std::size_t B = 2, Ci = 3, Co = 4, H = 5, W = 4;
    poplin::ConvParams fwd(type, B, {H, W}, {3, 3}, Ci, Co, 1);
    fwd.inputTransform.paddingLower = {1, 1};
    fwd.inputTransform.paddingUpper = {1, 1};
    // the gradient of the input: a convolution of the output gradients with the transposed,
    // flipped weights, padded by kernel - 1 - padding = 1
    poplin::ConvParams bwd(type, B, {H, W}, {3, 3}, Co, Ci, 1);
    bwd.inputTransform.paddingLower = {1, 1};
    bwd.inputTransform.paddingUpper = {1, 1};
    TestDevice dev(TestTarget::FewTiles);
    Graph graph(dev.getTarget());
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    program::Sequence prog;
    Tensor in = poplin::createInput(graph, fwd, "in");
    Tensor w = poplin::createWeights(graph, fwd, "w");
    Tensor dOut = poplin::createInput(graph, bwd, "dOut");
    Tensor dIn = poplin::convolution(graph, dOut, w, bwd, true, prog, "bwd");
    Tensor dW = poplin::calculateWeightDeltas(graph, dOut, in, fwd, prog, "wu", wuOptions);
    Tensor w2 = graph.clone(w, "w2");
    prog.add(program::Copy(w, w2));
    poplin::convolutionWeightUpdate(graph, dOut, w2, in, fwd, -0.5f, prog, "update", wuOptions);

    const Target &target = dev.getTarget();
    const auto iv = aspen::test::randomValues(in.numElements(), -1, 1, 3, type, target);
    const auto wv = aspen::test::randomValues(w.numElements(), -1, 1, 4, type, target);
    const auto gv = aspen::test::randomValues(dOut.numElements(), -1, 1, 5, type, target);
    dev.write(graph, in, iv);
    dev.write(graph, w, wv);
    dev.write(graph, dOut, gv);
    std::vector<float> gotIn, gotW, gotW2;
    dev.read(graph, dIn, gotIn);
    dev.read(graph, dW, gotW);
    dev.read(graph, w2, gotW2);
    dev.run(graph, prog);
    std::vector<double> wantIn(B * Ci * H * W, 0.0), wantW(Co * Ci * 9, 0.0);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t co = 0; co < Co; ++co)
        for (std::size_t ci = 0; ci < Ci; ++ci)
          for (std::size_t oy = 0; oy < H; ++oy)
            for (std::size_t ox = 0; ox < W; ++ox)
              for (std::size_t ky = 0; ky < 3; ++ky)
                for (std::size_t kx = 0; kx < 3; ++kx) {
                  const long y = long(oy + ky) - 1, x = long(ox + kx) - 1;
                  if (y < 0 || x < 0 || y >= long(H) || x >= long(W))
                    continue;
                  const double g = gv[((b * Co + co) * H + oy) * W + ox];
                  wantIn[((b * Ci + ci) * H + y) * W + x] += g * wv[((co * Ci + ci) * 3 + ky) * 3 + kx];
                  wantW[((co * Ci + ci) * 3 + ky) * 3 + kx] += g * iv[((b * Ci + ci) * H + y) * W + x];
                }
    std::vector<double> wantW2(wantW.size());
    for (std::size_t i = 0; i < wantW.size(); ++i)
      wantW2[i] = wv[i] - 0.5 * wantW[i];
    const double tol = type == HALF ? 3e-2 : 1e-5;
    requireClose(gotIn, wantIn, tol, tol, "input gradient (backward pass)");
    requireClose(gotW, wantW, tol, tol, "weight deltas");
    requireClose(gotW2, wantW2, tol, tol, "weights after the update");
  }
}

// --- normalisation ---------------------------------------------------------------------------

namespace {

// Host statistics over groups: group(n, c) gives the statistic index of element (n, c, f).
struct HostNorm {
  std::vector<double> mean, inv;
  std::vector<float> whitened, out, dIn, dGamma, dBeta;
};

template <class GroupOf>
HostNorm hostNorm(const std::vector<float> &x, const std::vector<float> &gy, const std::vector<float> &gamma,
                  const std::vector<float> &beta, std::size_t N, std::size_t C, std::size_t F,
                  std::size_t numStats, GroupOf groupOf, float eps) {
  HostNorm r;
  std::vector<double> sum(numStats, 0), sq(numStats, 0), cnt(numStats, 0);
  auto idx = [&](std::size_t n, std::size_t c, std::size_t f) { return (n * C + c) * F + f; };
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t f = 0; f < F; ++f) {
        const double v = x[idx(n, c, f)];
        sum[groupOf(n, c)] += v;
        sq[groupOf(n, c)] += v * v;
        cnt[groupOf(n, c)] += 1;
      }
  for (std::size_t s = 0; s < numStats; ++s) {
    r.mean.push_back(sum[s] / cnt[s]);
    r.inv.push_back(1.0 / std::sqrt(sq[s] / cnt[s] - r.mean[s] * r.mean[s] + eps));
  }
  r.whitened.resize(x.size());
  r.out.resize(x.size());
  r.dIn.resize(x.size());
  r.dGamma.assign(C, 0);
  r.dBeta.assign(C, 0);
  std::vector<double> m1(numStats, 0), m2(numStats, 0);
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t f = 0; f < F; ++f) {
        const std::size_t i = idx(n, c, f), s = groupOf(n, c);
        const double xh = (x[i] - r.mean[s]) * r.inv[s];
        r.whitened[i] = float(xh);
        r.out[i] = float(xh * gamma[c] + beta[c]);
        r.dGamma[c] += float(gy[i] * xh);
        r.dBeta[c] += gy[i];
        m1[s] += gy[i] * gamma[c] / cnt[s];
        m2[s] += gy[i] * gamma[c] * xh / cnt[s];
      }
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t c = 0; c < C; ++c)
      for (std::size_t f = 0; f < F; ++f) {
        const std::size_t i = idx(n, c, f), s = groupOf(n, c);
        r.dIn[i] = float(r.inv[s] * (gy[i] * gamma[c] - m1[s] - r.whitened[i] * m2[s]));
      }
  return r;
}

enum class NormKind { Batch, Group, Layer };

void runNorm(NormKind kind, const Type &type) {
  const std::size_t N = 3, C = 4, H = 2, W = 3, F = H * W, G = 2;
  const float eps = 1e-3f;
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  popnn::addCodelets(graph);
  program::Sequence prog;
  Tensor acts = mappedVariable(graph, type, {N, C, H, W}, "acts");
  Tensor gy = mappedVariable(graph, type, {N, C, H, W}, "gradsIn");
  auto [gamma, beta] = poplin::createNormParams(graph, acts);
  std::pair<Tensor, Tensor> stats, normed, pgrads;
  Tensor dIn;
  if (kind == NormKind::Batch) {
    stats = popnn::bn::batchNormStatistics(graph, acts, eps, prog, false);
    normed = popnn::bn::batchNormalise(graph, acts, gamma, beta, stats.first, stats.second, prog);
    pgrads = popnn::bn::batchNormParamGradients(graph, normed.second, gy, prog);
    dIn = popnn::bn::batchNormGradients(graph, acts, gy, stats.first, stats.second, gamma, prog);
  } else if (kind == NormKind::Group) {
    stats = popnn::gn::groupNormStatistics(graph, acts, eps, prog, G, false);
    normed = popnn::gn::groupNormalise(graph, acts, gamma, beta, stats.first, stats.second, prog);
    pgrads = popnn::gn::groupNormParamGradients(graph, normed.second, gy, prog);
    dIn = popnn::gn::groupNormGradients(graph, normed.second, gy, stats.second, gamma, prog);
  } else {
    stats = popnn::ln::layerNormStatistics(graph, acts, eps, prog, false);
    normed = popnn::ln::layerNormalise(graph, acts, gamma, beta, stats.first, stats.second, prog);
    pgrads = popnn::ln::layerNormParamGradients(graph, acts, gy, stats.first, stats.second, prog);
    dIn = popnn::ln::layerNormGradients(graph, acts, gy, stats.first, stats.second, gamma, prog);
  }
  const Target &target = dev.getTarget();
  const auto xv = aspen::test::randomValues(N * C * F, -2, 2, 7, type, target);
  const auto gv = aspen::test::randomValues(N * C * F, -1, 1, 8, type, target);
  const auto gav = aspen::test::randomValues(C, 0.5, 1.5, 9, type, target);
  const auto bev = aspen::test::randomValues(C, -1, 1, 10, type, target);
  dev.write(graph, acts, xv);
  dev.write(graph, gy, gv);
  dev.write(graph, gamma, gav);
  dev.write(graph, beta, bev);
  std::vector<float> mean, inv, out, wh, dg, db, di;
  dev.read(graph, stats.first, mean);
  dev.read(graph, stats.second, inv);
  dev.read(graph, normed.first, out);
  dev.read(graph, normed.second, wh);
  dev.read(graph, pgrads.first, dg);
  dev.read(graph, pgrads.second, db);
  dev.read(graph, dIn, di);
  dev.run(graph, prog);
  HostNorm ref;
  if (kind == NormKind::Batch)
    ref = hostNorm(
        xv, gv, gav, bev, N, C, F, C, [](std::size_t, std::size_t c) { return c; }, eps);
  else if (kind == NormKind::Group) // PopLibs' strided grouping: channel c in group c % G
    ref = hostNorm(
        xv, gv, gav, bev, N, C, F, N * G, [&](std::size_t n, std::size_t c) { return n * G + c % G; }, eps);
  else
    ref = hostNorm(
        xv, gv, gav, bev, N, C, F, N, [](std::size_t n, std::size_t) { return n; }, eps);
  const double tol = type == HALF ? 2e-2 : 1e-4;
  requireClose(mean, ref.mean, tol, tol, "mean");
  requireClose(inv, ref.inv, tol, tol, "invStdDev");
  requireClose(wh, ref.whitened, tol, tol, "whitened");
  requireClose(out, ref.out, tol, tol, "normalised");
  requireClose(dg, ref.dGamma, tol * 4, tol * 4, "gammaDelta");
  requireClose(db, ref.dBeta, tol * 4, tol * 4, "betaDelta");
  requireClose(di, ref.dIn, tol * 4, tol * 4, "input gradient");
}

} // namespace

TEST_CASE("batch norm statistics, normalise and gradients match a host loop", "[popnn][norm]") {
  runNorm(NormKind::Batch, FLOAT);
  runNorm(NormKind::Batch, HALF);
}

TEST_CASE("group norm (strided groups) matches a host loop", "[popnn][norm]") {
  runNorm(NormKind::Group, FLOAT);
  runNorm(NormKind::Group, HALF);
}

TEST_CASE("layer norm matches a host loop", "[popnn][norm]") {
  runNorm(NormKind::Layer, FLOAT);
  runNorm(NormKind::Layer, HALF);
}

TEST_CASE("convolutionWithOutput, biases and the planning cache", "[poplin][conv]") {
  const std::size_t B = 2, Ci = 2, Co = 3, S = 4;
  poplin::ConvParams p(FLOAT, B, {S, S}, {1, 1}, Ci, Co, 1);
  TestDevice dev(TestTarget::FewTiles);
  Graph graph(dev.getTarget());
  popops::addCodelets(graph);
  poplin::addCodelets(graph);
  poplin::PlanningCache cache;
  program::Sequence prog;
  Tensor in = poplin::createInput(graph, p, "in", {}, &cache);
  Tensor w = poplin::createWeights(graph, p, "w", {}, &cache);
  const std::size_t plans = cache.size();
  REQUIRE(plans > 0);
  Tensor out = poplin::createConvOutput(graph, p, "out", {}, &cache);
  poplin::convolutionWithOutput(graph, in, w, out, p, false, prog, "conv",
                                {{"availableMemoryProportion", "0.3"}}, &cache);
  Tensor biases = poplin::createBiases(graph, out);
  poplin::addBias(graph, out, biases, prog);
  poplin::convolutionBiasUpdate(graph, out, biases, -0.25f, {}, prog);
  std::ostringstream plan;
  poplin::reportPlanInfo(plan, graph, p, {}, &cache);
  REQUIRE(plan.str().find("grouped matrix product") != std::string::npos);
  const auto iv = aspen::test::randomValues(in.numElements(), -1, 1, 21, FLOAT, dev.getTarget());
  const auto wv = aspen::test::randomValues(w.numElements(), -1, 1, 22, FLOAT, dev.getTarget());
  const std::vector<float> bv{0.5f, -1.0f, 2.0f};
  dev.write(graph, in, iv);
  dev.write(graph, w, wv);
  dev.write(graph, biases, bv);
  std::vector<float> gotOut, gotB;
  dev.read(graph, out, gotOut);
  dev.read(graph, biases, gotB);
  dev.run(graph, prog);
  std::vector<float> want = hostConv(p, iv, wv);
  std::vector<float> wantB = bv;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t co = 0; co < Co; ++co)
      for (std::size_t i = 0; i < S * S; ++i) {
        float &v = want[(b * Co + co) * S * S + i];
        v += bv[co];
        wantB[co] -= 0.25f * v;
      }
  requireClose(gotOut, want, 1e-5, 1e-5, "convolution + bias");
  requireClose(gotB, wantB, 1e-4, 1e-4, "biases after the update");
}
