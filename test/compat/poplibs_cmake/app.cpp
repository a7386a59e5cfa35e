// Links the project's own popops/poputil (not Aspen's) and Poplar; with --check it runs as a
// multi-target test and expects `--device-type <variant>` last.
#include <poplar/Graph.hpp>
#include <poplar/Target.hpp>

#include <iostream>
#include <string>

namespace popops {
std::string ownPopops();
unsigned planTiles(unsigned elements, unsigned maxTiles);
} // namespace popops

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--skip")
    return 77; // PopLibs' tools' "not applicable": a skip under ALLOW_SKIP
  if (argc > 1 && std::string(argv[1]) == "--check") {
    if (argc != 4 || std::string(argv[2]) != "--device-type")
      return 2;
    std::cout << "device " << argv[3] << "\n";
  }
  poplar::Graph g(poplar::Target::createCPUTarget());
  const auto t = g.addVariable(poplar::FLOAT, {4}, "t");
  // 3 * ceil(100 / t) + t over t in [1, 16] is smallest at t = 15 (36).
  const unsigned tiles = popops::planTiles(100, 16);
  std::cout << popops::ownPopops() << ", tiles " << tiles << ", elements " << t.numElements() << "\n";
  if (popops::ownPopops() != "own popops over own poputil" || tiles != 15 || t.numElements() != 4)
    return 1;
  std::cout << "poplibs-shaped OK\n";
  return 0;
}
