// Copyright (c) Aspen contributors.
// Writes the fuzz harnesses' seed corpora (run by the build): compiles a few
// small graphs that between them use every kind of step and table, and writes
//   <out>/exe/*.aspenexe      their executables        (fuzz_exe_raw, fuzz_exe_repaired)
//   <out>/profile/*.json      their profile sections   (fuzz_profile)
//   <out>/gp/*.json           the metadata of their vertex library (fuzz_gp_metadata)
//   <out>/shared_object.so    that library's shared object, which fuzz_gp_metadata wraps
// Usage: aspen_fuzz_seeds <out>
#include "exe/ExecutableData.hpp"

#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
namespace fs = std::filesystem;

namespace {

const char *kCodelets = R"(
#include <poplar/Vertex.hpp>
class FuzzAdd : public poplar::Vertex {
public:
  poplar::InOut<poplar::Vector<float>> data;
  float k;
  bool compute() {
    for (unsigned i = 0; i < data.size(); ++i)
      data[i] += k;
    return true;
  }
};
class FuzzSum : public poplar::MultiVertex {
public:
  poplar::Vector<poplar::Input<poplar::Vector<float>>> in;
  poplar::Output<float> out;
  bool compute(unsigned worker) {
    if (worker == 0) {
      float s = 0;
      for (unsigned i = 0; i < in.size(); ++i)
        for (unsigned j = 0; j < in[i].size(); ++j)
          s += in[i][j];
      *out = s;
    }
    return true;
  }
};
)";

void write(const fs::path &path, const void *data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
  if (!out)
    throw std::runtime_error("cannot write " + path.string());
}

struct Seeds {
  fs::path dir;
  int count = 0;
  bool wroteLibrary = false;

  void add(const Graph &graph, const std::vector<Program> &programs) {
    Executable exe = compileGraph(graph, programs);
    std::stringstream bytes;
    exe.serialize(bytes);
    const std::string s = bytes.str();
    const std::string name = "seed" + std::to_string(count++);
    write(dir / "exe" / (name + ".aspenexe"), s.data(), s.size());
    const auto &x = exe.getImpl();
    write(dir / "profile" / (name + ".json"), x.profileJson.data(), x.profileJson.size());
    if (!wroteLibrary && !x.codeletLibraries.empty()) {
      // A .gp: a 64-byte header (metadata size at 16, shared object size at 24), metadata, shared object.
      const std::vector<std::uint8_t> &gp = x.codeletLibraries[0].bytes;
      std::uint64_t json = 0, so = 0;
      std::memcpy(&json, gp.data() + 16, 8);
      std::memcpy(&so, gp.data() + 24, 8);
      write(dir / "gp" / "metadata.json", gp.data() + 64, json);
      write(dir / "shared_object.so", gp.data() + 64 + json, so);
      wroteLibrary = true;
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
    return 2;
  }
  Seeds seeds{argv[1]};
  for (const char *sub : {"exe", "profile", "gp"})
    fs::create_directories(seeds.dir / sub);

  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  auto newGraph = [&] {
    Graph g(device.getTarget());
    std::stringstream codelets(kCodelets);
    g.addCodelets(codelets);
    return g;
  };

  {
    // Compute with exchange, a loop, streams, a remote buffer, a print, host handles.
    Graph g = newGraph();
    Tensor x = g.addVariable(FLOAT, {4, 8}, "x");
    for (unsigned t = 0; t < 4; ++t)
      g.setTileMapping(x[t], t);
    Tensor sum = g.addVariable(FLOAT, {}, "sum");
    g.setTileMapping(sum, 0);
    ComputeSet add = g.addComputeSet("add");
    for (unsigned t = 0; t < 4; ++t) {
      VertexRef v = g.addVertex(add, "FuzzAdd", {{"data", x[t]}});
      g.setInitialValue(v["k"], 1.0f);
      g.setTileMapping(v, t);
    }
    ComputeSet reduce = g.addComputeSet("reduce");
    VertexRef r = g.addVertex(reduce, "FuzzSum");
    g.connect(r["in"], std::vector<Tensor>{x[1], x[2].slice(0, 4)});
    g.connect(r["out"], sum);
    g.setTileMapping(r, 0);
    g.createHostWrite("x-in", x);
    g.createHostRead("sum-out", sum);
    DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 8);
    DataStream out = g.addDeviceToHostFIFO("out", FLOAT, 1);
    RemoteBuffer rb = g.addRemoteBuffer("rb", FLOAT, 8, 3);
    Tensor row = g.addVariable(UNSIGNED_INT, {1}, "row");
    g.setTileMapping(row, 2);
    g.setInitialValue(row, std::vector<unsigned>{1});
    seeds.add(g, {Sequence({Copy(in, x[0]), Repeat(3, Sequence({Execute(add), Execute(reduce)})),
                            Copy(sum, out), Copy(x[3], rb, row), Copy(rb, x[1], row), PrintTensor("x", x)}),
                  Sequence()});
  }
  {
    // Control flow: If, Switch, a function called twice, RepeatWhileTrue, abort, overlapping copy.
    Graph g = newGraph();
    Tensor x = g.addVariable(FLOAT, {16}, "x");
    g.setTileMapping(x, 1);
    Tensor flag = g.addVariable(INT, {}, "flag");
    g.setTileMapping(flag, 3);
    g.setInitialValue(flag, 1);
    Tensor zero = g.addVariable(BOOL, {}, "zero");
    g.setTileMapping(zero, 0);
    g.setInitialValue(zero, false);
    ComputeSet add = g.addComputeSet("add");
    VertexRef v = g.addVertex(add, "FuzzAdd", {{"data", x.slice(0, 8)}});
    g.setInitialValue(v["k"], 2.0f);
    g.setTileMapping(v, 2);
    Function f = g.addFunction(Execute(add));
    g.createHostRead("x-out", x);
    seeds.add(
        g,
        {Sequence({If(flag, Call(f), Sequence()),
                   Switch(flag, {{0, Execute(add)}, {1, Call(f)}, {7, Copy(x.slice(0, 8), x.slice(4, 12))}},
                          Sequence()),
                   AbortOnCondition(zero, "never")}),
         Sequence({WriteUndef(x), Copy(x.slice(0, 8), x.slice(8, 16))})});
  }
  {
    // The smallest executable: no programs at all.
    Graph g = newGraph();
    seeds.add(g, {});
  }
  std::printf("aspen_fuzz_seeds: wrote %d executables to %s\n", seeds.count, seeds.dir.c_str());
  return 0;
}
