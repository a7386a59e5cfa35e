// Copyright (c) Aspen contributors.
// Issue 21, items 1-4: codelet files written as IPU users write them
// (test/compat/codelets/), built with popc as a Makefile calls it and with
// Graph::addCodelets, run on the IPUModel and on a DeviceManager IPU device, results
// checked against host loops.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>

#include "CodeletHarness.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace poplar;

namespace {

using aspen::test::popc;

using Result = aspen::test::CommandResult;
using aspen::test::TempDir;

Result run(const std::string &command) {
  return aspen::test::runCommand(command);
}

bool exists(const std::string &path) {
  return std::ifstream(path).good();
}

using aspen::test::codelets::DeviceKind;
using aspen::test::codelets::makeDevice;
using aspen::test::codelets::roundHalf;

/// One compute set on tile 0: inputs written, the set run, outputs read as floats.
class Harness {
public:
  Harness(Graph &graph, Device &device) : graph_(graph), device_(device), cs_(graph.addComputeSet("cs")) {}

  Tensor input(const std::string &name, Type type, const std::vector<float> &values) {
    Tensor t = tensor(name, type, values.size());
    graph_.createHostWrite(name, t);
    writes_.push_back({name, type, values});
    return t;
  }
  Tensor output(const std::string &name, Type type, std::size_t n) {
    Tensor t = tensor(name, type, n);
    graph_.createHostRead(name, t);
    reads_.push_back({name, type, n});
    return t;
  }
  /// An input that is read back too (an InOut field).
  Tensor inout(const std::string &name, Type type, const std::vector<float> &values) {
    Tensor t = input(name, type, values);
    graph_.createHostRead(name + "/read", t);
    reads_.push_back({name + "/read", type, values.size()});
    return t;
  }
  VertexRef vertex(const std::string &type, const std::map<std::string, Tensor> &connections) {
    VertexRef v = graph_.addVertex(cs_, type);
    for (const auto &[field, tensor] : connections)
      graph_.connect(v[field], tensor);
    graph_.setTileMapping(v, 0);
    return v;
  }
  void run() {
    Engine engine(graph_, program::Execute(cs_));
    engine.load(device_);
    for (const Write &w : writes_) {
      std::vector<char> bytes = toDevice(w.type, w.values);
      engine.writeTensor(w.name, bytes.data(), bytes.data() + bytes.size());
    }
    engine.run(0);
    for (const Read &r : reads_) {
      std::vector<char> bytes(r.n * graph_.getTarget().getTypeSize(r.type));
      engine.readTensor(r.name, bytes.data(), bytes.data() + bytes.size());
      results_[r.name] = fromDevice(r.type, bytes, r.n);
    }
  }
  const std::vector<float> &operator[](const std::string &name) const { return results_.at(name); }
  const Target &target() const { return graph_.getTarget(); }
  Graph &graph() { return graph_; }
  /// A half state field's value, rounded to half on the host.
  void setHalf(VertexRef v, const std::string &field, float value) {
    std::uint16_t bits;
    copyFloatToDeviceHalf(graph_.getTarget(), &value, &bits, 1);
    graph_.setInitialValueHalf(v[field], bits);
  }

private:
  struct Write {
    std::string name;
    Type type;
    std::vector<float> values;
  };
  struct Read {
    std::string name;
    Type type;
    std::size_t n;
  };
  Graph &graph_;
  Device &device_;
  ComputeSet cs_;
  std::vector<Write> writes_;
  std::vector<Read> reads_;
  std::map<std::string, std::vector<float>> results_;

  Tensor tensor(const std::string &name, Type type, std::size_t n) {
    Tensor t = graph_.addVariable(type, {n}, name);
    graph_.setTileMapping(t, 0);
    return t;
  }
  std::vector<char> toDevice(Type type, const std::vector<float> &values) const {
    std::vector<char> bytes(values.size() * graph_.getTarget().getTypeSize(type));
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (type == HALF) {
        copyFloatToDeviceHalf(graph_.getTarget(), &values[i], bytes.data() + 2 * i, 1);
      } else if (type == FLOAT) {
        std::memcpy(bytes.data() + 4 * i, &values[i], 4);
      } else if (type == INT) {
        const int v = static_cast<int>(values[i]);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      } else {
        const unsigned v = static_cast<unsigned>(values[i]);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
    }
    return bytes;
  }
  std::vector<float> fromDevice(Type type, const std::vector<char> &bytes, std::size_t n) const {
    std::vector<float> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (type == HALF) {
        copyDeviceHalfToFloat(graph_.getTarget(), bytes.data() + 2 * i, &out[i], 1);
      } else if (type == FLOAT) {
        std::memcpy(&out[i], bytes.data() + 4 * i, 4);
      } else if (type == INT) {
        int v;
        std::memcpy(&v, bytes.data() + 4 * i, 4);
        out[i] = static_cast<float>(v);
      } else {
        unsigned v;
        std::memcpy(&v, bytes.data() + 4 * i, 4);
        out[i] = static_cast<float>(v);
      }
    }
    return out;
  }
};

/// Builds `sources` with popc as a Makefile does (`popc <flags> <sources> -o x.gp`) and
/// with addCodelets, and runs `body` on the IPUModel and on a DeviceManager IPU device.
void onEveryBuildAndDevice(const std::vector<std::string> &sources, const std::string &flags,
                           const std::function<void(Harness &)> &body) {
  aspen::test::codelets::onEveryBuildAndDevice(sources, flags, [&](Graph &graph, Device &device) {
    Harness h(graph, device);
    body(h);
  });
}

std::vector<float> ramp(std::size_t n, float start, float step) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = start + step * static_cast<float>(i);
  return v;
}

} // namespace

TEST_CASE("dialect: IPU vector types, vector templates named as Poplar names them", "[compat][codelets]") {
  onEveryBuildAndDevice({"VectorTypes.cpp"}, "-O3", [](Harness &h) {
    const std::size_t n = 11;
    const std::vector<float> a = ramp(n, -2.0f, 0.375f), b = ramp(n, 1.0f, -0.25f);
    struct Case {
      std::string vertex;
      Type type;
      float scale;
    };
    const std::vector<Case> cases = {{"AxpyVec<float,float2>", FLOAT, 1.5f},
                                     {"AxpyVec<float,float4>", FLOAT, -0.75f},
                                     {"AxpyVec<half,half4>", HALF, 1.25f},
                                     {"AxpyVec<half,half2>", HALF, 3.0f}};
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const std::string k = std::to_string(c);
      VertexRef v = h.vertex(cases[c].vertex, {{"a", h.input("a" + k, cases[c].type, a)},
                                               {"b", h.input("b" + k, cases[c].type, b)},
                                               {"out", h.output("out" + k, cases[c].type, n)}});
      if (cases[c].type == HALF)
        h.setHalf(v, "scale", cases[c].scale);
      else
        h.graph().setInitialValue(v["scale"], cases[c].scale);
    }
    const std::vector<float> lanesIn = {0.25f, 1.5f, -2.75f, 3.0f};
    h.vertex("Lanes", {{"in", h.input("lanesIn", FLOAT, lanesIn)},
                       {"out", h.output("lanesOut", FLOAT, 14)},
                       {"mask", h.output("mask", INT, 4)},
                       {"halves", h.output("halves", HALF, 4)}});
    h.run();
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const std::vector<float> &out = h["out" + std::to_string(c)];
      for (std::size_t i = 0; i < n; ++i) {
        INFO(cases[c].vertex << " element " << i);
        if (cases[c].type == FLOAT) {
          const float prod = a[i] * cases[c].scale;
          REQUIRE(out[i] == prod + b[i]);
        } else { // each half operation rounds to half
          auto r = [&](float x) { return roundHalf(h.target(), x); };
          REQUIRE(out[i] == r(r(r(a[i]) * r(cases[c].scale)) + r(b[i])));
        }
      }
    }
    const std::vector<float> &lanes = h["lanesOut"];
    const float *v = lanesIn.data();
    const std::vector<float> expected = {v[0],
                                         v[3],
                                         v[1] + v[2],
                                         v[1],
                                         v[3] - v[0],
                                         2 * v[0] - 1,
                                         2 * v[1] - 1,
                                         2 * v[2] - 1,
                                         2 * v[3] - 1,
                                         static_cast<float>(0 + 1 + -2 + 3),
                                         static_cast<float>(3 * -4 + 4),
                                         10.0f,
                                         21.0f,  // (ushort2)0x00020001u is {1, 2}: bits, not a splat
                                         32.0f}; // 0x0000000300000002 as uint2 is {2, 3}
    REQUIRE(lanes == expected);
    REQUIRE(h["mask"] == std::vector<float>{0, -1, 0, -1}); // clang's lane masks: all ones
    for (std::size_t i = 0; i < 4; ++i) {
      const float hv = roundHalf(h.target(), v[i]);
      REQUIRE(h["halves"][i] == roundHalf(h.target(), hv * hv));
    }
  });
}

TEST_CASE("dialect: half is a built-in 16-bit float", "[compat][codelets]") {
  onEveryBuildAndDevice({"HalfBuiltin.cpp"}, "-O2 -Werror -Wdouble-promotion", [](Harness &h) {
    const std::vector<float> fin = {0.1f, 1.0f / 3, 1000.7f, -7.3f, 65519.0f};
    const std::vector<float> hin = {4.0f, 0.3f, -2.0f, 100.0f, 0.0f};
    h.vertex("HalfMix", {{"in", h.input("in", FLOAT, {2.2f})},
                         {"fin", h.input("fin", FLOAT, fin)},
                         {"hin", h.input("hin", HALF, hin)},
                         {"hout", h.output("hout", HALF, 5)},
                         {"fout", h.output("fout", FLOAT, 5)},
                         {"scalar", h.output("scalar", HALF, 1)},
                         {"widenedOut", h.output("widened", FLOAT, 1)}});
    h.run();
    auto r = [&](float x) { return roundHalf(h.target(), x); };
    REQUIRE(h["scalar"][0] == r(r(r(2.2f) * 3.0f) + 2.0f));
    REQUIRE(h["widened"][0] == std::floor(r(2.2f) + r(hin[0])));
    for (std::size_t i = 0; i < fin.size(); ++i) {
      INFO("element " << i);
      const float x = r(hin[i]);
      REQUIRE(h["fout"][i] == x);
      const float y = x > 0 ? r(std::sqrt(x)) : 0.0f;
      REQUIRE(h["hout"][i] == r(r(fin[i]) + r(y + y)));
    }
  });
}

TEST_CASE("dialect: the casts codelets do on field data", "[compat][codelets]") {
  onEveryBuildAndDevice({"FieldCasts.cpp"}, "-O3 -Werror", [](Harness &h) {
    const unsigned n = 8;
    const std::vector<float> in = ramp(n, 0.5f, 1.25f), acc = ramp(n, 10.0f, -3.0f);
    VertexRef v = h.vertex("SumPairs<float>", {{"in", h.input("in", FLOAT, in)},
                                               {"acc", h.inout("acc", FLOAT, acc)},
                                               {"out", h.output("out", FLOAT, n / 2 + 1)}});
    h.graph().setInitialValue(v["n"], n);
    h.run();
    for (unsigned i = 0; i < n; ++i)
      REQUIRE(h["acc/read"][i] == acc[i] + in[i]);
    for (unsigned i = 0; i < n / 2; ++i)
      REQUIRE(h["out"][i] == in[2 * i] + in[2 * i + 1]);
    REQUIRE(h["out"][n / 2] == static_cast<float>(n));
  });
}

TEST_CASE("dialect: a list of read-only edges has const rows", "[compat][codelets]") {
  onEveryBuildAndDevice({"FieldCasts.cpp"}, "-O3 -Werror", [](Harness &h) {
    const std::vector<std::vector<float>> rows = {{3, 4, 9, 0}, {5, 0}, {0}};
    VertexRef v = h.vertex("WalkRows", {{"sums", h.output("sums", UNSIGNED_INT, rows.size())}});
    h.graph().setFieldSize(v["rows"], rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r)
      h.graph().connect(v["rows"][r], h.input("row" + std::to_string(r), UNSIGNED_INT, rows[r]));
    h.run();
    for (std::size_t r = 0; r < rows.size(); ++r) {
      float total = 0;
      for (float x : rows[r])
        total += x;
      REQUIRE(h["sums"][r] == total + 1000 * rows[r][0]);
    }
  });
}

TEST_CASE("dialect: <cmath> of a float is float (-Werror -Wdouble-promotion)", "[compat][codelets]") {
  onEveryBuildAndDevice({"CmathFloat.cpp"}, "-O3 -Werror -Wdouble-promotion", [](Harness &h) {
    const std::vector<float> x = {0.5f, 1.0f, 2.25f, 7.0f}, y = {-1.0f, 0.25f, 3.0f, -0.5f};
    h.vertex(
        "Transcendentals",
        {{"x", h.input("x", FLOAT, x)}, {"y", h.input("y", FLOAT, y)}, {"out", h.output("out", FLOAT, 24)}});
    h.run();
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("element " << i);
      const float a = x[i], b = y[i];
      // The float functions, as the codelet calls them (float in, float out).
      REQUIRE(h["out"][6 * i + 0] == std::sqrt(a));
      REQUIRE(h["out"][6 * i + 1] == std::exp(-a));
      REQUIRE(h["out"][6 * i + 2] == std::atan2(b, a));
      REQUIRE(h["out"][6 * i + 3] == std::erf(a));
      REQUIRE(h["out"][6 * i + 4] == std::log(a) + std::fabs(b));
      REQUIRE(h["out"][6 * i + 5] == std::pow(a, 0.5f) + std::tanh(b));
    }
  });
}

TEST_CASE("dialect: b + q * c rounds twice, as a host reference written the same way", "[compat][codelets]") {
  onEveryBuildAndDevice({"Contraction.cpp"}, "-O3", [](Harness &h) {
    const std::size_t n = 64;
    std::vector<float> b(n), q(n), c(n);
    for (std::size_t i = 0; i < n; ++i) { // products whose low bits matter
      b[i] = -1.0f - static_cast<float>(i) / 7.0f;
      q[i] = 1.0f + static_cast<float>(3 * i + 1) / 1024.0f;
      c[i] = 1.0f + static_cast<float>(5 * i + 2) / 4096.0f + b[i] * -1.0f;
    }
    h.vertex("Relax", {{"b", h.input("b", FLOAT, b)},
                       {"q", h.input("q", FLOAT, q)},
                       {"c", h.input("c", FLOAT, c)},
                       {"out", h.output("out", FLOAT, n)},
                       {"fused", h.output("fused", FLOAT, n)},
                       {"hout", h.output("hout", HALF, n)}});
    h.run();
    auto r = [&](float x) { return roundHalf(h.target(), x); };
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n; ++i) {
      volatile float product = q[i] * c[i]; // rounded: no contraction on the host either
      const float reference = b[i] + product;
      REQUIRE(h["out"][i] == reference);
      REQUIRE(h["fused"][i] == std::fma(q[i], c[i], b[i]));
      differ += h["out"][i] != h["fused"][i];
      REQUIRE(h["hout"][i] == r(r(b[i]) + r(r(q[i]) * r(c[i]))));
    }
    REQUIRE(differ > 0); // the data tells fused from unfused
  });
}

TEST_CASE("dialect: IPU function attributes, designated initialisers in any order", "[compat][codelets]") {
  onEveryBuildAndDevice({"Attributes.cpp"}, "-O2 -Wall", [](Harness &h) {
    const std::vector<float> in = ramp(9, -1.0f, 0.625f);
    h.vertex("Designated", {{"in", h.input("in", FLOAT, in)}, {"out", h.output("out", FLOAT, 9)}});
    h.run();
    for (std::size_t i = 0; i < in.size(); ++i) {
      volatile float product = in[i] * 2.0f;
      REQUIRE(h["out"][i] == product + 1.0f);
    }
  });
}

TEST_CASE("names: vertex types as Poplar and templateVertex spell them", "[compat][codelets]") {
  onEveryBuildAndDevice({"TemplateNames.cpp"}, "-O2", [](Harness &h) {
    for (const char *name :
         {"compat::Fill<unsigned int>", "compat::Fill<int>", "compat::Fill<half>",
          "compat::Combine<compat::Op::ADD,float,1,false,compat::Mode::PLAIN>",
          "compat::Combine<compat::Op::MUL,int,2,true,compat::Mode::SCALED>", "compat::Width<float,float2>",
          "compat::Width<half,half4>", "compat::Width<int,int2>", "compat::Width<short,short2>",
          "compat::Width<char,char4>"}) {
      INFO(name);
      REQUIRE(h.graph().hasCodelet(name));
    }
    VertexRef fill = h.vertex("compat::Fill<unsigned int>", {{"out", h.output("fill", UNSIGNED_INT, 5)}});
    h.graph().setInitialValue(fill["value"], 4000000000u);
    const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30, 40, 50, 60};
    h.vertex("compat::Combine<compat::Op::ADD,float,1,false,compat::Mode::PLAIN>",
             {{"a", h.input("a0", FLOAT, a)}, {"b", h.inout("b0", FLOAT, b)}});
    h.vertex("compat::Combine<compat::Op::MUL,int,2,true,compat::Mode::SCALED>",
             {{"a", h.input("a1", INT, a)}, {"b", h.inout("b1", INT, b)}});
    const char *widths[] = {"compat::Width<float,float2>", "compat::Width<half,half4>",
                            "compat::Width<int,int2>", "compat::Width<short,short2>",
                            "compat::Width<char,char4>"};
    for (unsigned i = 0; i < 5; ++i)
      h.vertex(widths[i], {{"out", h.output("w" + std::to_string(i), UNSIGNED_INT, 1)}});
    h.run();
    REQUIRE(h["fill"] == std::vector<float>(5, 4000000000.0f));
    for (std::size_t i = 0; i < a.size(); ++i) {
      REQUIRE(h["b0/read"][i] == a[i] + b[i]);
      REQUIRE(h["b1/read"][i] == (i % 2 == 0 ? -(a[i] * b[i]) * 3 : b[i]));
    }
    const float expectedWidths[] = {2, 4, 2, 2, 4};
    for (unsigned i = 0; i < 5; ++i)
      REQUIRE(h["w" + std::to_string(i)][0] == expectedWidths[i]);
  });
}

TEST_CASE("names: a vertex base chosen by template parameters (std::conditional_t)", "[compat][codelets]") {
  // Issue 24: the base is known only to the instantiation; the host compiler decides which
  // instantiations are vertex types and which compute runs.
  onEveryBuildAndDevice({"ConditionalBase.cpp"}, "-O2 -Werror", [](Harness &h) {
    for (const char *name : {"cond::Scale<float,cond::Kind::MULTI>", "cond::Scale<int,cond::Kind::SINGLE>",
                             "cond::Scale<int,cond::Kind::SUPERVISOR>",
                             "cond::Scale<short,cond::Kind::MULTI>", "cond::Negate<float,true>",
                             "cond::Negate<float,false>", "cond::Twice<float>", "cond::Twice<int>"}) {
      INFO(name);
      REQUIRE(h.graph().hasCodelet(name));
    }
    REQUIRE_FALSE(h.graph().hasCodelet("cond::Helper<float>"));
    REQUIRE_FALSE(h.graph().hasCodelet("cond::Other<int>"));
    const std::size_t n = 17;
    const std::vector<float> in = ramp(n, -6.0f, 1.0f);
    struct Case {
      const char *vertex;
      Type type;
      float factor;
      unsigned owner; // 6: the worker id (i % 6), else 100 + the base's kind
    };
    const Case cases[] = {{"cond::Scale<float,cond::Kind::MULTI>", FLOAT, 1.5f, 6},
                          {"cond::Scale<int,cond::Kind::SINGLE>", INT, 3.0f, 101},
                          {"cond::Scale<int,cond::Kind::SUPERVISOR>", INT, -2.0f, 102}};
    for (unsigned c = 0; c < 3; ++c) {
      const std::string k = std::to_string(c);
      VertexRef v = h.vertex(cases[c].vertex, {{"in", h.input("in" + k, cases[c].type, in)},
                                               {"out", h.output("out" + k, cases[c].type, n)},
                                               {"owner", h.output("owner" + k, UNSIGNED_INT, n)}});
      if (cases[c].type == FLOAT)
        h.graph().setInitialValue(v["factor"], cases[c].factor);
      else
        h.graph().setInitialValue(v["factor"], static_cast<int>(cases[c].factor));
    }
    h.vertex("cond::Twice<float>", {{"data", h.inout("twice", FLOAT, in)}});
    h.vertex("cond::Negate<float,true>", {{"data", h.inout("neg0", FLOAT, in)}});
    h.vertex("cond::Negate<float,false>", {{"data", h.inout("neg1", FLOAT, in)}});
    h.run();
    for (unsigned c = 0; c < 3; ++c) {
      const std::string k = std::to_string(c);
      for (std::size_t i = 0; i < n; ++i) {
        INFO(cases[c].vertex << " element " << i);
        REQUIRE(h["out" + k][i] == in[i] * cases[c].factor);
        REQUIRE(h["owner" + k][i] == (cases[c].owner == 6 ? static_cast<float>(i % 6) : cases[c].owner));
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      REQUIRE(h["neg0/read"][i] == -in[i]);
      REQUIRE(h["neg1/read"][i] == -in[i]);
      REQUIRE(h["twice/read"][i] == 2 * in[i]);
    }
  });
}

TEST_CASE("generated code: user macros, Eigen, anonymous namespaces, extern \"C\", a C source",
          "[compat][codelets]") {
  onEveryBuildAndDevice(
      {"GeneratedCodeSafe.cpp", "CHelper.c"}, "-O2 -Werror -isystem /usr/include/eigen3", [](Harness &h) {
        REQUIRE(h.graph().hasCodelet("Hidden"));
        const std::vector<float> in = {1, 7, 20, 40, -3};
        h.vertex("Hidden", {{"in", h.input("in", INT, in)}, {"out", h.output("out", INT, 5)}});
        h.vertex("TraitsIds", {{"out", h.output("ids", INT, 3)}});
        h.run();
        for (std::size_t i = 0; i < in.size(); ++i) {
          const float x = in[i];
          REQUIRE(h["out"][i] == std::min(3 * x, 100.0f) + (4 * x) / 2 + 5);
        }
        REQUIRE(h["ids"] == std::vector<float>{0, 1, 2});
      });
}

TEST_CASE("popc: Graphcore's command line", "[compat][codelets][popc]") {
  TempDir dir;
  const std::string include = " -I " + aspen::test::compatCodeletFile("include") + " -isystem " +
                              aspen::test::compatCodeletFile("sysinclude") + " ";
  const std::string src = " " + aspen::test::compatCodeletFile("Flags.cpp") + " ";
  struct Line {
    std::string flags;
    std::vector<float> expected;
  };
  const std::vector<Line> lines = {
      {"-O0 -g -DFROM_D=1 -target=ipu2", {1, 0, 0, 24, 17, 1}},
      {"-O1 -D FROM_D=2 -target ipu2 -X -DFROM_X=5", {2, 5, 0, 24, 17, 1}},
      {"-O3 -Wall -Werror -DFROM_D=3 --target ipu1,ipu2,cpu -std=c++20", {3, 0, 0, 24, 20, 1}},
      {"-O2 -DFROM_D=4 --target '[\"ipu2\",{\"name\":\"ipu2:cpp\",\"arch\":\"ipu2\",\"compile-flags\":"
       "[\"-DFROM_JSON=9\"]}]'",
       {4, 0, 9, 24, 17, 1}},
      {"-O3 -DFROM_D=5 --target=ipu21 -X -std=c++20", {5, 0, 0, 24, 20, 1}}};
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string gp = dir.path + "/flags" + std::to_string(i) + ".gp";
    const Result r = run(popc() + " " + lines[i].flags + include + src + "-o " + gp);
    INFO(lines[i].flags << "\n" << r.output);
    REQUIRE(r.status == 0);
    Device device = makeDevice(DeviceKind::IPUModel);
    Graph graph(device.getTarget());
    REQUIRE(graph.addCodelets(gp));
    Harness h(graph, device);
    h.vertex("Built", {{"out", h.output("out", INT, 6)}});
    h.run();
    REQUIRE(h["out"] == lines[i].expected);
  }

  // -Werror -Wdouble-promotion: half -> float is allowed (HalfBuiltin.cpp), float -> double
  // is an error naming the line.
  {
    const std::string promoting = dir.path + "/Promoting.cpp";
    std::ofstream(promoting) << "#include <poplar/Vertex.hpp>\n"
                                "class Promoting : public poplar::Vertex {\npublic:\n"
                                "  poplar::Input<float> in;\n  poplar::Output<double> out;\n"
                                "  bool compute() { *out = in * 2.0; return true; }\n};\n";
    const Result r = run(popc() + " -Werror -Wdouble-promotion " + promoting + " -o " + dir.path + "/p.gp");
    INFO(r.output);
    REQUIRE(r.status != 0);
    REQUIRE(r.output.find("Promoting.cpp:6:") != std::string::npos);
    REQUIRE(run(popc() + " -Wdouble-promotion " + promoting + " -o " + dir.path + "/p.gp").status == 0);
  }

  // --list-targets as PopLibs' CMake reads it: one line, commas between IPU targets.
  const Result targets = run(popc() + " --list-targets");
  REQUIRE(targets.status == 0);
  REQUIRE(targets.output == "ipu1,ipu2,ipu21\n");

  // Every failure is a non-zero exit status (also through a wrapper script) and no .gp.
  const std::string gp = dir.path + "/bad.gp";
  const Result unknownTarget = run(popc() + " --target ipu9" + include + src + "-DFROM_D=1 -o " + gp);
  REQUIRE(unknownTarget.status != 0);
  REQUIRE(unknownTarget.output.find("ipu9") != std::string::npos);
  const Result missingDefine = run("sh -c '" + popc() + include + src + "-o " + gp + "'");
  REQUIRE(missingDefine.status != 0);
  REQUIRE(missingDefine.output.find("Flags.cpp:9:") != std::string::npos);
  REQUIRE_FALSE(exists(gp));
  // IPU assembly has no host build: popc warns and leaves it out, so a library of assembly
  // only (PopLibs' <lib>_asm.gp) has no vertex types, and one with C++ beside it has the C++
  // vertices. Graph::addCodelets of the .S itself is still refused (nothing would run).
  const std::string asmGp = dir.path + "/asm.gp";
  const Result assembly = run(popc() + " " + aspen::test::compatCodeletFile("IpuAsm.S") + " -o " + asmGp);
  INFO(assembly.output);
  REQUIRE(assembly.status == 0);
  REQUIRE(assembly.output.find("IpuAsm.S: warning: IPU assembly has no host build") != std::string::npos);
  {
    poplar::Graph g(poplar::Target::createCPUTarget());
    REQUIRE(g.addCodelets(asmGp));
    REQUIRE_FALSE(g.hasCodelet("Built"));
    REQUIRE_THROWS_WITH(g.addCodelets(aspen::test::compatCodeletFile("IpuAsm.S")),
                        Catch::Contains("C and C++"));
  }
  const std::string withCpp = dir.path + "/with-cpp.gp";
  const Result mixed = run(popc() + " " + aspen::test::compatCodeletFile("IpuAsm.S") + include + src +
                           "-DFROM_D=1 -o " + withCpp);
  INFO(mixed.output);
  REQUIRE(mixed.status == 0);
  {
    poplar::Graph g(poplar::Target::createCPUTarget());
    REQUIRE(g.addCodelets(withCpp));
    REQUIRE(g.hasCodelet("Built"));
  }
  const Result inlineAsm = run(popc() + " " + aspen::test::compatCodeletFile("IpuAsm.cpp") + " -o " + gp);
  INFO(inlineAsm.output);
  REQUIRE(inlineAsm.status != 0);
  REQUIRE(inlineAsm.output.find("IpuAsm.cpp:11:") != std::string::npos);
  REQUIRE(inlineAsm.output.find("C and C++") != std::string::npos);
  REQUIRE_FALSE(exists(gp));
}

TEST_CASE("builtins: <ipu_memory_intrinsics> and <ipu_vector_math> in every build", "[compat][codelets]") {
  onEveryBuildAndDevice({"IpuMath.cpp"}, "-O3 -Werror -Wdouble-promotion", [](Harness &h) {
    const std::vector<float> in = ramp(8, -3.0f, 0.8f), hin = ramp(8, 0.25f, 1.5f);
    h.vertex("VectorMath", {{"in", h.input("in", FLOAT, in)},
                            {"out", h.output("out", FLOAT, 8)},
                            {"hin", h.input("hin", HALF, hin)},
                            {"hout", h.output("hout", HALF, 8)}});
    h.run();
    for (std::size_t i = 0; i < in.size(); ++i) {
      const float sigmoid = 1.0f / (1.0f + std::exp(-in[i]));
      REQUIRE(h["out"][i] == std::fma(sigmoid, std::fabs(in[i]), 1.0f));
      const float x = roundHalf(h.target(), hin[i]);
      REQUIRE(h["hout"][i] == roundHalf(h.target(), std::sqrt(x)));
    }
  });
}

namespace {

float mask(bool c) {
  return c ? -1.0f : 0.0f; // a lane of all ones, read as an int
}
unsigned byteOf(unsigned w, unsigned k) {
  return (w >> (8 * k)) & 0xffu;
}
unsigned bytes(unsigned b0, unsigned b1, unsigned b2, unsigned b3) {
  return b0 | b1 << 8 | b2 << 16 | b3 << 24;
}

} // namespace

TEST_CASE("builtins: the IPU's arithmetic builtins, typed, overloaded and ipu::", "[compat][codelets]") {
  onEveryBuildAndDevice(
      {"IpuBuiltins.cpp", "IpuBuiltinsC.c"}, "-O3 -Werror -Wdouble-promotion", [](Harness &h) {
        const std::vector<float> a = {-3.5f, 2.25f, 0.0f, -0.0f, 7.0f, -1.0f, 1e30f, -2.0f};
        const std::vector<float> b = {1.5f, 2.25f, -0.5f, 4.0f, -8.0f, -1.0f, 3.0f, 0.25f};
        const float lower = -1.5f, upper = 2.0f;
        std::map<std::string, Tensor> f = {{"a", h.input("fa", FLOAT, a)},
                                           {"b", h.input("fb", FLOAT, b)},
                                           {"limits", h.input("flim", FLOAT, {lower, upper})}};
        for (const char *o : {"maxOut", "minOut", "absmaxOut", "absaddOut", "clampOut", "absOut", "fromC"})
          f[o] = h.output(std::string("f") + o, FLOAT, a.size());
        for (const char *o : {"ltOut", "geOut", "scalarOut"})
          f[o] = h.output(std::string("f") + o, INT, a.size());
        h.vertex("FloatBuiltins", f);

        const std::vector<float> ha = {-3.5f, 2.3f, 0.1f, -0.7f, 7.0f, -1.0f, 1000.0f, -2.0f};
        const std::vector<float> hb = {1.5f, 2.3f, -0.5f, 4.0f, -8.0f, -1.25f, 3.0f, 0.3f};
        std::map<std::string, Tensor> g = {{"a", h.input("ha", HALF, ha)},
                                           {"b", h.input("hb", HALF, hb)},
                                           {"limits", h.input("hlim", HALF, {lower, upper})}};
        for (const char *o : {"maxOut", "absaddOut", "clampOut", "expOut", "sigmOut"})
          g[o] = h.output(std::string("h") + o, HALF, ha.size());
        g["sumOut"] = h.output("hsumOut", FLOAT, ha.size() / 2);
        g["gtOut"] = h.output("hgtOut", INT, ha.size());
        h.vertex("HalfBuiltins", g);
        h.run();

        for (std::size_t i = 0; i < a.size(); ++i) {
          INFO("float element " << i);
          REQUIRE(h["fmaxOut"][i] == std::fmax(a[i], b[i]));
          REQUIRE(h["fminOut"][i] == std::fmin(a[i], b[i]));
          REQUIRE(h["fabsmaxOut"][i] == std::fmax(std::fabs(a[i]), std::fabs(b[i])));
          REQUIRE(h["fabsaddOut"][i] == std::fabs(a[i]) + std::fabs(b[i]));
          REQUIRE(h["fclampOut"][i] == std::fmin(std::fmax(a[i], lower), upper));
          REQUIRE(h["fabsOut"][i] == std::fabs(a[i]));
          REQUIRE(h["ffromC"][i] ==
                  std::fmax(std::fabs(a[i]), std::fabs(b[i])) + (a[i] < b[i] ? 1.0f : 0.0f));
          REQUIRE(std::signbit(h["fabsOut"][i]) == false);
          REQUIRE(h["fltOut"][i] == mask(a[i] < b[i]));
          REQUIRE(h["fgeOut"][i] == mask(a[i] >= b[i]));
          // andc(x, 2.0f) clears bit 30 (-2.0f becomes -0.0f, not less than 0).
          std::uint32_t bits;
          std::memcpy(&bits, &a[i], 4);
          bits &= ~0x40000000u;
          float cleared;
          std::memcpy(&cleared, &bits, 4);
          const int scalar = (cleared < 0.0f) | 0 << 1 | 0 << 2 | 1 << 3;
          REQUIRE(h["fscalarOut"][i] == static_cast<float>(scalar));
        }
        for (std::size_t i = 0; i < ha.size(); ++i) {
          INFO("half element " << i);
          const float x = roundHalf(h.target(), ha[i]), y = roundHalf(h.target(), hb[i]);
          REQUIRE(h["hmaxOut"][i] == std::fmax(x, y));
          REQUIRE(h["habsaddOut"][i] == roundHalf(h.target(), std::fabs(x) + std::fabs(y)));
          REQUIRE(h["hclampOut"][i] == std::fmin(std::fmax(x, roundHalf(h.target(), lower)), upper));
          REQUIRE(h["hexpOut"][i] == roundHalf(h.target(), std::exp(x)));
          REQUIRE(h["hsigmOut"][i] == roundHalf(h.target(), 1.0f / (1.0f + std::exp(-x))));
          REQUIRE(h["hgtOut"][i] == mask(x > y));
        }
        for (std::size_t i = 0; i < ha.size() / 2; ++i)
          REQUIRE(h["hsumOut"][i] == roundHalf(h.target(), ha[2 * i]) + roundHalf(h.target(), ha[2 * i + 1]));
      });
}

TEST_CASE("builtins: typed builtins without an #include; permutations and class tests",
          "[compat][codelets]") {
  onEveryBuildAndDevice({"IpuBuiltinsNoInclude.cpp"}, "-O3 -Werror", [](Harness &h) {
    const std::vector<unsigned> words = {0x12345678u, 0x80ff00c3u, 0x00000000u, 0xfffffffeu,
                                         0x0000ffffu, 0xc0000001u, 0x7fffffffu, 0xa5a55a5au};
    std::vector<float> halves;
    for (unsigned w : words) {
      halves.push_back(static_cast<float>(w & 0xffffu));
      halves.push_back(static_cast<float>(w >> 16));
    }
    h.vertex("Permutations",
             {{"halves", h.input("halves", INT, halves)}, {"out", h.output("perm", INT, 10 * words.size())}});
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> values = {1.0f, -inf, nan, 0.0f, inf, -nan, 1e-45f, -3.0f};
    h.vertex("Classes", {{"in", h.input("values", FLOAT, values)},
                         {"out", h.output("classes", INT, values.size() + 1)}});
    h.run();

    auto result = [&](std::size_t slot) {
      return static_cast<unsigned>(h["perm"][2 * slot]) | static_cast<unsigned>(h["perm"][2 * slot + 1])
                                                              << 16;
    };
    for (std::size_t w = 0; w < words.size(); ++w) {
      const unsigned x = words[w], y = words[(w + 1) % words.size()];
      INFO("word " << w);
      REQUIRE(result(5 * w + 0) == bytes(byteOf(x, 0), byteOf(y, 0), byteOf(x, 1), byteOf(y, 1)));
      REQUIRE(result(5 * w + 1) == bytes(byteOf(x, 2), byteOf(y, 2), byteOf(x, 3), byteOf(y, 3)));
      unsigned reversed = 0;
      for (unsigned k = 0; k < 4; ++k) {
        unsigned r = 0;
        for (unsigned bit = 0; bit < 8; ++bit)
          r |= ((byteOf(x, k) >> bit) & 1u) << (7 - bit);
        reversed |= r << (8 * k);
      }
      REQUIRE(result(5 * w + 2) == reversed);
      unsigned matching = 0;
      while (matching < 31 && ((x >> (30 - matching)) & 1u) == (x >> 31))
        ++matching;
      REQUIRE(result(5 * w + 3) == matching);
      REQUIRE(result(5 * w + 4) == bytes(byteOf(x, 0), byteOf(y, 0), byteOf(x, 1), byteOf(y, 1)));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      INFO("value " << i);
      const float v = values[i];
      const int expected = std::isnan(v) | std::isinf(v) << 1 | std::isfinite(v) << 2;
      REQUIRE(h["classes"][i] == static_cast<float>(expected));
    }
    // sort4x32lo({1, -inf}, {nan, 0}) = {1, nan}, sort4x32hi = {-inf, 0}.
    REQUIRE(h["classes"][values.size()] == 15.0f);
  });
}
