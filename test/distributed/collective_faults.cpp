// Copyright (c) Aspen contributors.
// Issue 25, item 3: instances that disagree end with an error on every instance, within
// seconds, never a hang or a silent wrong result.
//   collective_faults mismatch   instance 0 calls allReduce(float, 4), the others broadcast(16)
//   collective_faults early      instance 0 ends after its first popdist call; the others
//                                call allReduce
//   collective_faults silent     instance 0 ends before any popdist call (MPI never started
//                                there); the others wait in MPI's start until the deadline
// Each instance prints "instance <i> caught: <message>" for the error it gets.
#include <popdist/collectives.hpp>
#include <popdist/popdist_poplar.hpp>
#include <poplar/exceptions.hpp>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

int main(int argc, char **argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  if (mode == "silent" && rank && std::strcmp(rank, "0") == 0)
    return 0;
  const unsigned me = popdist::getInstanceIndex(); // starts MPI (the first popdist call)
  std::vector<float> data(4, 1.0f);
  try {
    if (mode == "mismatch") {
      if (me == 0)
        popdist::collectives::allReduce(data.data(), data.size(), popdist::collectives::ReduceOp::SUM);
      else
        popdist::collectives::broadcast(data.data(), data.size() * sizeof(float), 0);
    } else if (mode == "early") {
      if (me == 0)
        return 0; // leaves without a collective
      popdist::collectives::allReduce(data.data(), data.size(), popdist::collectives::ReduceOp::SUM);
    } else {
      std::cerr << "usage: collective_faults mismatch|early\n";
      return 2;
    }
  } catch (const poplar::runtime_error &e) {
    std::cout << "instance " << me << " caught: " << e.what() << std::endl;
    return 0;
  }
  std::cout << "instance " << me << " FAILED: no error; data[0] = " << data[0] << std::endl;
  return 1;
}
