// Copyright (c) Aspen contributors.
// Issue 10 item 5: calls that compile against Poplar stay unambiguous next to Aspen's
// own overloads (braced lists, vectors, ArrayRefs, single values), and do what they say.
#include <poplar/Engine.hpp>
#include <poplar/IPUModel.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <vector>

TEST_CASE("Overloads users call are unambiguous", "[compat][overloads]") {
  poplar::IPUModel model;
  model.tilesPerIPU = 2;
  poplar::Device device = model.createDevice();
  poplar::Graph graph(device.getTarget());

  // addConstant: braced list with and without the template argument, vector, value, pointer.
  poplar::Tensor c1 = graph.addConstant<float>(poplar::FLOAT, {3}, {0.5f, 1.0f, 2.0f});
  const std::vector<float> cv{1.0f, 2.0f, 3.0f};
  poplar::Tensor c2 = graph.addConstant(poplar::FLOAT, {3}, cv);
  poplar::Tensor c3 = graph.addConstant(poplar::FLOAT, {3}, 4.0f);
  poplar::Tensor c4 = graph.addConstant(poplar::FLOAT, {3}, cv.data());
  poplar::Tensor c5 = graph.addConstant(poplar::INT, {1}, 0);
  for (const poplar::Tensor &c : {c1, c2, c3, c4, c5})
    graph.setTileMapping(c, 0);

  poplar::Tensor a = graph.addVariable(poplar::FLOAT, {3}, "a");
  poplar::Tensor b = graph.addVariable(poplar::FLOAT, {3}, "b");
  poplar::Tensor s = graph.addVariable(poplar::FLOAT, {1}, "s");
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, 1);
  graph.setTileMapping(s, 1);
  graph.setInitialValue(b, std::vector<float>{0.0f, 0.0f, 0.0f});
  graph.setInitialValue<float>(s, {7.0f});
  graph.createHostWrite("a-write", a);
  graph.createHostWrite("s-write", s);
  graph.createHostRead("b-read", b);
  graph.createHostRead("s-read", s);
  poplar::DataStream in = graph.addHostToDeviceFIFO("in", poplar::FLOAT, 3);

  poplar::program::Sequence prog;
  prog.add(poplar::program::Copy(in, a));
  prog.add(poplar::program::Copy(a, b));
  poplar::Engine engine(graph, prog, {{"debug.instrument", "false"}});
  engine.load(device);

  std::vector<float> streamed{3.0f, 4.0f, 5.0f};
  engine.connectStream("in", streamed);                       // vector<T>&
  engine.writeTensor<float>("s-write", {10.0f});              // braced list
  engine.writeTensor("a-write", std::vector<float>(3, 1.0f)); // vector
  std::array<float, 1> one{{10.0f}};
  engine.writeTensor<float>("s-write", one); // ArrayRef from std::array
  engine.run(0);

  std::vector<float> out(3);
  engine.readTensor("b-read", out); // vector<T>&
  CHECK(out == streamed);
  float sv = 0;
  engine.readTensor("s-read", &sv, &sv + 1);
  CHECK(sv == 10.0f);
  std::vector<float> sOut(1);
  engine.readTensor<float>("s-read", sOut);
  CHECK(sOut[0] == 10.0f);
}

// Calls as Poplar programs spell them, compiled (not run: the files they name do not
// exist). A call made ambiguous by an Aspen-only overload breaks the build here.
void compatOverloadsCompileOnly(poplar::Graph &g, poplar::Engine &e, poplar::ComputeSet cs) {
  using namespace poplar;
  using namespace poplar::program;
  g.addCodelets("codelets.cpp");
  g.addCodelets(std::string("codelets.gp"));
  g.addCodelets({"a.cpp", "b.cpp"}, "-O3 -I codelets");
  g.addCodelets("c.cpp", CodeletFileType::Auto, "-O3");
  Tensor t = g.addVariable(FLOAT, {2, 3});
  Tensor u = g.addVariable(FLOAT, {2}, "u");
  Tensor w = g.addVariable(FLOAT, {6}, VariableMappingMethod::LINEAR, "w");
  Tensor k1 = g.addConstant(FLOAT, {1}, 0.5);
  Tensor k2 = g.addConstant<unsigned>(UNSIGNED_INT, {2}, {1u, 2u});
  Tensor k3 = g.addConstant(INT, {}, 5);
  Tensor k4 = g.addConstant<float>(FLOAT, {2}, std::vector<float>{1.0f, 2.0f});
  g.setTileMapping(t, 0);
  VertexRef v =
      g.addVertex(cs, "V", {{"in", t[0]}, {"out", u}, {"ins", std::vector<Tensor>{t[0], t[1]}}, {"n", 4u}});
  g.setTileMapping(v, 0);
  g.connect(v["in"], t[0]);
  g.connect(v["ins"], {t[0], t[1]});
  g.connect(v["ins"], std::vector<Tensor>{t[0], t[1]});
  g.connect(v["ins"][0], t[1]);
  g.connect(v["n"], 4);
  g.connect(v["scale"], 0.5f);
  g.setInitialValue(v["count"], 3u);
  g.setInitialValue(v["offsets"], std::vector<unsigned>{1, 2});
  g.setInitialValue<float>(u, {1.0f, 2.0f});
  g.setInitialValue(u, std::vector<float>{1.0f, 2.0f});
  g.setInitialValue(k1, 0.0f);
  g.setFieldSize(v["ins"], 2);
  g.setPerfEstimate(v, 100);
  Sequence seq{Copy(t, t), Execute(cs)};
  Sequence seq2({Copy(u, u)}, "seq2");
  seq.add(Repeat(2, seq2));
  std::vector<float> host(6);
  e.connectStream("s", host);
  e.connectStream("s", host.data(), host.data() + host.size());
  e.connectStreamToCallback("s", [](void *) {});
  e.writeTensor("h", host.data(), host.data() + host.size());
  e.writeTensor<float>("h", {1.0f, 2.0f});
  e.writeTensor("h", host);
  e.readTensor("h", host.data(), host.data() + host.size());
  e.readTensor("h", host);
  e.readTensor("h", host.data());
  Engine e1(g, {seq, seq2});
  Engine e2{g, seq, {{"debug.instrument", "true"}}};
  Executable exe = compileGraph(g, {seq});
  (void)w;
  (void)k2;
  (void)k3;
  (void)k4;
}
