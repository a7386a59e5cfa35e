// The project's own popops, planning with gccs::popsolver as PopLibs' planners do.
#include <gccs/Algorithm.hpp>
#include <gccs/popsolver/Model.hpp>
#include <string>
namespace popsolver = gccs::popsolver;
namespace poputil {
std::string ownPoputil();
}
namespace popops {
std::string ownPopops() {
  return "own popops over " + poputil::ownPoputil();
}
unsigned planTiles(unsigned elements, unsigned maxTiles) {
  popsolver::Model m;
  const auto tiles = m.addVariable(1, maxTiles, "tiles");
  const auto perTile = m.ceildiv(m.addConstant(elements), tiles);
  const auto cycles = m.sum({m.product({perTile, m.addConstant(3u)}), tiles});
  const auto s = m.minimize(cycles);
  return s.validSolution() ? s[tiles].getAs<unsigned>() : 0;
}
} // namespace popops
