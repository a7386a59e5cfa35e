// Copyright (c) Aspen contributors.
#include "codelets/GpFile.hpp"

#include "codelets/ContentHash.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace aspen::codelets {

namespace {

constexpr char kMagic[8] = {'A', 'S', 'P', 'E', 'N', 'G', 'P', '\0'};
constexpr std::size_t kHeaderSize = 64;

using Json = nlohmann::json;

const char *const kTypeNames[] = {
    "invalid",
    "bool",
    "char",
    "signed char",
    "unsigned char",
    "short",
    "unsigned short",
    "int",
    "unsigned int",
    "long",
    "unsigned long",
    "long long",
    "unsigned long long",
    "half",
    "float",
    "double",
    "quarter",
    "quarter_metadata",
};
constexpr std::size_t kNumTypeNames = sizeof(kTypeNames) / sizeof(kTypeNames[0]);

const char *const kKindNames[] = {"Input", "Output", "InOut", "State"};
const char *const kShapeNames[] = {"Scalar", "Vector", "VectorOfEdges", "VectorOfScalarEdges"};
const char *const kLayoutNames[] = {"NotAVector",  "Span",         "ShortSpan",  "OnePtr", "ScaledPtr32",
                                    "ScaledPtr64", "ScaledPtr128", "CompactPtr", "DeltaN", "DeltaNElements"};

template <std::size_t N> int indexOf(const char *const (&names)[N], const std::string &name) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<int>(i);
  return -1;
}

void put32(std::uint8_t *p, std::uint32_t v) {
  std::memcpy(p, &v, 4);
}
void put64(std::uint8_t *p, std::uint64_t v) {
  std::memcpy(p, &v, 8);
}
std::uint32_t get32(const std::uint8_t *p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
std::uint64_t get64(const std::uint8_t *p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

[[noreturn]] void fail(const std::string &fileName, const std::string &problem) {
  throw poplar::graph_object_load_error("Cannot load vertex library '" + fileName + "': " + problem);
}

} // namespace

const char *elementTypeName(poplar::Type::Id id) {
  const auto i = static_cast<std::size_t>(id);
  return i < kNumTypeNames ? kTypeNames[i] : "invalid";
}

poplar::Type::Id elementTypeFromName(const std::string &name) {
  const int i = indexOf(kTypeNames, name);
  return static_cast<poplar::Type::Id>(i < 0 ? 0 : i);
}

std::string metadataToJson(const LibraryMetadata &metadata) {
  Json vertices = Json::array();
  for (const ir::VertexTypeInfo &v : metadata.vertexTypes) {
    Json fields = Json::array();
    for (const ir::FieldInfo &f : v.fields)
      fields.push_back({{"name", f.name},
                        {"kind", kKindNames[static_cast<int>(f.kind)]},
                        {"shape", kShapeNames[static_cast<int>(f.shape)]},
                        {"type", elementTypeName(f.elementType.id())},
                        {"layout", kLayoutNames[static_cast<int>(f.layout)]},
                        {"outerLayout", kLayoutNames[static_cast<int>(f.outerLayout)]},
                        {"minAlign", f.minAlign},
                        {"offset", f.offset},
                        {"size", f.size},
                        {"const", f.isConst}});
    vertices.push_back({{"name", v.name},
                        {"size", v.objectSize},
                        {"align", v.objectAlign},
                        {"multiVertex", v.isMultiVertex},
                        {"supervisor", v.isSupervisor},
                        {"fields", std::move(fields)}});
  }
  Json doc = {{"aspenVersion", metadata.aspenVersion}, {"sharedObjectHash", metadata.sharedObjectHash},
              {"sources", metadata.sources},           {"targets", metadata.targets},
              {"vertices", std::move(vertices)},       {"compilerOutput", metadata.compilerOutput}};
  return doc.dump();
}

LibraryMetadata metadataFromJson(const std::string &json, const std::string &fileName) {
  LibraryMetadata m;
  try {
    const Json doc = Json::parse(json);
    m.aspenVersion = doc.at("aspenVersion").get<std::string>();
    m.sharedObjectHash = doc.at("sharedObjectHash").get<std::string>();
    m.sources = doc.at("sources").get<std::vector<std::string>>();
    m.targets = doc.at("targets").get<std::vector<std::string>>();
    m.compilerOutput = doc.value("compilerOutput", std::string());
    for (const Json &jv : doc.at("vertices")) {
      ir::VertexTypeInfo v;
      v.name = jv.at("name").get<std::string>();
      v.objectSize = jv.at("size").get<std::uint32_t>();
      v.objectAlign = jv.at("align").get<std::uint32_t>();
      v.isMultiVertex = jv.at("multiVertex").get<bool>();
      v.isSupervisor = jv.at("supervisor").get<bool>();
      for (const Json &jf : jv.at("fields")) {
        ir::FieldInfo f;
        f.name = jf.at("name").get<std::string>();
        const int kind = indexOf(kKindNames, jf.at("kind").get<std::string>());
        const int shape = indexOf(kShapeNames, jf.at("shape").get<std::string>());
        const int layout = indexOf(kLayoutNames, jf.at("layout").get<std::string>());
        const int outer = indexOf(kLayoutNames, jf.at("outerLayout").get<std::string>());
        if (kind < 0 || shape < 0 || layout < 0 || outer < 0)
          fail(fileName,
               "field '" + f.name + "' of vertex type '" + v.name + "' has an unknown kind or layout");
        f.kind = static_cast<ir::FieldKind>(kind);
        f.shape = static_cast<ir::FieldShape>(shape);
        f.layout = static_cast<ir::Layout>(layout);
        f.outerLayout = static_cast<ir::Layout>(outer);
        f.elementType = poplar::Type(elementTypeFromName(jf.at("type").get<std::string>()));
        f.minAlign = jf.at("minAlign").get<std::uint32_t>();
        f.offset = jf.at("offset").get<std::uint32_t>();
        f.size = jf.at("size").get<std::uint32_t>();
        f.isConst = jf.at("const").get<bool>();
        v.fields.push_back(std::move(f));
      }
      m.vertexTypes.push_back(std::move(v));
    }
  } catch (const Json::exception &e) {
    fail(fileName, std::string("its metadata is corrupt (") + e.what() + ")");
  }
  return m;
}

std::vector<std::uint8_t> encodeGp(const LibraryMetadata &metadata, const std::uint8_t *sharedObject,
                                   std::size_t sharedObjectSize) {
  const std::string json = metadataToJson(metadata);
  std::vector<std::uint8_t> out(kHeaderSize + json.size() + sharedObjectSize);
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  put32(out.data() + 8, kGpFormatVersion);
  put32(out.data() + 12, static_cast<std::uint32_t>(kHeaderSize));
  put64(out.data() + 16, json.size());
  put64(out.data() + 24, sharedObjectSize);
  std::memcpy(out.data() + kHeaderSize, json.data(), json.size());
  if (sharedObjectSize)
    std::memcpy(out.data() + kHeaderSize + json.size(), sharedObject, sharedObjectSize);
  const std::string hash = contentHash(out.data() + kHeaderSize, out.size() - kHeaderSize);
  std::memcpy(out.data() + 32, hash.data(), 32);
  return out;
}

GpContents decodeGp(const std::uint8_t *data, std::size_t size, const std::string &fileName) {
  if (size < sizeof kMagic || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    fail(fileName,
         "it is not an Aspen vertex library (.gp): the file does not start with the .gp magic bytes");
  if (size < kHeaderSize)
    fail(fileName, "the file is truncated (" + std::to_string(size) + " bytes, shorter than the .gp header)");
  const std::uint32_t version = get32(data + 8);
  if (version != kGpFormatVersion)
    fail(fileName, "it has .gp format version " + std::to_string(version) +
                       ", but this Aspen reads version " + std::to_string(kGpFormatVersion) +
                       "; rebuild it with this Aspen's popc");
  const std::uint32_t headerSize = get32(data + 12);
  const std::uint64_t jsonSize = get64(data + 16);
  const std::uint64_t soSize = get64(data + 24);
  if (headerSize != kHeaderSize)
    fail(fileName, "the header is corrupt (header size " + std::to_string(headerSize) + ")");
  if (jsonSize > size || soSize > size || headerSize + jsonSize + soSize != size)
    fail(fileName, "the file is truncated or corrupt (" + std::to_string(size) +
                       " bytes, the header describes " + std::to_string(headerSize + jsonSize + soSize) +
                       ")");
  const std::string hash = contentHash(data + kHeaderSize, size - kHeaderSize);
  if (std::memcmp(hash.data(), data + 32, 32) != 0)
    fail(fileName, "the file is corrupt (its content does not match its checksum)");
  GpContents contents;
  contents.metadata =
      metadataFromJson(std::string(reinterpret_cast<const char *>(data + kHeaderSize), jsonSize), fileName);
  contents.sharedObjectOffset = kHeaderSize + jsonSize;
  contents.sharedObjectSize = soSize;
  return contents;
}

std::vector<std::uint8_t> readBinaryFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw poplar::graph_object_load_error("Cannot open vertex library '" + path + "'");
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec); // fails for a directory
  if (!ec) {
    // One read of the whole file: a character iterator cost more than the rest of addCodelets.
    std::vector<std::uint8_t> bytes(size);
    if (in.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(size)) &&
        in.gcount() == static_cast<std::streamsize>(size))
      return bytes;
  }
  throw poplar::graph_object_load_error("Cannot read vertex library '" + path + "'");
}

} // namespace aspen::codelets
