// Copyright (c) Aspen contributors.
// Crafted executables with a valid checksum (issue 16): the checksum only guards
// against accidents, so every count, offset, size, index, type id, jump target and
// relocation must be bounded before use. Each case once crashed, aborted, threw a
// foreign exception or allocated gigabytes; each must now be refused with a
// graph_object_load_error naming the field at fault.
#include "../runtime/RuntimeTestSupport.hpp"
#include "ErrorCheck.hpp"
#include "ExeCraft.hpp"

#include "exe/ExecutableData.hpp"
#include "exe/Serialize.hpp"
#include "exe/Validate.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <sstream>
#include <string>
#include <vector>

// The largest single allocation, so that a test can say "this input did not make
// us allocate gigabytes" without depending on the machine's memory.
namespace {
std::atomic<std::size_t> largestAllocation{0};
void *allocate(std::size_t n) {
  std::size_t seen = largestAllocation.load(std::memory_order_relaxed);
  while (n > seen && !largestAllocation.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
} // namespace
void *operator new(std::size_t n) {
  return allocate(n);
}
void *operator new[](std::size_t n) {
  return allocate(n);
}
void operator delete(void *p) noexcept {
  std::free(p);
}
void operator delete[](void *p) noexcept {
  std::free(p);
}
void operator delete(void *p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void *p, std::size_t) noexcept {
  std::free(p);
}
// The aligned forms too: every allocation function is replaced together, so that nothing
// allocated by a library's own operator new is freed here (ASan: alloc-dealloc-mismatch).
void *operator new(std::size_t n, std::align_val_t a) {
  std::size_t seen = largestAllocation.load(std::memory_order_relaxed);
  while (n > seen && !largestAllocation.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
  }
  const std::size_t align = static_cast<std::size_t>(a);
  if (void *p = std::aligned_alloc(align, (n + align - 1) / align * align))
    return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t n, std::align_val_t a) {
  return operator new(n, a);
}
void operator delete(void *p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void *p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void *p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void *p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
  try {
    return allocate(n);
  } catch (const std::bad_alloc &) {
    return nullptr;
  }
}
void *operator new[](std::size_t n, const std::nothrow_t &tag) noexcept {
  return operator new(n, tag);
}
void operator delete(void *p, const std::nothrow_t &) noexcept {
  std::free(p);
}
void operator delete[](void *p, const std::nothrow_t &) noexcept {
  std::free(p);
}

using namespace poplar;
using namespace poplar::program;
using aspen::test::ExeParts;
using Catch::Contains;

namespace {

/// A program with a bit of everything the loader reads: a compute set, a loop
/// (a counter), a stream, a remote buffer, a print and host handles.
const std::vector<std::uint8_t> &sampleExecutable() {
  static const std::vector<std::uint8_t> bytes = [] {
    runtime_test::TestGraph t;
    Graph &g = t.graph;
    Tensor x = g.addVariable(FLOAT, {8}, "x");
    g.setTileMapping(x, 1);
    ComputeSet cs = g.addComputeSet("addOne");
    g.setTileMapping(g.addVertex(cs, "AddOne", {{"data", x}}), 1);
    g.createHostWrite("x-in", x);
    g.createHostRead("x-out", x);
    DataStream in = g.addHostToDeviceFIFO("in", FLOAT, 8);
    RemoteBuffer rb = g.addRemoteBuffer("rb", FLOAT, 8, 2);
    Sequence prog({Copy(in, x), Repeat(3, Execute(cs)), Copy(x, rb), Copy(rb, x), PrintTensor("x", x)});
    Executable exe = compileGraph(g, {prog});
    std::stringstream out;
    exe.serialize(out);
    const std::string s = out.str();
    return std::vector<std::uint8_t>(s.begin(), s.end());
  }();
  return bytes;
}

/// The message of the graph_object_load_error that loading `bytes` throws
/// ("<loaded>" when it loads).
std::string loadError(const std::vector<std::uint8_t> &bytes) {
  std::stringstream in(std::string(bytes.begin(), bytes.end()));
  try {
    Executable::deserialize(in);
  } catch (const graph_object_load_error &e) {
    return e.what();
  }
  return "<loaded>";
}

/// The sample with `edit` applied to its decoded sections, re-assembled with a valid checksum.
template <class Edit> std::vector<std::uint8_t> crafted(Edit &&edit) {
  ExeParts parts = ExeParts::split(sampleExecutable());
  edit(parts);
  return parts.join();
}

} // namespace

TEST_CASE("exe_load: the sample loads, and the crafting round-trips", "[error][executable]") {
  CHECK(loadError(sampleExecutable()) == "<loaded>");
  CHECK(loadError(crafted([](ExeParts &) {})) == "<loaded>");
}

TEST_CASE("exe_load: section padding past the payload", "[error][executable]") {
  // One 9-byte ident section: its padding to 8 bytes ends 7 bytes past the payload.
  std::vector<std::uint8_t> bytes(sampleExecutable().begin(), sampleExecutable().begin() + 48);
  std::uint8_t head[16] = {1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0};
  bytes.insert(bytes.end(), head, head + 16);
  bytes.insert(bytes.end(), 9, 0xa0);
  aspen::test::repairChecksum(bytes);
  const std::string e = loadError(bytes);
  CHECK_THAT(e, Contains("is corrupt") && Contains("section 1 (ident)") && Contains("padding"));
}

TEST_CASE("exe_load: a section length past the payload", "[error][executable]") {
  auto bytes = sampleExecutable();
  aspen::test::exePut64(bytes.data() + 48 + 8, ~std::uint64_t(0) - 8);
  aspen::test::repairChecksum(bytes);
  CHECK_THAT(loadError(bytes), Contains("section 1 (ident) length"));
}

TEST_CASE("exe_load: counts are bounded before anything is allocated", "[error][executable]") {
  for (std::uint64_t count : {std::uint64_t(1) << 62, std::uint64_t(100000000)}) {
    const auto bytes = crafted([&](ExeParts &p) { p.meta["computeSteps"][0]["vertices"][1] = count; });
    largestAllocation = 0;
    const std::string e = loadError(bytes);
    CHECK_THAT(e, Contains("computeSteps[0].vertices") && Contains("lies outside the data section"));
    // Nothing near count * 24 bytes was reserved for the vertices first.
    CHECK(largestAllocation.load() < (std::size_t(16) << 20));
  }
  for (const char *table : {"relocations", "blobs", "tileBytesUsed"}) {
    const auto bytes = crafted([&](ExeParts &p) { p.meta[table][1] = std::uint64_t(1) << 62; });
    CHECK_THAT(loadError(bytes), Contains(table) && Contains("lies outside the data section"));
  }
}

TEST_CASE("exe_load: type ids are range-checked", "[error][executable]") {
  auto streams = crafted([](ExeParts &p) { p.meta["streams"][0]["type"] = 200; });
  CHECK_THAT(loadError(streams), Contains("streams[0]") && Contains("type id 200"));
  auto handles = crafted([](ExeParts &p) { p.meta["hostHandles"][0]["type"] = 0; });
  CHECK_THAT(loadError(handles), Contains("hostHandles[0]") && Contains(".type 0 is not a type id"));
  auto remote = crafted([](ExeParts &p) { p.meta["remoteBuffers"][0]["type"] = 18; });
  CHECK_THAT(loadError(remote), Contains("remoteBuffers[0]") && Contains("type id 18"));
  auto stepKind = crafted([](ExeParts &p) { p.meta["steps"][0][0] = 99; });
  CHECK_THAT(loadError(stepKind), Contains("steps[0]") && Contains("kind 99"));
  auto target = crafted([](ExeParts &p) { p.meta["target"]["type"] = 7; });
  CHECK_THAT(loadError(target), Contains("target") && Contains("not a target type"));
}

TEST_CASE("exe_load: a counter count of -1", "[error][executable]") {
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["numCounters"] = -1; })),
             Contains("numCounters") && Contains("unsigned 32-bit"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["numCounters"] = 0xffffffffu; })),
             Contains("numCounters 4294967295 is more than the number of steps"));
}

TEST_CASE("exe_load: a remote buffer whose size product wraps", "[error][executable]") {
  // (2^62 + 1) floats per row: 2^64 + 4 bytes, which wraps to a 4-byte row.
  const auto bytes =
      crafted([](ExeParts &p) { p.meta["remoteBuffers"][0]["numElements"] = (std::uint64_t(1) << 62) + 1; });
  CHECK_THAT(loadError(bytes), Contains("remoteBuffers[0] ('rb')") && Contains("larger than 2^47"));
  const auto rows =
      crafted([](ExeParts &p) { p.meta["remoteBuffers"][0]["repeats"] = std::uint64_t(1) << 62; });
  CHECK_THAT(loadError(rows), Contains("remoteBuffers[0] ('rb')"));
  const auto stream =
      crafted([](ExeParts &p) { p.meta["streams"][0]["numElements"] = std::uint64_t(1) << 62; });
  CHECK_THAT(loadError(stream), Contains("streams[0] ('in').numElements"));
}

TEST_CASE("exe_load: a header claiming a 1 TB payload", "[error][executable]") {
  auto bytes = sampleExecutable();
  bytes.resize(200);
  aspen::test::exePut64(bytes.data() + 16, std::uint64_t(1) << 40);
  largestAllocation = 0;
  CHECK_THAT(loadError(bytes), Contains("is truncated"));
  CHECK(largestAllocation.load() < (std::size_t(4) << 20));
}

TEST_CASE("exe_load: malformed JSON is reported as a load error naming the field", "[error][executable]") {
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["steps"] = "no"; })),
             Contains("field 'steps' is not an array"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["steps"][0][1] = "a"; })), Contains("steps[0]"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["numIPUs"] = 1e300; })),
             Contains("target") && Contains("'numIPUs' is not an unsigned 32-bit integer"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) {
               p.meta["switchTables"] = {{{"control", 5}}};
             })),
             Contains("switchTables[0]"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.ident.erase("package"); })),
             Contains("ident") && Contains("'package'"));
  std::vector<std::uint8_t> notCbor = {0xff, 0xff, 0xff};
  CHECK_THAT(loadError(crafted([&](ExeParts &p) { p.meta = nlohmann::json::binary(notCbor); })),
             Contains("meta"));
}

TEST_CASE("exe_load: a cost-model rate out of range names the target parameter", "[error][executable]") {
  // docs/cost-model.md: every rate the model divides by must be positive and finite.
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["tileClockFrequency"] = 0.0; })),
             Contains("target.tileClockFrequency") && Contains("positive, finite"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["tileClockFrequency"] = -1.33e9; })),
             Contains("target.tileClockFrequency"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["hostLinkBandwidth"] = 0.0; })),
             Contains("target.hostLinkBandwidth"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["ipuLinkBandwidth"] = -32e9; })),
             Contains("target.ipuLinkBandwidth"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["streamingMemoryBandwidth"] = 0.0; })),
             Contains("target.streamingMemoryBandwidth"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["exchangeBytesPerCycle"] = 0; })),
             Contains("target.exchangeBytesPerCycle"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["ipuLinksPerRing"] = 0; })),
             Contains("target.ipuLinksPerRing"));
}

TEST_CASE("exe_load: a malformed replication factor is a load error; the profile is only described",
          "[error][executable]") {
  // The replica count is the executable's own field, read with the checked readers.
  const auto bytes = crafted([](ExeParts &p) {
    p.meta["replication"] = {{"factor", "many"},
                             {"collectives", nlohmann::json::array()},
                             {"indexTransfers", nlohmann::json::array()}};
  });
  std::stringstream in(std::string(bytes.begin(), bytes.end()));
  REQUIRE_THROWS_AS(Executable::deserialize(in), graph_object_load_error);
  std::stringstream again(std::string(bytes.begin(), bytes.end()));
  REQUIRE_THROWS_WITH(Executable::deserialize(again), Contains("replication") && Contains("factor"));
  // The profile section is a description for reports: one the engine cannot read is reported
  // as empty, never trusted for anything the engine runs.
  const auto oddProfile = crafted([](ExeParts &p) {
    const std::string profile = R"({"target": {"replicationFactor": "many"}})";
    p.profile.assign(profile.begin(), profile.end());
  });
  std::stringstream odd(std::string(oddProfile.begin(), oddProfile.end()));
  Engine engine(Executable::deserialize(odd));
  std::ostringstream summary;
  engine.printProfileSummary(summary);
  CHECK_THAT(summary.str(), Contains("Number of Replicas"));
}

TEST_CASE("exe_load: indices, jump targets and relocations are bounded", "[error][executable]") {
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["programEntry"][0] = 1000000; })),
             Contains("programEntry[0] 1000000 is out of range"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) {
               for (auto &s : p.meta["steps"])
                 if (s[0] == int(aspen::exe::StepKind::LoopTest))
                   s[3] = 123456;
             })),
             Contains(".target 123456 is out of range"));
  // The first relocation's target address (bytes 12..15 of its 16-byte record).
  CHECK_THAT(loadError(crafted([](ExeParts &p) {
               const std::uint64_t at = p.meta["relocations"][0];
               const std::uint32_t huge = 0xfffffff0u;
               std::memcpy(p.data.data() + at + 4, &huge, 4);
             })),
             Contains("relocations[0].where") && Contains("outside tile memory"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) {
               const std::uint64_t at = p.meta["computeSteps"][0]["vertices"][0];
               const std::uint32_t type = 77;
               std::memcpy(p.data.data() + at, &type, 4);
             })),
             Contains("computeSteps[0] (") && Contains(".vertices[0].type 77 is out of range"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["hostTransfers"][0]["bytes"] = 1u << 30; })),
             Contains("hostTransfers[0]"));
  CHECK_THAT(loadError(crafted([](ExeParts &p) { p.meta["target"]["numIPUs"] = 1u << 31; })),
             Contains("target") && Contains("tiles"));
}

TEST_CASE("exe_load: a vertex library must match its content hash", "[error][executable]") {
  const auto bytes = crafted([](ExeParts &p) { p.code[p.code.size() / 2] ^= 1; });
  CHECK_THAT(loadError(bytes), Contains("codeletLibraries[0]") && Contains("not the hash of the library"));
  const auto path = crafted([](ExeParts &p) { p.ident["codeletLibraries"][0]["contentHash"] = "../../x"; });
  CHECK_THAT(loadError(path), Contains("codeletLibraries[0]"));
}

TEST_CASE("exe_load: provenance: compiled executables are trusted, deserialised ones validated",
          "[error][executable]") {
  runtime_test::TestGraph t;
  Tensor x = t.graph.addVariable(FLOAT, {8}, "x");
  t.graph.setTileMapping(x, 0);
  ComputeSet cs = t.graph.addComputeSet("addOne");
  t.graph.setTileMapping(t.graph.addVertex(cs, "AddOne", {{"data", x}}), 0);
  Executable exe = compileGraph(t.graph, {Execute(cs)});
  CHECK(exe.getImpl().provenance == aspen::exe::Provenance::Compiled);
  // What the compiler guarantees holds: the full check accepts it.
  CHECK_NOTHROW(aspen::exe::validateStructure(exe.getImpl(), "compiled"));
  std::stringstream bytes;
  exe.serialize(bytes);
  Executable back = Executable::deserialize(bytes);
  CHECK(back.getImpl().provenance == aspen::exe::Provenance::Validated);
  // The flag is not in the file: a fresh ExecutableData is unchecked.
  CHECK(aspen::exe::ExecutableData().provenance == aspen::exe::Provenance::Unchecked);
}

TEST_CASE("exe_load: deeply nested CBOR is refused before the recursive reader sees it",
          "[error][executable]") {
  // 200,000 nested one-element arrays: nlohmann's CBOR reader recurses per level.
  const auto bytes = crafted([](ExeParts &p) { p.meta = nlohmann::json::array(); });
  ExeParts parts = ExeParts::split(bytes);
  std::vector<std::uint8_t> deep(200000, 0x81);
  deep.push_back(0x00);
  // Re-assemble by hand with the raw meta section.
  std::vector<std::uint8_t> out = parts.header;
  auto append = [&](std::uint32_t tag, const std::vector<std::uint8_t> &b) {
    std::uint8_t head[16] = {};
    std::memcpy(head, &tag, 4);
    aspen::test::exePut64(head + 8, b.size());
    out.insert(out.end(), head, head + 16);
    out.insert(out.end(), b.begin(), b.end());
    out.resize((out.size() + 7) / 8 * 8, 0);
  };
  append(1, nlohmann::json::to_cbor(parts.ident));
  append(2, deep);
  append(3, parts.data);
  append(4, parts.code);
  append(5, parts.profile);
  aspen::test::repairChecksum(out);
  CHECK_THAT(loadError(out), Contains("meta") && Contains("more than 64 deep"));
}

TEST_CASE("exe_load: a deeply nested or mistyped profile reads as no profile", "[error][executable]") {
  for (const std::string &profile :
       {std::string(300000, '[') + std::string(300000, ']'),
        std::string(
            R"({"graph": {"numVertices": -5}, "memory": {"tiles": {"byCategory": {"x": ["a", 1e300]}}}})"),
        std::string(R"({"graph": 3, "memory": [], "target": "t"})")}) {
    const auto bytes = crafted([&](ExeParts &p) { p.profile.assign(profile.begin(), profile.end()); });
    std::stringstream in(std::string(bytes.begin(), bytes.end()));
    Engine engine(Executable::deserialize(in));
    std::stringstream summary;
    engine.printProfileSummary(summary);
    CHECK_THAT(summary.str(), Contains("Memory Usage"));
  }
}

TEST_CASE("exe_load: a print's shape is bounded (rank, rows of an empty tensor)", "[error][executable]") {
  auto shapeOf = [](nlohmann::json shape) {
    return crafted([&](ExeParts &p) { p.meta["prints"][0]["shape"] = shape; });
  };
  // The sample prints 8 floats: {8} loads; 100,000 dimensions of 1 would recurse 100,000 deep.
  CHECK(loadError(shapeOf({8})) == "<loaded>");
  nlohmann::json deep = nlohmann::json::array();
  for (int i = 0; i < 100000; ++i)
    deep.push_back(1);
  deep.push_back(8);
  CHECK_THAT(loadError(shapeOf(deep)), Contains("prints[0].shape has 100001 dimensions"));
  // No elements but 2^40 rows to print: refused (the transfer has 0 bytes then, too).
  const auto empty = crafted([](ExeParts &p) {
    p.meta["prints"][0]["shape"] = {std::uint64_t(1) << 40, 0};
    auto &transfer = p.meta["hostTransfers"][p.meta["prints"][0]["transfer"].get<std::size_t>()];
    transfer["bytes"] = 0;
    transfer["runs"] = {0, 0};
  });
  CHECK_THAT(loadError(empty), Contains("prints[0].shape has more rows than elements"));
}

TEST_CASE("exe_load: each tile's copy of a library's data is bounded and must match the library",
          "[error][executable]") {
  // docs/tile-model.md: codeletData names a library, a size and each tile's copy.
  auto withData = [](nlohmann::json entry) {
    return crafted([&](ExeParts &p) { p.meta["codeletData"] = nlohmann::json::array({entry}); });
  };
  CHECK_THAT(loadError(withData({{"library", 5}, {"bytes", 8}, {"regions", {1, 64}}})),
             Contains("codeletData[0].library 5 is out of range"));
  CHECK_THAT(loadError(withData({{"library", 0}, {"bytes", 8}, {"regions", {1, 0xfffffff0u}}})),
             Contains("codeletData[0].regions[0]") && Contains("outside tile memory"));
  CHECK_THAT(loadError(withData({{"library", 0}, {"bytes", 8}, {"regions", {2, 64, 1, 64}}})),
             Contains("codeletData[0].regions") && Contains("ascending tile order"));
  CHECK_THAT(loadError(withData({{"library", 0}, {"bytes", 0}, {"regions", {1, 64}}})),
             Contains("codeletData[0].bytes") && Contains("is 0"));
  CHECK_THAT(loadError(withData({{"library", 0}, {"bytes", 8}, {"regions", nlohmann::json::array({1})}})),
             Contains("codeletData[0]") && Contains("(tile, address) pairs"));

  // Well formed, but the library (runtime_codelets.cpp) has no data of its own.
  const auto bytes = withData({{"library", 0}, {"bytes", 16}, {"regions", {1, 64}}});
  std::stringstream in(std::string(bytes.begin(), bytes.end()));
  Engine engine(Executable::deserialize(in));
  Device device = runtime_test::makeDevice();
  aspen::test::requireError<graph_object_load_error>([&] { engine.load(device); },
                                                     {"has 0 bytes of per-tile data", "reserves 16"});
}

TEST_CASE("exe_load: a library with data of its own needs a copy on every tile that runs it",
          "[error][executable]") {
  auto compiled = [] {
    Device device = runtime_test::makeDevice();
    Graph g(device.getTarget());
    g.addCodelets(ASPEN_TILE_STATE_GP);
    Tensor counts = g.addVariable(UNSIGNED_INT, {2}, "counts");
    ComputeSet cs = g.addComputeSet("count");
    for (unsigned t = 0; t < 2; ++t) {
      g.setTileMapping(counts[t], t);
      g.setTileMapping(g.addVertex(cs, "StaticCounter", {{"out", counts[t]}}), t);
    }
    std::stringstream out;
    compileGraph(g, {Execute(cs)}).serialize(out);
    const std::string s = out.str();
    return ExeParts::split(std::vector<std::uint8_t>(s.begin(), s.end()));
  };
  auto loadMessage = [](ExeParts parts) {
    const std::vector<std::uint8_t> bytes = parts.join();
    std::stringstream in(std::string(bytes.begin(), bytes.end()));
    Engine engine(Executable::deserialize(in));
    Device device = runtime_test::makeDevice();
    try {
      engine.load(device);
    } catch (const graph_object_load_error &e) {
      return std::string(e.what());
    }
    return std::string("<loaded>");
  };
  ExeParts parts = compiled();
  REQUIRE(parts.meta["codeletData"].size() == 1);
  CHECK(loadMessage(parts) == "<loaded>");
  ExeParts none = parts;
  none.meta["codeletData"] = nlohmann::json::array();
  CHECK_THAT(loadMessage(none), Contains("vertex type 'StaticCounter'") &&
                                    Contains("global or static variables") &&
                                    Contains("reserves no per-tile copy"));
  ExeParts oneTile = parts;
  auto &regions = oneTile.meta["codeletData"][0]["regions"];
  regions = nlohmann::json::array({regions[0], regions[1]}); // tile 0's copy only
  CHECK_THAT(loadMessage(oneTile), Contains("tile 1 runs vertices of library 0") &&
                                       Contains("compute set 'count'") && Contains("holds no copy"));
}

namespace {

/// Two tiles each reading a gather (three runs) of a variable no other tile reads, with a
/// library that declares its Inputs read-only: a fused step with two scratch windows
/// (docs/exchange.md, inPlace.scratch and inPlace.scratchBindings).
const std::vector<std::uint8_t> &scratchSample() {
  static const std::vector<std::uint8_t> bytes = [] {
    runtime_test::TestGraph t(8);
    Graph &g = t.graph;
    std::stringstream codelets(R"(
#include <poplar/Vertex.hpp>
using namespace poplar;
extern "C" __attribute__((weak, used, visibility("default"))) const int aspen_codelet_inputs_read_only = 1;
class SumIn : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float s = 0;
    for (unsigned i = 0; i < in.size(); ++i)
      s += in[i];
    *out = s;
    return true;
  }
};
)");
    g.addCodelets(codelets, "-O2");
    ComputeSet cs = g.addComputeSet("read");
    Tensor out = g.addVariable(FLOAT, {2}, "out");
    for (unsigned r = 0; r < 2; ++r) {
      Tensor x = g.addVariable(FLOAT, {48}, "x" + std::to_string(r));
      for (unsigned s = 0; s < 3; ++s)
        g.setTileMapping(x.slice(s * 16, (s + 1) * 16), s);
      g.setTileMapping(g.addVertex(cs, "SumIn", {{"in", x}, {"out", out[r]}}), 4 + r);
      g.setTileMapping(out[r], 4 + r);
    }
    Executable exe = compileGraph(g, {Repeat(2, Execute(cs))}, {{"aspen.compileCache", "false"}});
    std::stringstream file;
    exe.serialize(file);
    const std::string s = file.str();
    return std::vector<std::uint8_t>(s.begin(), s.end());
  }();
  return bytes;
}

/// The scratch sample with `edit(parts, scratch, bindings)` applied: the offsets in the data
/// section of its first step's scratch windows (20-byte records: planTile, runs, lo, bytes,
/// bindBegin) and bindings (16 bytes: where tile, addr, target tile, addr).
template <class Edit> std::vector<std::uint8_t> craftedScratch(Edit &&edit) {
  ExeParts parts = ExeParts::split(scratchSample());
  nlohmann::json &ip = parts.meta["computeSteps"][0]["inPlace"];
  const std::uint64_t scratch = ip["scratch"][0], bindings = ip["scratchBindings"][0];
  edit(parts, parts.data.data() + scratch, parts.data.data() + bindings);
  return parts.join();
}

void put32At(std::uint8_t *record, unsigned field, std::uint32_t value) {
  std::memcpy(record + 4 * field, &value, 4);
}
std::uint32_t get32At(const std::uint8_t *record, unsigned field) {
  std::uint32_t value = 0;
  std::memcpy(&value, record + 4 * field, 4);
  return value;
}

} // namespace

TEST_CASE("exe_load: scratch windows and their bindings are bounded", "[error][executable]") {
  using W = std::uint8_t *;
  {
    ExeParts parts = ExeParts::split(scratchSample());
    const nlohmann::json &ip = parts.meta["computeSteps"][0]["inPlace"];
    REQUIRE(ip["scratch"][1] == 2);
    REQUIRE(ip["scratchBindings"][1] == 2);
    CHECK(loadError(scratchSample()) == "<loaded>");
  }
  // planTile: in range, ascending.
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 0, 1000); })),
             Contains("inPlace.scratch[0].planTile 1000 is out of range"));
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s + 20, 0, get32At(s, 0)); })),
             Contains("inPlace.scratch[1].planTile") && Contains("does not ascend"));
  // runs: a count of the tile's runs, each inside the window.
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 1, 0); })),
             Contains("inPlace.scratch[0].runs") && Contains("is not a count of the tile's runs"));
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 1, 1000); })),
             Contains("inPlace.scratch[0].runs") && Contains("is not a count of the tile's runs"));
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 3, 4); })),
             Contains("inPlace.scratch[0].runs") && Contains("lands outside the window"));
  // The window inside tile memory.
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 2, 0xfffffff0u); })),
             Contains("inPlace.scratch[0]") && Contains("outside tile memory"));
  // bindBegin: in order and range, the first 0.
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 4, 99); })),
             Contains("inPlace.scratch[0].bindBegin 99 is out of order or range"));
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W s, W) { put32At(s, 4, 1); })),
             Contains("inPlace.scratch[0].bindBegin is not 0"));
  // A binding's place: in tile memory, on the window's tile; its target inside the window.
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W, W b) { put32At(b, 1, 0xfffffff0u); })),
             Contains("inPlace.scratchBindings[0].where") && Contains("outside tile memory"));
  CHECK_THAT(loadError(craftedScratch([](ExeParts &, W, W b) { put32At(b, 0, get32At(b, 0) ^ 1u); })),
             Contains("inPlace.scratchBindings[0].where is not on the window's tile"));
  CHECK_THAT(
      loadError(craftedScratch([](ExeParts &, W s, W b) { put32At(b, 3, get32At(s, 2) + get32At(s, 3)); })),
      Contains("inPlace.scratchBindings[0].target lies outside its scratch window"));
  // Bindings with no window (the step keeping bindings of its own, as the reader requires).
  CHECK_THAT(loadError(craftedScratch([](ExeParts &p, W, W) {
               nlohmann::json &ip = p.meta["computeSteps"][0]["inPlace"];
               ip["bindings"] = ip["scratchBindings"];
               ip["scratch"][1] = 0;
             })),
             Contains("inPlace.scratchBindings has bindings but no scratch windows"));
}
