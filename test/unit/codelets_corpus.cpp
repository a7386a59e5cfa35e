// Copyright (c) Aspen contributors.
// The codelet corpus of issue 15, run through popc as a library's build runs it:
// macro-generated explicit instantiations across two files (macros from a header,
// nested macros, instantiations in a namespace, through aliases), defaulted template
// arguments, several sources and .gp inputs linked into one library, several .gp
// files sharing helpers in one graph, the host compiler as clang, and a vertex popc
// cannot register (named, non-zero exit). popc's vertex counts are checked against
// exact expected numbers and two independent counts of the explicit instantiations:
// libclang's tokens of the macro-expanded source, and a scan of the same text.
#include "codelets/GpFile.hpp"

#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>

#include "CommandSupport.hpp"

#include <catch2/catch.hpp>
#include <clang-c/Index.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace {

std::string sdk() {
  const char *s = std::getenv("ASPEN_SDK_DIR");
  REQUIRE(s != nullptr);
  return s;
}
std::string sourceDir() {
  const char *s = std::getenv("ASPEN_SOURCE_DIR");
  REQUIRE(s != nullptr);
  return s;
}
std::string corpus() {
  return sourceDir() + "/test/codelets/macro";
}
std::string popc() {
  return sdk() + "/bin/popc -I " + corpus();
}

using Result = aspen::test::CommandResult;
using aspen::test::TempDir;

Result run(const std::string &command) {
  return aspen::test::runCommand(command);
}

std::vector<std::uint8_t> readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

aspen::codelets::LibraryMetadata metadataOf(const std::string &gp) {
  const auto bytes = readAll(gp);
  return aspen::codelets::decodeGp(bytes.data(), bytes.size(), gp).metadata;
}

/// "popc: <source>: N vertex types" as popc -v prints it, by source.
std::map<std::string, int> reportedCounts(const std::string &output) {
  std::map<std::string, int> counts;
  std::istringstream lines(output);
  std::string line;
  const std::regex pattern(R"(^popc: (.*): (\d+) vertex types.*$)");
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_match(line, m, pattern))
      counts[m[1]] = std::stoi(m[2]);
  return counts;
}

/// The source with every macro expanded (the host compiler's preprocessor).
std::string preprocess(const std::string &source, const std::string &out) {
  const Result r = run("g++ -E -P -x c++ -std=c++17 -D__POPC__ -I " + sourceDir() + "/vertices/include -I " +
                       corpus() + " " + source + " -o " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  return out;
}

/// Independent count 1: libclang tokens of the expanded source. Every top-level
/// (or namespace-level) class declaration that is a template specialization and is
/// spelled `template class ...` / `template struct ...` (no `<`, no `extern`).
int libclangCount(const std::string &expanded) {
  CXIndex index = clang_createIndex(0, 0);
  const char *args[] = {"-x", "c++", "-std=c++17"};
  CXTranslationUnit tu = clang_parseTranslationUnit(index, expanded.c_str(), args, 3, nullptr, 0,
                                                    CXTranslationUnit_SkipFunctionBodies);
  REQUIRE(tu != nullptr);
  struct State {
    CXTranslationUnit tu;
    int count = 0;
  } state{tu};
  clang_visitChildren(
      clang_getTranslationUnitCursor(tu),
      [](CXCursor c, CXCursor, CXClientData data) {
        auto &s = *static_cast<State *>(data);
        const CXCursorKind k = clang_getCursorKind(c);
        if (k == CXCursor_Namespace)
          return CXChildVisit_Recurse;
        if ((k != CXCursor_ClassDecl && k != CXCursor_StructDecl) ||
            clang_Cursor_isNull(clang_getSpecializedCursorTemplate(c)) ||
            !clang_Location_isFromMainFile(clang_getCursorLocation(c)))
          return CXChildVisit_Continue;
        CXToken *tokens = nullptr;
        unsigned n = 0;
        clang_tokenize(s.tu, clang_getCursorExtent(c), &tokens, &n);
        if (n >= 2) {
          CXString first = clang_getTokenSpelling(s.tu, tokens[0]);
          CXString second = clang_getTokenSpelling(s.tu, tokens[1]);
          if (std::string(clang_getCString(first)) == "template" &&
              std::string(clang_getCString(second)) != "<")
            ++s.count;
          clang_disposeString(first);
          clang_disposeString(second);
        }
        clang_disposeTokens(s.tu, tokens, n);
        return CXChildVisit_Continue;
      },
      &state);
  clang_disposeTranslationUnit(tu);
  clang_disposeIndex(index);
  return state.count;
}

/// Independent count 2: explicit instantiation definitions in the expanded text of
/// the source itself (after its last line from a header: -P output keeps order).
int textCount(const std::string &expanded, const std::string &firstLineOfSource) {
  std::ifstream in(expanded);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t start = text.find(firstLineOfSource);
  REQUIRE(start != std::string::npos);
  text = text.substr(start);
  const std::regex pattern(R"((\bextern\s+)?\btemplate\s+(class|struct)\s+[A-Za-z_][\w:]*\s*<[^;{}]*>\s*;)");
  int count = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it)
    if (!(*it)[1].matched)
      ++count;
  return count;
}

Device makeDevice() {
  IPUModel model("ipu2");
  model.tilesPerIPU = 4;
  return model.createDevice();
}

/// Runs one vertex of type `vertex` with a float vector edge `inName` (and `outName`
/// unless empty or equal) on `input`; returns the output (or the in-out data).
std::vector<float> runVector(Graph &g, const std::string &vertex, const std::string &inName,
                             const std::string &outName, const std::vector<float> &input) {
  const auto n = input.size();
  Tensor in = g.addVariable(FLOAT, {n}, "in");
  g.setTileMapping(in, 0);
  ComputeSet cs = g.addComputeSet("cs");
  Tensor out = in;
  if (!outName.empty() && outName != inName) {
    out = g.addVariable(FLOAT, {n}, "out");
    g.setTileMapping(out, 0);
    VertexRef v = g.addVertex(cs, vertex, {{inName, in}, {outName, out}});
    g.setTileMapping(v, 0);
  } else {
    VertexRef v = g.addVertex(cs, vertex, {{inName, in}});
    g.setTileMapping(v, 0);
  }
  g.createHostWrite("in", in);
  g.createHostRead("out", out);
  Engine engine(g, Execute(cs));
  Device device = makeDevice();
  engine.load(device);
  engine.writeTensor("in", input.data(), input.data() + n);
  engine.run(0);
  std::vector<float> result(n);
  engine.readTensor("out", result.data(), result.data() + n);
  return result;
}

Target target() {
  return makeDevice().getTarget();
}

} // namespace

TEST_CASE("codelets_corpus: popc registers every macro-generated vertex type of two files",
          "[codelets][popc][corpus]") {
  TempDir dir;
  struct File {
    const char *name;
    int expected;
    const char *firstLine; // the source's first line after its #include
  };
  for (const File &f : {File{"MacroOpsA.cpp", 12, "template class macro_corpus::Unary<"},
                        File{"MacroOpsB.cpp", 6, "using Count = unsigned int"}}) {
    INFO(f.name);
    const std::string source = corpus() + "/" + f.name;
    const Result r = run(popc() + " -v " + source + " -o " + dir.path + "/out.gp");
    INFO(r.output);
    REQUIRE(r.status == 0);
    const auto counts = reportedCounts(r.output);
    REQUIRE(counts.count(source) == 1);
    const std::string expanded = preprocess(source, dir.path + "/expanded.ii");
    // Exact, and what two independent counts of the explicit instantiations say.
    CHECK(counts.at(source) == f.expected);
    CHECK(libclangCount(expanded) == f.expected);
    CHECK(textCount(expanded, f.firstLine) == f.expected);
    CHECK(metadataOf(dir.path + "/out.gp").vertexTypes.size() == std::size_t(f.expected));
  }
}

TEST_CASE("codelets_corpus: defaulted template arguments are spelled out", "[codelets][popc][corpus]") {
  TempDir dir;
  REQUIRE(run(popc() + " " + corpus() + "/MacroOpsA.cpp -o " + dir.path + "/a.gp").status == 0);
  REQUIRE(run(popc() + " " + corpus() + "/MacroOpsB.cpp -o " + dir.path + "/b.gp").status == 0);
  std::vector<std::string> names;
  for (const char *gp : {"/a.gp", "/b.gp"})
    for (const auto &t : metadataOf(dir.path + gp).vertexTypes)
      names.push_back(t.name);
  for (const auto &n : names) {
    INFO(n);
    CHECK(n.find(",>") == std::string::npos);
    CHECK(n.find(",,") == std::string::npos);
  }
  auto has = [&](const std::string &n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  // However the instantiation is written (defaults left out, or given), one name.
  CHECK(has("macro_corpus::ScaleBy<float,2,float,false>"));
  CHECK(has("macro_corpus::ScaleBy<half,2,float,false>"));
  CHECK(has("macro_corpus::ScaleBy<int,3,float,false>"));
  CHECK(has("macro_corpus::ScaleBy<short,2,float,false>"));
  CHECK(has("macro_corpus::ScaleBy<unsigned int,4,double,false>"));
  CHECK(has("macro_corpus::ScaleBy<float,2,float,true>"));
  // Aliases and typedefs are spelled as the types they name.
  CHECK(has("macro_corpus::Unary<macro_corpus::UnaryOp::NEGATE,unsigned int>"));
  CHECK(has("macro_corpus::Unary<macro_corpus::UnaryOp::ABS,short>"));

  // The spelled name runs: data = data * 2 (the defaulted Scale), through float; so
  // does the name as the source wrote it, with the defaults left out.
  for (const char *name : {"macro_corpus::ScaleBy<float,2,float,false>", "macro_corpus::ScaleBy<float>"}) {
    INFO(name);
    Graph g(target());
    REQUIRE(g.addCodelets(dir.path + "/a.gp"));
    REQUIRE(g.hasCodelet(name));
    const std::vector<float> input = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1.0f, 9.5f};
    const auto result = runVector(g, name, "data", "", input);
    for (std::size_t i = 0; i < input.size(); ++i)
      CHECK(result[i] == input[i] * 2.0f);
  }
  Graph g(target());
  REQUIRE(g.addCodelets(dir.path + "/a.gp"));
  CHECK(g.hasCodelet("macro_corpus::ScaleBy<int,3>"));
  CHECK_FALSE(g.hasCodelet("macro_corpus::ScaleBy<int>")); // not this type's name
}

TEST_CASE("codelets_corpus: popc links several sources and .gp inputs into one library",
          "[codelets][popc][corpus]") {
  TempDir dir;
  const std::string b = dir.path + "/b.gp", sb = dir.path + "/sharedB.gp", all = dir.path + "/all.gp";
  REQUIRE(run(popc() + " " + corpus() + "/MacroOpsB.cpp -o " + b).status == 0);
  REQUIRE(run(popc() + " " + corpus() + "/SharedB.cpp -o " + sb).status == 0);
  const Result r = run(popc() + " -v " + corpus() + "/MacroOpsA.cpp " + corpus() + "/SharedA.cpp " + b + " " +
                       sb + " -o " + all);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const auto counts = reportedCounts(r.output);
  CHECK(counts.at(corpus() + "/MacroOpsA.cpp") == 12);
  CHECK(counts.at(corpus() + "/SharedA.cpp") == 1);
  CHECK(counts.at(all) == 12 + 1 + 6 + 1);
  const auto m = metadataOf(all);
  REQUIRE(m.vertexTypes.size() == 20);
  // One image: the objects of the compiled sources, b.gp's and sharedB.gp's linked into
  // one shared object.
  REQUIRE(m.sharedObjects.size() == 1);
  REQUIRE(m.objects.size() == 4);
  REQUIRE(m.vertexCounts == std::vector<std::uint32_t>{12, 1, 6, 1});

  // The linked library runs vertices from every part.
  const std::vector<float> input = {1.0f, 30.0f, -4.0f, 2.5f};
  {
    Graph g(target());
    REQUIRE(g.addCodelets(all));
    const auto a = runVector(g, "SharedA", "in", "out", input);
    for (std::size_t i = 0; i < input.size(); ++i)
      CHECK(a[i] == std::min(2.0f * input[i] + 1.0f, 50.0f));
  }
  {
    Graph g(target());
    REQUIRE(g.addCodelets(all));
    const auto s = runVector(g, "SharedB", "data", "", input);
    for (std::size_t i = 0; i < input.size(); ++i)
      CHECK(s[i] == 2.0f * input[i]);
  }
  {
    Graph g(target());
    REQUIRE(g.addCodelets(all));
    const auto u =
        runVector(g, "macro_corpus::Unary<macro_corpus::UnaryOp::SQUARE,float>", "in", "out", input);
    for (std::size_t i = 0; i < input.size(); ++i)
      CHECK(u[i] == input[i] * input[i]);
  }

  // A vertex type defined by two inputs is a link error naming it.
  const Result dup = run(popc() + " " + corpus() + "/SharedB.cpp " + sb + " -o " + dir.path + "/dup.gp");
  CHECK(dup.status != 0);
  CHECK(dup.output.find("'SharedB' is defined by both") != std::string::npos);
}

TEST_CASE("codelets_corpus: Graph::addCodelets of several .gp files sharing helpers",
          "[codelets][graph][corpus]") {
  TempDir dir;
  const std::string a = dir.path + "/sharedA.gp", b = dir.path + "/sharedB.gp";
  REQUIRE(run(popc() + " " + corpus() + "/SharedA.cpp -o " + a).status == 0);
  REQUIRE(run(popc() + " " + corpus() + "/SharedB.cpp -o " + b).status == 0);
  const std::vector<float> input = {0.5f, 60.0f, -3.0f};
  for (const char *vertex : {"SharedA", "SharedB"}) {
    Graph g(target());
    REQUIRE(g.addCodelets(a));
    REQUIRE(g.addCodelets(b));
    const bool isA = std::string(vertex) == "SharedA";
    const auto r = runVector(g, vertex, isA ? "in" : "data", isA ? "out" : "", input);
    for (std::size_t i = 0; i < input.size(); ++i)
      CHECK(r[i] == (isA ? std::min(2.0f * input[i] + 1.0f, 50.0f) : 2.0f * input[i]));
  }
}

TEST_CASE("codelets_corpus: popc names a vertex type it cannot register and fails",
          "[codelets][popc][corpus][error]") {
  TempDir dir;
  const Result priv = run(popc() + " " + corpus() + "/Unregistrable.cpp -o " + dir.path + "/u.gp");
  CHECK(priv.status != 0);
  CHECK(priv.output.find("popc: error: ") != std::string::npos);
  CHECK(priv.output.find("cannot register vertex types 'Holder<Outer::Priv>'") != std::string::npos);
  const Result missed = run(popc() + " " + corpus() + "/Missed.cpp -o " + dir.path + "/m.gp");
  CHECK(missed.status != 0);
  CHECK(missed.output.find("cannot register vertex types 'Hidden<float>'") != std::string::npos);
  CHECK_FALSE(std::ifstream(dir.path + "/u.gp").good());
  CHECK_FALSE(std::ifstream(dir.path + "/m.gp").good());
}

TEST_CASE("codelets_corpus: the host compiler can be GCC; GCC accepts what only it calls changes meaning",
          "[codelets][popc][corpus]") {
  TempDir dir;
  // clang (the default) takes the codelet as Graphcore's popc does, without a word.
  const Result byDefault = run(popc() + " " + corpus() + "/ChangesMeaning.cpp -o " + dir.path + "/d.gp");
  INFO(byDefault.output);
  REQUIRE(byDefault.status == 0);
  CHECK(byDefault.output.find("changes meaning") == std::string::npos);
  // GCC: a codelet valid for clang compiles, with GCC's warning.
  const Result gcc =
      run("ASPEN_CXX=g++ " + popc() + " " + corpus() + "/ChangesMeaning.cpp -o " + dir.path + "/g.gp");
  INFO(gcc.output);
  REQUIRE(gcc.status == 0);
  CHECK(gcc.output.find("changes meaning") != std::string::npos);
  {
    Graph g(target());
    REQUIRE(g.addCodelets(dir.path + "/g.gp"));
    Tensor in = g.addVariable(FLOAT, {}, "in"), out = g.addVariable(FLOAT, {}, "out");
    g.setTileMapping(in, 0);
    g.setTileMapping(out, 1);
    ComputeSet cs = g.addComputeSet("cs");
    VertexRef v = g.addVertex(cs, "ChangesMeaning", {{"in", in}, {"out", out}});
    g.setTileMapping(v, 1);
    g.createHostWrite("in", in);
    g.createHostRead("out", out);
    Engine engine(g, Execute(cs));
    Device device = makeDevice();
    engine.load(device);
    const float x = 1.75f;
    engine.writeTensor("in", &x, &x + 1);
    engine.run(0);
    float y = 0;
    engine.readTensor("out", &y, &y + 1);
    CHECK(y == x * 3.0f);
  }
  // What -fpermissive would also have let through stays an error.
  {
    std::ofstream(dir.path + "/Permissive.cpp")
        << "#include <poplar/Vertex.hpp>\n"
           "class P : public poplar::Vertex {\npublic:\n"
           "  poplar::Output<int> out;\n"
           "  bool compute() { int *p = 5; *out = p != 0; return true; }\n};\n";
    const Result bad =
        run("ASPEN_CXX=g++ " + popc() + " " + dir.path + "/Permissive.cpp -o " + dir.path + "/p.gp");
    CHECK(bad.status != 0);
    CHECK(run(popc() + " " + dir.path + "/Permissive.cpp -o " + dir.path + "/p.gp").status != 0);
  }
  if (run("command -v clang++").status != 0) {
    WARN("clang++ is not installed: the ASPEN_CXX=clang++ half of this test is skipped");
    return;
  }
  for (const char *file : {"ChangesMeaning.cpp", "MacroOpsA.cpp", "VertexApi.cpp"}) {
    const Result clang =
        run("ASPEN_CXX=clang++ " + popc() + " -v " + corpus() + "/" + file + " -o " + dir.path + "/c.gp");
    INFO(file << ": " << clang.output);
    CHECK(clang.status == 0);
    CHECK(clang.output.find("-fno-gnu-unique") == std::string::npos);
  }
  CHECK(metadataOf(dir.path + "/c.gp").vertexTypes.size() == 3);
}

TEST_CASE("codelets_corpus: the vertex-side API of Poplar 3.x codelets", "[codelets][corpus]") {
  Graph g(target());
  REQUIRE(g.addCodelets(corpus() + "/VertexApi.cpp"));
  REQUIRE(g.hasCodelet("AddAlign<float>"));
  REQUIRE(g.hasCodelet("AddAlign<int>"));
  REQUIRE(g.hasCodelet("SupervisorCount"));
  const auto &types = g.getImpl().vertexTypes;
  const auto &sup = types.at(g.getImpl().vertexTypeByName.at("SupervisorCount"));
  CHECK(sup.isSupervisor);
  const auto &fallback = types.at(g.getImpl().vertexTypeByName.at("AddAlign<float>"));
  CHECK_FALSE(fallback.isSupervisor);
  const std::vector<float> input = {1.0f, 2.0f, -8.0f};
  const auto r = runVector(g, "AddAlign<float>", "in", "out", input);
  for (std::size_t i = 0; i < input.size(); ++i)
    CHECK(r[i] == input[i] + 8.0f);
}
