// Copyright (c) Aspen contributors.
// A libpva client written as Graphcore's libpva examples are: a program runs
// with autoReport.all, then the report is opened with pva::openReport and
// its compilation and execution parts are printed. The figures are checked
// against what the program built (tiles, compute sets, steps run).
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <popops/ElementWise.hpp>
#include <popops/codelets.hpp>
#include <pva/pva.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

int failures = 0;
void check(bool ok, const std::string &what) {
  std::cout << (ok ? "ok    " : "FAIL  ") << what << '\n';
  failures += !ok;
}

} // namespace

int main() {
  const unsigned tiles = 8;
  {
    IPUModel model("ipu2");
    model.tilesPerIPU = tiles;
    Device device = model.createDevice();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    Tensor a = graph.addVariable(FLOAT, {1024}, "a");
    Tensor b = graph.addVariable(FLOAT, {1024}, "b");
    for (unsigned t = 0; t < tiles; ++t) {
      graph.setTileMapping(a.slice(t * 128, (t + 1) * 128), t);
      graph.setTileMapping(b.slice(t * 128, (t + 1) * 128), (t + 1) % tiles);
    }
    Sequence prog;
    popops::addInPlace(graph, a, b, prog, "add");
    popops::mulInPlace(graph, a, b, prog, "mul");
    graph.createHostWrite("a", a);
    graph.createHostRead("a", a);
    Engine engine(graph, prog, {{"autoReport.all", "true"}, {"autoReport.directory", "."}});
    engine.load(device);
    std::vector<float> host(1024, 1.0f);
    engine.writeTensor("a", host.data(), host.data() + host.size());
    engine.run(0);
    engine.run(0);
  }

  auto report = pva::openReport("./profile.pop");
  std::cout << "Example information from profile:\n"
            << "Number of compute sets: " << report.compilation().graph().numComputeSets() << "\n"
            << "Number of tiles on target: " << report.compilation().target().numTiles() << "\n"
            << "Version of Poplar used: " << report.poplarVersion().string() << "\n";

  std::cout << "Memory per tile (including gaps / excluding gaps / always live / variables):\n";
  std::uint64_t total = 0;
  for (const pva::Tile &tile : report.compilation().tiles()) {
    const auto memory = tile.memory();
    std::cout << "  tile " << tile.number() << ": " << memory.total().includingGaps() << " / "
              << memory.total().excludingGaps() << " / " << memory.alwaysLiveBytes() << " / "
              << memory.category().variable().nonInterleaved().nonOverlapped() << '\n';
    total += memory.total().includingGaps();
  }
  std::cout << "Programs:\n";
  for (const auto &program : report.compilation().controlPrograms()) {
    std::cout << "  " << program->name() << " (" << program->children().size() << " children, "
              << program->estimatedCycles() << " estimated cycles)\n";
  }
  std::cout << "Execution steps:\n";
  std::uint64_t stepCycles = 0, onTileExecutes = 0;
  for (const pva::ExecutionStep &step : report.execution().steps()) {
    std::uint64_t maxTile = 0;
    for (std::uint64_t c : step.cyclesByTile())
      maxTile = std::max(maxTile, c);
    std::cout << "  run " << step.run() << " " << step.program()->name() << ": " << step.cycles()
              << " cycles (from " << step.cyclesFrom() << ", slowest tile " << maxTile << ")\n";
    stepCycles += step.cycles();
    onTileExecutes += step.program()->type() == pva::Program::Type::OnTileExecute;
  }

  // What the program built, checked independently of the report's own totals.
  check(report.compilation().target().numTiles() == tiles, "the target has the program's 8 tiles");
  check(report.compilation().tiles().size() == tiles, "tiles() lists 8 tiles");
  check(report.compilation().graph().numComputeSets() >= 2,
        "the graph has a compute set per operation (>= 2)");
  check(report.poplarVersion().major() == 3 &&
            report.poplarVersion().string().find("Aspen") != std::string::npos,
        "poplarVersion is the 3.x API Aspen provides");
  check(report.execution().runs().size() == 2, "two runs recorded");
  check(report.execution().runs()[0].program()->name() == "Program 0", "each run ran program 0");
  check(report.execution().runs()[0].steps().size() == report.execution().runs()[1].steps().size(),
        "both runs executed the same number of steps");
  check(onTileExecutes == 2 * 2, "two compute sets executed in each of two runs");
  check(stepCycles == report.execution().totalCycles(), "step cycles add up to the total cycles");
  check(total == report.compilation().totalMemory(), "per-tile memory adds up to the total");
  // Every tile holds 512 bytes of `a` and 512 of `b`: the variables category holds at least that.
  bool variablesOk = true;
  for (const pva::Tile &tile : report.compilation().tiles())
    variablesOk = variablesOk && tile.memory().category().variable().total() >= 1024;
  check(variablesOk, "every tile's variables category holds its 1 KiB of a and b");

  // Only the execution profile (no graph part): every step's program() is a valid node named
  // and typed from the execution part (this crashed before: the report has no compiled steps).
  {
    IPUModel model("ipu2");
    model.tilesPerIPU = tiles;
    Device device = model.createDevice();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    Tensor a = graph.addVariable(FLOAT, {1024}, "a");
    graph.setTileMapping(a, 0);
    Sequence prog;
    popops::addInPlace(graph, a, a, prog, "add");
    Engine engine(graph, prog,
                  {{"autoReport.outputExecutionProfile", "true"}, {"autoReport.directory", "exec_only"}});
    engine.load(device);
    engine.run(0);
  }
  auto execOnly = pva::openReport("exec_only/profile.pop");
  const auto executed = execOnly.execution().steps();
  std::size_t valid = 0, executes = 0;
  for (const pva::ExecutionStep &step : executed) {
    const std::shared_ptr<pva::Program> program = step.program();
    if (!program)
      continue;
    valid += !program->name().empty() && program->children().empty();
    executes += program->type() == pva::Program::Type::OnTileExecute;
  }
  check(!executed.empty(), "an execution-only report records the steps run");
  check(valid == executed.size(), "each step's program() is a named leaf without the graph part");
  check(executes == 1, "the one compute set executed is an OnTileExecute step");
  check(execOnly.compilation().programs().empty(), "without the graph part there are no compiled programs");
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
