// Instance 1 dies without a word; instances 0 and 2 then wait for it in a collective.
#include <popdist/collectives.hpp>
#include <popdist/popdist_poplar.hpp>

#include <csignal>
#include <iostream>
#include <vector>

int main() {
  std::vector<float> data(16, 1.0f);
  popdist::collectives::allReduceSum(data); // everyone is up
  if (popdist::getInstanceIndex() == 1) {
    std::raise(SIGKILL);
  }
  popdist::collectives::allReduceSum(data); // never completes: instance 1 is gone
  std::cout << "instance " << popdist::getInstanceIndex() << " finished, which it should not" << std::endl;
  return 0;
}
