// popdist given an environment that does not add up must say which variable is wrong.
#include <popdist/popdist_poplar.hpp>

#include <iostream>

int main() {
  try {
    std::cout << popdist::getNumLocalReplicas() << "\n";
  } catch (const poplar::poplar_error &error) {
    std::cout << "poplar_error: " << error.what() << std::endl;
    return 0;
  }
  std::cout << "no error" << std::endl;
  return 1;
}
