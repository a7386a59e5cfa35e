// Copyright (c) Aspen contributors.
// Issue 25, item 1: caches that cannot be turned against their users (docs/caches.md).
// Symbolic links planted at the temporary names and at the entries change nothing outside
// the cache; an entry of another graph (or other codelet sources) copied under a key is
// recompiled, never run; an entry or directory others can write, or another user's, is
// not used; the fallback directory is per user and 0700. A forged entry that a trusted
// writer made *is* run: that shows the refusals above are the checks, not luck.
#include "cache/CacheFiles.hpp"
#include "cache/CompileCache.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;
namespace fs = std::filesystem;

namespace {

/// Sets (or, with nullopt, unsets) an environment variable for the object's lifetime.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
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
  static std::atomic<int> counter{0};
  const fs::path d =
      fs::temp_directory_path() /
      ("aspen_cache_trust_" + name + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(d);
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all);
  return d;
}

std::string readText(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const fs::path &p, const std::string &text) {
  std::ofstream(p, std::ios::binary) << text;
}

Device smallDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  return model.createDevice();
}

/// Compiles (through the compile cache in $ASPEN_CACHE_DIR) and runs a program that fills
/// x with `value`; returns x[0].
float runFill(float value) {
  Device device = smallDevice();
  Graph g(device.getTarget());
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  Tensor c = g.addConstant<float>(FLOAT, {4}, value, "c");
  g.setTileMapping(x, 0);
  g.setTileMapping(c, 1);
  g.createHostRead("x", x);
  Engine engine(g, Sequence{Copy(c, x)}, {{"aspen.compileCache", "true"}});
  engine.load(device);
  engine.run(0);
  std::vector<float> got(4);
  engine.readTensor("x", got.data(), got.data() + 4);
  return got[0];
}

std::vector<fs::path> entriesIn(const fs::path &dir, const std::string &extension) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == extension)
      out.push_back(e.path());
  return out;
}

/// The one entry of `dir` that is not in `before`.
fs::path newEntry(const fs::path &dir, const std::vector<fs::path> &before, const std::string &extension) {
  for (const fs::path &p : entriesIn(dir, extension))
    if (std::find(before.begin(), before.end(), p) == before.end())
      return p;
  FAIL("no new entry in " << dir);
  return {};
}

bool isSymlink(const fs::path &p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

/// An entry of the compile cache whose first two lines are "<magic>\n<key>\n".
std::string withKey(const std::string &entry, const std::string &key) {
  const std::size_t firstLine = entry.find('\n');
  const std::size_t secondLine = entry.find('\n', firstLine + 1);
  REQUIRE(secondLine != std::string::npos);
  return entry.substr(0, firstLine + 1) + key + entry.substr(secondLine);
}

} // namespace

// ---- the compile cache (executables) -------------------------------------------------------

TEST_CASE("cache_trust: links planted at the temporary names and the entry change nothing outside",
          "[cache][security]") {
  const fs::path dir = freshDir("links");
  const fs::path outside = freshDir("outside");
  ScopedEnv cache("ASPEN_CACHE_DIR", dir.string());
  CHECK(runFill(2.0f) == 2.0f);
  const auto entries = entriesIn(dir / "executables", ".aspenexe");
  REQUIRE(entries.size() == 1);
  const fs::path entry = entries[0];
  const std::string key = entry.stem().string();
  fs::remove(entry);
  // The names the old writer used (<key>.tmp.<pid>.<n>), and the entry itself, point outside.
  const fs::path victim = outside / "victim.txt", victimEntry = outside / "entry.txt";
  writeText(victim, "precious");
  writeText(victimEntry, "also precious");
  for (int n = 0; n < 16; ++n)
    fs::create_symlink(victim, dir / "executables" /
                                   (key + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n)));
  fs::create_symlink(victimEntry, entry);
  CHECK(runFill(2.0f) == 2.0f);
  CHECK(readText(victim) == "precious");
  CHECK(readText(victimEntry) == "also precious");
  CHECK_FALSE(isSymlink(entry)); // the link was replaced by a real entry
  CHECK(fs::is_regular_file(entry));
  CHECK((fs::status(entry).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
        fs::perms::none);
  CHECK(runFill(2.0f) == 2.0f); // and it is a hit
  fs::remove_all(dir);
  fs::remove_all(outside);
}

TEST_CASE("cache_trust: another graph's executable under this key is recompiled, never run",
          "[cache][security]") {
  const fs::path dir = freshDir("swap");
  ScopedEnv cache("ASPEN_CACHE_DIR", dir.string());
  const fs::path exes = dir / "executables";
  CHECK(runFill(2.0f) == 2.0f);
  const fs::path entryA = newEntry(exes, {}, ".aspenexe");
  CHECK(runFill(3.0f) == 3.0f);
  const fs::path entryB = newEntry(exes, {entryA}, ".aspenexe");
  const std::string keyA = entryA.stem().string();
  const std::string bytesA = readText(entryA), bytesB = readText(entryB);
  // The attack of the issue: graph B's entry copied under A's key ("got 3").
  writeText(entryA, bytesB);
  fs::permissions(entryA, fs::perms::owner_read | fs::perms::owner_write);
  CHECK(runFill(2.0f) == 2.0f);
  CHECK(readText(entryA) == bytesA); // replaced by A's own entry
  // An entry without the key line (an executable file as older Aspens stored it).
  writeText(entryA, bytesA.substr(bytesA.find('\n', bytesA.find('\n') + 1) + 1));
  CHECK(runFill(2.0f) == 2.0f);
  CHECK(readText(entryA) == bytesA);

  // B's executable under a header naming A's key, written by this user: trusted, so run. The
  // cases below refuse exactly this file for who could have written it.
  const std::string forged = withKey(bytesB, keyA);
  auto forge = [&] {
    fs::remove(entryA);
    writeText(entryA, forged);
    fs::permissions(entryA, fs::perms::owner_read | fs::perms::owner_write);
  };
  forge();
  CHECK(runFill(2.0f) == 3.0f);

  SECTION("an entry others can write is not used") {
    forge();
    fs::permissions(entryA, fs::perms::all & ~fs::perms::owner_exec & ~fs::perms::group_exec &
                                ~fs::perms::others_exec); // 0666
    CHECK(runFill(2.0f) == 2.0f);
    CHECK(readText(entryA) == bytesA);
  }
  SECTION("an entry its group can write is not used") {
    forge();
    fs::permissions(entryA, fs::perms::group_write, fs::perm_options::add);
    CHECK(runFill(2.0f) == 2.0f);
  }
  SECTION("another user's entry is not used") {
    if (::geteuid() != 0)
      SUCCEED("only root can give a file to another user");
    else {
      forge();
      REQUIRE(::chown(entryA.c_str(), 65534, 65534) == 0);
      CHECK(runFill(2.0f) == 2.0f);
      CHECK(readText(entryA) == bytesA);
    }
  }
  SECTION("a directory others can write is not used at all") {
    forge();
    fs::permissions(exes, fs::perms::all); // 0777, as in the issue
    CHECK(runFill(2.0f) == 2.0f);
    CHECK(readText(entryA) == forged);                                  // neither read nor written
    fs::permissions(exes, fs::perms::owner_all | fs::perms::group_all); // 0770
    CHECK(runFill(2.0f) == 2.0f);
    CHECK(readText(entryA) == forged);
    fs::permissions(exes, fs::perms::owner_all);
    fs::permissions(dir, fs::perms::all); // a directory above it
    CHECK(runFill(2.0f) == 2.0f);
    CHECK(readText(entryA) == forged);
    fs::permissions(dir, fs::perms::owner_all);
  }
  SECTION("a group-writable directory is used when ASPEN_CACHE_TRUSTED_GROUP names its group") {
    forge();
    struct stat st;
    REQUIRE(::stat(exes.c_str(), &st) == 0);
    fs::permissions(exes, fs::perms::owner_all | fs::perms::group_all); // 0770
    ScopedEnv group("ASPEN_CACHE_TRUSTED_GROUP", std::to_string(st.st_gid));
    CHECK(runFill(2.0f) == 3.0f); // the trust rule: the group's members may write it
    ScopedEnv other("ASPEN_CACHE_TRUSTED_GROUP", std::to_string(st.st_gid + 1));
    CHECK(runFill(2.0f) == 2.0f);
    fs::permissions(exes, fs::perms::owner_all);
  }
  SECTION("a directory of another user is not used") {
    if (::geteuid() != 0)
      SUCCEED("only root can give a directory to another user");
    else {
      forge();
      REQUIRE(::chown(exes.c_str(), 65534, 65534) == 0);
      CHECK(runFill(2.0f) == 2.0f);
      CHECK(readText(entryA) == forged);
      REQUIRE(::chown(exes.c_str(), 0, 0) == 0);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("cache_trust: without HOME the cache is per user, 0700, and never a planted link",
          "[cache][security]") {
  const fs::path tmp = freshDir("tmpdir");
  ScopedEnv t("TMPDIR", tmp.string());
  ScopedEnv a("ASPEN_CACHE_DIR", std::nullopt), x("XDG_CACHE_HOME", std::nullopt), h("HOME", std::nullopt);
  const fs::path root = tmp / ("aspen-" + std::to_string(::geteuid()));
  CHECK(aspen::cache::CacheConfig::fromEnvironment().directory == root / "executables");
  struct stat st;
  REQUIRE(::lstat(root.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(runFill(5.0f) == 5.0f);
  CHECK(entriesIn(root / "executables", ".aspenexe").size() == 1);

  // Someone made <tmp>/aspen-<uid> first: a link to elsewhere is never used.
  fs::remove_all(root);
  const fs::path elsewhere = freshDir("elsewhere");
  fs::create_symlink(elsewhere, root);
  CHECK(aspen::cache::CacheConfig::fromEnvironment().directory.empty());
  CHECK(runFill(5.0f) == 5.0f);
  CHECK(fs::is_empty(elsewhere));
  fs::remove_all(tmp);
  fs::remove_all(elsewhere);
}

TEST_CASE("cache_trust: temporary files are exclusive and unpredictable", "[cache][security]") {
  const fs::path dir = freshDir("exclusive");
  const fs::path outside = freshDir("outside2");
  writeText(outside / "victim", "precious");
  std::string why;
  const std::string entry = (dir / "e").string();
  // Whatever a planted link is named, the write goes to a fresh file.
  for (int n = 0; n < 16; ++n)
    fs::create_symlink(outside / "victim",
                       entry + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n));
  fs::create_symlink(outside / "victim", entry);
  REQUIRE(aspen::cache::writeAtomic(entry, "new", 3, aspen::cache::FileMode::Cache, why));
  CHECK(readText(outside / "victim") == "precious");
  CHECK(readText(entry) == "new");
  CHECK_FALSE(isSymlink(entry));
  // Entries: a link, a directory, a FIFO are not read (a FIFO would block).
  fs::create_symlink(outside / "victim", dir / "link");
  CHECK_FALSE(aspen::cache::readEntry((dir / "link").string(), why));
  CHECK_THAT(why, Catch::Contains("symbolic link"));
  fs::create_directory(dir / "sub");
  CHECK_FALSE(aspen::cache::readEntry((dir / "sub").string(), why));
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  CHECK_FALSE(aspen::cache::readEntry((dir / "fifo").string(), why));
  CHECK_THAT(why, Catch::Contains("not a regular file"));
  CHECK_FALSE(aspen::cache::readEntry((dir / "absent").string(), why));
  CHECK(why.empty());
  fs::remove_all(dir);
  fs::remove_all(outside);
}

// ---- the codelet cache ---------------------------------------------------------------------

namespace {

/// A codelet file whose vertex TrustVertex writes in * factor.
fs::path scaleCodelet(const fs::path &dir, const std::string &name, int factor) {
  const fs::path p = dir / name;
  writeText(p, "#include <poplar/Vertex.hpp>\nclass TrustVertex : public poplar::Vertex {\npublic:\n"
               "  poplar::Input<poplar::Vector<float>> in;\n"
               "  poplar::Output<poplar::Vector<float, poplar::VectorLayout::ONE_PTR>> out;\n"
               "  bool compute() { for (unsigned i = 0; i < in.size(); ++i) out[i] = in[i] * " +
                   std::to_string(factor) + ".0f; return true; }\n};\n");
  return p;
}

/// Adds the codelets (through the codelet cache in $ASPEN_CACHE_DIR) and runs TrustVertex on
/// {1, 2, 3}; returns out[2].
float runCodelet(const fs::path &source) {
  Device device = smallDevice();
  Graph g(device.getTarget());
  g.addCodelets(source.string());
  const std::vector<float> values{1, 2, 3};
  Tensor in = g.addConstant<float>(FLOAT, {3}, values.data(), "in");
  Tensor out = g.addVariable(FLOAT, {3}, "out");
  g.setTileMapping(in, 0);
  g.setTileMapping(out, 0);
  ComputeSet cs = g.addComputeSet("cs");
  VertexRef v = g.addVertex(cs, "TrustVertex", {{"in", in}, {"out", out}});
  g.setTileMapping(v, 0);
  g.createHostRead("out", out);
  Engine engine(g, Execute(cs));
  engine.load(device);
  engine.run(0);
  std::vector<float> got(3);
  engine.readTensor("out", got.data(), got.data() + 3);
  return got[2];
}

} // namespace

TEST_CASE("cache_trust: codelets of other sources under this key are recompiled; planted links change "
          "nothing",
          "[cache][security][codelets]") {
  const fs::path dir = freshDir("codelets");
  const fs::path sources = freshDir("sources");
  const fs::path outside = freshDir("outside3");
  ScopedEnv cache("ASPEN_CACHE_DIR", dir.string());
  const fs::path two = scaleCodelet(sources, "two.cpp", 2), three = scaleCodelet(sources, "three.cpp", 3);
  const fs::path gps = dir / "codelets";
  CHECK(runCodelet(two) == 6.0f);
  const fs::path gpTwo = newEntry(gps, {}, ".gp");
  CHECK(runCodelet(three) == 9.0f);
  const fs::path gpThree = newEntry(gps, {gpTwo}, ".gp");
  const std::string bytesTwo = readText(gpTwo);

  // The other sources' library copied under this key.
  fs::remove(gpTwo);
  fs::copy_file(gpThree, gpTwo);
  CHECK(runCodelet(two) == 6.0f);
  CHECK(readText(gpTwo) == bytesTwo);

  // Links at the entry and at the temporary names the old writer used.
  const fs::path victim = outside / "victim";
  writeText(victim, "precious");
  fs::remove(gpTwo);
  fs::create_symlink(victim, gpTwo);
  for (int n = 0; n < 16; ++n)
    fs::create_symlink(victim,
                       gpTwo.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(n));
  CHECK(runCodelet(two) == 6.0f);
  CHECK(readText(victim) == "precious");
  CHECK_FALSE(isSymlink(gpTwo));
  CHECK(readText(gpTwo) == bytesTwo);
  fs::remove_all(dir);
  fs::remove_all(sources);
  fs::remove_all(outside);
}

TEST_CASE("cache_trust: a codelet cache others can write, or that cannot be made, is 'not cached'",
          "[cache][security][codelets]") {
  const fs::path dir = freshDir("codelets_open");
  const fs::path sources = freshDir("sources2");
  const fs::path four = scaleCodelet(sources, "four.cpp", 4);
  {
    ScopedEnv cache("ASPEN_CACHE_DIR", dir.string());
    fs::create_directory(dir / "codelets");
    fs::permissions(dir / "codelets", fs::perms::all); // 0777
    CHECK(runCodelet(four) == 12.0f);
    CHECK(fs::is_empty(dir / "codelets")); // nothing read or written there
  }
  {
    // Issue 25, item 6: docs/internals.md promises "not cached" when the cache cannot be
    // written. As root no mode stops a write: a cache "directory" under a regular file can
    // never be created, whoever we are.
    writeText(dir / "file", "not a directory");
    ScopedEnv cache("ASPEN_CACHE_DIR", (dir / "file" / "cache").string());
    CHECK(runCodelet(four) == 12.0f);
  }
  fs::remove_all(dir);
  fs::remove_all(sources);
}
