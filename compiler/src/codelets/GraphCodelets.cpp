// Copyright (c) Aspen contributors.
// Graph::addCodelets in every form: the one place where the front end calls the
// codelet compiler (as Engine(graph, ...) is where the runtime calls the graph
// compiler). Defined here, in the compiler module, so that libgraph itself never
// reaches into compiler/. Sources are compiled through the codelet cache; .gp
// vertex libraries are loaded; either way the vertex types are registered in
// GraphData::vertexTypes.
#include "poplar/Graph.hpp"

#include "codelets/CodeletCache.hpp"
#include "codelets/CodeletCompiler.hpp"
#include "codelets/ContentHash.hpp"
#include "codelets/GpFile.hpp"
#include "ir/GraphData.hpp"
#include "poplar/exceptions.hpp"
#include "util/Log.hpp"
#include "util/PoplibsBuilds.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <unistd.h>

namespace aspen::codelets {
/// readCodeletLibrary without the check that the library is complete.
std::vector<std::uint8_t> readLibraryBytes(const ir::CodeletLibrary &library, const std::string &neededBy);
} // namespace aspen::codelets

namespace poplar {

using aspen::ir::GraphData;
using aspen::ir::VertexTypeInfo;

namespace {

// ---- codelet libraries -------------------------------------------------------------

using aspen::codelets::extensionOf;
using aspen::codelets::languageOf;
using aspen::codelets::SourceLanguage;

/// The type a codelet file's extension names (the one table of getCodeletFileType and
/// addCodelets' Auto type); nullopt for an extension no codelet file has.
std::optional<CodeletFileType> typeOfExtension(const std::string &path) {
  const std::string ext = extensionOf(path);
  if (ext == ".gp" || ext == ".o")
    return CodeletFileType::Object;
  switch (languageOf(path)) {
  case SourceLanguage::Cpp:
    return CodeletFileType::CppSource;
  case SourceLanguage::C:
    return CodeletFileType::CSource;
  case SourceLanguage::Assembly:
    return ext == ".S" ? CodeletFileType::PreprocessedAsmSource : CodeletFileType::AsmSource;
  case SourceLanguage::Unknown:
    break;
  }
  if (ext == ".ll" || ext == ".bc")
    return CodeletFileType::IrSource;
  return std::nullopt;
}

CodeletFileType fileTypeFromExtension(const std::string &path) {
  if (const auto type = typeOfExtension(path))
    return *type;
  throw graph_object_creation_error("Cannot add codelets from '" + path +
                                    "': unknown file type (expected .cpp, .cc, .cxx, .c or .gp)");
}

/// Records a vertex library and its vertex types. False if it was already added.
/// The graph compiler later takes the library from `path`, checked against
/// `contentHash`, or from `bytes` when given (a library the cache could not keep).
bool alreadyAdded(const GraphData &data, const std::string &contentHash) {
  for (const auto &lib : data.codeletLibraries)
    if (lib.contentHash == contentHash ||
        std::find(lib.linkedFrom.begin(), lib.linkedFrom.end(), contentHash) != lib.linkedFrom.end())
      return true;
  return false;
}

void linkGraphLibraries(GraphData &data);

bool registerLibrary(GraphData &data, const std::string &contentHash, const std::string &path,
                     const std::string &origin, const aspen::codelets::LibraryMetadata &metadata,
                     std::shared_ptr<const std::vector<std::uint8_t>> bytes = nullptr) {
  if (alreadyAdded(data, contentHash))
    return false;
  const auto libraryIndex = static_cast<std::uint32_t>(data.codeletLibraries.size());
  aspen::ir::CodeletLibrary library;
  library.contentHash = contentHash;
  library.path = path;
  library.origin = origin;
  library.bytes = std::move(bytes);
  library.undefined = metadata.undefined;
  library.linkable = !metadata.objects.empty();
  data.codeletLibraries.push_back(std::move(library));
  for (const VertexTypeInfo &type : metadata.vertexTypes) {
    auto it = data.vertexTypeByName.find(type.name);
    if (it != data.vertexTypeByName.end()) {
      const std::string &previous = data.codeletLibraries[data.vertexTypes[it->second].library].origin;
      ASPEN_LOG(Warn, "vertex type '" << type.name << "' from '" << origin << "' is already defined by '"
                                      << previous << "'; keeping the first definition");
      continue;
    }
    VertexTypeInfo added = type;
    added.library = libraryIndex;
    data.vertexTypeByName.emplace(added.name, static_cast<std::uint32_t>(data.vertexTypes.size()));
    data.vertexTypes.push_back(std::move(added));
  }
  // Template instantiations also answer to the name the source wrote with defaulted
  // arguments left out.
  for (const auto &[alias, target] : metadata.aliases) {
    auto it = data.vertexTypeByName.find(target);
    if (it != data.vertexTypeByName.end() && data.vertexTypes[it->second].library == libraryIndex)
      data.vertexTypeByName.emplace(alias, it->second);
  }
  ASPEN_LOG(Debug,
            "added codelets from '" << origin << "': " << metadata.vertexTypes.size() << " vertex types");
  linkGraphLibraries(data);
  return true;
}

/// One image per graph, as the IPU linker makes it: while a library of the graph uses
/// symbols it does not define, every library of the graph that carries objects is
/// linked into one (which replaces them), so that a function one defines, another
/// calls. Libraries that each stand alone stay separate images (docs/codelets.md,
/// "Linking").
void linkGraphLibraries(GraphData &data) {
  bool unresolved = false;
  std::vector<std::uint32_t> linked;
  for (std::size_t i = 0; i < data.codeletLibraries.size(); ++i) {
    unresolved = unresolved || !data.codeletLibraries[i].undefined.empty();
    if (data.codeletLibraries[i].linkable)
      linked.push_back(static_cast<std::uint32_t>(i));
  }
  if (!unresolved || linked.size() < 2)
    return;
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<aspen::codelets::GpInput> inputs;
  std::string origin;
  std::vector<std::string> linkedFrom;
  for (std::uint32_t i : linked) {
    const aspen::ir::CodeletLibrary &lib = data.codeletLibraries[i];
    bytes.push_back(aspen::codelets::readLibraryBytes(lib, "linking the graph's codelets"));
    origin += (origin.empty() ? "" : " + ") + lib.origin;
    linkedFrom.push_back(lib.contentHash);
    linkedFrom.insert(linkedFrom.end(), lib.linkedFrom.begin(), lib.linkedFrom.end());
  }
  for (std::size_t k = 0; k < linked.size(); ++k)
    inputs.push_back({bytes[k].data(), bytes[k].size(), data.codeletLibraries[linked[k]].origin});
  aspen::codelets::CompiledCodelets result = aspen::codelets::linkCodeletLibraries(inputs, {});
  aspen::ir::CodeletLibrary library;
  library.contentHash = result.contentHash;
  library.path = result.gpPath;
  library.origin = origin;
  if (result.gpPath.empty())
    library.bytes = std::make_shared<const std::vector<std::uint8_t>>(std::move(result.gpBytes));
  library.undefined = result.metadata.undefined;
  library.linkable = true;
  library.linkedFrom = std::move(linkedFrom);
  std::vector<aspen::ir::CodeletLibrary> kept;
  std::vector<std::uint32_t> remap(data.codeletLibraries.size());
  for (std::size_t i = 0; i < data.codeletLibraries.size(); ++i)
    if (!data.codeletLibraries[i].linkable) {
      remap[i] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(std::move(data.codeletLibraries[i]));
    }
  for (std::uint32_t i : linked)
    remap[i] = static_cast<std::uint32_t>(kept.size());
  kept.push_back(std::move(library));
  data.codeletLibraries = std::move(kept);
  std::map<std::string, const VertexTypeInfo *> linkedTypes;
  for (const VertexTypeInfo &t : result.metadata.vertexTypes)
    linkedTypes.emplace(t.name, &t);
  for (VertexTypeInfo &type : data.vertexTypes) {
    type.library = remap[type.library];
    auto it = linkedTypes.find(type.name);
    if (type.library + 1 == data.codeletLibraries.size() && it != linkedTypes.end()) {
      VertexTypeInfo updated = *it->second; // the same layout, from the linked code
      updated.library = type.library;
      type = std::move(updated);
    }
  }
  ASPEN_LOG(Debug, "linked codelets "
                       << origin << " into one image"
                       << (result.metadata.undefined.empty() ? "" : " (symbols still undefined)"));
}

bool addGpFile(GraphData &data, const std::string &file) {
  // Recorded as an absolute path: the graph compiler reads the library later.
  std::string path = file;
  if (!path.empty() && path[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd))
      path = std::string(cwd) + "/" + path;
  }
  const std::vector<std::uint8_t> bytes = aspen::codelets::readBinaryFile(path);
  const std::string hash = aspen::codelets::contentHash(bytes.data(), bytes.size());
  if (alreadyAdded(data, hash))
    return false;
  const auto gp = aspen::codelets::decodeGp(bytes.data(), bytes.size(), file);
  if (data.target.type == poplar::TargetType::IPU && gp.ipuBuild.size != 0) {
    // A DeviceManager IPU device stands for hardware: it runs the library's IPU build
    // (docs/codelets.md, "Which build runs where"), kept in memory.
    auto ipu = std::make_shared<const std::vector<std::uint8_t>>(
        aspen::codelets::ipuBuildOf(bytes.data(), bytes.size(), file));
    const std::string ipuHash = aspen::codelets::contentHash(ipu->data(), ipu->size());
    const auto ipuGp = aspen::codelets::decodeGp(ipu->data(), ipu->size(), file);
    return registerLibrary(data, ipuHash, path, file + " (" + gp.metadata.ipuBuild.name + " build)",
                           ipuGp.metadata, std::move(ipu));
  }
  return registerLibrary(data, hash, path, file, gp.metadata);
}

bool addCompiled(GraphData &data, const std::vector<std::string> &sources, StringRef flags,
                 std::ostream *output, const std::vector<std::string> &displayNames) {
  const auto parsed = aspen::codelets::parseCodeletFlags(std::string_view(flags.data(), flags.size()));
  // A target list naming an IPU adds the IPU build, which a DeviceManager IPU device runs.
  std::string noIpuBuild;
  auto compiled = aspen::codelets::compileForTargets(sources, parsed, output, displayNames, &noIpuBuild);
  const std::string origin = displayNames.empty() ? sources.front() : displayNames.front();
  if (!noIpuBuild.empty())
    ASPEN_LOG(Warn, "codelets '" << origin << "': " << noIpuBuild
                                 << "; a DeviceManager IPU device runs their cpu build");
  if (data.target.type == poplar::TargetType::IPU && !compiled.metadata.ipuBuild.name.empty()) {
    auto ipu = std::make_shared<const std::vector<std::uint8_t>>(
        aspen::codelets::ipuBuildOf(compiled.gpBytes.data(), compiled.gpBytes.size(), origin));
    const std::string ipuHash = aspen::codelets::contentHash(ipu->data(), ipu->size());
    const auto ipuGp = aspen::codelets::decodeGp(ipu->data(), ipu->size(), origin);
    return registerLibrary(data, ipuHash, "", origin + " (" + compiled.metadata.ipuBuild.name + " build)",
                           ipuGp.metadata, std::move(ipu));
  }
  std::shared_ptr<const std::vector<std::uint8_t>> bytes;
  if (compiled.gpPath.empty()) // not cached: keep the bytes
    bytes = std::make_shared<const std::vector<std::uint8_t>>(std::move(compiled.gpBytes));
  return registerLibrary(data, compiled.contentHash, compiled.gpPath,
                         displayNames.empty() ? sources.front() : displayNames.front(), compiled.metadata,
                         std::move(bytes));
}

/// Writes codelet source text into the cache (by content) and returns its path.
std::string storeSourceText(const std::string &text, const char *extension) {
  const std::string dir = aspen::codelets::codeletWorkRoot() + "/src";
  const std::string path = dir + "/" + aspen::codelets::contentHash(text.data(), text.size()) + extension;
  if (!aspen::codelets::makeDirectories(dir) ||
      !aspen::codelets::writeFileAtomic(path, text.data(), text.size()))
    throw graph_object_creation_error("Cannot write codelet source to the cache ('" + path + "')");
  return path;
}

bool addCodeletsImpl(GraphData &data, const std::string &src, CodeletFileType type, StringRef flags,
                     std::ostream *output) {
  std::error_code ec;
  if (std::filesystem::is_directory(src, ec))
    throw graph_object_creation_error("Cannot add codelets from '" + src + "': it is a directory");
  const CodeletFileType actual = type == CodeletFileType::Auto ? fileTypeFromExtension(src) : type;
  switch (actual) {
  case CodeletFileType::Object:
    // One build of PopLibs per process, and each build's <lib>.gp with its own lib<lib>.so.
    aspen::util::checkOnePoplibsBuild("Graph::addCodelets");
    aspen::util::checkVertexLibraryBuild(src, "Graph::addCodelets");
    return addGpFile(data, src);
  case CodeletFileType::CppSource:
  case CodeletFileType::CSource: {
    const bool cpp = actual == CodeletFileType::CppSource;
    const std::string wanted = cpp ? ".cpp" : ".c";
    const bool extensionFits = languageOf(src) == (cpp ? SourceLanguage::Cpp : SourceLanguage::C);
    if (type == CodeletFileType::Auto || extensionFits)
      return addCompiled(data, {src}, flags, output, {src});
    // An explicit type for a file named otherwise: compile a copy with the right extension.
    auto text = aspen::codelets::readFileIfExists(src);
    if (!text)
      throw graph_object_creation_error("Cannot read codelet source '" + src + "'");
    const std::string copy = storeSourceText(std::string(text->begin(), text->end()), wanted.c_str());
    return addCompiled(data, {copy}, flags, output, {src});
  }
  default:
    throw graph_object_creation_error(
        "Cannot add codelets from '" + src +
        "': assembly and IR codelets are IPU machine code; the simulated IPU runs "
        "C and C++ codelets (.cpp, .c) and vertex libraries (.gp)");
  }
}

} // namespace

// ---- poplar/CodeletFileType.hpp -------------------------------------------------------

CodeletFileType getCodeletFileType(const char *path) {
  const std::string name = path ? path : "";
  if (const auto type = typeOfExtension(name))
    return *type;
  throw poplar_error(
      "getCodeletFileType: '" + name +
      "' has no codelet file extension (.S, .s, .c, .cpp, .cc, .cxx, .C, .ll, .bc, .gp or .o)");
}

std::string getExtensionFromFileType(CodeletFileType type) {
  switch (type) {
  case CodeletFileType::PreprocessedAsmSource:
    return ".S";
  case CodeletFileType::AsmSource:
    return ".s";
  case CodeletFileType::CSource:
    return ".c";
  case CodeletFileType::CppSource:
    return ".cpp";
  case CodeletFileType::IrSource:
    return ".ll";
  case CodeletFileType::Object:
    return ".gp";
  case CodeletFileType::Auto:
    break;
  }
  return "";
}

std::string getLanguageOption(CodeletFileType type) {
  switch (type) {
  case CodeletFileType::PreprocessedAsmSource:
    return "assembler-with-cpp";
  case CodeletFileType::AsmSource:
    return "assembler";
  case CodeletFileType::CSource:
    return "c";
  case CodeletFileType::CppSource:
    return "c++";
  case CodeletFileType::IrSource:
    return "ir";
  case CodeletFileType::Object:
  case CodeletFileType::Auto:
    break;
  }
  return "";
}

// ---- codelets ----------------------------------------------------------------------

bool Graph::addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags, StringRef targetName) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addCodelets");
  if (!targetName.empty())
    ASPEN_LOG(Debug, "addCodelets: target '" << targetName << "' ignored; codelets run on the host");
  return addCodeletsImpl(*data_, src.str(), type, compileFlags, nullptr);
}

bool Graph::addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags,
                        std::ostream &compileOutput, StringRef targetName) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addCodelets");
  (void)targetName;
  return addCodeletsImpl(*data_, src.str(), type, compileFlags, &compileOutput);
}

void Graph::addCodelets(ArrayRef<std::string> srcs, StringRef compileFlags) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addCodelets");
  // C and C++ sources given together are compiled into one library, as popc compiles the
  // sources of one call: a function one defines, another calls (a C helper of a C++ vertex).
  std::vector<std::string> sources;
  for (const std::string &src : srcs) {
    const SourceLanguage lang = languageOf(src);
    if (lang == SourceLanguage::Cpp || lang == SourceLanguage::C)
      sources.push_back(src);
    else
      addCodeletsImpl(*data_, src, CodeletFileType::Auto, compileFlags, nullptr);
  }
  if (!sources.empty())
    addCompiled(*data_, sources, compileFlags, nullptr, sources);
}

namespace {
/// Both stream forms: the source is stored in the cache by content, then compiled.
void addStreamCodelets(GraphData &data, std::stringstream &stream, StringRef compileFlags,
                       std::ostream *output, CodeletFileType type) {
  if (type != CodeletFileType::CppSource && type != CodeletFileType::CSource && type != CodeletFileType::Auto)
    throw graph_object_creation_error(
        "addCodelets(stringstream): only C and C++ source can be compiled from a stream");
  const std::string path = storeSourceText(stream.str(), type == CodeletFileType::CSource ? ".c" : ".cpp");
  addCompiled(data, {path}, compileFlags, output, {"<stringstream>"});
}
} // namespace

void Graph::addCodelets(std::stringstream &stream, StringRef compileFlags, CodeletFileType type, StringRef) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addCodelets");
  addStreamCodelets(*data_, stream, compileFlags, nullptr, type);
}

void Graph::addCodelets(std::stringstream &stream, StringRef compileFlags, std::ostream &compileOutput,
                        CodeletFileType type, StringRef) {
  getTarget();
  aspen::ir::MutationGuard mutationGuard(data_->mutation, "Graph::addCodelets");
  addStreamCodelets(*data_, stream, compileFlags, &compileOutput, type);
}

} // namespace poplar

namespace aspen::codelets {

std::vector<std::uint8_t> readCodeletLibrary(const ir::CodeletLibrary &library, const std::string &neededBy) {
  if (!library.undefined.empty())
    throw poplar::link_error("Cannot link codelets from '" + library.origin + "' (needed by " + neededBy +
                             "): they use " + demangledSymbols(library.undefined) +
                             ", which no codelets added to the graph define; add the codelets that define " +
                             "them with Graph::addCodelets (or link their .gp with popc)");
  return readLibraryBytes(library, neededBy);
}

std::vector<std::uint8_t> readLibraryBytes(const ir::CodeletLibrary &library, const std::string &neededBy) {
  if (library.bytes)
    return *library.bytes;
  auto bytes = readFileIfExists(library.path);
  if (!bytes)
    throw poplar::graph_object_load_error("Cannot read vertex library '" + library.path +
                                          "' (codelets from '" + library.origin +
                                          "') while compiling the graph: it is needed by " + neededBy);
  if (contentHash(bytes->data(), bytes->size()) != library.contentHash)
    throw poplar::graph_object_load_error(
        "Vertex library '" + library.path + "' (codelets from '" + library.origin +
        "') changed after Graph::addCodelets read it: its content hash is no longer " + library.contentHash +
        "; add the codelets again to a new graph");
  return std::move(*bytes);
}

} // namespace aspen::codelets

namespace {

/// Poplar's built-in vertices (poplar_rt::Transpose2D, ...; vertices/poplar_rt/), which
/// programs add by name without adding codelets: poplar_rt.gp beside libpoplar.so, added
/// to a graph the first time it asks for one (libgraph's addVertex calls this hook).
void addBuiltinVertices(poplar::Graph &graph) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<const void *>(&addBuiltinVertices), &info) || !info.dli_fname)
    return; // then addVertex reports the unknown type
  std::string dir = info.dli_fname;
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  const std::string path = dir + "poplar_rt.gp";
  if (FILE *f = std::fopen(path.c_str(), "rb")) {
    std::fclose(f);
    graph.addCodelets(poplar::StringRef(path));
  }
}

[[maybe_unused]] const bool builtinVerticesRegistered =
    (aspen::ir::builtinVertexLoader() = &addBuiltinVertices, true);

} // namespace
