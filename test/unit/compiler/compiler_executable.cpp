// Copyright (c) Aspen contributors.
// The executable file format and the compile cache.
#include "TestGraph.hpp"

#include "Compiler.hpp"
#include "cache/CompileCache.hpp"
#include "exe/Hash.hpp"
#include "exe/Serialize.hpp"
#include "poplar/DebugContext.hpp"
#include "poplar/Executable.hpp"
#include "poplar/Graph.hpp"
#include "poplar/ProfileValue.hpp"
#include "poplar/Program.hpp"
#include "poplar/exceptions.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <streambuf>
#include <thread>

using namespace aspen;
using aspen::test::TestGraph;
namespace fs = std::filesystem;

namespace {

/// A small graph with a bit of everything: initial values, state, exchange, copies, loops.
struct SampleGraph {
  TestGraph tg{4};
  std::shared_ptr<ir::ProgramNode> program;
  explicit SampleGraph(unsigned variant = 0) {
    auto x = tg.var(poplar::FLOAT, {64}, "x", {0, 1, 2, 3});
    auto y = tg.var(poplar::FLOAT, {64}, "y", {3, 2, 1, 0});
    auto flag = tg.var(poplar::INT, {}, "flag", {variant % 4});
    tg.setInitial(x, std::vector<float>(64, 1.5f));
    const auto type = tg.vertexType("Scale", {test::in("in"), test::out("out"), test::state("k")});
    const auto cs = tg.computeSet("scale");
    for (int i = 0; i < 8; ++i) {
      const auto v =
          tg.vertex(cs, type, i % 4, {{"in", x.slice(i * 8, i * 8 + 8)}, {"out", y.slice(i * 8, i * 8 + 8)}});
      tg.setState(v, "k", std::vector<unsigned>{static_cast<unsigned>(i)});
    }
    tg.g->hostHandles.push_back({"y", y, false});
    tg.g->hostHandles.push_back({"flag", flag, true});
    auto iff = TestGraph::node(ir::ProgramKind::If);
    iff->predicate = flag;
    iff->children = {TestGraph::copy(y, x), TestGraph::seq({})};
    program = TestGraph::seq({TestGraph::repeat(3, TestGraph::exec(cs)), iff});
  }
  std::unique_ptr<exe::ExecutableData> compile() const {
    return compiler::compile(*tg.g, {program.get()}, compiler::CompileOptions{});
  }
};

std::string loadError(const std::vector<std::uint8_t> &bytes, bool checkPackage = true) {
  try {
    exe::deserializeFromBytes(bytes.data(), bytes.size(), checkPackage, "the stream");
  } catch (const poplar::graph_object_load_error &e) {
    return e.what();
  }
  return "<loaded>";
}

/// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

fs::path freshDir(const std::string &name) {
  const fs::path d = fs::temp_directory_path() / ("aspen_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

} // namespace

/// A stream buffer that cannot seek, as a pipe's: tellg() says -1.
class PipeBuf : public std::streambuf {
public:
  explicit PipeBuf(std::string bytes) : bytes_(std::move(bytes)) {
    setg(bytes_.data(), bytes_.data(), bytes_.data() + bytes_.size());
  }

private:
  std::string bytes_;
};

TEST_CASE("Hash64: one-shot and incremental agree, and inputs are told apart", "[compiler][executable]") {
  std::vector<std::uint8_t> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::uint8_t>(i * 7 + 3);
  const std::uint64_t whole = exe::hash64(data.data(), data.size());
  for (std::size_t split : {0, 1, 31, 32, 33, 500, 999}) {
    exe::Hash64 h;
    h.update(data.data(), split).update(data.data() + split, data.size() - split);
    CHECK(h.digest() == whole);
  }
  auto other = data;
  other[500] ^= 1;
  CHECK(exe::hash64(other.data(), other.size()) != whole);
  CHECK(exe::hash64(data.data(), 999) != whole);
  CHECK(exe::hash64(data.data(), data.size(), 1) != whole);
}

TEST_CASE("Serialize: round trip is byte-identical and keeps every table", "[compiler][executable]") {
  SampleGraph sample;
  auto exe = sample.compile();
  const auto bytes = exe::serializeToBytes(*exe);
  CHECK(std::string(bytes.begin(), bytes.begin() + 8) == "ASPENEXE");
  auto back = exe::deserializeFromBytes(bytes.data(), bytes.size(), true);
  CHECK(exe::serializeToBytes(*back) == bytes);
  // Compiling again gives the same bytes.
  CHECK(exe::serializeToBytes(*sample.compile()) == bytes);

  CHECK(back->steps.size() == exe->steps.size());
  CHECK(back->computeSteps.size() == exe->computeSteps.size());
  CHECK(back->computeSteps[0].vertices.size() == 8);
  CHECK(back->computeSteps[0].vertices[3].cycles == exe->computeSteps[0].vertices[3].cycles);
  CHECK(back->relocations.size() == exe->relocations.size());
  CHECK(back->blobs.size() == exe->blobs.size());
  CHECK(back->blobs[0].bytes == exe->blobs[0].bytes);
  CHECK(back->codeletLibraries.at(0).bytes == exe->codeletLibraries.at(0).bytes);
  CHECK(back->hostHandles.size() == 2);
  CHECK(back->target.tilesPerIPU == 4);
  CHECK(back->profileJson == exe->profileJson);
  CHECK(back->tileBytesUsed == exe->tileBytesUsed);

  // The public class, through streams.
  poplar::Executable pub(std::move(exe));
  std::stringstream ss;
  pub.serialize(ss);
  auto loaded = poplar::Executable::deserialize(std::make_unique<std::stringstream>(ss.str()));
  std::stringstream again;
  loaded.serialize(again);
  CHECK(again.str() == ss.str());

  // A seekable stream read from part-way (the executable after other data), and
  // a stream that cannot seek (as a pipe): both read the same executable.
  std::stringstream after("header of the user's own file\n" + ss.str());
  std::string line;
  std::getline(after, line);
  std::stringstream fromAfter;
  poplar::Executable::deserialize(after).serialize(fromAfter);
  CHECK(fromAfter.str() == ss.str());
  PipeBuf pipe(ss.str());
  std::istream pipeStream(&pipe);
  CHECK(pipeStream.tellg() == std::streampos(-1));
  std::stringstream fromPipe;
  poplar::Executable::deserialize(pipeStream).serialize(fromPipe);
  CHECK(fromPipe.str() == ss.str());
}

TEST_CASE("Serialize: truncated, corrupt, wrong-version and foreign inputs are refused",
          "[compiler][executable]") {
  SampleGraph sample;
  const auto bytes = exe::serializeToBytes(*sample.compile());

  CHECK_THAT(loadError({}), Catch::Contains("empty"));
  CHECK_THAT(loadError({bytes.begin(), bytes.begin() + 5}), Catch::Contains("truncated"));
  CHECK_THAT(loadError({bytes.begin(), bytes.begin() + 40}), Catch::Contains("truncated"));
  CHECK_THAT(loadError({bytes.begin(), bytes.end() - 1}), Catch::Contains("truncated"));

  auto corrupt = bytes;
  corrupt[corrupt.size() / 2] ^= 0x40;
  CHECK_THAT(loadError(corrupt), Catch::Contains("checksum mismatch"));

  // A newer version, and the one before this (version 2 had no per-tile codelet data).
  for (std::uint8_t version : {std::uint8_t(aspen::exe::kFormatVersion + 1), std::uint8_t(2)}) {
    auto wrongVersion = bytes;
    wrongVersion[8] = version;
    CHECK_THAT(loadError(wrongVersion),
               Catch::Contains("format version " + std::to_string(version) + ", this Aspen reads " +
                               std::to_string(aspen::exe::kFormatVersion)));
  }

  const std::string text = "#include <poplar/Graph.hpp>\nint main() {}\n";
  CHECK_THAT(loadError({text.begin(), text.end()}), Catch::Contains("not an Aspen executable"));

  // Through the public API and a stream: a poplar_error naming the problem.
  std::stringstream ss(std::string(bytes.begin(), bytes.begin() + 100));
  CHECK_THROWS_WITH(poplar::Executable::deserialize(ss), Catch::Contains("truncated"));
}

TEST_CASE("Compile cache: keys, hits, misses, corrupt entries and eviction", "[compiler][cache]") {
  const fs::path dir = freshDir("cache_test");
  cache::CacheConfig config;
  config.directory = dir;
  SampleGraph a(0), b(1);
  const std::string keyA = cache::computeCacheKey(*a.tg.g, {a.program.get()}, {});
  CHECK(keyA.size() == 32);
  CHECK(cache::computeCacheKey(*a.tg.g, {a.program.get()}, {}) == keyA);
  const std::string keyB = cache::computeCacheKey(*b.tg.g, {b.program.get()}, {});
  CHECK(keyB != keyA); // one variable mapped to another tile
  compiler::CompileOptions oom;
  oom.allowOutOfMemory = true;
  CHECK(cache::computeCacheKey(*a.tg.g, {a.program.get()}, oom) != keyA);
  CHECK(cache::computeCacheKey(*a.tg.g, {}, {}) != keyA);

  CHECK(cache::lookup(config, keyA) == nullptr); // miss
  auto exeA = a.compile();
  cache::store(config, keyA, *exeA);
  REQUIRE(fs::exists(cache::entryPath(config, keyA)));
  auto hit = cache::lookup(config, keyA);
  REQUIRE(hit != nullptr);
  CHECK(exe::serializeToBytes(*hit) == exe::serializeToBytes(*exeA));

  // A corrupt entry is a miss, and it is removed so that a recompile replaces it.
  {
    std::fstream f(cache::entryPath(config, keyA), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  CHECK(cache::lookup(config, keyA) == nullptr);
  CHECK_FALSE(fs::exists(cache::entryPath(config, keyA)));
  cache::store(config, keyA, *exeA);
  CHECK(cache::lookup(config, keyA) != nullptr);

  // Eviction: room for two entries; the least recently used one goes.
  const std::uint64_t entryBytes = fs::file_size(cache::entryPath(config, keyA));
  config.maxBytes = entryBytes * 2 + entryBytes / 2;
  auto exeB = b.compile();
  cache::store(config, keyB, *exeB);
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(cache::entryPath(config, keyA), old);
  fs::last_write_time(cache::entryPath(config, keyB), old + std::chrono::minutes(1));
  CHECK(cache::lookup(config, keyA) != nullptr); // a hit makes A the most recent
  SampleGraph c(2);
  const std::string keyC = cache::computeCacheKey(*c.tg.g, {c.program.get()}, {});
  cache::store(config, keyC, *c.compile());
  CHECK(fs::exists(cache::entryPath(config, keyA)));
  CHECK_FALSE(fs::exists(cache::entryPath(config, keyB)));
  CHECK(fs::exists(cache::entryPath(config, keyC)));
  fs::remove_all(dir);
}

TEST_CASE("Compile cache: one key for the same graph built twice in one process", "[compiler][cache]") {
  // Debug ids count up process-wide: the second build's ids are all larger. The key must not
  // see that shift, but must see a different recorded argument.
  auto build = [](int argument, const std::string &name) {
    poplar::Graph graph(poplar::Target::createIPUTarget(1, 4, "ipu2"));
    poplar::DebugInfo op(poplar::DebugContext(name), "mylib");
    op.setValue("argument", poplar::ProfileValue(argument));
    poplar::DebugNameAndId under(op);
    poplar::Tensor x = graph.addVariable(poplar::FLOAT, {16}, {under, "x"});
    graph.setTileMapping(x, 0);
    poplar::program::Sequence seq({poplar::program::WriteUndef(x, {under, "undef"})}, {under, "seq"});
    return cache::computeCacheKey(graph.getImpl(), {seq.getImpl().get()}, {});
  };
  const std::string first = build(7, "op");
  poplar::DebugInfo unrelated(poplar::DebugContext("between"), "mylib"); // shifts later ids further
  CHECK(build(7, "op") == first);
  CHECK(build(8, "op") != first);
  CHECK(build(7, "other") != first);
}

TEST_CASE("Compile cache: the key tells apart which fp8 metadata a quarter tensor carries",
          "[compiler][cache]") {
  // Two graphs that differ only in the metadata their quarter variable carries: a
  // vertex reading the variable reads that metadata, so they must not share an entry.
  auto build = [](unsigned which) {
    poplar::Graph graph(poplar::Target::createIPUTarget(1, 4, "ipu2"));
    poplar::Tensor m0 = graph.addVariable(poplar::QUARTER_METADATA, {}, "m");
    poplar::Tensor m1 = graph.addVariable(poplar::QUARTER_METADATA, {}, "m");
    graph.setTileMapping(m0, 0);
    graph.setTileMapping(m1, 0);
    poplar::Tensor q = graph.addVariable(poplar::QUARTER, which == 0 ? m0 : m1, {4}, "q");
    graph.setTileMapping(q, 0);
    poplar::program::Sequence seq({poplar::program::WriteUndef(q)});
    return cache::computeCacheKey(graph.getImpl(), {seq.getImpl().get()}, {});
  };
  CHECK(build(0) == build(0));
  CHECK(build(0) != build(1));
}

TEST_CASE("Compile cache: configuration from the environment", "[compiler][cache]") {
  ScopedEnv dir("ASPEN_CACHE_DIR", "/tmp/aspen-cache-env-test");
  ScopedEnv max("ASPEN_COMPILE_CACHE_MAX_BYTES", "12345");
  const auto config = cache::CacheConfig::fromEnvironment();
  CHECK(config.directory == fs::path("/tmp/aspen-cache-env-test/executables"));
  CHECK(config.maxBytes == 12345);
  {
    ScopedEnv on("ASPEN_COMPILE_CACHE", "1");
    CHECK(compiler::parseCompileOptions({}).useCache);
    CHECK_FALSE(compiler::parseCompileOptions({{"aspen.compileCache", "false"}}).useCache);
  }
  ScopedEnv off("ASPEN_COMPILE_CACHE", "0");
  CHECK_FALSE(compiler::parseCompileOptions({}).useCache);
  CHECK(compiler::parseCompileOptions({{"aspen.compileCache", "true"}}).useCache);
  CHECK(compiler::parseCompileOptions({{"debug.allowOutOfMemory", "true"}}).allowOutOfMemory);
  CHECK_NOTHROW(compiler::parseCompileOptions({{"debug.instrument", "true"}, {"profiler.format", "v3"}}));
}
