// Copyright (c) Aspen contributors.
// Fuzz harness: the executable loader (docs/fuzzing.md). Built twice:
//  - fuzz_exe_raw: the input is a whole file, checksum and all (most mutations
//    stop at the checksum: this is what the header and section framing see);
//  - fuzz_exe_repaired (ASPEN_FUZZ_REPAIR_CHECKSUM): the header's magic, version,
//    payload size and checksum are fixed up after mutation, so that the section
//    framing, the CBOR and field readers and the structure checks are reached.
// An input the loader accepts is then put in tile memory and prepared for
// execution, and run when its control flow cannot loop, with do-nothing vertex
// code: everything downstream of the loader must hold for any accepted file.
#include "ExeCraft.hpp"

#include "ExecutionProfile.hpp"
#include "Executor.hpp"
#include "HostStreams.hpp"
#include "Loader.hpp"
#include "TileMemory.hpp"
#include "exe/Serialize.hpp"
#include "poplar/Type.hpp"
#include "poplar/exceptions.hpp"

#include <cstdint>
#include <cstring>
#include <ostream>
#include <streambuf>
#include <vector>

#ifndef ASPEN_FUZZ_REPAIR_CHECKSUM
#define ASPEN_FUZZ_REPAIR_CHECKSUM 0
#endif

namespace {

using namespace aspen;

int doNothing(void *, unsigned) {
  return 1;
}

struct NullBuffer : std::streambuf {
  int overflow(int c) override { return c; }
};

/// Whether every jump of `x` goes forward, so that running any program ends.
bool terminates(const exe::ExecutableData &x) {
  for (std::size_t i = 0; i < x.steps.size(); ++i) {
    const exe::Step &s = x.steps[i];
    switch (s.kind) {
    case exe::StepKind::Jump:
    case exe::StepKind::JumpIfZero:
    case exe::StepKind::JumpIfNonZero:
    case exe::StepKind::LoopTest:
      if (s.target <= i)
        return false;
      break;
    case exe::StepKind::SwitchJump:
      for (std::uint32_t t : x.switchTables[s.a].targets)
        if (t <= i)
          return false;
      if (x.switchTables[s.a].defaultTarget <= i)
        return false;
      break;
    case exe::StepKind::Call:
    case exe::StepKind::Return:
      return false;
    default:
      break;
    }
  }
  return true;
}

void exercise(const exe::ExecutableData &x) {
  constexpr std::uint64_t kMaxBytes = std::uint64_t(64) << 20;
  const std::uint64_t device = std::uint64_t(x.target.numTiles()) * x.target.bytesPerTile;
  if (device > (std::uint64_t(1) << 30))
    return; // valid, but more address space than a fuzzing process should reserve
  std::uint64_t host = 0;
  for (const exe::RemoteBufferInfo &r : x.remoteBuffers)
    host +=
        r.numElements * poplar::Type(r.type).size() * (r.repeats ? r.repeats : 1); // bounded by validation
  for (const exe::StreamInfo &s : x.streams)
    host += s.numElements * poplar::Type(s.type).size();
  if (host > kMaxBytes)
    return;

  rt::TileMemory memory(x.target.numTiles(), x.target.bytesPerTile);
  rt::loadMemoryImage(x, memory);
  rt::HostStreams streams(x.streams);
  rt::RemoteBuffers remote(x.remoteBuffers);
  std::vector<std::vector<std::uint8_t>> buffers(x.streams.size());
  for (std::size_t s = 0; s < x.streams.size(); ++s) {
    buffers[s].resize(std::max<std::uint64_t>(1, streams.chunkBytes(static_cast<unsigned>(s))));
    streams.connectFixed(static_cast<unsigned>(s), buffers[s].data());
  }
  rt::ExecutionProfile profile;
  profile.reset(x.programEntry.size(), x.steps.size(), x.vertexTypes.size());
  profile.enabled = true;
  NullBuffer nullBuffer;
  std::ostream out(&nullBuffer);
  // Vertex code is not loaded (a .gp carries native code: loading one means trusting it).
  std::vector<rt::VertexCode> code(x.vertexTypes.size(), rt::VertexCode{doNothing, false});
  rt::Executor executor(x, memory, code, rt::HostContext{&streams, &remote, &out, &profile});
  if (!terminates(x))
    return;
  for (unsigned p = 0; p < x.programEntry.size(); ++p) {
    try {
      executor.run(p);
    } catch (const poplar::poplar_error &) {
      // Aborts, out-of-range remote buffer offsets: reported errors are fine.
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
  std::vector<std::uint8_t> bytes(data, data + size);
#if ASPEN_FUZZ_REPAIR_CHECKSUM
  if (bytes.size() < aspen::test::kExeHeaderBytes)
    bytes.resize(aspen::test::kExeHeaderBytes, 0);
  const std::uint32_t version = aspen::exe::kFormatVersion, header = aspen::test::kExeHeaderBytes;
  std::memcpy(bytes.data(), "ASPENEXE", 8);
  std::memcpy(bytes.data() + 8, &version, 4);
  std::memcpy(bytes.data() + 12, &header, 4);
  aspen::test::repairChecksum(bytes);
#endif
  std::unique_ptr<aspen::exe::ExecutableData> x;
  try {
    x = aspen::exe::deserializeFromBytes(bytes.data(), bytes.size(), false, "the fuzz input");
  } catch (const poplar::graph_object_load_error &) {
    return 0; // refused with the documented error: what the loader is for
  }
  exercise(*x);
  return 0;
}
