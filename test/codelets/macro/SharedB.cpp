// Copyright (c) Aspen contributors.
// Codelet corpus: data[i] = scaled(data[i]) - 1 with helpers shared with SharedA.cpp.
#include "SharedHelpers.hpp"

class SharedB : public poplar::MultiVertex {
public:
  poplar::InOut<poplar::Vector<float>> data;
  void compute(unsigned workerId) {
    for (unsigned i = workerId; i < data.size(); i += numWorkers())
      data[i] = shared_corpus::scaled(data[i]) - 1.0f;
  }
};
