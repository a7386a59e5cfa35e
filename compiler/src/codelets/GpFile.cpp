// Copyright (c) Aspen contributors.
#include "codelets/GpFile.hpp"

#include "codelets/CodeletAbi.h"
#include "codelets/ContentHash.hpp"
#include "codelets/EmbeddedFiles.hpp"
#include "poplar/exceptions.hpp"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

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

namespace {

bool isPowerOfTwo(std::uint64_t x) {
  return x != 0 && (x & (x - 1)) == 0;
}

/// The size a field of this kind and shape has in the vertex ABI, 0 if any.
std::uint64_t abiFieldSize(const ir::FieldInfo &f) {
  const bool quarterEdge = f.kind != ir::FieldKind::State && f.elementType == poplar::QUARTER;
  if (quarterEdge && f.shape != ir::FieldShape::Scalar)
    return ASPEN_FIELD_QUARTER_VECTOR_BYTES; // {pointer, 32-bit size, metadata pointer}
  if (f.shape != ir::FieldShape::Scalar)
    return 16; // {pointer, 32-bit size}
  if (quarterEdge)
    return ASPEN_FIELD_QUARTER_SCALAR_BYTES; // {pointer, metadata pointer}
  if (f.kind != ir::FieldKind::State)
    return 8; // a pointer
  return f.elementType.valid() ? f.elementType.size() : 0;
}

} // namespace

void validateVertexTypes(const std::vector<ir::VertexTypeInfo> &types, const std::string &fileName) {
  std::set<std::string> names;
  for (const ir::VertexTypeInfo &v : types) {
    if (v.name.empty())
      fail(fileName, "a vertex type has no name");
    if (!names.insert(v.name).second)
      fail(fileName, "vertex type '" + v.name + "' is defined twice");
    const std::string vertex = "vertex type '" + v.name + "'";
    if (v.objectSize == 0 || v.objectSize > kMaxVertexObjectBytes)
      fail(fileName, vertex + " has an object size of " + std::to_string(v.objectSize) +
                         " bytes (size: 1 to " + std::to_string(kMaxVertexObjectBytes) + ")");
    if (!isPowerOfTwo(v.objectAlign) || v.objectAlign > kMaxFieldAlign)
      fail(fileName, vertex + " has an alignment of " + std::to_string(v.objectAlign) +
                         " (align: a power of two up to " + std::to_string(kMaxFieldAlign) + ")");
    std::set<std::string> fieldNames;
    for (const ir::FieldInfo &f : v.fields) {
      const std::string field = "field '" + f.name + "' of " + vertex;
      if (f.name.empty() || !fieldNames.insert(f.name).second)
        fail(fileName, vertex + " has a field with no name or two fields named '" + f.name + "'");
      if (static_cast<unsigned>(f.kind) > static_cast<unsigned>(ir::FieldKind::State) ||
          static_cast<unsigned>(f.shape) > static_cast<unsigned>(ir::FieldShape::VectorOfScalarEdges) ||
          static_cast<unsigned>(f.layout) > static_cast<unsigned>(ir::Layout::DeltaNElements) ||
          static_cast<unsigned>(f.outerLayout) > static_cast<unsigned>(ir::Layout::DeltaNElements))
        fail(fileName, field + " has an unknown kind, shape or layout");
      if (static_cast<std::size_t>(f.elementType.id()) >= kNumTypeNames)
        fail(fileName, field + " has an unknown element type id");
      // 64-bit arithmetic: offset and size are 32-bit each, so their sum cannot wrap.
      if (std::uint64_t(f.offset) + std::uint64_t(f.size) > v.objectSize)
        fail(fileName, field + " lies outside the vertex object (offset " + std::to_string(f.offset) +
                           ", size " + std::to_string(f.size) + ", object size " +
                           std::to_string(v.objectSize) + ")");
      if (!isPowerOfTwo(f.minAlign) || f.minAlign > kMaxFieldAlign)
        fail(fileName, field + " has a minimum alignment of " + std::to_string(f.minAlign) +
                           " (minAlign: a power of two up to " + std::to_string(kMaxFieldAlign) + ")");
      if (f.kind != ir::FieldKind::State && !f.elementType.valid())
        fail(fileName, field + " is an edge without an element type (type \"invalid\")");
      if (f.shape != ir::FieldShape::Scalar && f.kind == ir::FieldKind::State && !f.elementType.valid())
        fail(fileName, field + " is a state vector without an element type (type \"invalid\")");
      const std::uint64_t expected = abiFieldSize(f);
      if (expected != 0 && f.size != expected)
        fail(fileName, field + " has size " + std::to_string(f.size) + ", but a " +
                           kKindNames[static_cast<int>(f.kind)] + " " +
                           kShapeNames[static_cast<int>(f.shape)] + " field of type " +
                           elementTypeName(f.elementType.id()) + " has size " + std::to_string(expected));
      if (expected >= 8 && f.offset % 8 != 0)
        fail(fileName, field + " holds a pointer at offset " + std::to_string(f.offset) +
                           ", which is not a multiple of 8");
    }
  }
}

std::string metadataToJson(const LibraryMetadata &metadata) {
  Json vertices = Json::array();
  for (std::size_t i = 0; i < metadata.vertexTypes.size(); ++i) {
    const ir::VertexTypeInfo &v = metadata.vertexTypes[i];
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
    Json jv = {{"name", v.name},
               {"size", v.objectSize},
               {"align", v.objectAlign},
               {"multiVertex", v.isMultiVertex},
               {"supervisor", v.isSupervisor},
               {"fields", std::move(fields)}};
    if (v.isExternal)
      jv["external"] = true;
    if (v.inputsReadOnly)
      jv["inputsReadOnly"] = true;
    if (i < metadata.vertexParts.size() && metadata.vertexParts[i] != 0)
      jv["part"] = metadata.vertexParts[i];
    vertices.push_back(std::move(jv));
  }
  Json doc = {{"aspenVersion", metadata.aspenVersion}, {"sharedObjectHash", metadata.sharedObjectHash},
              {"sources", metadata.sources},           {"targets", metadata.targets},
              {"vertices", std::move(vertices)},       {"compilerOutput", metadata.compilerOutput}};
  if (!metadata.sharedObjects.empty()) {
    Json parts = Json::array();
    for (const SharedObjectRef &so : metadata.sharedObjects)
      parts.push_back({{"hash", so.hash}, {"size", so.size}});
    doc["sharedObjects"] = std::move(parts);
  }
  if (!metadata.vertexCounts.empty())
    doc["vertexCounts"] = metadata.vertexCounts;
  if (!metadata.objects.empty()) {
    Json objects = Json::array();
    for (const ObjectRef &o : metadata.objects)
      objects.push_back({{"name", o.name}, {"hash", o.hash}, {"size", o.size}});
    doc["objects"] = std::move(objects);
    doc["units"] = metadata.units;
  }
  if (!metadata.undefined.empty())
    doc["undefined"] = metadata.undefined;
  if (!metadata.cacheKey.empty())
    doc["cacheKey"] = metadata.cacheKey;
  if (!metadata.aliases.empty())
    doc["aliases"] = metadata.aliases;
  if (metadata.ipuBuild.size != 0)
    doc["ipuBuild"] = {
        {"arch", metadata.ipuBuild.name}, {"hash", metadata.ipuBuild.hash}, {"size", metadata.ipuBuild.size}};
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

namespace {

/// An unsigned integer of the metadata, at most `limit`: never a float, a negative
/// number or a string (a JSON library cast would wrap or be undefined).
std::uint64_t unsignedField(const Json &object, const char *key, std::uint64_t limit,
                            const std::string &fileName, const std::string &where) {
  const Json &value = object.at(key);
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<std::int64_t>() >= 0))
    fail(fileName, where + ": \"" + key + "\" is not an unsigned integer (" +
                       value.dump(-1, ' ', false, Json::error_handler_t::replace) + ")");
  const std::uint64_t n = value.get<std::uint64_t>();
  if (n > limit)
    fail(fileName,
         where + ": \"" + key + "\" is " + std::to_string(n) + ", more than " + std::to_string(limit));
  return n;
}

std::string stringField(const Json &object, const char *key, const std::string &fileName,
                        const std::string &where) {
  const Json &value = object.at(key);
  if (!value.is_string())
    fail(fileName, where + ": \"" + key + "\" is not a string");
  return value.get<std::string>();
}

bool boolField(const Json &object, const char *key, const std::string &fileName, const std::string &where) {
  const Json &value = object.at(key);
  if (!value.is_boolean())
    fail(fileName, where + ": \"" + key + "\" is not true or false");
  return value.get<bool>();
}

std::vector<std::string> stringList(const Json &object, const char *key, const std::string &fileName) {
  const Json &value = object.at(key);
  if (!value.is_array())
    fail(fileName, std::string("the metadata's \"") + key + "\" is not a list");
  std::vector<std::string> out;
  for (const Json &item : value) {
    if (!item.is_string())
      fail(fileName, std::string("the metadata's \"") + key + "\" holds something other than a string");
    out.push_back(item.get<std::string>());
  }
  return out;
}

} // namespace

LibraryMetadata metadataFromJson(const std::string &json, const std::string &fileName) {
  LibraryMetadata m;
  try {
    const Json doc = Json::parse(json);
    if (!doc.is_object())
      fail(fileName, "its metadata is not a JSON object");
    m.aspenVersion = stringField(doc, "aspenVersion", fileName, "the metadata");
    m.sharedObjectHash = stringField(doc, "sharedObjectHash", fileName, "the metadata");
    m.sources = stringList(doc, "sources", fileName);
    m.targets = stringList(doc, "targets", fileName);
    if (doc.contains("cacheKey"))
      m.cacheKey = stringField(doc, "cacheKey", fileName, "the metadata");
    m.compilerOutput = doc.contains("compilerOutput")
                           ? stringField(doc, "compilerOutput", fileName, "the metadata")
                           : std::string();
    if (doc.contains("sharedObjects")) {
      const Json &parts = doc.at("sharedObjects");
      if (!parts.is_array() || parts.empty())
        fail(fileName, "the metadata's \"sharedObjects\" is not a non-empty list");
      for (const Json &jp : parts) {
        if (!jp.is_object())
          fail(fileName, "the metadata's \"sharedObjects\" holds something other than an object");
        SharedObjectRef so;
        so.hash = stringField(jp, "hash", fileName, "a shared object");
        so.size = unsignedField(jp, "size", ~std::uint64_t(0) >> 1, fileName, "a shared object");
        m.sharedObjects.push_back(std::move(so));
      }
    }
    if (doc.contains("objects")) {
      const Json &objects = doc.at("objects");
      if (!objects.is_array())
        fail(fileName, "the metadata's \"objects\" is not a list");
      for (const Json &jo : objects) {
        if (!jo.is_object())
          fail(fileName, "the metadata's \"objects\" holds something other than an object");
        ObjectRef o;
        o.name = stringField(jo, "name", fileName, "an object");
        o.hash = stringField(jo, "hash", fileName, "an object");
        o.size = unsignedField(jo, "size", ~std::uint64_t(0) >> 1, fileName, "an object");
        m.objects.push_back(std::move(o));
      }
      if (doc.contains("units"))
        m.units = stringList(doc, "units", fileName);
      for (const std::string &u : m.units)
        if (u.empty() || u.size() > 64 ||
            u.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_") !=
                std::string::npos)
          fail(fileName, "the metadata's unit '" + u + "' is not an identifier");
    }
    if (doc.contains("ipuBuild")) {
      const Json &jb = doc.at("ipuBuild");
      if (!jb.is_object())
        fail(fileName, "the metadata's \"ipuBuild\" is not an object");
      m.ipuBuild.name = stringField(jb, "arch", fileName, "the IPU build");
      m.ipuBuild.hash = stringField(jb, "hash", fileName, "the IPU build");
      m.ipuBuild.size = unsignedField(jb, "size", ~std::uint64_t(0) >> 1, fileName, "the IPU build");
    }
    if (doc.contains("undefined"))
      m.undefined = stringList(doc, "undefined", fileName);
    const std::uint64_t numParts = m.sharedObjects.empty() ? 1 : m.sharedObjects.size();
    const Json &jvertices = doc.at("vertices");
    if (!jvertices.is_array())
      fail(fileName, "the metadata's \"vertices\" is not a list");
    bool anyPart = false;
    for (const Json &jv : jvertices) {
      if (!jv.is_object())
        fail(fileName, "the metadata's \"vertices\" holds something other than an object");
      ir::VertexTypeInfo v;
      v.name = stringField(jv, "name", fileName, "a vertex type");
      const std::string where = "vertex type '" + v.name + "'";
      v.objectSize =
          static_cast<std::uint32_t>(unsignedField(jv, "size", kMaxVertexObjectBytes, fileName, where));
      v.objectAlign = static_cast<std::uint32_t>(unsignedField(jv, "align", kMaxFieldAlign, fileName, where));
      v.isMultiVertex = boolField(jv, "multiVertex", fileName, where);
      v.isSupervisor = boolField(jv, "supervisor", fileName, where);
      if (jv.contains("external"))
        v.isExternal = boolField(jv, "external", fileName, where);
      if (jv.contains("inputsReadOnly"))
        v.inputsReadOnly = boolField(jv, "inputsReadOnly", fileName, where);
      std::uint32_t part = 0;
      if (jv.contains("part")) {
        part = static_cast<std::uint32_t>(unsignedField(jv, "part", numParts - 1, fileName, where));
        anyPart = true;
      }
      m.vertexParts.push_back(part);
      const Json &jfields = jv.at("fields");
      if (!jfields.is_array())
        fail(fileName, where + ": \"fields\" is not a list");
      for (const Json &jf : jfields) {
        if (!jf.is_object())
          fail(fileName, where + ": \"fields\" holds something other than an object");
        ir::FieldInfo f;
        f.name = stringField(jf, "name", fileName, where + ", a field");
        const std::string fieldWhere = "field '" + f.name + "' of " + where;
        const int kind = indexOf(kKindNames, stringField(jf, "kind", fileName, fieldWhere));
        const int shape = indexOf(kShapeNames, stringField(jf, "shape", fileName, fieldWhere));
        const int layout = indexOf(kLayoutNames, stringField(jf, "layout", fileName, fieldWhere));
        const int outer = indexOf(kLayoutNames, stringField(jf, "outerLayout", fileName, fieldWhere));
        if (kind < 0 || shape < 0 || layout < 0 || outer < 0)
          fail(fileName, fieldWhere + " has an unknown kind, shape or layout");
        const std::string typeName = stringField(jf, "type", fileName, fieldWhere);
        const int type = indexOf(kTypeNames, typeName);
        if (type < 0)
          fail(fileName, fieldWhere + " has an unknown element type \"" + typeName + "\"");
        f.kind = static_cast<ir::FieldKind>(kind);
        f.shape = static_cast<ir::FieldShape>(shape);
        f.layout = static_cast<ir::Layout>(layout);
        f.outerLayout = static_cast<ir::Layout>(outer);
        f.elementType = poplar::Type(static_cast<poplar::Type::Id>(type));
        f.minAlign =
            static_cast<std::uint32_t>(unsignedField(jf, "minAlign", kMaxFieldAlign, fileName, fieldWhere));
        f.offset = static_cast<std::uint32_t>(unsignedField(jf, "offset", 0xffffffffu, fileName, fieldWhere));
        f.size = static_cast<std::uint32_t>(unsignedField(jf, "size", 0xffffffffu, fileName, fieldWhere));
        f.isConst = boolField(jf, "const", fileName, fieldWhere);
        v.fields.push_back(std::move(f));
      }
      m.vertexTypes.push_back(std::move(v));
    }
    if (!anyPart)
      m.vertexParts.clear();
    if (doc.contains("aliases")) {
      const Json &aliases = doc.at("aliases");
      if (!aliases.is_object())
        fail(fileName, "the metadata's \"aliases\" is not an object");
      for (const auto &[alias, target] : aliases.items()) {
        if (!target.is_string())
          fail(fileName, "the metadata's alias '" + alias + "' does not name a vertex type");
        m.aliases.emplace(alias, target.get<std::string>());
      }
    }
    if (doc.contains("vertexCounts")) {
      const Json &counts = doc.at("vertexCounts");
      if (!counts.is_array() || counts.size() != m.sources.size())
        fail(fileName, "the metadata's \"vertexCounts\" is not a list with one count per source");
      std::uint64_t total = 0;
      for (const Json &c : counts) {
        if (!c.is_number_unsigned() || c.get<std::uint64_t>() > m.vertexTypes.size())
          fail(fileName, "the metadata's \"vertexCounts\" holds something other than a vertex count");
        total += c.get<std::uint64_t>();
        m.vertexCounts.push_back(static_cast<std::uint32_t>(c.get<std::uint64_t>()));
      }
      if (total != m.vertexTypes.size())
        fail(fileName, "the metadata's \"vertexCounts\" add up to " + std::to_string(total) +
                           ", but it has " + std::to_string(m.vertexTypes.size()) + " vertex types");
    }
  } catch (const Json::exception &e) {
    fail(fileName, std::string("its metadata is corrupt (") + e.what() + ")");
  }
  validateVertexTypes(m.vertexTypes, fileName);
  std::set<std::string> names;
  for (const ir::VertexTypeInfo &v : m.vertexTypes)
    names.insert(v.name);
  for (const auto &[alias, target] : m.aliases)
    if (alias.empty() || names.count(alias) || !names.count(target))
      fail(fileName, "the metadata's alias '" + alias + "' of '" + target +
                         "' is empty, a vertex type's own name, or names no vertex type");
  return m;
}

namespace {

std::vector<std::uint8_t> assembleGp(const std::string &json, std::vector<GpInput> parts,
                                     const std::vector<GpInput> &objects = {}) {
  parts.insert(parts.end(), objects.begin(), objects.end());
  std::size_t soSize = 0;
  for (const GpInput &p : parts)
    soSize += p.size;
  std::vector<std::uint8_t> out(kHeaderSize + json.size() + soSize);
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  const bool ipuBuild = json.find("\"ipuBuild\":") != std::string::npos;
  put32(out.data() + 8, ipuBuild ? kGpFormatVersion : kGpFormatWithoutIpuBuild);
  put32(out.data() + 12, static_cast<std::uint32_t>(kHeaderSize));
  put64(out.data() + 16, json.size());
  put64(out.data() + 24, soSize);
  std::memcpy(out.data() + kHeaderSize, json.data(), json.size());
  std::size_t at = kHeaderSize + json.size();
  for (const GpInput &p : parts) {
    if (p.size)
      std::memcpy(out.data() + at, p.bytes, p.size);
    at += p.size;
  }
  const std::string hash = contentHash(out.data() + kHeaderSize, out.size() - kHeaderSize);
  std::memcpy(out.data() + 32, hash.data(), 32);
  return out;
}

} // namespace

std::vector<std::uint8_t> encodeGp(const LibraryMetadata &metadataIn, const std::uint8_t *sharedObject,
                                   std::size_t sharedObjectSize, const std::vector<GpInput> &objects) {
  LibraryMetadata metadata = metadataIn;
  if (metadata.sharedObjects.empty())
    metadata.sharedObjects.push_back({contentHash(sharedObject, sharedObjectSize), sharedObjectSize});
  metadata.objects.resize(objects.size());
  for (std::size_t i = 0; i < objects.size(); ++i) {
    metadata.objects[i].hash = contentHash(objects[i].bytes, objects[i].size);
    metadata.objects[i].size = objects[i].size;
    if (metadata.objects[i].name.empty())
      metadata.objects[i].name = objects[i].name;
  }
  return assembleGp(metadataToJson(metadata), {GpInput{sharedObject, sharedObjectSize, ""}}, objects);
}

std::vector<std::uint8_t> linkGp(const std::vector<GpInput> &inputs,
                                 const std::vector<std::string> &targets) {
  LibraryMetadata out;
  out.aspenVersion = kAspenVersion;
  out.targets = targets;
  std::vector<GpInput> parts;
  std::map<std::string, std::string> definedBy;
  bool countsKnown = true;
  for (const GpInput &in : inputs) {
    const GpContents gp = decodeGp(in.bytes, in.size, in.name);
    const auto firstPart = static_cast<std::uint32_t>(out.sharedObjects.size());
    for (std::size_t p = 0; p < gp.parts.size(); ++p) {
      out.sharedObjects.push_back(gp.metadata.sharedObjects[p]);
      parts.push_back({in.bytes + gp.parts[p].offset, gp.parts[p].size, in.name});
    }
    for (std::size_t v = 0; v < gp.metadata.vertexTypes.size(); ++v) {
      const ir::VertexTypeInfo &type = gp.metadata.vertexTypes[v];
      auto [it, inserted] = definedBy.emplace(type.name, in.name);
      if (!inserted)
        throw poplar::graph_object_creation_error("Cannot link vertex libraries: vertex type '" + type.name +
                                                  "' is defined by both '" + it->second + "' and '" +
                                                  in.name + "'");
      out.vertexTypes.push_back(type);
      out.vertexParts.push_back(firstPart +
                                (v < gp.metadata.vertexParts.size() ? gp.metadata.vertexParts[v] : 0));
    }
    out.sources.insert(out.sources.end(), gp.metadata.sources.begin(), gp.metadata.sources.end());
    if (gp.metadata.vertexCounts.empty())
      countsKnown = false;
    for (const auto &[alias, target] : gp.metadata.aliases)
      if (!definedBy.count(alias))
        out.aliases.emplace(alias, target);
    out.vertexCounts.insert(out.vertexCounts.end(), gp.metadata.vertexCounts.begin(),
                            gp.metadata.vertexCounts.end());
    if (!gp.metadata.compilerOutput.empty())
      out.compilerOutput += gp.metadata.compilerOutput;
  }
  if (!countsKnown)
    out.vertexCounts.clear();
  for (auto it = out.aliases.begin(); it != out.aliases.end();) // a later input's own name wins
    it = definedBy.count(it->first) ? out.aliases.erase(it) : std::next(it);
  std::vector<std::uint8_t> region;
  for (const GpInput &p : parts)
    region.insert(region.end(), p.bytes, p.bytes + p.size);
  out.sharedObjectHash = contentHash(region.data(), region.size());
  return assembleGp(metadataToJson(out), parts);
}

GpContents decodeGp(const std::uint8_t *data, std::size_t size, const std::string &fileName) {
  if (size < sizeof kMagic || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    fail(fileName,
         "it is not an Aspen vertex library (.gp): the file does not start with the .gp magic bytes");
  if (size < kHeaderSize)
    fail(fileName, "the file is truncated (" + std::to_string(size) + " bytes, shorter than the .gp header)");
  const std::uint32_t version = get32(data + 8);
  if (version < kGpOldestReadableVersion || version > kGpFormatVersion)
    fail(fileName, "it has .gp format version " + std::to_string(version) +
                       ", but this Aspen reads version " + std::to_string(kGpFormatVersion) +
                       "; rebuild it with this Aspen's popc");
  const std::uint32_t headerSize = get32(data + 12);
  const std::uint64_t jsonSize = get64(data + 16);
  const std::uint64_t soSize = get64(data + 24);
  if (headerSize != kHeaderSize)
    fail(fileName, "the header is corrupt (header size " + std::to_string(headerSize) + ")");
  // Each size is at most the file's size, so their sum cannot wrap.
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
  LibraryMetadata &m = contents.metadata;
  if (m.sharedObjects.empty())
    m.sharedObjects.push_back({m.sharedObjectHash, soSize});
  std::uint64_t at = contents.sharedObjectOffset, total = 0;
  for (const SharedObjectRef &so : m.sharedObjects) {
    if (so.size > soSize - total) // total <= soSize: no wrap
      fail(fileName, "the metadata's shared objects are larger than the file holds");
    total += so.size;
    contents.parts.push_back({static_cast<std::size_t>(at), static_cast<std::size_t>(so.size)});
    at += so.size;
  }
  for (const ObjectRef &o : m.objects) {
    if (o.size > soSize - total)
      fail(fileName, "the metadata's objects are larger than the file holds");
    total += o.size;
    contents.objectParts.push_back({static_cast<std::size_t>(at), static_cast<std::size_t>(o.size)});
    at += o.size;
  }
  if (m.ipuBuild.size != 0) {
    if (m.ipuBuild.size > soSize - total)
      fail(fileName, "the metadata's IPU build is larger than the file holds");
    total += m.ipuBuild.size;
    contents.ipuBuild = {static_cast<std::size_t>(at), static_cast<std::size_t>(m.ipuBuild.size)};
    at += m.ipuBuild.size;
  }
  if (total != soSize)
    fail(fileName, "the metadata's shared objects and objects (" + std::to_string(total) +
                       " bytes) do not fill the " + std::to_string(soSize) + " bytes the file holds");
  if (!m.objects.empty() && m.sharedObjects.size() != 1)
    fail(fileName, "it holds objects and more than one shared object");
  return contents;
}

std::vector<std::uint8_t> withIpuBuild(const std::vector<std::uint8_t> &host,
                                       const std::vector<std::uint8_t> &ipu, const std::string &arch) {
  const GpContents gp = decodeGp(host.data(), host.size(), "<host build>");
  LibraryMetadata m = gp.metadata;
  const std::size_t keep = gp.sharedObjectSize - gp.ipuBuild.size; // the old IPU build is last
  m.ipuBuild = {};
  if (!ipu.empty())
    m.ipuBuild = {arch, contentHash(ipu.data(), ipu.size()), ipu.size()};
  std::vector<GpInput> parts{{host.data() + gp.sharedObjectOffset, keep, ""}};
  if (!ipu.empty())
    parts.push_back({ipu.data(), ipu.size(), ""});
  return assembleGp(metadataToJson(m), parts);
}

std::vector<std::uint8_t> ipuBuildOf(const std::uint8_t *bytes, std::size_t size,
                                     const std::string &fileName) {
  const GpContents gp = decodeGp(bytes, size, fileName);
  if (gp.ipuBuild.size == 0)
    return {};
  const std::uint8_t *at = bytes + gp.ipuBuild.offset;
  if (contentHash(at, gp.ipuBuild.size) != gp.metadata.ipuBuild.hash)
    fail(fileName, "its IPU build does not match its recorded hash");
  return std::vector<std::uint8_t>(at, at + gp.ipuBuild.size);
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
