// Copyright (c) Aspen contributors.
// popc, the codelet compiler's command line, run as a user runs it: it writes a
// .gp that Graph::addCodelets loads, reports a codelet that does not compile with
// file:line and a non-zero exit status, and two popc processes compiling the same
// codelets at once both succeed (the codelet cache is shared and written atomically).
#include "CodeletTestSupport.hpp"

#include "poplar/Graph.hpp"

#include "CommandSupport.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using aspen::test::popc;

using Result = aspen::test::CommandResult;
using aspen::test::TempDir;

Result run(const std::string &command) {
  return aspen::test::runCommand(command);
}

bool exists(const std::string &path) {
  return std::ifstream(path).good();
}

TEST_CASE("codelets_popc: --version, --help and --list-targets", "[codelets][popc]") {
  const Result version = run(popc() + " --version");
  REQUIRE(version.status == 0);
  REQUIRE(version.output.find("popc") != std::string::npos);
  const Result help = run(popc() + " --help");
  REQUIRE(help.status == 0);
  REQUIRE(help.output.find("-o <file>") != std::string::npos);
  const Result targets = run(popc() + " --list-targets");
  REQUIRE(targets.status == 0);
  REQUIRE(targets.output == "ipu1,ipu2,ipu21\n"); // as PopLibs' CMake parses it (one line, commas)
  REQUIRE(run(popc()).status != 0);               // no input
}

TEST_CASE("codelets_popc: several sources into one .gp that addCodelets loads", "[codelets][popc]") {
  TempDir dir;
  const std::string out = dir.path + "/corpus.gp";
  const Result r = run(popc() + " -O2 -DCORPUS_SCALE=3 -I " + codelet_test::corpusDir() +
                       " --target ipu2,cpu " + codelet_test::corpusFile("FieldKinds.cpp") + " " +
                       codelet_test::corpusFile("Templates.cpp") + " -o " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  REQUIRE(exists(out));
  poplar::Graph g(poplar::Target::createIPUTarget(1, 4, "ipu2"));
  REQUIRE(g.addCodelets(out));
  REQUIRE(g.hasCodelet("ScalarEdges"));
  REQUIRE(g.hasCodelet("ns::Param<int,2,true,corpus::Op::MUL>"));
  REQUIRE(g.getImpl().codeletLibraries.size() == 1);
}

TEST_CASE("codelets_popc: a codelet that does not compile", "[codelets][popc]") {
  TempDir dir;
  const std::string out = dir.path + "/bad.gp";
  const Result r = run(popc() + " " + codelet_test::corpusFile("BadCodelet.cpp") + " -o " + out);
  INFO(r.output);
  REQUIRE(r.status != 0);
  REQUIRE(r.output.find("BadCodelet.cpp:9:") != std::string::npos);
  REQUIRE(r.output.find("undeclaredName") != std::string::npos);
  REQUIRE_FALSE(exists(out));
}

TEST_CASE("codelets_popc: two processes compiling the same codelets at once", "[codelets][popc]") {
  TempDir dir;
  // Unique content, so that neither process finds it in the cache.
  const std::string source = dir.path + "/Race.cpp";
  std::ofstream(source) << "// " << std::chrono::steady_clock::now().time_since_epoch().count() << "\n"
                        << "#include <poplar/Vertex.hpp>\n"
                        << "class Race : public poplar::Vertex {\npublic:\n  poplar::Output<int> out;\n"
                        << "  bool compute() { *out = 1; return true; }\n};\n";
  const std::string p = popc();
  const std::string script = "(" + p + " " + source + " -o " + dir.path + "/a.gp; echo $? > " + dir.path +
                             "/a.rc) & (" + p + " " + source + " -o " + dir.path + "/b.gp; echo $? > " +
                             dir.path + "/b.rc) & wait";
  const Result r = run("sh -c '" + script + "'");
  INFO(r.output);
  for (const char *name : {"a", "b"}) {
    int rc = -1;
    std::ifstream(dir.path + "/" + name + ".rc") >> rc;
    REQUIRE(rc == 0);
    poplar::Graph g(poplar::Target::createIPUTarget(1, 4, "ipu2"));
    REQUIRE(g.addCodelets(dir.path + "/" + name + ".gp"));
    REQUIRE(g.hasCodelet("Race"));
  }
}

} // namespace

namespace {

TEST_CASE("codelets_popc: aspen_add_codelets builds a .gp at build time", "[codelets][popc]") {
  poplar::Graph g(poplar::Target::createIPUTarget(1, 4, "ipu2"));
  REQUIRE(g.addCodelets(std::string(ASPEN_CODELET_CORPUS_GP)));
  REQUIRE(g.hasCodelet("ns::Param<half,1,true,corpus::Op::ADD>"));
  REQUIRE(g.hasCodelet("Plain"));
}

} // namespace
