// The project's own poputil: a symbol Aspen's libpoputil does not have.
#include <pvti/pvti.hpp>
#include <string>
namespace poputil {
std::string ownPoputil() {
  return "own poputil";
}
} // namespace poputil
