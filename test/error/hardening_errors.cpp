// Copyright (c) Aspen contributors.
// Issue 16 (hardening), behaviour side: popops::fill with values that have no integer
// equivalent (UBSan: -inf converted to long), the aspen.poisonUninitialisedMemory engine
// option, and the compile cache healing itself (dead writers' temporary files, a full disk,
// a corrupted entry).
#include "ErrorCheck.hpp"

#include "cache/CompileCache.hpp"
#include "exe/Serialize.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poplar/exceptions.hpp>
#include <popops/Fill.hpp>
#include <popops/codelets.hpp>
#include <poputil/exceptions.hpp>

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using aspen::test::requireError;
namespace fs = std::filesystem;

namespace {

Device smallDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  return model.createDevice();
}

constexpr float kInf = std::numeric_limits<float>::infinity();

} // namespace

// ---- popops::fill with non-finite values ----------------------------------------------

TEST_CASE("hardening: popops::fill of a float tensor with -inf, +inf and NaN", "[hardening][popops]") {
  // The fill value was converted to an integer whatever the tensor type: -inf to long is
  // undefined behaviour (UBSan: "-inf is outside the range of representable values").
  Device device = smallDevice();
  Graph g(device.getTarget());
  popops::addCodelets(g);
  Tensor a = g.addVariable(FLOAT, {6}, "a");
  Tensor b = g.addVariable(FLOAT, {5}, "b");
  Tensor c = g.addVariable(HALF, {3}, "c");
  g.setTileMapping(a, 0);
  g.setTileMapping(b, 1);
  g.setTileMapping(c, 2);
  Sequence prog;
  popops::fill(g, a, prog, -kInf);
  popops::fill(g, b, prog, std::numeric_limits<double>::infinity());
  popops::fill(g, c, prog, std::nanf(""));
  g.createHostRead("a", a);
  g.createHostRead("b", b);
  g.createHostRead("c", c);
  Engine engine(g, prog);
  engine.load(device);
  engine.run(0);
  std::vector<float> got(6);
  engine.readTensor("a", got.data(), got.data() + 6);
  for (float v : got)
    CHECK((std::isinf(v) && v < 0));
  engine.readTensor("b", got.data(), got.data() + 5);
  for (int i = 0; i < 5; ++i)
    CHECK((std::isinf(got[i]) && got[i] > 0));
  std::vector<std::uint16_t> halves(3);
  engine.readTensor("c", halves.data(), halves.data() + 3);
  for (std::uint16_t h : halves)
    CHECK(((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0)); // a half NaN
}

TEST_CASE("hardening: popops::fill of an integer tensor with a value it cannot hold", "[hardening][error]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  popops::addCodelets(g);
  Tensor ints = g.addVariable(INT, {4}, "counts");
  g.setTileMapping(ints, 0);
  Sequence prog;
  requireError<poputil::poplibs_error>([&] { popops::fill(g, ints, prog, -kInf); },
                                       {"popops::fill", "-inf", "int", "counts"});
  requireError<poputil::poplibs_error>([&] { popops::fill(g, ints, prog, std::nan("")); },
                                       {"popops::fill", "nan", "counts"});
  requireError<poputil::poplibs_error>([&] { popops::fill(g, ints, prog, 1e300); },
                                       {"popops::fill", "counts"});
  // A finite float fill still truncates as C++ converts.
  popops::fill(g, ints, prog, -2.75f);
  g.createHostRead("counts", ints);
  Engine engine(g, prog);
  engine.load(device);
  engine.run(0);
  std::vector<int> got(4);
  engine.readTensor("counts", got.data(), got.data() + 4);
  CHECK(got == std::vector<int>(4, -2));
}

// ---- aspen.poisonUninitialisedMemory ------------------------------------------------------

namespace {

struct PoisonRun {
  std::vector<float> unwrittenFloat;
  std::vector<int> unwrittenInt;
  std::vector<float> written;
};

/// Reads two tensors no program writes, and one a Copy from a constant writes.
PoisonRun runReadingUnwritten(const OptionFlags &options) {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor f = g.addVariable(FLOAT, {5}, "neverWrittenF");
  Tensor i = g.addVariable(INT, {3}, "neverWrittenI");
  Tensor w = g.addVariable(FLOAT, {4}, "written");
  Tensor c = g.addConstant<float>(FLOAT, {4}, 1.25f, "c");
  // Alone on their tiles: nothing else can share their memory.
  g.setTileMapping(f, 2);
  g.setTileMapping(i, 3);
  g.setTileMapping(w, 0);
  g.setTileMapping(c, 0);
  g.createHostRead("f", f);
  g.createHostRead("i", i);
  g.createHostRead("w", w);
  Engine engine(g, Sequence{Copy(c, w)}, options);
  engine.load(device);
  engine.run(0);
  PoisonRun r{std::vector<float>(5), std::vector<int>(3), std::vector<float>(4)};
  engine.readTensor("f", r.unwrittenFloat.data(), r.unwrittenFloat.data() + 5);
  engine.readTensor("i", r.unwrittenInt.data(), r.unwrittenInt.data() + 3);
  engine.readTensor("w", r.written.data(), r.written.data() + 4);
  return r;
}

} // namespace

TEST_CASE("hardening: aspen.poisonUninitialisedMemory makes reads before writes visible", "[hardening]") {
  // Without the option, a tensor read before any write reads 0 (Poplar leaves it undefined:
  // docs/uninitialised-memory.md); with it, all-ones bytes: NaN as float, -1 as int.
  const PoisonRun plain = runReadingUnwritten({{"aspen.compileCache", "false"}});
  CHECK(plain.unwrittenFloat == std::vector<float>(5, 0.0f));
  CHECK(plain.unwrittenInt == std::vector<int>(3, 0));
  CHECK(plain.written == std::vector<float>(4, 1.25f));
  const PoisonRun poisoned =
      runReadingUnwritten({{"aspen.compileCache", "false"}, {"aspen.poisonUninitialisedMemory", "true"}});
  for (float v : poisoned.unwrittenFloat)
    CHECK(std::isnan(v));
  CHECK(poisoned.unwrittenInt == std::vector<int>(3, -1));
  CHECK(poisoned.written == std::vector<float>(4, 1.25f)); // constants and written data intact
}

TEST_CASE("hardening: aspen.poisonUninitialisedMemory takes true or false only", "[hardening][error]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  requireError<invalid_option>(
      [&] {
        Engine engine(g, Sequence{}, {{"aspen.poisonUninitialisedMemory", "yes"}});
      },
      {"aspen.poisonUninitialisedMemory", "yes"});
}

TEST_CASE("hardening: aspen.exchangeInPlace takes true or false only", "[hardening][error]") {
  Device device = smallDevice();
  Graph g(device.getTarget());
  requireError<invalid_option>(
      [&] {
        Engine engine(g, Sequence{}, {{"aspen.exchangeInPlace", "sometimes"}});
      },
      {"aspen.exchangeInPlace", "sometimes"});
}

// ---- the compile cache heals itself ----------------------------------------------------

namespace {

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
  const fs::path d =
      fs::temp_directory_path() / ("aspen_hardening_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// A pid that no process has: a child that has exited and been reaped.
pid_t deadPid() {
  const pid_t child = ::fork();
  if (child == 0)
    ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void writeFile(const fs::path &p, std::size_t bytes) {
  std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
}

/// Compiles and runs a small program through the compile cache in $ASPEN_CACHE_DIR; returns
/// what it computed (4 x 3.5).
std::vector<float> compileAndRun() {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  Tensor c = g.addConstant<float>(FLOAT, {4}, 3.5f, "c");
  g.setTileMapping(x, 0);
  g.setTileMapping(c, 1);
  g.createHostRead("x", x);
  Engine engine(g, Sequence{Copy(c, x)}, {{"aspen.compileCache", "true"}});
  engine.load(device);
  engine.run(0);
  std::vector<float> got(4);
  engine.readTensor("x", got.data(), got.data() + 4);
  return got;
}

std::vector<fs::path> filesIn(const fs::path &dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    out.push_back(e.path().filename());
  return out;
}

} // namespace

TEST_CASE("hardening: dead writers' temporary files are removed and live ones counted",
          "[hardening][cache]") {
  const fs::path dir = freshDir("tmpfiles");
  aspen::cache::CacheConfig config;
  config.directory = dir;
  const std::string me = std::to_string(::getpid());
  const fs::path dead = dir / ("0123.tmp." + std::to_string(deadPid()) + ".0");
  const fs::path live = dir / ("4567.tmp." + me + ".0");
  const fs::path stale = dir / ("89ab.tmp." + me + ".1");
  const fs::path entry = dir / "cdef.aspenexe";
  writeFile(dead, 1000);
  writeFile(live, 3000);
  writeFile(stale, 1000);
  writeFile(entry, 2000);
  // A writer that has been at it longer than kStaleTempAge is dead whatever its pid says.
  fs::last_write_time(stale, fs::file_time_type::clock::now() - aspen::cache::kStaleTempAge -
                                 std::chrono::minutes(1));
  const auto report = aspen::cache::evict(config);
  CHECK(report.tempFilesRemoved == 2);
  CHECK_FALSE(fs::exists(dead));
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(report.entriesRemoved == 0);
  CHECK(report.bytesAfter == 5000); // the live writer's 3000 bytes count

  // The live writer's file counts towards the limit: the entry goes, the live file stays.
  config.maxBytes = 4000;
  const auto second = aspen::cache::evict(config);
  CHECK(second.entriesRemoved == 1);
  CHECK_FALSE(fs::exists(entry));
  CHECK(fs::exists(live));
  CHECK(second.bytesAfter == 3000);
  fs::remove_all(dir);
}

TEST_CASE("hardening: a full disk degrades the compile cache to 'not cached'", "[hardening][cache]") {
  // A file size limit stands in for a full disk (as root, a read-only directory is no
  // obstacle, and tests cannot mount a tiny tmpfs): writes past it fail with EFBIG.
  const fs::path dir = freshDir("fulldisk");
  ScopedEnv cacheDir("ASPEN_CACHE_DIR", dir.string());
  struct rlimit old {};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  const auto oldHandler = ::signal(SIGXFSZ, SIG_IGN);
  std::vector<float> got;
  {
    struct rlimit tiny = old;
    tiny.rlim_cur = 256; // far smaller than any executable
    REQUIRE(::setrlimit(RLIMIT_FSIZE, &tiny) == 0);
    try {
      got = compileAndRun();
    } catch (...) {
      ::setrlimit(RLIMIT_FSIZE, &old);
      ::signal(SIGXFSZ, oldHandler);
      throw;
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    ::signal(SIGXFSZ, oldHandler);
  }
  CHECK(got == std::vector<float>(4, 3.5f));
  // Nothing cached, and no temporary file left behind.
  CHECK(filesIn(dir / "executables").empty());
  // With room again, the same compile is cached.
  CHECK(compileAndRun() == std::vector<float>(4, 3.5f));
  const auto files = filesIn(dir / "executables");
  REQUIRE(files.size() == 1);
  CHECK(files[0].extension() == ".aspenexe");
  fs::remove_all(dir);
}

TEST_CASE("hardening: a corrupted compile cache entry is detected and rebuilt", "[hardening][cache]") {
  const fs::path dir = freshDir("corrupt");
  ScopedEnv cacheDir("ASPEN_CACHE_DIR", dir.string());
  CHECK(compileAndRun() == std::vector<float>(4, 3.5f));
  const auto files = filesIn(dir / "executables");
  REQUIRE(files.size() == 1);
  const fs::path entry = dir / "executables" / files[0];
  std::string original;
  {
    std::ifstream in(entry, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  // Damage the entry in place, keeping its size: only the content hash can tell.
  for (std::size_t at : {original.size() / 2, original.size() - 1}) {
    {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(at));
      f.put(static_cast<char>(original[at] ^ 0x5a));
    }
    CHECK(compileAndRun() == std::vector<float>(4, 3.5f));
    std::ifstream in(entry, std::ios::binary);
    const std::string rebuilt(std::istreambuf_iterator<char>(in), {});
    CHECK(rebuilt == original); // the bad entry was replaced by a fresh compile's
  }
  fs::remove_all(dir);
}
