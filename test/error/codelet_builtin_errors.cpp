// Copyright (c) Aspen contributors.
// The IPU builtins that have no host meaning (issue 21, item 6): a codelet reading or
// writing an IPU control and status register (__builtin_ipu_get/put/uget/uput) is refused
// when it is compiled, by popc (non-zero status, file:line, the builtin named) and by
// Graph::addCodelets (graph_object_creation_error with the same message).
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include "CommandSupport.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <string>

using namespace poplar;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// A codelet file whose vertex calls `call` on line 7.
std::string writeCodelet(const std::string &dir, const std::string &call) {
  const std::string path = dir + "/csr.cpp";
  std::ofstream(path) << "#include <ipu_builtins.h>\n"
                         "#include <poplar/Vertex.hpp>\n"
                         "class UsesCsr : public poplar::Vertex {\n"
                         "public:\n"
                         "  poplar::InOut<unsigned> x;\n"
                         "  bool compute() {\n"
                         "    "
                      << call
                      << ";\n"
                         "    return true;\n"
                         "  }\n"
                         "};\n";
  return path;
}

} // namespace

TEST_CASE("builtin errors: control and status registers are refused, naming the builtin",
          "[error][codelets][builtins]") {
  const struct {
    const char *call, *builtin;
  } cases[] = {{"*x = __builtin_ipu_get(0x21)", "__builtin_ipu_get:"},
               {"*x = __builtin_ipu_uget(0x21)", "__builtin_ipu_get:"},
               {"__builtin_ipu_put(*x, 0x21)", "__builtin_ipu_put:"},
               {"__builtin_ipu_uput(*x, 0x21)", "__builtin_ipu_put:"}};
  for (const auto &c : cases) {
    INFO(c.call);
    aspen::test::TempDir dir;
    const std::string source = writeCodelet(dir.path, c.call);
    const aspen::test::CommandResult r =
        aspen::test::runCommand(aspen::test::popc() + " -O2 " + source + " -o " + dir.path + "/csr.gp");
    INFO(r.output);
    CHECK(r.status != 0);
    CHECK(contains(r.output, "csr.cpp:7:"));
    CHECK(contains(r.output, c.builtin));
    CHECK(contains(r.output, "no host meaning in Aspen's simulator"));

    IPUModel model("ipu2");
    model.tilesPerIPU = 1;
    Graph graph(model.createDevice().getTarget());
    try {
      graph.addCodelets(source, "-O0");
      FAIL("addCodelets accepted " << c.call);
    } catch (const graph_object_creation_error &e) {
      INFO(e.what());
      CHECK(contains(e.what(), "csr.cpp:7:"));
      CHECK(contains(e.what(), c.builtin));
    }
  }
}
