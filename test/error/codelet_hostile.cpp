// Copyright (c) Aspen contributors.
// Hostile and unlucky files on the codelet side (issue 16), each rejected with a
// named poplar_error or healed: a .gp swapped after addCodelets, a damaged cached
// shared object, crafted .gp metadata, fields of unsupported types, a cache that
// cannot be written, and what killed cache writers leave behind.
#include "CodeletTestSupport.hpp"
#include "ErrorCheck.hpp"

#include "codelets/CodeletCache.hpp"
#include "codelets/CodeletCompiler.hpp"
#include "codelets/ContentHash.hpp"
#include "codelets/GpFile.hpp"
#include "codelets/VertexLibrary.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

using namespace poplar;
using namespace poplar::program;
using aspen::test::requireError;
namespace cl = aspen::codelets;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char t[] = "/tmp/aspen-codelet-hostile-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  std::string write(const std::string &name, const std::string &text) const {
    const std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string write(const std::string &name, const std::vector<std::uint8_t> &bytes) const {
    const std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return p;
  }
};

std::vector<std::uint8_t> readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Device makeDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  return model.createDevice();
}

/// A vertex `name` whose output is input * factor; `swapped` declares the fields in
/// the other order (same names, other offsets). `tag` makes the source unique.
std::string scaleSource(const std::string &name, bool swapped, const std::string &tag) {
  const std::string in = "  poplar::Input<poplar::Vector<float>> in;\n";
  const std::string out = "  poplar::Output<poplar::Vector<float, poplar::VectorLayout::ONE_PTR>> out;\n";
  return "// " + tag + "\n#include <poplar/Vertex.hpp>\nclass " + name +
         " : public poplar::Vertex {\npublic:\n" + (swapped ? out + in : in + out) +
         "  bool compute() { for (unsigned i = 0; i < in.size(); ++i) out[i] = in[i] * 4.0f; return true; "
         "}\n};\n";
}

std::string uniqueTag() {
  return std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

/// A .gp with this metadata JSON around `so` (a valid checksum: the checksum only
/// guards against accidents).
std::vector<std::uint8_t> craftGp(const std::string &json, const std::uint8_t *so, std::size_t soSize) {
  std::vector<std::uint8_t> out(64 + json.size() + soSize);
  std::memcpy(out.data(), "ASPENGP\0", 8);
  const std::uint32_t version = 3, header = 64;
  const std::uint64_t jsonSize = json.size(), size = soSize;
  std::memcpy(out.data() + 8, &version, 4);
  std::memcpy(out.data() + 12, &header, 4);
  std::memcpy(out.data() + 16, &jsonSize, 8);
  std::memcpy(out.data() + 24, &size, 8);
  std::memcpy(out.data() + 64, json.data(), json.size());
  std::memcpy(out.data() + 64 + json.size(), so, soSize);
  const std::string hash = cl::contentHash(out.data() + 64, out.size() - 64);
  std::memcpy(out.data() + 32, hash.data(), 32);
  return out;
}

struct Compiled {
  std::vector<std::uint8_t> gp;
  nlohmann::json metadata;
  std::size_t soOffset = 0, soSize = 0;
};

Compiled compileSource(const TempDir &dir, const std::string &file, const std::string &text) {
  const std::string path = dir.write(file, text);
  Compiled c;
  c.gp = cl::compileCodelets({path}, cl::parseCodeletFlags("")).gpBytes;
  const auto decoded = cl::decodeGp(c.gp.data(), c.gp.size(), file);
  // The shared object alone: crafted files below carry no relocatable objects.
  cl::LibraryMetadata m = decoded.metadata;
  m.objects.clear();
  m.units.clear();
  c.metadata = nlohmann::json::parse(cl::metadataToJson(m));
  c.soOffset = decoded.parts.at(0).offset;
  c.soSize = decoded.parts.at(0).size;
  return c;
}

/// Runs `Name` (input * 4) from the graph's codelets on {1,2,3}.
std::vector<float> runScale(Graph &g, const std::string &name) {
  Tensor in = g.addVariable(FLOAT, {3}, "in"), out = g.addVariable(FLOAT, {3}, "out");
  g.setTileMapping(in, 0);
  g.setTileMapping(out, 0);
  ComputeSet cs = g.addComputeSet("cs");
  VertexRef v = g.addVertex(cs, name, {{"in", in}, {"out", out}});
  g.setTileMapping(v, 0);
  g.createHostWrite("in", in);
  g.createHostRead("out", out);
  Engine engine(g, Execute(cs));
  Device device = makeDevice();
  engine.load(device);
  const float x[3] = {1, 2, 3};
  engine.writeTensor("in", x, x + 3);
  engine.run(0);
  std::vector<float> y(3);
  engine.readTensor("out", y.data(), y.data() + 3);
  return y;
}

} // namespace

TEST_CASE("codelet_hostile: a .gp changed between addCodelets and compile is a named error",
          "[codelets][error][hostile]") {
  TempDir dir;
  const std::string tag = uniqueTag();
  const Compiled original = compileSource(dir, "a.cpp", scaleSource("SwapMe", false, tag));
  const Compiled swapped = compileSource(dir, "b.cpp", scaleSource("SwapMe", true, tag));
  const std::string gp = dir.write("lib.gp", original.gp);
  Graph g(makeDevice().getTarget());
  REQUIRE(g.addCodelets(gp));
  Tensor in = g.addVariable(FLOAT, {3}, "in"), out = g.addVariable(FLOAT, {3}, "out");
  g.setTileMapping(in, 0);
  g.setTileMapping(out, 0);
  ComputeSet cs = g.addComputeSet("cs");
  VertexRef v = g.addVertex(cs, "SwapMe", {{"in", in}, {"out", out}});
  g.setTileMapping(v, 0);
  dir.write("lib.gp", swapped.gp); // reordered fields, same vertex name
  requireError<graph_object_load_error>([&] { compileGraph(g, {Execute(cs)}); },
                                        {"lib.gp", "changed after Graph::addCodelets"});
}

TEST_CASE("codelet_hostile: (child process) load a .gp and run its vertex", "[.hostile-child]") {
  const char *gpPath = std::getenv("ASPEN_HOSTILE_CHILD_GP");
  REQUIRE(gpPath != nullptr);
  const auto bytes = readAll(gpPath);
  const auto &lib = cl::loadVertexLibrary(cl::contentHash(bytes.data(), bytes.size()), bytes, gpPath);
  const AspenVertexEntry *e = lib.find("HealMe");
  REQUIRE(e != nullptr);
  float in[3] = {1, 2, 3}, out[3] = {};
  alignas(16) unsigned char object[64] = {};
  const float *inPtr = in;
  float *outPtr = out;
  const std::uint32_t n = 3;
  std::memcpy(object + e->fields[0].offset, &inPtr, 8);
  std::memcpy(object + e->fields[0].offset + 8, &n, 4);
  std::memcpy(object + e->fields[1].offset, &outPtr, 8);
  REQUIRE(e->compute(object, 0) == 1);
  REQUIRE(out[2] == 12.0f);
}

TEST_CASE("codelet_hostile: a damaged cached shared object of the right size is rebuilt",
          "[codelets][error][hostile]") {
  TempDir dir;
  const Compiled c = compileSource(dir, "heal.cpp", scaleSource("HealMe", false, uniqueTag()));
  const std::string gp = dir.write("heal.gp", c.gp);
  const std::string soHash = c.metadata.at("sharedObjects").at(0).at("hash").get<std::string>();
  const std::string cached = cl::codeletCacheDir() + "/lib/" + soHash + ".so";
  auto damaged = readAll(cached);
  REQUIRE(damaged.size() == c.soSize);
  for (std::size_t i = damaged.size() / 4; i < damaged.size() / 2; ++i)
    damaged[i] = 0xcc; // same size, broken code and tables
  // A new file in its place (this process maps the old one: writing into it would
  // break this process, not test the cache).
  REQUIRE(cl::writeFileAtomic(cached, damaged.data(), damaged.size()));
  // A fresh process (this one has the library loaded already) loads and runs it.
  const std::string self = std::string("/proc/") + std::to_string(::getpid()) + "/exe";
  char exe[4096] = {};
  REQUIRE(::readlink(self.c_str(), exe, sizeof exe - 1) > 0);
  const std::string command =
      "ASPEN_HOSTILE_CHILD_GP='" + gp + "' '" + exe +
      "' 'codelet_hostile: (child process) load a .gp and run its vertex' > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto healed = readAll(cached);
  REQUIRE(healed.size() == c.soSize);
  CHECK(std::memcmp(healed.data(), c.gp.data() + c.soOffset, c.soSize) == 0);
}

TEST_CASE("codelet_hostile: crafted .gp metadata is bounded before use", "[codelets][error][hostile]") {
  TempDir dir;
  const Compiled c = compileSource(dir, "meta.cpp", scaleSource("MetaVertex", false, "meta-corpus"));
  const std::uint8_t *so = c.gp.data() + c.soOffset;
  auto check = [&](const std::function<void(nlohmann::json &)> &edit,
                   std::initializer_list<std::string> words) {
    nlohmann::json m = c.metadata;
    edit(m);
    const auto bytes = craftGp(m.dump(), so, c.soSize);
    requireError<graph_object_load_error>([&] { cl::decodeGp(bytes.data(), bytes.size(), "crafted.gp"); },
                                          words);
    // Through the public API too: addCodelets of the file.
    const std::string file = dir.write("crafted.gp", bytes);
    Graph g(makeDevice().getTarget());
    requireError<graph_object_load_error>([&] { g.addCodelets(file); }, {"crafted.gp"});
  };
  auto field = [](nlohmann::json &m) -> nlohmann::json & { return m["vertices"][0]["fields"][0]; };
  // An offset that wraps a 32-bit bound check.
  check([&](nlohmann::json &m) { field(m)["offset"] = 0xFFFFFFFCu; },
        {"crafted.gp", "field 'in'", "MetaVertex", "outside the vertex object"});
  // An offset just beyond the object.
  check([&](nlohmann::json &m) { field(m)["offset"] = m["vertices"][0]["size"].get<std::uint32_t>(); },
        {"crafted.gp", "field 'in'", "outside the vertex object"});
  // A float offset, and one too large for 32 bits.
  check([&](nlohmann::json &m) { field(m)["offset"] = 1e300; }, {"crafted.gp", "field 'in'", "\"offset\""});
  check([&](nlohmann::json &m) { field(m)["offset"] = 1ull << 40; },
        {"crafted.gp", "field 'in'", "\"offset\""});
  check([&](nlohmann::json &m) { field(m)["size"] = -8; }, {"crafted.gp", "field 'in'", "\"size\""});
  // A size that does not fit the field's shape; an edge of no element type.
  check([&](nlohmann::json &m) { field(m)["size"] = 4; }, {"crafted.gp", "field 'in'", "has size 4"});
  check([&](nlohmann::json &m) { field(m)["type"] = "invalid"; },
        {"crafted.gp", "field 'in'", "without an element type"});
  check([&](nlohmann::json &m) { field(m)["type"] = "float128"; },
        {"crafted.gp", "field 'in'", "unknown element type"});
  check([&](nlohmann::json &m) { field(m)["minAlign"] = 3; },
        {"crafted.gp", "field 'in'", "minimum alignment"});
  // Vertex sizes, alignment, parts, counts.
  check([&](nlohmann::json &m) { m["vertices"][0]["size"] = 0; },
        {"crafted.gp", "MetaVertex", "object size"});
  check([&](nlohmann::json &m) { m["vertices"][0]["size"] = 1u << 30; },
        {"crafted.gp", "MetaVertex", "\"size\""});
  check([&](nlohmann::json &m) { m["vertices"][0]["align"] = 12; },
        {"crafted.gp", "MetaVertex", "alignment"});
  check([&](nlohmann::json &m) { m["vertices"][0]["part"] = 7; }, {"crafted.gp", "MetaVertex", "\"part\""});
  check([&](nlohmann::json &m) { m["sharedObjects"][0]["size"] = 1; }, {"crafted.gp", "shared objects"});
  check([&](nlohmann::json &m) { m["vertexCounts"] = {5}; }, {"crafted.gp", "vertexCounts"});
  check(
      [&](nlohmann::json &m) {
        m["vertices"].push_back(m["vertices"][0]);
        m.erase("vertexCounts");
      },
      {"crafted.gp", "defined twice"});
  check([&](nlohmann::json &m) { m["vertices"][0]["fields"] = 3; }, {"crafted.gp", "\"fields\""});
  check([&](nlohmann::json &m) { m["sources"] = {1, 2}; }, {"crafted.gp", "sources"});
  // Objects (format 4) the file does not hold, and unit tokens that are no identifiers.
  check(
      [&](nlohmann::json &m) {
        m["objects"] = {{{"name", "a.cpp"}, {"hash", "00"}, {"size", 1u << 30}}};
      },
      {"crafted.gp", "objects are larger"});
  check(
      [&](nlohmann::json &m) {
        m["objects"] = nlohmann::json::array();
        m["units"] = {"a); system(\"x"};
      },
      {"crafted.gp", "is not an identifier"});
  // An IPU build (format 5) the file does not hold, and one that is not an object.
  check(
      [&](nlohmann::json &m) {
        m["ipuBuild"] = {{"arch", "ipu2"}, {"hash", "00"}, {"size", 1u << 30}};
      },
      {"crafted.gp", "IPU build is larger"});
  check([&](nlohmann::json &m) { m["ipuBuild"] = 3; }, {"crafted.gp", "\"ipuBuild\" is not an object"});

  // A version 2 file (one shared object, no part list) still reads.
  {
    nlohmann::json v2 = c.metadata;
    v2.erase("sharedObjects");
    v2.erase("vertexCounts");
    auto bytes = craftGp(v2.dump(), so, c.soSize);
    const std::uint32_t two = 2;
    std::memcpy(bytes.data() + 8, &two, 4);
    const auto decoded = cl::decodeGp(bytes.data(), bytes.size(), "v2.gp");
    REQUIRE(decoded.parts.size() == 1);
    REQUIRE(decoded.parts[0].size == c.soSize);
    // Format 5 (a library carrying its IPU build) is read; a version after it is not.
    const std::uint32_t six = 6;
    std::memcpy(bytes.data() + 8, &six, 4);
    requireError<graph_object_load_error>([&] { cl::decodeGp(bytes.data(), bytes.size(), "v6.gp"); },
                                          {"v6.gp", "format version 6"});
  }

  // Structurally valid metadata that disagrees with its code (fields swapped) is
  // refused when the library is loaded to run.
  nlohmann::json m = c.metadata;
  std::swap(field(m)["offset"], m["vertices"][0]["fields"][1]["offset"]);
  const auto bytes = craftGp(m.dump(), so, c.soSize);
  REQUIRE_NOTHROW(cl::decodeGp(bytes.data(), bytes.size(), "swapped.gp"));
  requireError<graph_object_load_error>(
      [&] { cl::loadVertexLibrary(cl::contentHash(bytes.data(), bytes.size()), bytes, "swapped.gp"); },
      {"swapped.gp", "field 'in' of vertex type 'MetaVertex'", "disagrees with its shared object"});
  // Bytes that are not those of the recorded hash.
  requireError<graph_object_load_error>([&] { cl::loadVertexLibrary("0123456789abcdef", bytes, "other.gp"); },
                                        {"other.gp", "content hash"});
}

TEST_CASE("codelet_hostile: fields of unsupported types are rejected when compiled",
          "[codelets][error][hostile]") {
  Graph g(makeDevice().getTarget());
  requireError<graph_object_creation_error>(
      [&] { g.addCodelets(codelet_test::corpusDir() + "/macro/BadFields.cpp"); },
      {"BadFields.cpp", "vertex 'StructEdge', field 'in' of type 'poplar::Input<SomeStruct>'",
       "vertex 'StringVectorEdge', field 'names'", "std::string", "vertex 'ContainerState', field 'values'",
       "std::vector<int>", "trivially copyable"});
  // A plain state struct is allowed, but it is neither an edge nor an element value.
  Graph h(makeDevice().getTarget());
  REQUIRE(h.addCodelets(codelet_test::corpusDir() + "/macro/ChangesMeaning.cpp"));
  Tensor t = h.addVariable(CHAR, {}, "bytes");
  h.setTileMapping(t, 0);
  ComputeSet cs = h.addComputeSet("cs");
  VertexRef v = h.addVertex(cs, "ChangesMeaning");
  requireError<graph_connection_error>([&] { h.connect(v["factor"], t); }, {"factor", "ChangesMeaning"});
}

TEST_CASE("codelet_hostile: a cache that cannot take the library only means not cached",
          "[codelets][error][hostile]") {
  TempDir dir;
  const std::string source = dir.write("Full.cpp", scaleSource("FullDisk", false, uniqueTag()));
  const auto first = cl::compileCodelets({source}, cl::parseCodeletFlags(""));
  REQUIRE_FALSE(first.gpPath.empty());
  // The cache entry cannot be written (as on a full disk): a directory stands in its place.
  REQUIRE(std::remove(first.gpPath.c_str()) == 0);
  REQUIRE(::mkdir(first.gpPath.c_str(), 0755) == 0);
  Graph g(makeDevice().getTarget());
  REQUIRE(g.addCodelets(source));
  REQUIRE(g.getImpl().codeletLibraries.front().path.empty());
  const auto y = runScale(g, "FullDisk");
  CHECK(y == std::vector<float>{4, 8, 12});
  ::rmdir(first.gpPath.c_str());
}

TEST_CASE("codelet_hostile: dead cache writers' leftovers are removed and counted",
          "[codelets][error][hostile]") {
  TempDir dir;
  const std::string cache = dir.path + "/codelets";
  REQUIRE(cl::makeDirectories(cache + "/tmp/4242-0-1"));
  REQUIRE(cl::makeDirectories(cache + "/lib"));
  // A process that is gone.
  const pid_t child = ::fork();
  if (child == 0)
    ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string dead = std::to_string(child), live = std::to_string(::getpid());
  const std::string deadFile = cache + "/abc.gp.tmp." + dead + ".0";
  const std::string deadSo = cache + "/lib/abc.so.tmp." + dead + ".3";
  const std::string deadDir = cache + "/tmp/" + dead + "-0-77";
  const std::string liveFile = cache + "/def.gp.tmp." + live + ".0";
  const std::string youngDead = cache + "/young.gp.tmp." + dead + ".1";
  const std::string entry = cache + "/kept.gp";
  REQUIRE(cl::makeDirectories(deadDir));
  for (const std::string &f : {deadFile, deadSo, liveFile, youngDead, entry, deadDir + "/unit0.o"})
    std::ofstream(f) << "0123456789";
  // Two hours old, except the young one.
  const time_t old = ::time(nullptr) - 7200;
  const struct utimbuf times = {old, old};
  for (const std::string &f : {deadFile, deadSo, liveFile, entry, deadDir})
    REQUIRE(::utime(f.c_str(), &times) == 0);
  const cl::LeftoverSweep s = cl::removeDeadWriterLeftovers(cache, 3600);
  CHECK(s.files == 2);
  CHECK(s.directories == 1);
  CHECK(s.bytes == 30);
  CHECK_FALSE(std::ifstream(deadFile).good());
  CHECK_FALSE(std::ifstream(deadSo).good());
  CHECK_FALSE(std::ifstream(deadDir + "/unit0.o").good());
  CHECK(std::ifstream(liveFile).good());  // its writer is alive
  CHECK(std::ifstream(youngDead).good()); // too young to tell (another PID namespace may write it)
  CHECK(std::ifstream(entry).good());     // not a leftover
}
