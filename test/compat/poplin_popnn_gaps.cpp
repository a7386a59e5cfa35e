// Copyright (c) Aspen contributors.
// Poplar API that PopLibs' poplin and popnn tests and tools found missing or different when run
// on Aspen (issue 24, docs/poplibs-from-source.md, "Measured: poplin and popnn"), each written
// as PopLibs writes it, with results checked against host values worked out here:
//  - Tensor::slice(begin, end) with fewer bounds than dimensions (poplin's getSubConvolution
//    slices a {group, batch, ...} tensor with two);
//  - IPUModel's conv-unit fields (single_conv_layer sets the load widths, units and pipeline
//    depth), read back through the Target;
//  - libpva's ProgramVisitor and Program::accept (conv_analysis, ConvExpandDimsVertexTest);
//  - poplar_test::copy<T, N> between a list of boost::multi_array and a list of raw buffers
//    (oct_conv_layer);
//  - VariableInterval's comparisons (ConvUtilTest compares two getVarRegions() lists) and
//    Tensor::outputRegions (ConvTest prints a result's regions).
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar_test/Util.hpp>
#include <pva/pva.hpp>

#include <catch2/catch.hpp>

#include <boost/multi_array.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

TEST_CASE("Tensor::slice with fewer bounds than dimensions slices the leading ones", "[compat][poplibs]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  // A {group, batch, field, channel} tensor of 3x4x2x5, as poplin's convolutions hold activations.
  const std::vector<std::size_t> shape = {3, 4, 2, 5};
  Tensor in = graph.addVariable(FLOAT, shape, "in");
  graph.setTileMapping(in, 0);
  Tensor sub = in.slice({1, 1}, {3, 3}); // groups 1..2, batches 1..2, the rest whole
  REQUIRE(sub.shape() == std::vector<std::size_t>{2, 2, 2, 5});
  const std::vector<std::size_t> group2 = {2}, group3 = {3};
  CHECK(in.slice(group2, group3).shape() == std::vector<std::size_t>{1, 4, 2, 5});

  Tensor out = graph.addVariable(FLOAT, sub.shape(), "out");
  graph.setTileMapping(out, 1);
  graph.createHostWrite("in", in);
  graph.createHostRead("out", out);
  Engine engine(graph, Sequence{Copy(sub, out)});
  engine.load(device);
  std::vector<float> host(3 * 4 * 2 * 5);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(i);
  engine.writeTensor("in", host.data(), host.data() + host.size());
  engine.run(0);
  std::vector<float> got(out.numElements());
  engine.readTensor("out", got.data(), got.data() + got.size());
  std::size_t k = 0;
  for (std::size_t g = 1; g < 3; ++g)
    for (std::size_t b = 1; b < 3; ++b)
      for (std::size_t f = 0; f < 2; ++f)
        for (std::size_t c = 0; c < 5; ++c, ++k)
          CHECK(got[k] == host[((g * 4 + b) * 2 + f) * 5 + c]);
}

TEST_CASE("IPUModel's conv-unit fields reach the target", "[compat][poplibs]") {
  IPUModel model("ipu2");
  // ipu2's: 16 half-accumulating units, 8 float-accumulating ones, 64-bit loads, depth 4.
  CHECK(model.fp16InFp16OutConvUnitsPerTile == 16);
  CHECK(model.fp16InFp32OutConvUnitsPerTile == 8);
  CHECK(model.fp32InFp32OutConvUnitsPerTile == 8);
  CHECK(model.fp32ConvUnitInputLoadElemsPerCycle == 2);
  CHECK(model.fp16ConvUnitInputLoadElemsPerCycle == 4);
  CHECK(model.fp8ConvUnitInputLoadElemsPerCycle == 8);
  CHECK(model.fp16ConvUnitMaxPipelineDepth == 4);
  CHECK(model.fp32ConvUnitMaxPipelineDepth == 4);
  CHECK(IPUModel("ipu1").fp32InFp32OutConvUnitsPerTile == 4);

  // single_conv_layer's --input-load-width=16: 128-bit loads, and float-out units limited by
  // the store width (pipeline depth x floats stored per cycle).
  const unsigned loadWidth = 16;
  model.dataPathWidth = loadWidth * 8;
  model.fp32ConvUnitInputLoadElemsPerCycle = loadWidth / 4;
  model.fp16ConvUnitInputLoadElemsPerCycle = loadWidth / 2;
  model.fp8ConvUnitInputLoadElemsPerCycle = loadWidth;
  model.fp16InFp32OutConvUnitsPerTile = std::min(
      model.fp16InFp16OutConvUnitsPerTile, model.fp16ConvUnitMaxPipelineDepth * (model.dataPathWidth / 32));
  const Target target = model.createDevice().getTarget();
  CHECK(target.getDataPathWidth() == 128);
  CHECK(target.getFp32ConvUnitInputLoadElemsPerCycle() == 4);
  CHECK(target.getFp16ConvUnitInputLoadElemsPerCycle() == 8);
  CHECK(target.getConvUnitInputLoadElemsPerCycle(HALF) == 8);
  CHECK(target.getConvUnitInputLoadElemsPerCycle(QUARTER) == 16); // fp8: the quarter convolutions
  CHECK(target.getFp16InFp32OutConvUnitsPerTile() == 16);
  CHECK(target.getNumConvUnits(HALF, FLOAT) == 16);
  CHECK(target.getNumConvUnits(HALF, HALF) == 16);
  CHECK(target.getNumConvUnits(FLOAT, FLOAT) == 8);
  CHECK(target.getWeightsPerConvUnit(HALF) == 8 * 4);
  // poplin's fp8 convolutions ask for the pipeline depth by the weights' type: quarter
  // products go through the half pipeline, so a quarter conv unit holds 16 x 4 weights.
  CHECK(target.getConvUnitMaxPipelineDepth(QUARTER) == target.getConvUnitMaxPipelineDepth(HALF));
  CHECK(target.getWeightsPerConvUnit(QUARTER) ==
        target.getConvUnitInputLoadElemsPerCycle(QUARTER) * target.getConvUnitMaxPipelineDepth(QUARTER));
}

namespace {
// Counts the programs it is given, by the visit method called, and keeps their names.
struct CountingVisitor : pva::ProgramVisitor {
  std::map<std::string, std::vector<std::string>> seen;
  void visitSequence(const pva::SequenceProgram &p) override { seen["Sequence"].push_back(p.name()); }
  void visitOnTileExecute(const pva::OnTileExecuteProgram &p) override {
    seen["OnTileExecute"].push_back(p.name());
  }
  void visitDoExchange(const pva::DoExchangeProgram &p) override { seen["DoExchange"].push_back(p.name()); }
  void visitProgram(const pva::Program &p) override { seen["other"].push_back(p.name()); }
};
} // namespace

TEST_CASE("pva::ProgramVisitor: Program::accept calls the method of the program's type",
          "[compat][pva][poplibs]") {
  const char *root = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(root != nullptr);
  IPUModel model("ipu2");
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  graph.addCodelets(std::string(root) + "/test/compat/vertices/report_vertices.cpp");
  Tensor a = graph.addVariable(FLOAT, {3}, "a");
  Tensor b = graph.addVariable(FLOAT, {3}, "b");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 1);
  ComputeSet cs = graph.addComputeSet("doubleB");
  VertexRef v = graph.addVertex(cs, "Double", {{"data", b}});
  graph.setTileMapping(v, 1);
  graph.createHostWrite("a", a);
  Engine engine(graph, Sequence{Copy(a, b, false, "moveA"), Execute(cs)});
  const pva::Report report = engine.getReport(false);

  CountingVisitor visitor;
  std::map<pva::Program::Type, std::size_t> byType;
  for (const auto &p : report.compilation().programs()) {
    ++byType[p->type()];
    p->accept(visitor);
  }
  REQUIRE(byType[pva::Program::Type::OnTileExecute] >= 1);
  REQUIRE(byType[pva::Program::Type::DoExchange] >= 1);
  CHECK(visitor.seen["OnTileExecute"].size() == byType[pva::Program::Type::OnTileExecute]);
  CHECK(visitor.seen["DoExchange"].size() == byType[pva::Program::Type::DoExchange]);
  CHECK(visitor.seen["Sequence"].size() == byType[pva::Program::Type::Sequence]);
  std::size_t programs = 0;
  for (const auto &[kind, names] : visitor.seen)
    programs += names.size();
  CHECK(programs == report.compilation().programs().size());
  // The compute set's step is visited under its name.
  bool namedStep = false;
  for (const std::string &name : visitor.seen["OnTileExecute"])
    namedStep = namedStep || name.find("doubleB") != std::string::npos;
  CHECK(namedStep);
  // A visitor that overrides nothing accepts every program.
  pva::ProgramVisitor quiet;
  for (const auto &p : report.compilation().programs())
    p->accept(quiet);
}

TEST_CASE("poplar_test::copy<T, N> between multi_arrays and raw buffers", "[compat][poplibs]") {
  IPUModel model("ipu2");
  const Target target = model.createDevice().getTarget();
  std::vector<boost::multi_array<double, 2>> hosts;
  hosts.emplace_back(boost::extents[2][3]);
  hosts.emplace_back(boost::extents[1][4]);
  for (std::size_t i = 0; i < hosts.size(); ++i)
    for (std::size_t j = 0; j < hosts[i].num_elements(); ++j)
      hosts[i].data()[j] = 0.5 * static_cast<double>(j) - static_cast<double>(i);
  std::vector<std::unique_ptr<char[]>> raw;
  for (const auto &h : hosts)
    raw.emplace_back(new char[h.num_elements() * 2]); // HALF elements
  poplar_test::copy<double, 2>(target, HALF, hosts, raw);

  std::vector<boost::multi_array<double, 2>> back;
  back.emplace_back(boost::extents[2][3]);
  back.emplace_back(boost::extents[1][4]);
  poplar_test::copy<double, 2>(target, HALF, raw, back);
  for (std::size_t i = 0; i < hosts.size(); ++i)
    for (std::size_t j = 0; j < hosts[i].num_elements(); ++j)
      CHECK(back[i].data()[j] == hosts[i].data()[j]); // halves of k/2 - i are exact

  // Lists of different lengths are refused, naming both counts.
  std::vector<boost::multi_array<double, 2>> one;
  one.emplace_back(boost::extents[2][3]);
  try {
    poplar_test::copy<double, 2>(target, HALF, one, raw);
    FAIL("expected poplar_error");
  } catch (const poplar_error &e) {
    CHECK(std::string(e.what()).find("1 host containers but 2 device buffers") != std::string::npos);
  }
}

TEST_CASE("getVarRegions lists compare; outputRegions prints them", "[compat][poplibs]") {
  IPUModel model("ipu2");
  model.tilesPerIPU = 2;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  Tensor a = graph.addVariable(FLOAT, {4, 6}, "a");
  Tensor b = graph.addVariable(FLOAT, {6});
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 1);

  // Column 2..4 of rows 1..2 of `a`, then b[0:2): three runs of two variables.
  Tensor t = concat(a.slice({1, 2}, {3, 4}).flatten(), b.slice(0, 2));
  const std::vector<VariableInterval> regions = t.getVarRegions();
  REQUIRE(regions.size() == 3);
  const VariableRef va = regions[0].var, vb = regions[2].var;
  CHECK(va == regions[1].var);
  CHECK(va != vb);
  const std::vector<VariableInterval> expected = {VariableInterval(va, Interval(8, 10)),
                                                  VariableInterval(va, Interval(14, 16)),
                                                  VariableInterval(vb, Interval(0, 2))};
  CHECK(regions == expected);
  // A reshape of the same elements has the same regions; a different slice does not.
  CHECK(t.reshape({2, 3}).getVarRegions() == regions);
  CHECK(a.slice({1, 2}, {3, 5}).getVarRegions() != a.slice({1, 2}, {3, 4}).getVarRegions());
  CHECK_FALSE(VariableInterval(va, Interval(8, 10)) == VariableInterval(vb, Interval(8, 10)));
  CHECK_FALSE(VariableInterval(va, Interval(8, 10)) == VariableInterval(va, Interval(8, 11)));
  // Ordered by variable, then interval: usable as a std::map key.
  CHECK(VariableInterval(va, Interval(8, 10)) < VariableInterval(va, Interval(14, 16)));
  CHECK((VariableInterval(va, Interval(14, 16)) < VariableInterval(vb, Interval(0, 2))) == (va < vb));
  std::map<VariableInterval, int> byRegion;
  for (const auto &r : regions)
    ++byRegion[r];
  byRegion[VariableInterval(va, Interval(8, 10))] += 1;
  CHECK(byRegion.size() == 3);
  CHECK(byRegion[regions[0]] == 2);

  // outputRegions: one line a region, each variable named as getVarStr names it.
  std::ostringstream os;
  os << "result ";
  t.outputRegions(os);
  CHECK(os.str() == "result 'a'[8:10)\n'a'[14:16)\nvariable " + std::to_string(vb.getId()) + "[0:2)\n");
  std::ostringstream one;
  one << regions[2];
  CHECK(one.str() == "variable " + std::to_string(vb.getId()) + "[0, 2)");
}
