// Copyright (c) Aspen contributors.
// Fuzz harness: the profile report reader (docs/fuzzing.md). The input is the
// profile section of an executable (the compile-time profile JSON), put into a
// valid seed executable; the Engine constructor (which reads the replication
// factor from it), printProfileSummary and the JSON profile writer must accept
// it or refuse it with a poplar error, never crash.
#include "ProfileReport.hpp"
#include "exe/ExecutableData.hpp"
#include "exe/Serialize.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/exceptions.hpp>

#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>

namespace {

struct NullBuffer : std::streambuf {
  int overflow(int c) override { return c; }
};

/// The executable the profiles are put into: the first seed (an empty one without it).
const aspen::exe::ExecutableData &seed() {
  static const std::unique_ptr<aspen::exe::ExecutableData> x = [] {
#ifdef ASPEN_FUZZ_SEED_EXECUTABLE
    std::ifstream in(ASPEN_FUZZ_SEED_EXECUTABLE, std::ios::binary);
    if (in)
      return aspen::exe::deserialize(in, false, ASPEN_FUZZ_SEED_EXECUTABLE);
#endif
    auto empty = std::make_unique<aspen::exe::ExecutableData>();
    empty->target.tilesPerIPU = 4;
    return empty;
  }();
  return *x;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  auto x = std::make_unique<aspen::exe::ExecutableData>(seed());
  x->profileJson.assign(reinterpret_cast<const char *>(data), size);
  NullBuffer nullBuffer;
  std::ostream out(&nullBuffer);
  aspen::rt::ExecutionProfile profile;
  profile.reset(x->programEntry.size(), x->steps.size(), x->vertexTypes.size());
  try {
    aspen::rt::printProfileSummary(out, *x, profile, aspen::rt::SummaryOptions{true, true});
    out << aspen::rt::profileJson(*x, profile, true, true).dump();
    poplar::Engine engine(poplar::Executable(std::move(x)));
    engine.printProfileSummary(out, {{"showExecutionSteps", "true"}, {"showVarStorage", "true"}});
  } catch (const poplar::poplar_error &) {
    // A profile the engine cannot use, refused by name.
  }
  return 0;
}
