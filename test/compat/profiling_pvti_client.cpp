// Copyright (c) Aspen contributors.
// A libpvti client: the program's own trace points (begin/end, scoped, with
// metadata) and Aspen's (compile passes, load, runs, stream transfers) land in
// the .pvti file PVTI_OPTIONS names, properly paired.
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <pvti/pvti.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

static pvti::TraceChannel appChannel = {"app"};

int main() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::current_path() / "pvti";
  fs::remove_all(dir);
  setenv("PVTI_OPTIONS", (R"({"enable":"true","directory":")" + dir.string() + "\"}").c_str(), 1);

  pvti::Tracepoint::begin(&appChannel, "build graph");
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  Device device = model.createDevice();
  Graph graph(device.getTarget());
  popops::addCodelets(graph);
  Tensor a = graph.addVariable(FLOAT, {64}, "a");
  graph.setTileMapping(a, 1);
  auto in = graph.addHostToDeviceFIFO("in", FLOAT, 64);
  auto out = graph.addDeviceToHostFIFO("out", FLOAT, 64);
  Sequence prog({Copy(in, a)});
  popops::addInPlace(graph, a, a, prog, "double");
  prog.add(Copy(a, out));
  pvti::Tracepoint::end(&appChannel, "build graph");

  std::vector<float> input(64, 1.5f), output(64, 0.0f);
  {
    Engine engine(graph, prog);
    engine.connectStream("in", input.data());
    engine.connectStream("out", output.data());
    engine.load(device);
    for (int i = 0; i < 3; ++i) {
      pvti::Metadata meta("{\"iteration\":" + std::to_string(i) + "}");
      pvti::Tracepoint scoped(&appChannel, "iteration", &meta);
      engine.run(0);
    }
  }
  pvti::Tracepoint::flush();

  int failures = 0;
  auto check = [&](bool ok, const std::string &what) {
    std::cout << (ok ? "ok    " : "FAIL  ") << what << '\n';
    failures += !ok;
  };
  check(pvti::Tracepoint::enabled(), "PVTI_OPTIONS enables tracing");
  check(output[0] == 3.0f, "the program ran (1.5 doubled is 3)");
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto &e : fs::directory_iterator(dir))
      if (e.path().extension() == ".pvti")
        files.push_back(e.path());
  check(files.size() == 1, "one .pvti file in the PVTI_OPTIONS directory");
  if (files.size() != 1)
    return EXIT_FAILURE;
  std::ifstream is(files[0]);
  std::string line;
  std::map<std::string, int> depth; // channel/name -> open count
  std::map<std::string, int> ends;
  std::multiset<std::string> iterationMeta;
  bool header = false, balanced = true;
  while (std::getline(is, line)) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains("format")) {
      header = j["format"] == "aspen-pvti";
      continue;
    }
    const std::string key = j["ch"].get<std::string>() + "/" + j["name"].get<std::string>();
    if (j["ph"] == "B") {
      ++depth[key];
      if (key == "app/iteration")
        iterationMeta.insert(j["meta"].dump());
    } else {
      balanced = balanced && depth[key] > 0;
      --depth[key];
      ++ends[key];
    }
  }
  for (const auto &[key, open] : depth)
    balanced = balanced && open == 0;
  check(header, "the file starts with its format line");
  check(balanced, "every begin has its end");
  check(ends["app/build graph"] == 1, "the begin/end pair of the program is recorded");
  check(ends["app/iteration"] == 3, "the scoped trace point is recorded once per iteration");
  check(iterationMeta.count("{\"iteration\":2}") == 1, "trace point metadata is recorded");
  check(ends["poplar/Engine: compile"] == 1, "Aspen records the compile");
  for (const char *pass : {"validate", "lower", "exchange", "liveness", "allocate", "estimateCycles", "emit"})
    check(ends[std::string("poplar/") + pass] == 1, std::string("Aspen records the compile pass ") + pass);
  check(ends["poplar/Engine::load"] == 1, "Aspen records the load");
  check(ends["poplar/Engine::run(0)"] == 3, "Aspen records each run");
  check(ends["poplar/stream to device"] == 3 && ends["poplar/stream from device"] == 3,
        "Aspen records each stream transfer");
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
