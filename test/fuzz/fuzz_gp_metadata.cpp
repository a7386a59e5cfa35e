// Copyright (c) Aspen contributors.
// Fuzz harness: .gp vertex library metadata around a valid shared object
// (docs/fuzzing.md). The input is the metadata JSON; the harness wraps it, with
// the seed library's shared object, in a .gp whose header and content hash are
// right, so that every input reaches the metadata reader (codelets::decodeGp,
// the .gp reading entry point). The shared object is never loaded: a .gp carries
// native code, and loading one means trusting it.
#include "codelets/ContentHash.hpp"
#include "codelets/GpFile.hpp"
#include "poplar/exceptions.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

const std::vector<std::uint8_t> &sharedObject() {
  static const std::vector<std::uint8_t> so = [] {
#ifdef ASPEN_FUZZ_SHARED_OBJECT
    std::ifstream in(ASPEN_FUZZ_SHARED_OBJECT, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
#else
    return std::vector<std::uint8_t>();
#endif
  }();
  return so;
}

void put32(std::uint8_t *p, std::uint32_t v) {
  std::memcpy(p, &v, 4);
}
void put64(std::uint8_t *p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  // The layout documented in codelets/GpFile.hpp: a 64-byte header, metadata, shared object.
  const std::vector<std::uint8_t> &so = sharedObject();
  std::vector<std::uint8_t> gp(64 + size + so.size(), 0);
  std::memcpy(gp.data(), "ASPENGP\0", 8);
  put32(gp.data() + 8, aspen::codelets::kGpFormatVersion);
  put32(gp.data() + 12, 64);
  put64(gp.data() + 16, size);
  put64(gp.data() + 24, so.size());
  if (size)
    std::memcpy(gp.data() + 64, data, size);
  if (!so.empty())
    std::memcpy(gp.data() + 64 + size, so.data(), so.size());
  const std::string hash = aspen::codelets::contentHash(gp.data() + 64, gp.size() - 64);
  std::memcpy(gp.data() + 32, hash.data(), 32);
  try {
    const aspen::codelets::GpContents contents = aspen::codelets::decodeGp(gp.data(), gp.size(), "fuzz.gp");
    // What a reader of the result relies on.
    if (contents.sharedObjectOffset + contents.sharedObjectSize != gp.size())
      __builtin_trap();
  } catch (const poplar::graph_object_load_error &) {
  }
  return 0;
}
